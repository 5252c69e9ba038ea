package layout

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// Server is what New learned about the server a Store runs on: enough to
// know which settings keep a bucket compact there, and what a key costs.
type Server struct {
	// Kind is "redis" or "valkey" ("" if INFO would not say).
	Kind string
	// Version is the server's version, "7.0.15" (INFO's redis_version on
	// Redis, valkey_version on Valkey).
	Version string
	// Allocator is INFO memory's mem_allocator: "jemalloc-5.3.0", "libc".
	Allocator string
	// MaxListpackEntries and MaxListpackValue are hash-max-listpack-entries
	// and -value (the defaults, 512 and 64, if CONFIG GET is refused).
	MaxListpackEntries, MaxListpackValue int
	// FieldTTL says the server expires hash fields (HPEXPIRE: Redis 7.4,
	// Valkey 9).
	FieldTTL bool
	// Cluster says the server is a cluster node.
	Cluster bool
}

// atLeast reports whether the server's version is at least major.minor.
func (v Server) atLeast(major, minor int) bool {
	parts := strings.SplitN(v.Version, ".", 3)
	if len(parts) < 2 {
		return false
	}
	ma, err1 := strconv.Atoi(parts[0])
	mi, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return false
	}
	return ma > major || ma == major && mi >= minor
}

// majorMinor is "7.0" for 7.0.15.
func (v Server) majorMinor() string {
	parts := strings.SplitN(v.Version, ".", 3)
	if len(parts) < 2 {
		return v.Version
	}
	return parts[0] + "." + parts[1]
}

// String names the server: "redis 7.0.15 (jemalloc-5.3.0)".
func (v Server) String() string {
	if v.Kind == "" {
		return "an unknown server"
	}
	s := v.Kind + " " + v.Version
	if v.Allocator != "" {
		s += " (" + v.Allocator + ")"
	}
	return s
}

// compactVolatile reports whether a hash whose fields have TTLs keeps a
// compact encoding there: Redis 7.4 and later have listpackex; Valkey 9
// converts such a hash to a hashtable.
func (v Server) compactVolatile() bool { return v.Kind != "valkey" }

// detectServer reads the server's kind, version and allocator (INFO server
// and memory). A server that refuses INFO is described as unknown.
func (s *Store) detectServer(ctx context.Context) Server {
	var v Server
	info, err := s.c.Info(ctx, "server", "memory")
	if err != nil {
		return v
	}
	v.Kind, v.Version = "redis", info["redis_version"]
	if vv, ok := info["valkey_version"]; ok {
		v.Kind, v.Version = "valkey", vv
	} else if info["server_name"] == "valkey" {
		v.Kind = "valkey"
	}
	v.Allocator = info["mem_allocator"]
	return v
}

// Server returns what New learned about the server.
func (s *Store) Server() Server { return s.server }

// WarningKind says what a Warning is about.
type WarningKind string

// The warnings New (and, for WarnOversize, a Store's writes) can give.
const (
	// WarnOverflow: buckets can hold more fields than the server keeps in
	// a listpack (hash-max-listpack-entries), so full buckets convert to
	// hashtables for good and cost about as much as plain keys.
	WarnOverflow WarningKind = "overflow"
	// WarnCostlier: on this server the namespace's buckets cost more per
	// key than plain keys: buckets that can hold too few fields to share
	// their key's cost, a server that keeps no field in a listpack, or
	// values that are mostly too large for one (each is then stored as a
	// key of its own and a marker: a plain key and a bit more).
	WarnCostlier WarningKind = "costlier"
	// WarnNoFieldTTL: the namespace is bucketed, the server cannot expire
	// hash fields (before Redis 7.4 and Valkey 9) and no BucketTTL is set,
	// so SetEX and Expire fail with ErrNoFieldTTL.
	WarnNoFieldTTL WarningKind = "no field ttl"
	// WarnVolatileHashtable: the server keeps a hash with expiring fields
	// as a hashtable (Valkey 9), so per-key TTLs cost a bucket its compact
	// encoding; given by New on such a server for a bucketed namespace.
	WarnVolatileHashtable WarningKind = "volatile hashtable"
)

// A Warning is a namespace setting that the server makes costly or
// unavailable.
type Warning struct {
	Kind    WarningKind
	Message string
}

func (w Warning) String() string { return w.Message }

// warnings is a Store's list, which New fills and writes can extend.
type warnings struct {
	mu   sync.Mutex
	list []Warning
}

// add records w once per kind and logs it.
func (s *Store) warn(kind WarningKind, format string, args ...any) {
	msg := fmt.Sprintf("layout: namespace %q on %s: ", s.ns.Prefix, s.server) + fmt.Sprintf(format, args...)
	s.warns.mu.Lock()
	for _, w := range s.warns.list {
		if w.Kind == kind {
			s.warns.mu.Unlock()
			return
		}
	}
	s.warns.list = append(s.warns.list, Warning{Kind: kind, Message: msg})
	s.warns.mu.Unlock()
	s.log.Warn(msg, "warning", string(kind))
}

// Warnings returns what New found costly or unavailable in the namespace's
// settings on its server, and what the Store's writes found since (values
// mostly too large for their buckets). Each is also logged once, at
// warning level, through the client's logger.
func (s *Store) Warnings() []Warning {
	s.maybeWarnOversize()
	s.warns.mu.Lock()
	defer s.warns.mu.Unlock()
	return append([]Warning(nil), s.warns.list...)
}

