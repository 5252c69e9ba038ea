// Package setget is the load of the benchmarks that put clients through a
// switch (a failover, a rolling restart, a credential rotation): callers
// that each SET their next key to a sequence number and GET it back, under
// a deadline, pausing after a failure as an application's retry would. It
// counts successes per tick (for the longest window without one), keeps
// every failure's time and class (never its text, which may carry a
// value), the reads that did not return what was just acknowledged, and
// can read every key back to count acknowledged writes lost.
package setget

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ziplinekv/zipline/cmd/zipline/bench/failover"
)

// Store is a client under test.
type Store interface {
	Set(ctx context.Context, key string, val []byte) error
	// Get returns nil, nil for a missing key.
	Get(ctx context.Context, key string) ([]byte, error)
	Close() error
}

// Config is the load every client runs.
type Config struct {
	Callers     int           // goroutines, each with keys of its own
	Keys        int           // keys per caller, written in turn
	CallTimeout time.Duration // each call's deadline
	RetryPause  time.Duration // a caller's pause after a failed call
	Prefix      string        // of the keys: "<Prefix>:<caller>:<key>"
}

// Tick is the width of the buckets that successes are counted in: the
// resolution of the longest window without a success.
const Tick = 10 * time.Millisecond

// maxTicks bounds a run: ten minutes of ticks.
const maxTicks = int(10 * time.Minute / Tick)

// Failure is a failed call, at its start since the load began, and its
// kind (failover.Classify).
type Failure struct {
	At    time.Duration
	Class string
}

// Load is the callers at work.
type Load struct {
	cfg   Config
	s     Store
	start time.Time
	ok    []atomic.Int32 // successes per tick since start
	total atomic.Int64   // successes in all
	wrong atomic.Int64

	mu       sync.Mutex
	failures []Failure

	acked, tried [][]uint64 // [caller][key], each written by its caller only
	stop         chan struct{}
	wg           sync.WaitGroup
}

// Start starts cfg.Callers callers on s.
func Start(cfg Config, s Store) *Load {
	l := &Load{cfg: cfg, s: s, start: time.Now(), ok: make([]atomic.Int32, maxTicks), stop: make(chan struct{})}
	l.acked, l.tried = make([][]uint64, cfg.Callers), make([][]uint64, cfg.Callers)
	for c := range cfg.Callers {
		l.acked[c], l.tried[c] = make([]uint64, cfg.Keys), make([]uint64, cfg.Keys)
		l.wg.Go(func() { l.caller(c) })
	}
	return l
}

func (l *Load) key(caller, k int) string {
	return l.cfg.Prefix + ":" + strconv.Itoa(caller) + ":" + strconv.Itoa(k)
}

func (l *Load) caller(c int) {
	for seq := uint64(1); ; seq++ {
		select {
		case <-l.stop:
			return
		default:
		}
		k := int(seq % uint64(l.cfg.Keys))
		key := l.key(c, k)
		val := strconv.AppendUint(nil, seq, 10)
		l.tried[c][k] = seq
		if !l.call(func(ctx context.Context) error { return l.s.Set(ctx, key, val) }) {
			continue
		}
		l.acked[c][k] = seq
		l.call(func(ctx context.Context) error {
			got, err := l.s.Get(ctx, key)
			if err == nil && string(got) != string(val) {
				l.wrong.Add(1)
			}
			return err
		})
	}
}

// call runs one call under its deadline and counts it.
func (l *Load) call(do func(context.Context) error) bool {
	at := time.Since(l.start)
	ctx, cancel := context.WithTimeout(context.Background(), l.cfg.CallTimeout)
	err := do(ctx)
	cancel()
	if err != nil {
		l.mu.Lock()
		l.failures = append(l.failures, Failure{At: at, Class: failover.Classify(err)})
		l.mu.Unlock()
		time.Sleep(l.cfg.RetryPause) // pacing, as an application's retry would
		return false
	}
	if i := int(time.Since(l.start) / Tick); i < maxTicks {
		l.ok[i].Add(1)
	}
	l.total.Add(1)
	return true
}

// Began is when the load began.
func (l *Load) Began() time.Time { return l.start }

// Now is the time since the load began.
func (l *Load) Now() time.Duration { return time.Since(l.start) }

// Wrong is how many GETs did not return the value just acknowledged.
func (l *Load) Wrong() int { return int(l.wrong.Load()) }

// WaitOK waits until n more calls have succeeded, or until d has passed.
func (l *Load) WaitOK(n int, d time.Duration) error {
	target := l.total.Load() + int64(n)
	deadline := time.Now().Add(d)
	for l.total.Load() < target {
		if time.Now().After(deadline) {
			return fmt.Errorf("fewer than %d calls succeeded in %v", n, d)
		}
		time.Sleep(Tick) // a bounded poll of a counter, not synchronisation
	}
	return nil
}

// Finish stops the callers and returns the successes per tick up to now
// and the failures.
func (l *Load) Finish() ([]int, []Failure) {
	close(l.stop)
	l.wg.Wait()
	end := min(int(l.Now()/Tick)+1, maxTicks)
	ticks := make([]int, end)
	for i := range ticks {
		ticks[i] = int(l.ok[i].Load())
	}
	return ticks, l.failures
}

// Lost reads every key back through the client (each read tried three
// times) and counts the keys whose value is older than the last write
// acknowledged: acknowledged writes lost.
func (l *Load) Lost(ctx context.Context) (int, error) {
	var lost atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, l.cfg.Callers)
	for c := range l.cfg.Callers {
		wg.Go(func() {
			for k := range l.cfg.Keys {
				if l.tried[c][k] == 0 {
					continue
				}
				key := l.key(c, k)
				var got []byte
				var err error
				for range 3 {
					cctx, cancel := context.WithTimeout(ctx, l.cfg.CallTimeout)
					got, err = l.s.Get(cctx, key)
					cancel()
					if err == nil {
						break
					}
				}
				if err != nil {
					errs[c] = fmt.Errorf("reading %s back: %w", key, err)
					return
				}
				var v uint64
				if got != nil {
					if v, err = strconv.ParseUint(string(got), 10, 64); err != nil {
						errs[c] = fmt.Errorf("%s holds %d bytes that are not a sequence number", key, len(got))
						return
					}
				}
				if v < l.acked[c][k] || v > l.tried[c][k] {
					lost.Add(1)
				}
			}
		})
	}
	wg.Wait()
	return int(lost.Load()), errors.Join(errs...)
}

// LongestWindow returns the longest run of ticks without a success in
// ticks, and the index of the tick it began at (-1 when there is none).
func LongestWindow(ticks []int) (time.Duration, int) {
	longest, at, run := 0, -1, 0
	for i, n := range ticks {
		if n != 0 {
			run = 0
			continue
		}
		run++
		if run > longest {
			longest, at = run, i-run+1
		}
	}
	return time.Duration(longest) * Tick, at
}
