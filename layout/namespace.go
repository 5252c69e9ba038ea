package layout

import (
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"

	"github.com/ziplinekv/zipline"
)

// Namespace describes how one family of keys is stored. The application
// keeps its own key names; the namespace decides the stored names and
// encoding.
type Namespace struct {
	// Prefix is the start of every application key the namespace owns,
	// delimiter included ("user:"). Required.
	Prefix string
	// ZipAs, when set, replaces Prefix in stored key names and turns on key
	// zipping: integer segments of the rest are stored in base62 (see
	// "Stored names" in the package documentation). Empty stores keys under
	// Prefix, unchanged.
	ZipAs string
	// Buckets, when set, stores values as fields of small hashes instead of
	// one key each: Dense for integer ids, Hashed for anything else. Nil
	// stores one key per application key.
	Buckets Buckets
	// Codec compresses the namespace's values (zero: none). Values shorter
	// than its MinSize, such as small integers, are stored as they are.
	// codec.ZstdDict without a Dictionary keeps the namespace's zstd
	// dictionaries in the server (Store.TrainDictionary, Store.Reencode,
	// Store.DropDictionaries); until one is trained, values are written with
	// plain zstd.
	Codec zipline.Compression
	// Oversize says what to do with a value too large to keep a bucket in
	// its compact listpack encoding. Default OversizeAsKey.
	Oversize Oversize
	// Overflow says what New does when a bucket can hold more entries than
	// the server keeps in a listpack. Default OverflowWarn.
	Overflow Overflow
	// BucketTTL, on servers without per-field expiry (before Redis 7.4 and
	// Valkey 9), lets a TTL request on a bucketed namespace expire the whole
	// bucket this long after its first such request, instead of failing.
	// The bucket's oversize values expire with it.
	BucketTTL time.Duration
	// MigrateFrom is the layout this namespace is migrating from. Reads try
	// the new layout, then the old, in the same round trip; writes and
	// deletes go to the new layout and remove the old copy, atomically on a
	// single server and by the protocol of the package documentation on a
	// cluster; Store.Migrate moves the rest in the background.
	MigrateFrom *Namespace
}

// Oversize is the policy for values too large for a listpack bucket.
type Oversize int

const (
	// OversizeAsKey stores such a value under a key of its own, in the
	// bucket's hash slot, and leaves a 2-byte marker in its bucket, so the
	// bucket keeps its compact encoding. The key is written, expired and
	// removed together with the marker (see the package documentation).
	OversizeAsKey Oversize = iota
	// OversizeInBucket stores it in the bucket anyway, which converts the
	// whole bucket to a hashtable for good. Only for servers whose
	// hash-max-listpack-value was raised to fit the values.
	OversizeInBucket
)

// Overflow is the policy when buckets can outgrow hash-max-listpack-entries.
type Overflow int

const (
	// OverflowWarn logs a warning at New.
	OverflowWarn Overflow = iota
	// OverflowRefuse makes New fail.
	OverflowRefuse
)

// Buckets maps an application key's tail (what follows Prefix) to a bucket
// number and a field. Dense and Hashed are the implementations.
type Buckets interface {
	// locate returns the bucket and field for a tail, or ok false when the
	// tail cannot live in a bucket (it is then stored as a plain key).
	locate(tail string) (bucket uint64, field string, ok bool)
	// tail rebuilds the application key's tail from a bucket and field.
	tail(bucket uint64, field string) string
	// maxFields is the most entries one bucket can get, or 0 if unbounded.
	maxFields() int
	// resolve finishes set-up once the server's listpack limit is known.
	resolve(maxEntries int) Buckets
	String() string
}

// Dense buckets integer ids: id lands in bucket id / perBucket, field
// id % perBucket, written in decimal so that the listpack stores it as a
// 2-byte integer. ("007", with its leading zero, is not an integer id and
// is stored as a plain key.) It suits ids that are mostly consecutive; for
// sparse ids most buckets would hold one entry, so use Hashed.
func Dense(perBucket int) Buckets { return dense{per: uint64(max(perBucket, 1))} }

// dense is Dense, or, with auto, DenseAuto before New has chosen its size
// (per is then 0, and New replaces it: see Store.resolveAuto).
type dense struct {
	per  uint64
	auto bool
}

func (d dense) locate(tail string) (uint64, string, bool) {
	id, ok := canonicalUint(tail)
	if !ok {
		return 0, "", false
	}
	return id / d.per, fieldName(id % d.per), true
}

