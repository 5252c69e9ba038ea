package layout

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/internal/pace"
)

// MoveResult counts what a move did.
type MoveResult struct {
	Moved   int // copied to the new layout and deleted from the old
	Missing int // not in the old layout (already moved, deleted, expired, or never there)
	Changed int // changed while being moved; the next pass retries them
	Kept    int // left in the old layout: their TTL cannot be carried over
	// TTLChanged counts keys moved into a bucket whose TTL replaced their
	// own (Namespace.BucketTTL, on a server without field expiry): they
	// now expire with their bucket.
	TTLChanged int
	// Replaced counts old copies found dead and deleted: on a cluster, the
	// new layout already held a newer value or a tombstone for the key (a
	// write or deletion whose second step, deleting the old copy, had not
	// run yet, or never will).
	Replaced int
}

func (r *MoveResult) add(o MoveResult) {
	r.Moved += o.Moved
	r.Missing += o.Missing
	r.Changed += o.Changed
	r.Kept += o.Kept
	r.TTLChanged += o.TTLChanged
	r.Replaced += o.Replaced
}

// move copies keys from the layout being migrated from into the new one,
// with their expiry, and deletes the old copies: two round trips for any
// number of keys. Each key moves atomically, in one call of the ops script
// whose guards check that the old copy still holds the bytes read (its
// field, and the value behind an oversize marker), so a value deleted or
// rewritten meanwhile is never resurrected. On a cluster, where the two
// copies are in different slots, see splitMove.
func (s *Store) move(ctx context.Context, keys []string) (MoveResult, error) {
	var res MoveResult
	old := s.old
	if old == nil {
		return res, errors.New("layout: the namespace has no MigrateFrom")
	}
	if s.cluster {
		return s.splitMove(ctx, keys)
	}
	ps, err := s.readMoving(ctx, keys)
	if err != nil {
		return res, err
	}
	var lists []*opList
	var buckets []string // the new bucket of each list, or ""
	var writes []int     // the index of each list's write reply
	var bucketTTL []bool // each list moves a key whose TTL its bucket's replaces
	for _, p := range ps {
		raw, err := p.r.resolveHere()
		if errors.Is(err, zipline.Nil) {
			res.Missing++
			continue
		}
		if err != nil {
			return res, fmt.Errorf("layout: reading %q from the old layout: %w", p.key, err)
		}
		o := &opList{}
		if p.r.l.bucket == "" {
			o.op("G", "g", o.key(p.r.l.plain), "", raw)
		} else {
			fv, _ := p.r.field.Result()
			o.op("G", "h", o.key(p.r.l.bucket), p.r.l.field, fv)
			if isMarker(fv) {
				o.op("G", "g", o.key(old.behind(p.r.l, fv)), "", raw)
			}
		}
		plain, err := old.decode(raw)
		if err != nil {
			return res, fmt.Errorf("layout: decoding %q from the old layout: %w", p.key, err)
		}
		l, err := s.locate(p.key)
		if err != nil {
			return res, err
		}
		ttl, at := p.expiry(s.fieldTTL.pexpiretime)
		e, err := s.expiryIn(l, ttl, at)
		if errors.Is(err, ErrNoFieldTTL) {
			res.Kept++
			continue
		}
		if err != nil {
			return res, err
		}
		writes = append(writes, s.addWrite(o, l, s.encode(plain), e, false))
		old.addDelete(o, p.r.l)
		lists = append(lists, o)
		buckets = append(buckets, l.bucket)
		bucketTTL = append(bucketTTL, e.mode == "b")
	}
	results, err := s.runOpsBatch(ctx, lists, nil)
	if err != nil {
		return res, err
	}
	for i, r := range results {
		switch {
		case r.err == nil:
			res.Moved++
			if bucketTTL[i] {
				res.TTLChanged++
			}
			if buckets[i] != "" {
				if err := s.tieOlder(ctx, buckets[i], r.replies[writes[i]]); err != nil {
					return res, err
				}
			}
		case errors.Is(r.err, errChanged):
			res.Changed++
		default:
			return res, r.err
		}
	}
	return res, nil
}

