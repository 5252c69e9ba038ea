package main

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

// store is a client under test: a cluster client or a Sentinel client.
type store interface {
	Set(ctx context.Context, key string, val []byte) error
	// Get returns nil, nil for a missing key.
	Get(ctx context.Context, key string) ([]byte, error)
	Close() error
}

// loadConfig is the load every client runs.
type loadConfig struct {
	Callers     int           // goroutines, each with keys of its own
	Keys        int           // keys per caller, written in turn
	CallTimeout time.Duration // each call's deadline
	RetryPause  time.Duration // a caller's pause after a failed call
}

// tick is the width of the buckets that successes are counted in: the
// resolution of the longest window without a success.
const tick = 10 * time.Millisecond

// maxTicks bounds a run: ten minutes of ticks.
const maxTicks = int(10 * time.Minute / tick)

// load runs the callers: each SETs its next key to a sequence number and
// GETs it back, so that a read that does not return what was just
// acknowledged is wrong, and records per key the last sequence number
// acknowledged and the last one tried (a failed SET may have run).
type load struct {
	cfg   loadConfig
	s     store
	start time.Time
	ok    []atomic.Int32 // successes per tick since start
	total atomic.Int64   // successes in all
	wrong atomic.Int64

	mu       sync.Mutex
	failures []failure

	acked, tried [][]uint64 // [caller][key], each written by its caller only
	stop         chan struct{}
	wg           sync.WaitGroup
}

// failure is a failed call, at its start since the load began, and its
// kind (never its text, which may carry a value).
type failure struct {
	at    time.Duration
	class string
}

func startLoad(cfg loadConfig, s store) *load {
	l := &load{cfg: cfg, s: s, start: time.Now(), ok: make([]atomic.Int32, maxTicks), stop: make(chan struct{})}
	l.acked, l.tried = make([][]uint64, cfg.Callers), make([][]uint64, cfg.Callers)
	for c := range cfg.Callers {
		l.acked[c], l.tried[c] = make([]uint64, cfg.Keys), make([]uint64, cfg.Keys)
		l.wg.Add(1)
		go l.caller(c)
	}
	return l
}

func key(caller, k int) string { return "roll:" + strconv.Itoa(caller) + ":" + strconv.Itoa(k) }

func (l *load) caller(c int) {
	defer l.wg.Done()
	for seq := uint64(1); ; seq++ {
		select {
		case <-l.stop:
			return
		default:
		}
		k := int(seq % uint64(l.cfg.Keys))
		val := strconv.AppendUint(nil, seq, 10)
		l.tried[c][k] = seq
		if !l.call(func(ctx context.Context) error { return l.s.Set(ctx, key(c, k), val) }) {
			continue
		}
		l.acked[c][k] = seq
		l.call(func(ctx context.Context) error {
			got, err := l.s.Get(ctx, key(c, k))
			if err == nil && string(got) != string(val) {
				l.wrong.Add(1)
			}
			return err
		})
	}
}

// call runs one call under its deadline and counts it.
func (l *load) call(do func(context.Context) error) bool {
	at := time.Since(l.start)
	ctx, cancel := context.WithTimeout(context.Background(), l.cfg.CallTimeout)
	err := do(ctx)
	cancel()
	if err != nil {
		l.mu.Lock()
		l.failures = append(l.failures, failure{at: at, class: failover.Classify(err)})
		l.mu.Unlock()
		time.Sleep(l.cfg.RetryPause) // pacing, as an application's retry would
		return false
	}
	if i := int(time.Since(l.start) / tick); i < maxTicks {
		l.ok[i].Add(1)
	}
	l.total.Add(1)
	return true
}

// now is the time since the load began.
func (l *load) now() time.Duration { return time.Since(l.start) }

// waitOK waits until n more calls have succeeded, or until d has passed.
func (l *load) waitOK(n int, d time.Duration) error {
	target := l.successes() + n
	deadline := time.Now().Add(d)
	for l.successes() < target {
		if time.Now().After(deadline) {
			return fmt.Errorf("fewer than %d calls succeeded in %v", n, d)
		}
		time.Sleep(tick) // a bounded poll of a counter, not synchronisation
	}
	return nil
}

func (l *load) successes() int { return int(l.total.Load()) }

// finish stops the callers and returns the successes per tick up to now
// and the failures.
func (l *load) finish() ([]int, []failure) {
	close(l.stop)
	l.wg.Wait()
	end := min(int(l.now()/tick)+1, maxTicks)
	ticks := make([]int, end)
	for i := range ticks {
		ticks[i] = int(l.ok[i].Load())
	}
	return ticks, l.failures
}

// lost reads every key back through the client (each read tried three
// times) and counts the keys whose value is older than the last write
// acknowledged: acknowledged writes lost.
func (l *load) lost(ctx context.Context) (int, error) {
	var lost atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, l.cfg.Callers)
	for c := range l.cfg.Callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range l.cfg.Keys {
				if l.tried[c][k] == 0 {
					continue
				}
				var got []byte
				var err error
				for range 3 {
					cctx, cancel := context.WithTimeout(ctx, l.cfg.CallTimeout)
					got, err = l.s.Get(cctx, key(c, k))
					cancel()
					if err == nil {
						break
					}
				}
				if err != nil {
					errs[c] = fmt.Errorf("reading %s back: %w", key(c, k), err)
					return
				}
				var v uint64
				if got != nil {
					if v, err = strconv.ParseUint(string(got), 10, 64); err != nil {
						errs[c] = fmt.Errorf("%s holds %q", key(c, k), got)
						return
					}
				}
				if v < l.acked[c][k] || v > l.tried[c][k] {
					lost.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	return int(lost.Load()), errors.Join(errs...)
}
