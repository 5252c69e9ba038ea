// Package analyze is the engine of "zipline analyze": it reads a Redis or
// Valkey keyspace gently, finds its key patterns, prices every layout of
// package layout on each namespace's own data, on this server's costs,
// and says what to apply and what it saves.
//
// # Why
//
// What a layout saves depends on the data (how values compress, how
// densely integer ids fill buckets, which keys have TTLs) and on the
// server: a small key costs about 64-80 bytes on Redis 7.0 with jemalloc
// and 40-56 on Valkey 8.1+ with its own object layout; Valkey 9 keeps a
// hash with TTL'd fields as a hashtable; Redis before 7.4 cannot expire a
// field at all. A rule of thumb is off by a factor; a measurement of the
// keyspace and of the server is not.
//
// # What it reads
//
// Run connects (connect, server.go), on a cluster to each shard's replica
// and on a single server to a replica that INFO replication lists, when
// one answers; it writes nothing unless Config.Calibrate. It SCANs at most
// Config.Rate keys a second and Config.MaxKeys keys in all (each shard
// its share, by DBSIZE), reads every key's TYPE, PTTL and STRLEN (the
// census: every string's size, counted in strata of half an octave), and
// for the first Config.Samples keys of each pattern (at most
// Config.SampleBytes of values), and at least two of every size stratum
// the census finds, MEMORY USAGE, OBJECT ENCODING and the value; a value
// larger than a quarter of that budget is read in part (GETRANGE) and
// priced by the ratio of its part. SCAN's order follows the hash table,
// not the keys' names, so the first keys of a pattern are a fair sample of
// it, but not of its sizes when a few large values hold most of its bytes:
// each sample stands for the keys of its stratum, at their mean size, so
// sizes come from the census and only compressibility from the samples
// (strata.go).
// When the scan stops at MaxKeys, every count and byte figure is the
// scanned keys' times DBSIZE over the keys scanned, and the report says
// so.
//
// # Patterns and namespaces
//
// Keys are cut at ':' and segments that look like values are classed
// (shape.go: <int>, <hex32>, <uuid>, <date>...); literal segments that
// take many values merge into <str> (stats.go). A namespace is a literal
// prefix up to a pattern's first class ("user:" for user:<int> and
// user:<int>:cart): what a layout.Namespace can own. A namespace whose
// keys are not all strings, or whose prefix holds a hash tag, gets no
// layout.
//
// # Pricing
//
// Each namespace's options (evaluate.go) are key zipping under a stored
// prefix no key has (a migration needs one), alone or with LZ4 or zstd
// (package codec, exactly as a client stores values: GLIDE's header,
// MinSize, numbers left alone), with Dense buckets when most tails are
// integers (their fill estimated from how often sampled ids share a
// bucket) or Hashed buckets sized by HashedFor, within the server's
// listpack limits; and a zstd dictionary trained on half the samples and
// measured on the other half (codec=dict, which needs dictionaries kept in
// the server). Keys with TTLs go to buckets only where the server expires
// fields; elsewhere the bucket-wide BucketTTL option is priced but never
// recommended, and shown only with Config.AllowTTLChange, with how many
// keys' TTLs it changes and by how much: it changes when keys expire.
//
// Every sample is priced by the library's memory model, layout.Costs: the
// allocations the server makes for it, rounded by its allocator, with
// constants measured on Redis 7.0 (jemalloc) and Valkey 9.1 (libc malloc)
// and kept in layout/costs.json (layout's TestCostTable measures them
// again, and regenerates them with -update). The
// recommendation is the applicable option that saves the most, or a
// simpler one (no buckets, LZ4, no codec) that saves nearly as much, if it
// saves at least a tenth of the namespace's memory.
//
// # Accuracy
//
// The model reproduces the measured cells within 8 bytes (or 3 %) for
// 95 % of them (layout's TestModelMatchesTable). Applying the
// recommendations of a mixed keyspace, among them a namespace of
// documents 75 times apart in size, with zipline migrate saves the
// predicted bytes within ±10 % per namespace and in all, on both servers
// (cmd/zipline TestAnalyzeAccuracy). Each prediction carries a 95 %
// interval from the spread of its samples within their strata; the cost
// model's own error, a few percent, comes on top. Project prices one move
// with the same model (zipline migrate -dry-run), so the two agree.
// Calibrate measures the recommended layouts on the server itself, which
// covers servers and allocators that were not measured.
package analyze