// fieldNames are the decimal names of the first fields of a bucket, made
// once: strconv allocates each name from 100 on.
var fieldNames = func() (t [1024]string) {
	for i := range t {
		t[i] = strconv.Itoa(i)
	}
	return t
}()

// fieldName is n in decimal.
func fieldName(n uint64) string {
	if n < uint64(len(fieldNames)) {
		return fieldNames[n]
	}
	return strconv.FormatUint(n, 10)
}

func (d dense) tail(bucket uint64, field string) string {
	f, _ := strconv.ParseUint(field, 10, 64)
	return strconv.FormatUint(bucket*d.per+f, 10)
}

func (d dense) maxFields() int      { return int(d.per) }
func (d dense) resolve(int) Buckets { return d }
func (d dense) String() string {
	if d.auto {
		return "DenseAuto()"
	}
	return fmt.Sprintf("Dense(%d)", d.per)
}

// Hashed buckets any key: the bucket is a hash of the tail modulo n, and the
// field is the tail itself (a canonical integer tail is stored as a listpack
// integer).
//
// Size n from the expected number of keys: with k keys, buckets hold k/n
// entries on average, and a few hold noticeably more, so keep k/n at about
// half of hash-max-listpack-entries (512 by default): n = k / 256. HashedFor
// does that sum with the server's limit.
func Hashed(n int) Buckets { return hashed{n: uint64(max(n, 1))} }

// HashedFor is Hashed sized for expectedKeys keys, so that buckets fill to
// about half the server's hash-max-listpack-entries.
func HashedFor(expectedKeys int) Buckets { return hashed{expected: max(expectedKeys, 1)} }

type hashed struct {
	n        uint64
	expected int // HashedFor: n is computed by resolve
}

func (h hashed) locate(tail string) (uint64, string, bool) {
	f := fnv.New64a()
	f.Write([]byte(tail))
	return f.Sum64() % h.n, tail, true
}

func (h hashed) tail(_ uint64, field string) string { return field }
func (h hashed) maxFields() int                     { return 0 }

func (h hashed) resolve(maxEntries int) Buckets {
	if h.expected > 0 {
		per := max(maxEntries/2, 1)
		h.n = uint64((h.expected + per - 1) / per)
	}
	return h
}

func (h hashed) String() string { return fmt.Sprintf("Hashed(%d)", h.n) }

// ErrNotInNamespace is returned for a key that does not start with the
// namespace's Prefix.
var ErrNotInNamespace = errors.New("layout: key is not in the namespace")

// ErrNoFieldTTL is returned for a TTL request on a bucketed namespace when
// the server cannot expire hash fields (Redis before 7.4, Valkey before 9)
// and no BucketTTL is configured.
var ErrNoFieldTTL = errors.New("layout: per-key TTL on a bucketed namespace needs hash field expiry " +
	"(Redis 7.4+ or Valkey 9+), or Namespace.BucketTTL")

func (ns *Namespace) validate() error {
	if ns.Prefix == "" {
		return errors.New("layout: Namespace.Prefix is required")
	}
	if (ns.Buckets != nil || ns.serverDictionaries()) && ns.ZipAs == "" && strings.ContainsRune(ns.Prefix, bucketMarker) {
		return fmt.Errorf("layout: Prefix %q contains the bucket marker %q", ns.Prefix, bucketMarker)
	}
	if old := ns.MigrateFrom; old != nil {
		if old.MigrateFrom != nil {
			return errors.New("layout: MigrateFrom cannot itself migrate")
		}
		if old.Prefix != ns.Prefix {
			return fmt.Errorf("layout: MigrateFrom has Prefix %q, want %q: both layouts hold the same application keys",
				old.Prefix, ns.Prefix)
		}
		if old.storedPrefix() == ns.storedPrefix() {
			// The two layouts' stored keys would overlap ("user:7" as an old
			// plain key and as a new oversize value), so a move could delete
			// what it just wrote. Give the new layout its own ZipAs.
			return fmt.Errorf("layout: MigrateFrom stores keys under %q too; set a different ZipAs", ns.storedPrefix())
		}
	}
	return nil
}

func (ns *Namespace) storedPrefix() string {
	if ns.ZipAs != "" {
		return ns.ZipAs
	}
	return ns.Prefix
}
