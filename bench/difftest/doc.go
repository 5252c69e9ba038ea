// Package difftest is a seeded differential test of zipline against
// go-redis v9: the same random command sequence runs through zipline's
// typed API, Batch, Tx, Watch, Do and scripts against one server, and
// through go-redis against another server of the same kind. Every reply
// must match (value, nil or empty, error class and text; floats as numbers;
// sets in any order), and so must the two key spaces, compared every 500
// commands and at the end (each key's type, content and whether it has an
// expiry; zipline's side read through Client.Raw and expanded with
// Client.DecodeValue).
//
// Modes: RESP2 and RESP3, times compression off, zstd and LZ4 on zipline's
// side (MinSize 6..16 from the seed; zstd compresses hashes and lists too on
// RESP3, LZ4 on RESP2), on redis-server and, when installed, valkey-server.
// Commands zipline refuses while compressing (compression_plan.go) must fail
// with its *CommandError, and are then not sent to go-redis's server.
//
// Files: difftest_test.go runs the modes, the units (a command, a Batch, a
// Tx, a Watch) and the comparisons; commands_test.go is the table of
// command generators (add a command by adding a row, or a Do form) and
// its core rows; the families' rows are in rows_streams_test.go (streams
// and consumer groups), rows_strings_test.go (geo, bitmaps, HyperLogLog,
// GETRANGE/SETRANGE/LCS, SET IFEQ, DELIFEQ, MSETEX, key expiry conditions
// and times, RENAMENX, COPY, DUMP/RESTORE, OBJECT ENCODING, the typed
// SORT), rows_collections_test.go (hash field expiration, HSTRLEN,
// HRANDFIELD, list, set and sorted-set commands beyond the core) and
// rows_scripting_test.go (Eval, EvalRO, EvalSha, FCall with a library
// loaded when a mode starts, TIME, CONFIG GET); gen_test.go the keys and
// values; reply_test.go the canonical form of replies; keyspace_test.go
// the key space comparison (streams with their groups and pending
// entries; on Valkey, which hash fields expire); selfcheck_test.go checks
// the harness itself.
//
// Replies that are random or depend on a server's clock are compared where
// they are not: counts at least a collection's size (SPOP, SRANDMEMBER,
// HRANDFIELD, ZRANDMEMBER), negative counts member by member, times to
// live and expiry times by presence, stream IDs explicit, GT and LT
// expiries far apart (gen.condExpiry). Where go-redis cannot say what
// zipline says (a null in HGETEX, ZMSCORE, SORT_RO; an entry's field
// order), its side sends the command with Do; each such row says why.
//
// Run it:
//
//	cd bench && go test -count=1 ./difftest/                  # short: 4,000 commands per mode (make test)
//	make difftest                                              # long: 100,000 per mode, fresh seed
//	make difftest DIFFTEST_N=20000 DIFFTEST_SEED=7
//
// A difference prints the seed, the mode, the index of the command, the
// command, both replies, the earlier commands on its keys and the line that
// replays it; the first occurrence of each kind of difference is printed
// (the first one overall comes first), and the keys involved are then
// copied from go-redis's server to zipline's so that one difference does
// not cascade into others.
//
// Flags (or the environment variables in parentheses): -difftest.seed
// (DIFFTEST_SEED; 0 or "random" picks one), -difftest.n (DIFFTEST_N,
// commands per mode), -difftest.proto (DIFFTEST_PROTO: 2, 3 or all),
// -difftest.comp (DIFFTEST_COMP: off, zstd, lz4, comma-separated, or all),
// -difftest.families (DIFFTEST_FAMILIES: mode, none or hashes+lists),
// -difftest.minsize (DIFFTEST_MINSIZE), -difftest.kind (DIFFTEST_KIND:
// redis, valkey or all installed), -difftest.maxfail (DIFFTEST_MAXFAIL:
// differences before a mode stops), -difftest.trace (log every command).
package difftest
