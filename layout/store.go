package layout

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/codec"
)

// Listpack limits used when the server will not say (CONFIG refused, as on
// some managed services); they are the defaults of Redis 7 and Valkey.
const (
	defaultMaxListpackEntries = 512
	defaultMaxListpackValue   = 64
)

// oversizeMarker is what a bucket field holds when its value is stored as a
// plain key instead (see OversizeAsKey). A value whose stored bytes equal it
// is itself stored as a plain key, so the marker is never ambiguous.
var oversizeMarker = []byte("\x00~")

// Store reads and writes the keys of one namespace. It is safe for
// concurrent use. Its methods take application key names, which must start
// with the namespace's Prefix.
type Store struct {
	c       *zipline.Client // a Raw view: the Store encodes values itself
	ns      Namespace
	stored  string // prefix of stored key names
	zip     bool
	buckets Buckets // resolved against the server; nil for plain keys
	codec   *codec.Codec
	log     *slog.Logger

	maxEntries, maxValue int
	fieldTTL             fieldTTL

	old *Store // the layout being migrated from, or nil

	oversize atomic.Uint64
}

// fieldTTL is what the server offers for expiring hash fields.
type fieldTTL struct {
	hsetex   bool // HSETEX (Redis 8, Valkey 9)
	hpexpire bool // HPEXPIRE and HPTTL (Redis 7.4, Valkey 9)
}

// Stats are a Store's counters.
type Stats struct {
	// OversizeValues counts values written as plain keys because they were
	// too large for a listpack bucket (the guard against the encoding
	// cliff).
	OversizeValues uint64
}

// Stats returns the Store's counters.
func (s *Store) Stats() Stats { return Stats{OversizeValues: s.oversize.Load()} }

// New returns a Store for ns on c. It reads the server's listpack limits
// (hash-max-listpack-entries and -value, or their ziplist names on older
// servers) and which hash field expiry commands it has. It never changes the
// server's configuration.
func New(ctx context.Context, c *zipline.Client, ns Namespace) (*Store, error) {
	if err := ns.validate(); err != nil {
		return nil, err
	}
	s, err := newStore(ctx, c, ns)
	if err != nil {
		return nil, err
	}
	if ns.MigrateFrom != nil {
		if s.old, err = newStore(ctx, c, *ns.MigrateFrom); err != nil {
			return nil, fmt.Errorf("layout: MigrateFrom: %w", err)
		}
	}
	return s, nil
}

func newStore(ctx context.Context, c *zipline.Client, ns Namespace) (*Store, error) {
	s := &Store{c: c.Raw(), ns: ns, stored: ns.storedPrefix(), zip: ns.ZipAs != "", log: c.Logger()}
	var err error
	if s.codec, err = ns.Codec.Codec(); err != nil {
		return nil, fmt.Errorf("layout: Namespace.Codec: %w", err)
	}
	if ns.Buckets == nil {
		return s, nil
	}
	s.maxEntries, s.maxValue = s.listpackLimits(ctx)
	s.buckets = ns.Buckets.resolve(s.maxEntries)
	if n := s.buckets.maxFields(); n > s.maxEntries {
		msg := fmt.Sprintf("layout: %s buckets of namespace %q can hold %d entries, more than the server's "+
			"hash-max-listpack-entries %d: full buckets will lose their compact encoding", s.buckets, ns.Prefix, n, s.maxEntries)
		if ns.Overflow == OverflowRefuse {
			return nil, errors.New(msg)
		}
		s.log.Warn(msg)
	}
	s.fieldTTL = s.detectFieldTTL(ctx)
	return s, nil
}

func (s *Store) listpackLimits(ctx context.Context) (entries, value int) {
	entries, value = defaultMaxListpackEntries, defaultMaxListpackValue
	cfg, err := s.c.ConfigGet(ctx, "hash-max-*")
	if err != nil {
		s.log.Warn("layout: cannot read the server's listpack limits; assuming the defaults",
			"entries", entries, "value", value, "err", err)
		return entries, value
	}
	for _, name := range []string{"listpack", "ziplist"} {
		if v, err := strconv.Atoi(cfg["hash-max-"+name+"-entries"]); err == nil {
			entries = v
		}
		if v, err := strconv.Atoi(cfg["hash-max-"+name+"-value"]); err == nil {
			value = v
		}
		if _, ok := cfg["hash-max-"+name+"-entries"]; ok {
			break
		}
	}
	return entries, value
}

func (s *Store) detectFieldTTL(ctx context.Context) fieldTTL {
	v, err := s.c.Do(ctx, "COMMAND", "INFO", "HSETEX", "HPEXPIRE")
	if err != nil {
		return fieldTTL{}
	}
	info, _ := v.AsSlice()
	known := func(i int) bool { return i < len(info) && !info[i].IsNil() }
	return fieldTTL{hsetex: known(0), hpexpire: known(1)}
}

// location is where an application key's value lives.
type location struct {
	bucket string // bucket key, or "" when the key is stored as a plain key
	field  string
	plain  string // plain key: the key itself, or an oversize value's home
}

func (s *Store) locate(key string) (location, error) {
	tail, ok := strings.CutPrefix(key, s.ns.Prefix)
	if !ok {
		return location{}, fmt.Errorf("%w: %q (prefix %q)", ErrNotInNamespace, key, s.ns.Prefix)
	}
	var l location
	if s.zip {
		l.plain = newString(len(s.stored)+len(tail)+4, func(b []byte) []byte {
			return appendZipTail(append(b, s.stored...), tail)
		})
	} else {
		if s.buckets != nil && strings.HasPrefix(tail, string(bucketMarker)) {
			return location{}, fmt.Errorf("layout: key %q starts with the bucket marker %q after the prefix; "+
				"set ZipAs to store such keys", key, bucketMarker)
		}
		l.plain = key
	}
	if s.buckets != nil {
		if b, f, ok := s.buckets.locate(tail); ok && len(f) <= s.maxValue {
			l.bucket, l.field = s.bucketKey(b), f
		}
	}
	return l, nil
}

func (s *Store) bucketKey(b uint64) string {
	return newString(len(s.stored)+12, func(buf []byte) []byte {
		return appendBase62(append(append(buf, s.stored...), bucketMarker), b)
	})
}

// newString builds a string in one allocation: fill appends to a buffer of
// capacity size, which is then used as the string's bytes.
func newString(size int, fill func([]byte) []byte) string {
	b := fill(make([]byte, 0, size))
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// encode returns the stored form of a value.
func (s *Store) encode(v []byte) []byte {
	if s.codec == nil {
		return v
	}
	out, _ := s.codec.Encode(nil, v)
	return out
}

// decode returns the application's value from its stored form.
func (s *Store) decode(b []byte) ([]byte, error) {
	if s.codec == nil || !codec.IsCompressed(b) {
		return b, nil
	}
	return s.codec.Decode(nil, b)
}

// fits reports whether a stored value can go in a bucket without costing the
// bucket its listpack encoding.
func (s *Store) fits(enc []byte) bool {
	if bytes.Equal(enc, oversizeMarker) {
		return false
	}
	return s.ns.Oversize == OversizeInBucket || len(enc) <= s.maxValue
}
