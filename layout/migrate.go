package layout

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/ziplinekv/zipline"
)

// moveScript moves one key between layouts if, and only if, the old copy
// still holds the bytes the mover read: ARGV is the guard (GET key, or
// HGET key field, and the expected bytes) followed by groupScript's list of
// commands. So a value deleted or rewritten meanwhile is never resurrected.
const moveScript = `local cur
if ARGV[1] == "get" then cur = redis.call('GET', ARGV[2]) else cur = redis.call('HGET', ARGV[2], ARGV[3]) end
if cur ~= ARGV[4] then return 0 end
local i = 5
while i <= #ARGV do
  local n = tonumber(ARGV[i])
  redis.call(unpack(ARGV, i+1, i+n))
  i = i + n + 1
end
return 1`

// MoveResult counts what a move did.
type MoveResult struct {
	Moved   int // copied to the new layout and deleted from the old
	Missing int // not in the old layout (already moved, deleted, or never there)
	Changed int // changed while being moved; the next pass retries them
	Kept    int // left in the old layout: their TTL cannot be carried over
}

func (r *MoveResult) add(o MoveResult) {
	r.Moved += o.Moved
	r.Missing += o.Missing
	r.Changed += o.Changed
	r.Kept += o.Kept
}

// move copies keys from the layout being migrated from into the new one,
// with their TTL, and deletes the old copies: two round trips for any
// number of keys. Each key moves atomically, guarded against concurrent
// writes (see moveScript).
func (s *Store) move(ctx context.Context, keys []string) (MoveResult, error) {
	var res MoveResult
	old := s.old
	if old == nil {
		return res, errors.New("layout: the namespace has no MigrateFrom")
	}
	b := s.c.Batch()
	ps := make([]moving, len(keys))
	for i, k := range keys {
		r, err := old.queueRead(b, k, true)
		if err != nil {
			return res, err
		}
		ps[i] = moving{key: k, r: r}
		if r.l.bucket == "" {
			ps[i].ttl = b.PTTL(r.l.plain)
		} else {
			ps[i].ttl = b.PTTL(r.l.plain) // an oversize value's own TTL
			if old.fieldTTL.hpexpire {
				ps[i].httl = b.Do("HPTTL", r.l.bucket, "FIELDS", 1, r.l.field)
			}
		}
	}
	if err := b.Exec(ctx); err != nil && !errors.Is(err, zipline.Nil) {
		var se *zipline.ServerError
		if !errors.As(err, &se) {
			return res, err
		}
	}
	mb := s.c.Batch()
	var moves []*zipline.Future[zipline.Value]
	for _, p := range ps {
		raw, err := p.r.resolveHere()
		if errors.Is(err, zipline.Nil) {
			res.Missing++
			continue
		}
		if err != nil {
			return res, fmt.Errorf("layout: reading %q from the old layout: %w", p.key, err)
		}
		guard := []any{"get", p.r.l.plain, "", raw}
		if p.r.field != nil {
			if fv, _ := valueBytes(p.r.field); !bytes.Equal(fv, oversizeMarker) {
				guard = []any{"hget", p.r.l.bucket, p.r.l.field, raw}
			}
		}
		ttl, err := p.oldTTL()
		if err != nil {
			return res, err
		}
		plain, err := old.decode(raw)
		if err != nil {
			return res, fmt.Errorf("layout: decoding %q from the old layout: %w", p.key, err)
		}
		l, err := s.locate(p.key)
		if err != nil {
			return res, err
		}
		cmds, err := s.writeCommands(l, s.encode(plain), ttl)
		if errors.Is(err, ErrNoFieldTTL) {
			res.Kept++
			continue
		}
		if err != nil {
			return res, err
		}
		cmds = append(cmds, deleteCommands(p.r.l)...)
		args := append([]any{"EVAL", moveScript, 0}, guard...)
		for _, c := range cmds {
			args = append(args, strconv.Itoa(len(c)))
			args = append(args, c...)
		}
		moves = append(moves, mb.Do(args...))
	}
	if len(moves) == 0 {
		return res, nil
	}
	if err := mb.Exec(ctx); err != nil {
		return res, err
	}
	for _, m := range moves {
		if n, _ := m.Val().AsInt64(); n == 1 {
			res.Moved++
		} else {
			res.Changed++
		}
	}
	return res, nil
}

// moving is one key's old copy, as read for a move.
type moving struct {
	key  string
	r    *read
	ttl  *zipline.Future[time.Duration] // PTTL of the old plain key
	httl *zipline.Future[zipline.Value] // HPTTL of the old bucket field
}

// oldTTL is the remaining TTL of the old copy, 0 for none.
func (m *moving) oldTTL() (time.Duration, error) {
	inBucket := false
	if m.r.field != nil {
		fv, _ := valueBytes(m.r.field)
		inBucket = !bytes.Equal(fv, oversizeMarker)
	}
	if !inBucket {
		d, err := m.ttl.Result()
		if err != nil || d < 0 {
			return 0, nil // no TTL, or gone meanwhile (the guard will see it)
		}
		return d, nil
	}
	if m.httl == nil {
		return 0, nil
	}
	codes, err := m.httl.Val().AsSlice()
	if err != nil || len(codes) != 1 {
		return 0, nil
	}
	if ms, _ := codes[0].AsInt64(); ms > 0 {
		return time.Duration(ms) * time.Millisecond, nil
	}
	return 0, nil
}

// MigrateOptions tune a background migration.
type MigrateOptions struct {
	// Batch is how many keys move per round trip pair. Default 100.
	Batch int
	// Rate caps keys moved per second; 0 is no cap.
	Rate int
	// Cursor resumes a migration where an earlier Progress left it; "" or
	// "0" starts from the beginning. (Moved keys leave the old layout, so
	// starting over is always correct, only slower.)
	Cursor string
	// OnProgress, if set, is called after each batch.
	OnProgress func(Progress)
}

// Progress reports a running migration.
type Progress struct {
	MoveResult
	Scanned int    // old-layout keys looked at
	Cursor  string // where to resume; "0" when the scan is complete
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
	if p.Cursor == "" {
		p.Cursor = "0"
	}
	start := time.Now()
	for {
		keys, next, err := s.old.scanPage(ctx, p.Cursor, int64(opts.Batch))
		if err != nil {
			return p, err
		}
		for len(keys) > 0 {
			n := min(len(keys), opts.Batch)
			res, err := s.move(ctx, keys[:n])
			if err != nil {
				return p, err
			}
			p.Scanned += n
			p.add(res)
			keys = keys[n:]
			if err := pace(ctx, start, p.Scanned, opts.Rate); err != nil {
				return p, err
			}
		}
		p.Cursor = next
		if opts.OnProgress != nil {
			opts.OnProgress(p)
		}
		if next == "0" {
			return p, nil
		}
	}
}

// pace sleeps so that done keys since start stay within rate per second.
func pace(ctx context.Context, start time.Time, done, rate int) error {
	if rate <= 0 {
		return ctx.Err()
	}
	ahead := time.Duration(done)*time.Second/time.Duration(rate) - time.Since(start)
	if ahead <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(ahead)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