// checkServer gives New's warnings for a bucketed namespace, or fails for
// OverflowRefuse.
func (s *Store) checkServer() error {
	if n := s.buckets.maxFields(); n > s.maxEntries {
		msg := fmt.Sprintf("%s buckets can hold %d entries, more than the server's hash-max-listpack-entries %d: "+
			"full buckets will lose their compact encoding", s.buckets, n, s.maxEntries)
		if s.ns.Overflow == OverflowRefuse {
			return fmt.Errorf("layout: namespace %q: %s", s.ns.Prefix, msg)
		}
		s.warn(WarnOverflow, "%s", msg)
	}
	costs := s.costs
	// A small value (an integer) under a key of the namespace's typical
	// length, with buckets as full as they can be kept compact.
	keyLen := len(s.stored) + 4
	fill := min(s.buckets.maxFields(), s.maxEntries)
	if fill <= 0 {
		fill = max(s.maxEntries/2, 1)
	}
	plain := costs.Key(keyLen, []byte("1"))
	switch bucketed := costs.Pair(fill, []byte("1"), []byte("1")); {
	case s.maxEntries < 1 || s.maxValue < 1:
		s.warn(WarnCostlier, "the server keeps no hash field in a listpack (hash-max-listpack-entries %d, -value %d): "+
			"every bucket is a hashtable and costs more than plain keys", s.maxEntries, s.maxValue)
	case bucketed >= plain:
		s.warn(WarnCostlier, "%s buckets of at most %d fields cost about %.0f B per key, plain keys %.0f B: "+
			"use larger buckets, or plain keys", s.buckets, fill, bucketed, plain)
	}
	switch {
	case !s.fieldTTL.hpexpire && s.ns.BucketTTL <= 0:
		s.warn(WarnNoFieldTTL, "the server cannot expire hash fields (Redis 7.4+ and Valkey 9+ can): "+
			"SetEX and Expire on bucketed keys will fail with ErrNoFieldTTL; set Namespace.BucketTTL, "+
			"or keep keys with TTLs in a namespace without buckets")
	case s.fieldTTL.hpexpire && !s.server.compactVolatile():
		s.warn(WarnVolatileHashtable, "the server stores a hash with expiring fields as a hashtable: "+
			"a bucket that gets a per-key TTL (SetEX, Expire) loses its compact encoding and costs about as much as plain keys")
	}
	return nil
}

// oversizeWarnAfter is how many bucket writes a Store makes before it
// judges whether its values are mostly oversize (WarnCostlier).
const oversizeWarnAfter = 100

// maybeWarnOversize gives WarnCostlier once most of at least
// oversizeWarnAfter values written into buckets were too large for them.
func (s *Store) maybeWarnOversize() {
	if s.buckets == nil || s.ns.Oversize == OversizeInBucket {
		return
	}
	written, big := s.bucketWrites.Load(), s.oversize.Load()
	if written < oversizeWarnAfter || 2*big <= written {
		return
	}
	s.warn(WarnCostlier, "%d of %d values written into buckets were larger than hash-max-listpack-value (%d B) "+
		"after compression: each is stored as a key of its own plus a marker in its bucket, more than a plain key costs; "+
		"compress them (Codec), raise hash-max-listpack-value, or store this family as plain keys",
		big, written, s.maxValue)
}

// autoBuckets is the largest Dense bucket whose fields are all one-byte
// listpack integers (0 to 127), less two: 126 entries of 2^k bytes and the
// listpack's 7-byte header make 2^(k+7) - 1 bytes, so that a full bucket of
// small, equal-sized pairs fills an allocator size class instead of
// spilling a few bytes into the next one (jemalloc's classes from 512 to
// 1024 B are 128 B apart). Larger buckets pay a byte more for every field
// from 128 on, which outweighs the bucket key they share: on Redis 7.0,
// counters cost 4.6 B a pair in Dense(126), 5.1 in Dense(100) and in
// Dense(512).
const autoBuckets = 126

// DenseAuto is Dense with a bucket size New chooses from the server: 126
// (see autoBuckets), or hash-max-listpack-entries if that is lower. The
// first Store of the namespace records its choice in the server
// ("<stored>#~buckets"), and every later one uses it, so the mapping of
// keys to buckets never changes under the data, even if the server's
// limit does (a server whose limit later falls below it gives
// WarnOverflow).
func DenseAuto() Buckets { return dense{auto: true} }

// bucketsKey names the key that records a DenseAuto namespace's bucket
// size.
func (s *Store) bucketsKey() string { return s.stored + metaMarker + "buckets" }

// resolveAuto fixes a DenseAuto namespace's bucket size: the one recorded
// in the server, or, for its first Store, the one chosen from the
// server's limit, recorded (SET NX, so concurrent first Stores agree).
func (s *Store) resolveAuto(ctx context.Context) error {
	want := strconv.Itoa(max(min(autoBuckets, s.maxEntries), 1)) // as NamesFor
	b := s.c.Batch()
	b.Do("SET", s.bucketsKey(), want, "NX")
	got := b.Get(s.bucketsKey())
	if err := execReads(ctx, b); err != nil {
		return err
	}
	v, err := got.Result()
	if err != nil {
		return fmt.Errorf("layout: reading the bucket size of namespace %q (%s): %w", s.ns.Prefix, s.bucketsKey(), err)
	}
	per, err := strconv.ParseUint(string(v), 10, 64)
	if err != nil || per == 0 {
		return fmt.Errorf("layout: %s holds %q, not a bucket size", s.bucketsKey(), v)
	}
	s.buckets = dense{per: per}
	return nil
}