// readMoving reads the copies of keys in the old layout, in full, with
// their expiry, in one round trip.
func (s *Store) readMoving(ctx context.Context, keys []string) ([]moving, error) {
	b := s.c.Batch()
	ms := make([]moving, len(keys))
	for i, k := range keys {
		var err error
		if ms[i], err = s.queueMoving(b, k); err != nil {
			return nil, err
		}
	}
	return ms, execReads(ctx, b)
}

// queueMoving queues the reading of key's copy in the old layout, in full
// (an oversize value with its marker), with its expiry.
func (s *Store) queueMoving(b *zipline.Batch, key string) (moving, error) {
	r, err := s.old.queueRead(b, key, true)
	if err != nil {
		return moving{}, err
	}
	p := moving{key: key, r: r}
	if r.l.bucket == "" {
		p.plain = s.queueExpiry(b, r.l.plain)
		return p, nil
	}
	p.over = s.queueExpiry(b, s.old.oversizeKey(r.l))
	if name := s.old.legacyKey(r.l); name != "" {
		p.legacy = s.queueExpiry(b, name)
	}
	if s.old.fieldTTL.hpexpire {
		cmd := "HPTTL"
		if s.fieldTTL.pexpiretime {
			cmd = "HPEXPIRETIME"
		}
		p.field = b.Do(cmd, r.l.bucket, "FIELDS", 1, r.l.field)
	}
	return p, nil
}

// queueExpiry queues the reading of a key's expiry: its absolute time
// (PEXPIRETIME) where the server has it, its remaining time otherwise.
func (s *Store) queueExpiry(b *zipline.Batch, name string) *zipline.Future[zipline.Value] {
	if s.fieldTTL.pexpiretime {
		return b.Do("PEXPIRETIME", name)
	}
	return b.Do("PTTL", name)
}

// moving is one key's old copy, as read for a move.
type moving struct {
	key   string
	r     *read
	plain *zipline.Future[zipline.Value] // expiry of the old plain key
	over  *zipline.Future[zipline.Value] // expiry of the old oversize key
	// legacy is the expiry of the old legacy oversize key.
	legacy *zipline.Future[zipline.Value]
	field  *zipline.Future[zipline.Value] // expiry of the old bucket field
}

// expiry returns the old copy's expiry: a remaining time, or with abs an
// absolute time; both zero for none. A key gone meanwhile reads as no
// expiry: the move's guard will see that it changed.
func (m *moving) expiry(abs bool) (time.Duration, time.Time) {
	var f *zipline.Future[zipline.Value]
	switch marker := m.r.marker(); {
	case m.r.l.bucket == "":
		f = m.plain
	case bytes.Equal(marker, oversizeMarker):
		f = m.over
	case marker != nil:
		f = m.legacy
	case m.field != nil:
		codes, err := m.field.Val().AsSlice()
		if err != nil || len(codes) != 1 {
			return 0, time.Time{}
		}
		return expiryOf(codes[0], abs)
	}
	if f == nil {
		return 0, time.Time{}
	}
	return expiryOf(f.Val(), abs)
}

// expiryAt returns the old copy's expiry as a Unix time in milliseconds,
// 0 for none: read as such with abs (PEXPIRETIME), or a remaining time
// added to this machine's clock.
func (m *moving) expiryAt(abs bool) int64 {
	ttl, at := m.expiry(abs)
	switch {
	case !at.IsZero():
		return at.UnixMilli()
	case ttl > 0:
		return time.Now().Add(ttl).UnixMilli()
	}
	return 0
}

// expiryOf reads a PTTL or PEXPIRETIME reply (or one of their hash field
// forms): negative values mean no expiry, or no key.
func expiryOf(v zipline.Value, abs bool) (time.Duration, time.Time) {
	ms, err := v.AsInt64()
	switch {
	case err != nil || ms < 0:
		return 0, time.Time{}
	case abs:
		return 0, time.UnixMilli(ms)
	}
	return time.Duration(ms) * time.Millisecond, time.Time{}
}

// opResult is the outcome of one list of a runOpsBatch.
type opResult struct {
	replies []zipline.Value
	err     error // errChanged when a guard failed
}

