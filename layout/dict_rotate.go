package layout

// Training, re-encoding and dropping the dictionaries a namespace keeps in
// the server (dict.go).

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/codec"
	"github.com/ziplinekv/zipline/internal/pace"
)

// ErrNoServerDictionaries is the error of the dictionary methods on a
// namespace that does not keep its dictionaries in the server (its Codec
// is not codec.ZstdDict without a Dictionary).
var ErrNoServerDictionaries = errors.New("layout: the namespace does not keep its dictionaries in the server (Codec: codec.ZstdDict, no Dictionary)")

// ErrDictionaryGrace is the error of DropDictionaries within
// DictionaryGrace of a dictionary becoming active: a process may still
// write with one it would drop.
var ErrDictionaryGrace = errors.New("layout: too soon to drop dictionaries: a process may still write with an old one")

// TrainOptions bound TrainDictionary. Zero fields take the defaults.
type TrainOptions struct {
	// Size is the dictionary's size. Default codec.DefaultDictionarySize
	// (16 KiB).
	Size int
	// MaxSamples is how many values are sampled at most. Default 2,000.
	MaxSamples int
	// MaxSampleBytes bounds the bytes of the samples, and so the memory
	// the training takes (about 10 times that). Default 4 MiB.
	MaxSampleBytes int
	// MaxKeys bounds the keys read to find samples. Default 50,000.
	MaxKeys int
	// Rate caps the keys read per second; 0 is no cap.
	Rate int
	// From, if set, is the namespace sampled instead of this one: the one
	// its values will be migrated from, so that the migration writes them
	// with the dictionary at once (no re-encoding pass after it, and no
	// value stored for a while as it would be without one).
	From *Store
}

func (o TrainOptions) withDefaults() TrainOptions {
	if o.Size == 0 {
		o.Size = codec.DefaultDictionarySize
	}
	if o.MaxSamples <= 0 {
		o.MaxSamples = 2000
	}
	if o.MaxSampleBytes <= 0 {
		o.MaxSampleBytes = 4 << 20
	}
	if o.MaxKeys <= 0 {
		o.MaxKeys = 50000
	}
	return o
}

// maxSampleValue is the largest value sampled: dictionaries are for small
// values, and one large value would crowd out many small ones.
const maxSampleValue = 16 << 10

// TrainDictionary trains a zstd dictionary on a sample of the namespace's
// values, stores it in the server (immutable, under its ID) and makes it
// the one values are written with, here at once and in every other process
// within a refresh (10 s). It reads a bounded sample at a bounded rate
// (TrainOptions) and trains in this process: the server only serves reads,
// and is never blocked. It returns the dictionary's ID.
//
// Values already stored keep the dictionary they were written with (or
// none) until Reencode rewrites them. To move values into the namespace,
// train it on the values where they are (TrainOptions.From), then migrate.
func (s *Store) TrainDictionary(ctx context.Context, opts TrainOptions) (uint32, error) {
	if s.dicts == nil {
		return 0, ErrNoServerDictionaries
	}
	opts = opts.withDefaults()
	from := s
	if opts.From != nil {
		from = opts.From
	}
	samples, err := from.sample(ctx, opts)
	if err != nil {
		return 0, err
	}
	dict, err := codec.TrainDictionary(samples, opts.Size)
	if err != nil {
		return 0, fmt.Errorf("layout: training on %d values of %q: %w", len(samples), s.ns.Prefix, err)
	}
	id, err := codec.DictionaryIDOf(dict)
	if err != nil {
		return 0, err
	}
	key := s.dicts.dictKey(id)
	set, err := s.c.SetNX(ctx, key, dict)
	if err != nil {
		return 0, err
	}
	if !set {
		// The same ID stored before: it must be the same dictionary.
		old, err := s.c.Get(ctx, key)
		if err != nil {
			return 0, err
		}
		if string(old) != string(dict) {
			return 0, fmt.Errorf("layout: key %q holds another dictionary with ID %d; train again", key, id)
		}
	}
	active := strconv.FormatUint(uint64(id), 10) + " " + strconv.FormatInt(time.Now().Unix(), 10)
	if err := s.c.Set(ctx, s.dicts.activeKey(), []byte(active)); err != nil {
		return 0, err
	}
	return id, s.dicts.refresh(ctx)
}

