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
// well only with a dictionary trained on their family (codec.ZstdDict).
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
//
// # Buckets
//
// Dense(B) suits integer ids: id lives in bucket id/B as field id%B, a
// decimal integer (a 2-byte listpack integer: never base62 or zero-padded
// fields, which cost more). Ids that are not canonical integers, such as
// "007", are stored as plain keys. Hashed(N) suits sparse ids and strings:
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
// fields of one bucket is still one call.
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
// the new layout, then the old, in one round trip. Writes go to the new
// layout and delete the old copy in one atomic step (a small Lua script that
// runs a list of commands), so a deleted value can never come back; deletes
// remove both copies the same way. Operations that act on a value in place
// (IncrBy, SetNX, Expire, TTL) first move that key. Migrate moves the rest
// in the background: it scans the old layout, reads each key with its
// expiry (an absolute time where the server has PEXPIRETIME, so a move does
// not lengthen it), and moves it with a script that checks the old copy is
// unchanged, so a concurrent write or delete wins and the key is retried on
// the next pass. A TTL that the new layout cannot hold (a bucket on a server
// without field expiry) keeps the key in the old layout, where it still
// reads, and where operations that act in place find it. Migrate can be
// stopped at any point and resumed from the cursor of its last Progress.
//
// Roll out in this order: deploy code that uses the new layout with
// MigrateFrom, run Migrate (or "zipline migrate") until it moves nothing,
// then drop MigrateFrom. While old code still writes the old layout, its
// writes can be shadowed by a newer copy in the new layout.
//
// # Limits
//
// Namespaces are for a standalone server. Every script declares all the keys
// it touches, and the operations on one key touch one hash slot (a bucket
// and its oversize keys share it), except for the cleanup of values written
// by earlier versions, whose plain name is in another slot. What a cluster
// cannot run atomically: MSet, MGet and Del across buckets, and migration,
// whose moves, writes and deletes join the old layout's key and the new
// bucket. Valkey counts expired fields in HLEN until it reclaims them, so
// Count can be briefly high there.
package layout