// runOpsBatch runs several lists of operations in one round trip, each its
// own call of the script, by digest, with the reads that queue (if not nil)
// puts on the same batch. If a server lost its script cache (a restart, or
// a replica promoted on a cluster), it loads the script and runs again the
// calls that failed with NOSCRIPT, and only those: they ran nothing, while
// the others ran and must not run twice.
func (s *Store) runOpsBatch(ctx context.Context, lists []*opList, queue func(b *zipline.Batch) error) ([]opResult, error) {
	out := make([]opResult, len(lists))
	pending := make([]int, len(lists))
	for i := range pending {
		pending[i] = i
	}
	for attempt := 0; len(pending) > 0 || (attempt == 0 && queue != nil); attempt++ {
		b := s.c.Batch()
		if attempt == 0 && queue != nil {
			if err := queue(b); err != nil {
				return nil, err
			}
		}
		fs := make([]*zipline.Future[zipline.Value], len(pending))
		for n, i := range pending {
			fs[n] = lists[i].queueDigest(b)
		}
		if b.Len() == 0 {
			break
		}
		if err := execReads(ctx, b); err != nil {
			return nil, err
		}
		var again []int
		for n, i := range pending {
			v, err := fs[n].Result()
			var se *zipline.ServerError
			if errors.As(err, &se) && se.Prefix == "NOSCRIPT" && attempt == 0 {
				again = append(again, i)
				continue
			}
			if err == nil {
				out[i].replies, err = opsReplies(v, lists[i].n)
			}
			out[i].err = err
		}
		if len(again) > 0 {
			if err := opsScript.Load(ctx, s.c); err != nil {
				return nil, err
			}
		}
		pending = again
	}
	return out, nil
}

// MigrateOptions tune a background migration.
type MigrateOptions struct {
	// Batch is how many keys move per round trip pair (per three round
	// trips on a cluster). Default 100.
	Batch int
	// Rate caps keys moved per second; 0 is no cap.
	Rate int
	// Cursor resumes a migration where an earlier Progress left it; "" or
	// "0" starts from the beginning. (Moved keys leave the old layout, so
	// starting over is always correct, only slower.) A migration on a
	// cluster scans every primary in turn and cannot resume: its Progress
	// reports the cursor "" until the scan is complete.
	Cursor string
	// OnProgress, if set, is called after each batch.
	OnProgress func(Progress)
}

// Progress reports a running migration.
type Progress struct {
	MoveResult
	Scanned int    // old-layout keys looked at
	Cursor  string // where to resume; "0" when the scan is complete ("" before, on a cluster)
}

// Complete reports whether the pass that p sums up, if it started from
// the beginning (no Cursor), left nothing for another: every key it found
// was already gone, or kept in the old layout for its TTL. On a cluster
// that is when tombstones may go (see Sweep).
func (p Progress) Complete() bool {
	return p.Cursor == "0" && p.Moved+p.Changed+p.Replaced == 0
}

// Migrate moves every key of the layout being migrated from into the new
// one, scanning the old layout's stored keys. It is safe to run while the
// application reads and writes: each key moves atomically and only if
// unchanged since it was read. Keys that changed meanwhile are counted and
// left for another pass; run Migrate again until it moves nothing.
func (s *Store) Migrate(ctx context.Context, opts MigrateOptions) (Progress, error) {
	if s.old == nil {
		return Progress{}, errors.New("layout: the namespace has no MigrateFrom")
	}
	if opts.Batch <= 0 {
		opts.Batch = 100
	}
	p := Progress{Cursor: opts.Cursor}
	if p.Cursor == "" && !s.cluster {
		p.Cursor = "0"
	}
	start := time.Now()
	err := s.old.scanStored(ctx, p.Cursor, int64(opts.Batch), func(names []string, next string) (bool, error) {
		keys, err := s.old.appKeys(ctx, names)
		if err != nil {
			return false, err
		}
		for len(keys) > 0 {
			n := min(len(keys), opts.Batch)
			res, err := s.move(ctx, keys[:n])
			if err != nil {
				return false, err
			}
			p.Scanned += n
			p.add(res)
			keys = keys[n:]
			if err := pace.Rate(ctx, start, int64(p.Scanned), opts.Rate); err != nil {
				return false, err
			}
		}
		p.Cursor = next
		if opts.OnProgress != nil {
			opts.OnProgress(p)
		}
		return true, nil
	})
	return p, err
}
