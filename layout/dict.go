package layout

// Dictionaries kept in the server.
//
// A namespace whose Codec is codec.ZstdDict without a Dictionary keeps its
// zstd dictionaries in the server, beside its keys, so that no application
// has to ship one and every process, the CLI included, reads and writes the
// same values:
//
//	<stored>#~dict:<id>   a dictionary, immutable, named by its ID
//	<stored>#~dict        the one new values are written with: "<id> <unix seconds it became so>"
//
// (<stored> is ZipAs, or Prefix; no application key's stored name starts
// with "#~", as for buckets.) Every zstd frame written with a dictionary
// names it by ID, so a reader loads a dictionary the first time a value
// names it, and keeps it. Writers read the active ID when the Store is made
// and again at most every dictRefresh while they write, so that once a new
// dictionary is made active every process writes with it within that time.
//
// TrainDictionary samples the namespace's values, trains a dictionary,
// stores it and makes it active. Reencode rewrites the values written with
// any other (each only if unchanged since read), and DropDictionaries
// deletes the dictionaries that no stored value names any longer. Rotation
// is those three in turn: a process killed at any point leaves every value
// readable, since a dictionary goes only once a scan found no value naming
// it, and a value is replaced only by itself, re-encoded.
//
// Values written with a dictionary stay inside the namespace: a GLIDE
// client, or a zipline Client without the dictionary, reads them as the
// stored bytes (GLIDE returns values of a backend it does not know as they
// are). The string commands' GLIDE-compatible envelope is unchanged.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/codec"
)

const (
	// metaMarker follows the bucket marker in the names of the
	// namespace's own keys, which hold no values: its dictionaries, and a
	// DenseAuto namespace's bucket size (server.go).
	metaMarker = "#~"
	// dictRefresh is how often a writing Store reads the active ID again.
	dictRefresh = 10 * time.Second
	// DictionaryGrace is how long after a dictionary became active the
	// dictionaries it replaced may be dropped: every process writing has
	// read the active ID again by then (three refreshes).
	DictionaryGrace = 3 * dictRefresh
	// dictFetchTimeout bounds the read of a dictionary a value names, made
	// when it is first needed, by a decode that has no context of its own.
	dictFetchTimeout = 5 * time.Second
	// maxLoadedDictionaries bounds the dictionaries a Store keeps: more
	// than a rotation or two leaves behind means stale values, which then
	// load their dictionary again.
	maxLoadedDictionaries = 16
)

// isMetaName reports whether a stored name (without the stored prefix) is
// one of the namespace's own keys (see metaMarker), not a value's.
func isMetaName(rest string) bool { return strings.HasPrefix(rest, metaMarker) }

// serverDictionaries reports whether the namespace keeps its zstd
// dictionaries in the server.
func (ns *Namespace) serverDictionaries() bool {
	return ns.Codec.Backend == codec.ZstdDict && len(ns.Codec.Dictionary) == 0
}

// dicts is a Store's view of its namespace's dictionaries.
type dicts struct {
	s     *Store
	base  zipline.Compression // the namespace's settings, but the backend
	plain *codec.Codec        // zstd without a dictionary: writes until one is trained

	mu     sync.Mutex
	loaded map[uint32]*codec.Codec

	active    atomic.Pointer[codec.Codec] // nil: none trained yet
	checked   atomic.Int64                // UnixNano of the last read of the active ID
	refreshes atomic.Bool                 // a refresh is under way
}

func newDicts(ctx context.Context, s *Store) (*dicts, error) {
	base := s.ns.Codec
	base.Backend = codec.Zstd
	plain, err := base.Codec()
	if err != nil {
		return nil, fmt.Errorf("layout: Namespace.Codec: %w", err)
	}
	d := &dicts{s: s, base: base, plain: plain, loaded: map[uint32]*codec.Codec{}}
	if err := d.refresh(ctx); err != nil {
		return nil, err
	}
	return d, nil
}

func (d *dicts) activeKey() string { return d.s.stored + metaMarker + "dict" }

func (d *dicts) dictKey(id uint32) string {
	return d.s.stored + metaMarker + "dict:" + strconv.FormatUint(uint64(id), 10)
}

