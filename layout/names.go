package layout

import (
	"fmt"
	"strings"
)

// Names says where a namespace stores each application key: under the
// key's own name (zipped, with ZipAs), or as a field of a bucket, with the
// name of the key that holds a value too large for its bucket. Every Store
// has one, resolved against its server; NamesFor makes one without a
// server, for a tool that predicts what a namespace would store ("zipline
// analyze" prices keys by the lengths of these names). There is one way to
// name keys, and both use it.
type Names struct {
	prefix, stored string // Prefix, and ZipAs (or Prefix): how stored names begin
	zip            bool
	buckets        Buckets // resolved; nil for plain keys
	// maxValue is the longest field a bucket takes: the server's
	// hash-max-listpack-value. A longer field is stored as a plain key.
	maxValue int
	// reserved: names that begin with the bucket marker after the prefix
	// are the namespace's own (buckets, server dictionaries), so an
	// unzipped application key may not take one.
	reserved bool
}

// storeNames is Names, embedded in a Store under a name of the package's
// own: its methods (Place, OversizeKey) are the Store's, and nobody outside
// can replace it.
type storeNames = Names

// NamesFor returns the names ns gives keys on a server whose
// hash-max-listpack-entries and hash-max-listpack-value are maxEntries and
// maxValue. A DenseAuto namespace is named with the size New would choose
// for a new namespace there (a Store reads the size recorded in the
// server instead).
func NamesFor(ns Namespace, maxEntries, maxValue int) Names {
	n := Names{prefix: ns.Prefix, stored: ns.storedPrefix(), zip: ns.ZipAs != "", maxValue: maxValue,
		reserved: ns.Buckets != nil || ns.serverDictionaries()}
	if ns.Buckets != nil {
		n.buckets = ns.Buckets.resolve(maxEntries)
		if d, ok := n.buckets.(dense); ok && d.auto {
			n.buckets = dense{per: uint64(max(min(autoBuckets, maxEntries), 1))}
		}
	}
	return n
}

// HashedBuckets is the number of buckets of a Hashed namespace, 0 for any
// other.
func (n *Names) HashedBuckets() uint64 {
	if h, ok := n.buckets.(hashed); ok {
		return h.n
	}
	return 0
}

// Place is where one application key is stored.
type Place struct {
	// Key is the key's own stored name: the key itself, or its zipped
	// name. A bucketed value too large for its bucket may live there too
	// (an older layout's home for it).
	Key string
	// Bucket is the bucket's key and Field the key's field in it; Bucket
	// is "" when the key is stored as a plain key.
	Bucket, Field string
	// BucketNumber is the bucket's number, written in base 62 at the end of
	// Bucket.
	BucketNumber uint64
}

// Place returns where key is stored. It fails for a key outside the
// namespace's Prefix, and for an unzipped key that would take a name the
// namespace keeps for itself.
func (n *Names) Place(key string) (Place, error) {
	l, b, err := n.place(key)
	if err != nil {
		return Place{}, err
	}
	return Place{Key: l.plain, Bucket: l.bucket, Field: l.field, BucketNumber: b}, nil
}

// OversizeKey is the name of the key that holds p's value when it is too
// large for its bucket, "" for a key stored as a plain key.
func (n *Names) OversizeKey(p Place) string {
	if p.Bucket == "" {
		return ""
	}
	return n.oversizeKey(location{bucket: p.Bucket, field: p.Field, plain: p.Key})
}

// location is where an application key's value lives.
type location struct {
	bucket string // bucket key, or "" when the key is stored as a plain key
	field  string
	plain  string // plain key: the key itself, or, in a bucket, the legacy home of an oversize value
}

func (n *Names) locate(key string) (location, error) {
	l, _, err := n.place(key)
	return l, err
}

// place is locate, with the bucket's number.
func (n *Names) place(key string) (location, uint64, error) {
	tail, ok := strings.CutPrefix(key, n.prefix)
	if !ok {
		return location{}, 0, fmt.Errorf("%w: %q (prefix %q)", ErrNotInNamespace, key, n.prefix)
	}
	var l location
	if n.zip {
		l.plain = newString(len(n.stored)+len(tail)+4, func(b []byte) []byte {
			return appendZipTail(append(b, n.stored...), tail)
		})
	} else {
		if n.reserved && strings.HasPrefix(tail, string(bucketMarker)) {
			return location{}, 0, fmt.Errorf("layout: key %q starts with the bucket marker %q after the prefix; "+
				"set ZipAs to store such keys", key, bucketMarker)
		}
		l.plain = key
	}
	var num uint64
	if n.buckets != nil {
		if b, f, ok := n.buckets.locate(tail); ok && len(f) <= n.maxValue {
			l.bucket, l.field, num = n.bucketKey(b), f, b
		}
	}
	return l, num, nil
}

func (n *Names) bucketKey(b uint64) string {
	return newString(len(n.stored)+12, func(buf []byte) []byte {
		return appendBase62(append(append(buf, n.stored...), bucketMarker), b)
	})
}

// bucketOfOversize reads an oversize key's name (see oversizeKey): the
// bucket key and field whose value it holds. ok is false for any other
// name.
func (n *Names) bucketOfOversize(name string) (bucket, field string, ok bool) {
	rest, ok := strings.CutPrefix(name, n.stored+string(bucketMarker)+"{")
	if !ok {
		return "", "", false
	}
	tag := n.stored + string(bucketMarker)
	if !strings.HasPrefix(rest, tag) {
		return "", "", false
	}
	end := strings.IndexByte(rest[len(tag):], '}')
	if end < 0 {
		return "", "", false
	}
	if _, ok := parseBase62(rest[len(tag) : len(tag)+end]); !ok {
		return "", "", false
	}
	return rest[:len(tag)+end], rest[len(tag)+end+1:], true
}

// oversizeKey names the key that holds l's value when its field holds
// oversizeMarker: the stored prefix and the bucket marker, so that it is a
// name of the namespace that no application key can take (see ZipAs), then
// the bucket key as a hash tag, then the field. With a prefix that has no
// braces, or a hash tag of its own, it hashes to the bucket's slot.
func (n *Names) oversizeKey(l location) string {
	return newString(len(n.stored)+len(l.bucket)+len(l.field)+3, func(b []byte) []byte {
		b = append(append(append(b, n.stored...), bucketMarker, '{'), l.bucket...)
		return append(append(b, '}'), l.field...)
	})
}
