package layout

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
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

// An oversize value (see OversizeAsKey) is stored under a key of its own,
// and its bucket field holds a 2-byte marker that says which key:
//
//   - oversizeMarker: the key named by oversizeKey, "<stored>#{<bucket>}<field>".
//     Its hash tag is the whole bucket key, so it lives in the bucket's hash
//     slot and one script can write or delete both atomically, on a cluster
//     too. Its lifetime is tied to the marker's: it is written, replaced,
//     expired and deleted in the same script as the marker.
//   - legacyMarker: the key named like the application key would be as a
//     plain key (location.plain), as versions before the tagged name wrote
//     it. Such values still read, and every write or delete of their field
//     removes that key too (see the legacy flag).
//
// A value whose stored bytes equal either marker is itself stored as an
// oversize value, so a marker is never ambiguous.
var (
	oversizeMarker = []byte("\x00{")
	legacyMarker   = []byte("\x00~")
)

// isMarker reports whether a field value is either oversize marker.
func isMarker(v []byte) bool {
	return len(v) == 2 && v[0] == 0 && (v[1] == oversizeMarker[1] || v[1] == legacyMarker[1])
}

// Store reads and writes the keys of one namespace. It is safe for
// concurrent use. Its methods take application key names, which must start
// with the namespace's Prefix.
type Store struct {
	c  *zipline.Client // a Raw view: the Store encodes values itself
	ns Namespace
	// storeNames says where each key is stored (Store.Place); its
	// buckets are resolved against the server (nil for plain keys), and
	// its maxValue is the server's hash-max-listpack-value.
	storeNames
	codec *codec.Codec
	dicts *dicts // dictionaries kept in the server (dict.go), or nil
	log   *slog.Logger

	maxEntries int
	fieldTTL   fieldTTL

	old *Store // the layout being migrated from, or nil

	// cluster says whether the server is a Redis or Valkey Cluster node:
	// then each script touches one hash slot, and a migration follows the
	// protocol of split.go instead of moving keys in one script.
	cluster bool

	// legacy says whether values behind a legacyMarker can exist, so that
	// scripts that replace or delete a field also declare and remove the
	// legacy key. That key is in another hash slot than the bucket, so it
	// is off on a cluster: no legacy data can exist there, as namespaces
	// were standalone-only when it was written.
	legacy bool

	oversize atomic.Uint64
	// bucketWrites counts values written into buckets (oversize ones
	// included), against which Warnings judges oversize.
	bucketWrites atomic.Uint64

	server Server   // what New learned about the server
	costs  Costs    // the memory model on it (CostsFor(server))
	warns  warnings // what New, and writes since, found costly or unavailable

	// beforeRewrite, in tests, runs between Reencode's read of a value and
	// its compare-and-set: where an application's write must win.
	beforeRewrite func(key, field string)
}

// fieldTTL is what the server offers for expiring keys and hash fields.
type fieldTTL struct {
	hsetex   bool // HSETEX (Redis 8, Valkey 9)
	hpexpire bool // HPEXPIRE, HPEXPIREAT, HPTTL, HPEXPIRETIME (Redis 7.4, Valkey 9)
	// pexpiretime: PEXPIRETIME (Redis 7.0), so a migration can carry a
	// key's absolute expiry instead of a remaining time that the move
	// itself would lengthen.
	pexpiretime bool
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
	cluster, err := isCluster(ctx, c)
	if err != nil {
		return nil, err
	}
	if cluster {
		if err := ns.checkCluster(); err != nil {
			return nil, err
		}
	}
	s, err := newStore(ctx, c, ns, cluster)
	if err != nil {
		return nil, err
	}
	if ns.MigrateFrom != nil {
		if s.old, err = newStore(ctx, c, *ns.MigrateFrom, cluster); err != nil {
			return nil, fmt.Errorf("layout: MigrateFrom: %w", err)
		}
		if cluster && s.buckets != nil && ns.BucketTTL > 0 && !s.fieldTTL.hpexpire {
			// A bucket's expiry would take fields written without a TTL,
			// which leave no tombstone: an old value read before could
			// then be copied back (see the package documentation).
			return nil, errors.New("layout: on a cluster, a namespace that migrates cannot use BucketTTL: " +
				"the server has no field expiry, and a bucket's expiry would let old values come back")
		}
	}
	return s, nil
}

func newStore(ctx context.Context, c *zipline.Client, ns Namespace, cluster bool) (*Store, error) {
	s := &Store{c: c.Raw(), ns: ns, storeNames: Names{prefix: ns.Prefix, stored: ns.storedPrefix(), zip: ns.ZipAs != "",
		reserved: ns.Buckets != nil || ns.serverDictionaries()}, log: c.Logger(), cluster: cluster, legacy: !cluster}
	var err error
	if ns.serverDictionaries() {
		if s.dicts, err = newDicts(ctx, s); err != nil {
			return nil, err
		}
		s.codec = s.dicts.plain
	} else if s.codec, err = ns.Codec.Codec(); err != nil {
		return nil, fmt.Errorf("layout: Namespace.Codec: %w", err)
	}
	s.server = s.detectServer(ctx)
	s.server.Cluster = cluster
	if ns.Buckets == nil {
		s.costs = CostsFor(s.server)
		return s, nil
	}
	s.maxEntries, s.maxValue = s.listpackLimits(ctx)
	s.server.MaxListpackEntries, s.server.MaxListpackValue = s.maxEntries, s.maxValue
	s.fieldTTL = s.detectFieldTTL(ctx)
	s.server.FieldTTL = s.fieldTTL.hpexpire
	s.costs = CostsFor(s.server)
	s.buckets = ns.Buckets.resolve(s.maxEntries)
	if d, ok := s.buckets.(dense); ok && d.auto {
		if err := s.resolveAuto(ctx); err != nil {
			return nil, err
		}
	}
	if err := s.checkServer(); err != nil {
		return nil, err
	}
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
	v, err := s.c.Do(ctx, "COMMAND", "INFO", "HSETEX", "HPEXPIRE", "PEXPIRETIME")
	if err != nil {
		return fieldTTL{}
	}
	info, _ := v.AsSlice()
	known := func(i int) bool { return i < len(info) && !info[i].IsNil() }
	return fieldTTL{hsetex: known(0), hpexpire: known(1), pexpiretime: known(2)}
}

// legacyKey is the name the legacy marker points to, or "" when legacy
// names are off.
func (s *Store) legacyKey(l location) string {
	if !s.legacy {
		return ""
	}
	return l.plain
}

// newString builds a string in one allocation: fill appends to a buffer of
// capacity size, which is then used as the string's bytes.
func newString(size int, fill func([]byte) []byte) string {
	b := fill(make([]byte, 0, size))
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// encode returns the stored form of a value.
func (s *Store) encode(v []byte) []byte {
	c := s.codec
	if s.dicts != nil {
		c = s.dicts.writer()
	}
	if c == nil {
		return v
	}
	out, _ := c.Encode(nil, v)
	return out
}

// decode returns the application's value from its stored form.
func (s *Store) decode(b []byte) ([]byte, error) {
	if s.codec == nil || !codec.IsCompressed(b) {
		return b, nil
	}
	if s.dicts != nil {
		return s.dicts.decode(b)
	}
	return s.codec.Decode(nil, b)
}

// fits reports whether a stored value can go in a bucket without costing the
// bucket its listpack encoding.
func (s *Store) fits(enc []byte) bool {
	if isMarker(enc) {
		return false
	}
	return s.ns.Oversize == OversizeInBucket || len(enc) <= s.maxValue
}