// activeID reads which dictionary is active, and since when; 0 if none.
func (d *dicts) activeID(ctx context.Context) (uint32, time.Time, error) {
	v, err := d.s.c.Get(ctx, d.activeKey())
	if errors.Is(err, zipline.Nil) {
		return 0, time.Time{}, nil
	}
	if err != nil {
		return 0, time.Time{}, err
	}
	idText, since, _ := strings.Cut(string(v), " ")
	id, err := strconv.ParseUint(idText, 10, 32)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("layout: the active dictionary key %q holds %q, not an ID", d.activeKey(), v)
	}
	secs, _ := strconv.ParseInt(since, 10, 64)
	return uint32(id), time.Unix(secs, 0), nil
}

// refresh reads the active ID and loads its dictionary.
func (d *dicts) refresh(ctx context.Context) error {
	id, _, err := d.activeID(ctx)
	if err != nil {
		return err
	}
	d.checked.Store(time.Now().UnixNano())
	if id == 0 {
		d.active.Store(nil)
		return nil
	}
	c, err := d.load(ctx, id)
	if err != nil {
		return err
	}
	d.active.Store(c)
	return nil
}

// writer returns the codec new values are written with, and starts a
// refresh of the active ID in the background when the last is older than
// dictRefresh (encode has no context to wait on one).
func (d *dicts) writer() *codec.Codec {
	if time.Since(time.Unix(0, d.checked.Load())) > dictRefresh && d.refreshes.CompareAndSwap(false, true) {
		go func() {
			defer d.refreshes.Store(false)
			ctx, cancel := context.WithTimeout(context.Background(), dictFetchTimeout)
			defer cancel()
			if err := d.refresh(ctx); err != nil {
				d.s.log.Warn("layout: cannot read the namespace's active dictionary; writing with the one known",
					"prefix", d.s.ns.Prefix, "err", err)
			}
		}()
	}
	if c := d.active.Load(); c != nil {
		return c
	}
	return d.plain
}

// load returns the codec of dictionary id, reading it from the server the
// first time.
func (d *dicts) load(ctx context.Context, id uint32) (*codec.Codec, error) {
	d.mu.Lock()
	c := d.loaded[id]
	d.mu.Unlock()
	if c != nil {
		return c, nil
	}
	raw, err := d.s.c.Get(ctx, d.dictKey(id))
	if errors.Is(err, zipline.Nil) {
		return nil, fmt.Errorf("%w: %d (key %q)", ErrDictionaryMissing, id, d.dictKey(id))
	}
	if err != nil {
		return nil, err
	}
	if got, err := codec.DictionaryIDOf(raw); err != nil || got != id {
		return nil, fmt.Errorf("layout: key %q does not hold dictionary %d (%v)", d.dictKey(id), id, err)
	}
	cfg := d.base
	cfg.Backend, cfg.Dictionary = codec.ZstdDict, raw
	if c, err = cfg.Codec(); err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.loaded) >= maxLoadedDictionaries {
		active := d.active.Load()
		for k, v := range d.loaded {
			if v != active {
				delete(d.loaded, k)
				break
			}
		}
	}
	d.loaded[id] = c
	return c, nil
}

// ErrDictionaryMissing is the error of reading a value whose dictionary is
// not in the server (deleted by hand, or never written there).
var ErrDictionaryMissing = errors.New("layout: the dictionary a value names is not in the server")

// decode returns the application's value from a stored one, loading the
// dictionary it names if need be.
func (d *dicts) decode(b []byte) ([]byte, error) {
	id, ok := codec.DictionaryOf(b)
	if !ok {
		return d.plain.Decode(nil, b)
	}
	c, err := d.loadNow(id)
	if err != nil {
		return nil, err
	}
	return c.Decode(nil, b)
}

// loadNow is load for a decode, which has no context: bounded by
// dictFetchTimeout, once per dictionary.
func (d *dicts) loadNow(id uint32) (*codec.Codec, error) {
	d.mu.Lock()
	c := d.loaded[id]
	d.mu.Unlock()
	if c != nil {
		return c, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), dictFetchTimeout)
	defer cancel()
	return d.load(ctx, id)
}

// DecodeStored returns what the application reads from bytes stored in
// the namespace (a value as GET or HGET returns it): expanded with the
// namespace's codec, or with the dictionary it names, read from the server
// if need be. Tools that show stored values use it (zipline inspect).
func (s *Store) DecodeStored(b []byte) ([]byte, error) { return s.decode(b) }