// sample reads values of the namespace for training.
func (s *Store) sample(ctx context.Context, opts TrainOptions) ([][]byte, error) {
	var samples [][]byte
	var keys []string
	total, scanned, read := 0, 0, 0
	start := time.Now()
	flush := func() error {
		if len(keys) == 0 {
			return nil
		}
		read += len(keys)
		if err := pace.Rate(ctx, start, int64(read), opts.Rate); err != nil {
			return err
		}
		vs, err := s.MGet(ctx, keys...)
		keys = keys[:0]
		if err != nil {
			return err
		}
		for _, v := range vs {
			if len(v) >= 8 && len(v) <= maxSampleValue && len(samples) < opts.MaxSamples && total+len(v) <= opts.MaxSampleBytes {
				samples = append(samples, v)
				total += len(v)
			}
		}
		return nil
	}
	for key, err := range s.Scan(ctx) {
		if err != nil {
			return nil, err
		}
		keys = append(keys, key)
		scanned++
		if len(keys) == 100 {
			if err := flush(); err != nil {
				return nil, err
			}
		}
		if scanned >= opts.MaxKeys || len(samples) >= opts.MaxSamples || total >= opts.MaxSampleBytes {
			break
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	if len(samples) < codec.MinTrainingSamples {
		return nil, fmt.Errorf("layout: %q has %d values to train on, fewer than %d", s.ns.Prefix, len(samples), codec.MinTrainingSamples)
	}
	return samples, nil
}

// ReencodeOptions configure Reencode.
type ReencodeOptions struct {
	// Batch is how many stored keys are read per round trip. Default 100.
	Batch int
	// Rate caps stored keys read per second; 0 is no cap.
	Rate int
	// Cursor resumes a pass where an earlier Progress left it; "" or "0"
	// starts from the beginning (always correct, only slower). On a
	// cluster a pass cannot resume (see MigrateOptions.Cursor).
	Cursor string
	// OnProgress, if set, is called after each batch.
	OnProgress func(ReencodeProgress)
}

// ReencodeProgress reports a Reencode pass.
type ReencodeProgress struct {
	Scanned   int // stored keys looked at
	Values    int // values looked at (a bucket holds many)
	Rewritten int // values rewritten with the active dictionary
	Changed   int // values that changed between read and rewrite: left to the next pass
	// Named counts, for each dictionary ID, the values found naming it
	// (before any rewrite), and 0 the compressed values naming none.
	Named  map[uint32]int
	Cursor string // where to resume; "0" when the pass is complete
}

// Complete reports whether the pass that p sums up, if it started from the
// beginning, rewrote nothing and found nothing changing: every value was
// already written with the active dictionary (or is stored raw).
func (p ReencodeProgress) Complete() bool {
	return p.Cursor == "0" && p.Rewritten+p.Changed == 0
}

// Reencode rewrites the namespace's values that were written with another
// dictionary than the active one, or compressed without one, with the
// active dictionary. It is safe to run while the application reads and
// writes: each value is replaced only if it still holds what was read (a
// script compares and sets, keeping the key's or field's expiry), so it
// never brings back a value deleted or overwrites a newer one. Run it again
// until a pass is Complete. It does nothing before a dictionary is trained.
func (s *Store) Reencode(ctx context.Context, opts ReencodeOptions) (ReencodeProgress, error) {
	if s.dicts == nil {
		return ReencodeProgress{}, ErrNoServerDictionaries
	}
	if err := s.dicts.refresh(ctx); err != nil {
		return ReencodeProgress{}, err
	}
	active := s.dicts.active.Load()
	if opts.Batch <= 0 {
		opts.Batch = 100
	}
	p := ReencodeProgress{Named: map[uint32]int{}, Cursor: opts.Cursor}
	start := time.Now()
	err := s.scanStored(ctx, opts.Cursor, int64(opts.Batch), func(names []string, next string) (bool, error) {
		if err := s.reencodePage(ctx, names, active, &p); err != nil {
			return false, err
		}
		p.Scanned += len(names)
		if err := pace.Rate(ctx, start, int64(p.Scanned), opts.Rate); err != nil {
			return false, err
		}
		p.Cursor = next
		if opts.OnProgress != nil {
			opts.OnProgress(p)
		}
		return true, nil
	})
	return p, err
}

// reencodePage rewrites the values of one page of stored names.
func (s *Store) reencodePage(ctx context.Context, names []string, active *codec.Codec, p *ReencodeProgress) error {
	var strs, hashes []string
	for _, n := range names {
		rest := n[len(s.stored):]
		if isTouchedName(rest) {
			continue
		}
		if len(rest) > 1 && rest[0] == bucketMarker {
			if _, ok := parseBase62(rest[1:]); ok && s.buckets != nil {
				hashes = append(hashes, n)
				continue
			}
		}
		strs = append(strs, n)
	}
	if len(strs) > 0 {
		vs, err := s.c.MGet(ctx, strs...)
		if err != nil {
			return err
		}
		for i, v := range vs {
			if err := s.reencodeValue(ctx, strs[i], "", v, active, p); err != nil {
				return err
			}
		}
	}
	for _, h := range hashes {
		for fv, err := range s.c.HScan(ctx, h, zipline.ScanOptions{Count: 512}) {
			if err != nil {
				return err
			}
			if isMarker(fv.Value) {
				continue // its value is a key of its own, rewritten as one
			}
			if err := s.reencodeValue(ctx, h, fv.Field, fv.Value, active, p); err != nil {
				return err
			}
		}
	}
	return nil
}

// reencodeValue rewrites one stored value (of key, or of field of bucket
// key) with the active dictionary, if it was written otherwise: compressed
// with another dictionary or none, or stored raw because compressing it
// without a dictionary did not pay (small values, the ones a dictionary is
// for), where the dictionary now compresses it.
func (s *Store) reencodeValue(ctx context.Context, key, field string, stored []byte, active *codec.Codec, p *ReencodeProgress) error {
	if stored == nil {
		return nil
	}
	p.Values++
	plain := stored
	compressed := codec.IsCompressed(stored)
	if compressed {
		id, _ := codec.DictionaryOf(stored)
		p.Named[id]++
		if active == nil || id == active.DictionaryID() {
			return nil
		}
		var err error
		if plain, err = s.dicts.decode(stored); err != nil {
			return fmt.Errorf("layout: re-encoding %q: %w", key, err)
		}
	} else if active == nil {
		return nil
	}
	enc, _ := active.Encode(nil, plain)
	if !compressed && !codec.IsCompressed(enc) {
		return nil // raw, and the dictionary does not change that
	}
	if s.beforeRewrite != nil {
		s.beforeRewrite(key, field) // tests: the application writes here
	}
	var (
		ok  bool
		err error
	)
	fieldTTL := "0" // the scripts' flag: the server expires hash fields
	if s.fieldTTL.hpexpire {
		fieldTTL = "1"
	}
	bucket, bucketField, oversize := s.bucketOfOversize(key)
	switch {
	case field == "" && oversize && s.fits(enc):
		// A value too large for its bucket before, small enough now (a
		// dictionary's usual effect on small values): it moves back into
		// its bucket, where it costs a listpack entry instead of a key.
		ok, err = reencodeIntoBucketScript.run(ctx, s.c, []string{key, bucket}, bucketField, stored, enc, fieldTTL, oversizeMarker)
	case field == "":
		ok, err = reencodeKeyScript.run(ctx, s.c, []string{key}, stored, enc)
	default:
		ok, err = reencodeFieldScript.run(ctx, s.c, []string{key}, field, stored, enc, fieldTTL)
	}
	switch {
	case err != nil:
		return err
	case ok:
		p.Rewritten++
	default:
		p.Changed++
	}
	return nil
}

// cas is a compare-and-set script: it replies 1 if it wrote.
type cas struct{ *zipline.Script }

func (c cas) run(ctx context.Context, cl *zipline.Client, keys []string, args ...any) (bool, error) {
	v, err := c.Run(ctx, cl, keys, args...)
	if err != nil {
		return false, err
	}
	n, err := v.AsInt64()
	return n == 1, err
}

var (
	// reencodeKeyScript replaces a plain key's value if it still holds
	// ARGV[1], keeping its expiry.
	reencodeKeyScript = cas{zipline.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
	redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
	return 1
end
return 0`)}
	// reencodeIntoBucketScript moves an oversize value into its bucket
	// (KEYS[2], field ARGV[1]) re-encoded (ARGV[3]), if the oversize key
	// (KEYS[1]) still holds ARGV[2] and the field still holds the marker
	// (ARGV[5]): the field takes the key's expiry where the server expires
	// fields (ARGV[4] "1"); where it does not, a value with an expiry is
	// rewritten in place instead.
	reencodeIntoBucketScript = cas{zipline.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[2] or redis.call('HGET', KEYS[2], ARGV[1]) ~= ARGV[5] then
	return 0
end
local at = redis.call('PEXPIRETIME', KEYS[1])
if at > 0 and ARGV[4] ~= '1' then
	redis.call('SET', KEYS[1], ARGV[3], 'KEEPTTL')
	return 1
end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
if at > 0 then
	redis.call('HPEXPIREAT', KEYS[2], at, 'FIELDS', 1, ARGV[1])
end
redis.call('DEL', KEYS[1])
return 1`)}
	// reencodeFieldScript replaces a bucket field's value if it still holds
	// ARGV[2], keeping its expiry (ARGV[4] "1": the server has field
	// expiry, which HSET would clear).
	reencodeFieldScript = cas{zipline.NewScript(`
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then
	return 0
end
local at = -1
if ARGV[4] == '1' then
	at = redis.call('HPEXPIRETIME', KEYS[1], 'FIELDS', 1, ARGV[1])[1]
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
if at > 0 then
	redis.call('HPEXPIREAT', KEYS[1], at, 'FIELDS', 1, ARGV[1])
end
return 1`)}
)

// Dictionaries lists the dictionaries kept in the server for the
// namespace (their IDs), and which is active (0 before any is trained).
func (s *Store) Dictionaries(ctx context.Context) (ids []uint32, active uint32, err error) {
	if s.dicts == nil {
		return nil, 0, ErrNoServerDictionaries
	}
	if active, _, err = s.dicts.activeID(ctx); err != nil {
		return nil, 0, err
	}
	match := globEscape(s.stored+metaMarker+"dict:") + "*"
	for name, err := range s.c.Scan(ctx, zipline.ScanOptions{Match: match, Count: 1000}) {
		if err != nil {
			return nil, 0, err
		}
		id, err := strconv.ParseUint(name[len(s.stored)+len(metaMarker)+len("dict:"):], 10, 32)
		if err == nil {
			ids = append(ids, uint32(id))
		}
	}
	return ids, active, nil
}

// DropDictionaries deletes the namespace's dictionaries that no stored
// value names and that are not active, after a complete read-only scan of
// the namespace, and returns their IDs. It refuses to run until
// DictionaryGrace has passed since the active dictionary became so, so
// that no process still writes with one it would drop; a value written
// with a dropped dictionary could not be read again. With no dictionary
// but the active one, there is nothing to drop, and it returns at once.
func (s *Store) DropDictionaries(ctx context.Context) ([]uint32, error) {
	if s.dicts == nil {
		return nil, ErrNoServerDictionaries
	}
	ids, active, err := s.Dictionaries(ctx)
	if err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(ids, func(id uint32) bool { return id != active }) {
		return nil, nil // only the active one: nothing to drop, nothing to wait for
	}
	_, since, err := s.dicts.activeID(ctx)
	if err != nil {
		return nil, err
	}
	if wait := DictionaryGrace - time.Since(since); active != 0 && wait > 0 {
		return nil, fmt.Errorf("%w: dictionary %d became active %s ago; dictionaries can be dropped in %s",
			ErrDictionaryGrace, active, time.Since(since).Round(time.Second), wait.Round(time.Second))
	}
	named := map[uint32]int{}
	err = s.scanStored(ctx, "0", 1000, func(names []string, _ string) (bool, error) {
		p := ReencodeProgress{Named: named}
		return true, s.reencodePage(ctx, names, nil, &p) // active nil: read only
	})
	if err != nil {
		return nil, err
	}
	var dropped []uint32
	for _, id := range ids {
		if id == active || named[id] > 0 {
			continue
		}
		if _, err := s.c.Unlink(ctx, s.dicts.dictKey(id)); err != nil {
			return dropped, err
		}
		dropped = append(dropped, id)
	}
	return dropped, nil
}
