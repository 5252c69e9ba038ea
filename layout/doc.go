// Package layout stores a family of keys in less memory than plain Redis
// keys, behind the application's own key names: key zipping, small hash
// "buckets", per-namespace compression, and hot migration between layouts.
// It is me-redis's toolkit done over: lossless zipping, buckets that keep
// their compact encoding, TTLs that work or fail loudly, and a migration
// that never resurrects a deleted value.
//
//	users, err := layout.New(ctx, c, layout.Namespace{
//		Prefix:  "user:",                                       // keys this namespace owns
//		ZipAs:   "u:",                                          // stored key prefix (key zipping)
//		Buckets: layout.Dense(100),                             // "user:12345" -> HSET u:#1Z 45 <value>
//		Codec:   zipline.Compression{Backend: codec.Zstd},      // per-namespace codec
//	})
//	err = users.Set(ctx, "user:12345", v)
//	v, err := users.Get(ctx, "user:12345")   // zipline.Nil when missing
//
// # Why
//
// A plain string key costs about 75 bytes on Redis 7 before its value
// (dictionary entry, key string, value object, table slot). A field in a
// small hash encoded as a listpack costs a few bytes plus the field and
// value themselves, so an integer stored under "user:<id>" drops from ~75
// to ~10 bytes when 100 ids share one hash. Values that are larger pay the
// same fixed cost, which compression then shrinks; small records compress
// well only with a dictionary trained on their family (codec.ZstdDict),
// which a namespace can keep in the server, so that every process shares
// it and it can be rotated live (Store.TrainDictionary, Store.Reencode,
// Store.DropDictionaries).
//
// # Stored names
//
// With ZipAs, Prefix is replaced by ZipAs (as a whole, so "user:" never
// touches "superuser:"), and each ':'-separated segment that is a canonical
// integer is written in base62. Literal segments that could be mistaken for
// base62, or that start with '0' or '#', get a leading '0', so zipping is
// lossless: "user:007" and "user:7" stay distinct ("u:0007", "u:7"). Bucket
// keys are ZipAs (or Prefix) + "#" + the bucket number in base62, a name no
// plain key of the namespace can take. Scan lists the application's names.
// Store.Place says where a key is stored; NamesFor does the same without a
// server, from the listpack limits a server would have (zipline analyze
// prices keys with it).
//
// # Buckets
//
// Dense(B) suits integer ids: id lives in bucket id/B as field id%B, a
// decimal integer (a 2-byte listpack integer: never base62 or zero-padded
// fields, which cost more). Ids that are not canonical integers, such as
// "007", are stored as plain keys. DenseAuto sizes B from the server: 126
// (fields 0-127 take one listpack byte, and 126 small pairs fill an
// allocator size class exactly), or hash-max-listpack-entries if lower;
// the first Store records the size in the server, so that it never
// changes under the data. Hashed(N) suits sparse ids and strings:
// the bucket is a hash of the key modulo N and the field is the key's tail;
// HashedFor(expected) sizes N so buckets fill to half the server's limit.
//
// A bucket keeps its compact listpack encoding only while it has at most
// hash-max-listpack-entries fields and no value longer than
// hash-max-listpack-value (512 and 64 by default); past either it converts to
// a hashtable for good and the saving is gone. New reads both limits from
// the server (never changing them) and warns, or with OverflowRefuse fails,
// if Dense buckets can outgrow the entry limit.
//
// # Oversize values
//
// A value whose stored size, after compression, exceeds the value limit is
// written to a key of its own, "<stored>#{<bucket key>}<field>" (u:#{u:#1Z}45),
// and its field holds a 2-byte marker; Stats counts these. Reads of such a
// value take a second round trip. The key's hash tag is the bucket key, so it
// lives in the bucket's hash slot, and the key lives exactly as long as its
// marker: every write, expiry and deletion of the field handles both in one
// script, so no value is left behind or can come back. That makes a write
// into a bucket one script call (EVALSHA) instead of one HSET: the script
// reads the field before writing it and removes the oversize key only when
// the field held a marker. It adds no round trip, but the server spends
// more on it than on a bare HSET: redis-benchmark -P 32 measured 3 times
// fewer writes per second on Redis 7.0 and 4 to 6 times fewer on Valkey 9.1
// (0.2 to 0.3 million against 0.5 to 0.95 million, 2 shared cores); one at
// a time, where round trips dominate, 20 to 40% fewer. A write of many
// fields of one bucket is still one call. MSet of values that all fit their
// buckets, on a namespace that is not migrating, needs no script: one
// MULTI/EXEC of an HSET per bucket, an MSET for plain keys, and an UNLINK
// of the oversize names of the fields written (a name exists only while
// its field holds the marker, so removing it unconditionally is the
// script's removal done without reading).
//
// Versions before this one kept an oversize value under the key's plain name
// with another marker. Such values still read, and any write, Expire or
// deletion of their key removes that plain key; a marker whose plain key
// expired alone reads as a missing key.
//
// # TTL
//
// Per-key TTLs on bucketed keys use hash field expiry: HSETEX (Redis 8,
// Valkey 9) or HSET plus HPEXPIRE (Redis 7.4), detected at New. On older
// servers SetEX and Expire fail with ErrNoFieldTTL, unless Namespace.BucketTTL
// sets a bucket-wide expiry; that includes oversize values, whose key must
// expire with their field. An oversize value's key takes its field's expiry,
// bounded by the bucket key's own; with BucketTTL, a bucket that gets its TTL
// gives it to the oversize values it already held. Note that Valkey stores a
// hash with volatile fields as a hashtable, so per-key TTLs cost the bucket
// its compactness there.
//
// # Migration
//
// A Namespace can name the layout it migrates from (MigrateFrom). Reads try
// the new layout, then the old, in one round trip. On a single server,
// writes go to the new layout and delete the old copy in one atomic step (a
// small Lua script that runs a list of commands), so a deleted value can
// never come back; deletes remove both copies the same way. Operations that
// act on a value in place (IncrBy, SetNX, Expire, TTL) first move that key.
// Migrate moves the rest in the background: it scans the old layout, reads
// each key with its expiry (an absolute time where the server has
// PEXPIRETIME, so a move does not lengthen it), and moves it with a script
// that checks the old copy is unchanged, so a concurrent write or delete
// wins and the key is retried on the next pass. A TTL that the new layout
// cannot hold (a bucket on a server without field expiry) keeps the key in
// the old layout, where it still reads, and where operations that act in
// place find it. Migrate can be stopped at any point and resumed from the
// cursor of its last Progress.
//
// Roll out in this order: deploy code that uses the new layout with
// MigrateFrom, run Migrate (or "zipline migrate") until a pass is complete
// (Progress.Complete: it moved nothing), then drop MigrateFrom, then, on a
// cluster, run Sweep once. While old code still writes the old layout, its
// writes can be shadowed by a newer copy in the new layout.
//
// # Migration on a cluster
//
// On a Redis or Valkey Cluster a key's old copy (O below) and its place in
// the new layout (N) are in different hash slots, which no script can join:
// every step is a script in one slot, and the steps of one operation run
// one after the other. The new layout then keeps tombstones: sets that
// record the keys "touched" during the migration, one per bucket
// ("<stored>#!{<bucket>}", whose members are fields, in the bucket's slot)
// and one per hash slot for keys stored as plain keys (members are their
// stored names). A key's state in N is live (N holds a value), a tombstone
// (absent and touched), or absent and untouched; only the last lets O
// answer for the key.
//
//   - Get, MGet, Exists read O and N's state in one round trip, and N
//     answers unless absent and untouched; then O does. A key found in
//     neither is read from N once more (its old copy may have moved between
//     the two reads: the second read sees it).
//   - Set, MSet and GetSet write N, then delete O. SetEX writes N and touches
//     it in one script, then deletes O; Del deletes N's value and touches it,
//     then deletes O.
//   - Operations whose result depends on the current value (Del's count,
//     GetSet's previous value, SetNX, IncrBy, Expire) first read O (an
//     observation, with its absolute expiry), then run one script in N's
//     slot that decides from N's state, and from the observation if N is
//     absent and untouched (its expiry compared with the server's TIME).
//     IncrBy and Expire then write the observed value into N (with its
//     expiry) before acting on it; Expire touches the key. Then O goes.
//   - The mover reads O, then copies it into N only where N is absent and
//     untouched (with O's expiry), then deletes O where N now answers.
//
// Why no write is lost and no deleted value comes back:
//
//  1. O only loses its value (deletion, expiry); nothing writes the old
//     layout (but see kept keys below).
//  2. O is deleted only once N answers for the key, and N keeps answering:
//     every value written into N with a TTL of its own touches the key, so
//     that its expiry leaves a tombstone; the only values that expire
//     untouched are copies of O, which carry O's own absolute expiry, so O
//     is dead by then too. (A client that stops between its steps leaves
//     an old copy behind N's answer: never read, and deleted by the next
//     Migrate pass, which counts it as Replaced.)
//  3. So if N is absent and untouched at some moment, it has held nothing
//     since the migration began (but perhaps a copy of O that expired with
//     it), nobody has deleted O, and O holds what any earlier read of it
//     saw, unless it expired, which the server's clock tells.
//
// A write leaves N live; a deletion leaves a tombstone. From then on N
// answers (2): a read cannot return the old value, and a mover or
// operation that read the old value earlier writes it into N only where N
// is absent and untouched, which it no longer is; that is what tombstones
// are for. Conversely, when such a step finds N absent and untouched, the
// value it read is the key's current one (3), so it loses nothing. A read
// that finds N absent and untouched returns O's value as it was at that
// moment, whichever of the two reads ran first (1, 3); a key found in
// neither was in neither when N was read again, after O (1).
//
// TTLs: a copy carries O's absolute expiry (PEXPIRETIME; the old copy's
// PTTL added to the client's clock on servers before Redis 7.0), so it
// never outlives the original, and its old copy dies with it. A write with
// a TTL deletes O, and its tombstone makes sure that once it expires
// nothing older comes back. Expiries in different slots are compared with
// each node's clock, which a cluster keeps in step to well within a TTL's
// millisecond grain.
//
// Keys whose TTL the new layout cannot hold (a bucket on a server without
// field expiry, and no BucketTTL) stay in the old layout: IncrBy and Expire
// act on them there, only if they still exist. An IncrBy there that runs
// concurrently with a GetSet of the same key can leave GetSet reporting the
// value before the increment.
//
// When a pass is complete and no process runs with MigrateFrom any longer,
// Sweep deletes the tombstones: before that, a process that read an old
// value before its deletion could still copy it into the new layout. They
// cost one set member per key deleted, expired or given a TTL during the
// migration; code without MigrateFrom never reads them. Migrate on a
// cluster scans every primary (Client.Scan) and cannot resume from a
// cursor; starting over is correct. A pass that overlaps a resharding may
// miss keys that move meanwhile: the next pass finds them.
//
// Costs while migrating on a cluster (on a single server, every operation
// is still one script call): Set, MSet and SetEX take two round trips;
// Del, GetSet, SetNX, IncrBy and Expire three; Get, MGet and Exists one,
// two for missing keys; TTL two; the mover three per batch of keys. Batched
// operations (Store.In) are refused: ErrQueuedWhileSplit.
//
// # Clusters
//
// A Store finds out at New whether its server is a cluster node (INFO
// cluster). Every script declares all the keys it touches, and they share
// one hash slot: a bucket, its oversize keys and its tombstone set hash to
// the bucket key (the "{<bucket key>}" tag in their names), and a plain
// key's tombstone set is named after its slot. Stored prefixes whose braces
// would hash a part of one name and the whole of another ("u{:", "u}:",
// "{}u:") are refused there; a prefix with a whole hash tag ("{users}:")
// puts the whole namespace in one slot. Legacy oversize names (another
// slot) are off. MSet, MGet and Del across buckets are atomic per bucket
// and per plain key, not as a whole. A migration's target needs ZipAs or
// Buckets, so that its tombstones have names no application key can take,
// and cannot use BucketTTL on a server without field expiry (a bucket's
// expiry would take fields that left no tombstone).
//
// # Limits
//
// Valkey counts expired fields in HLEN until it reclaims them, so Count can
// be briefly high there.
package layout
