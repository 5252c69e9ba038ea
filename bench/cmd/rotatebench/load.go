package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ziplinekv/zipline/cmd/zipline/bench/failover"
)

// store is a client under test.
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
// GETs it back; a GET that does not return what was just set is wrong (a
// reply handed to the wrong caller, say an AUTH's "OK").
type load struct {
	cfg   loadConfig
	s     store
	start time.Time
	ok    []atomic.Int32 // successes per tick since start
	total atomic.Int64   // successes in all
	wrong atomic.Int64

	mu       sync.Mutex
	failures []failure

	stop chan struct{}
	wg   sync.WaitGroup
}

// failure is a failed call, at its start since the load began, and its
// kind (never its text, which may carry a value).
type failure struct {
	at    time.Duration
	class string
}

func startLoad(cfg loadConfig, s store) *load {
	l := &load{cfg: cfg, s: s, start: time.Now(), ok: make([]atomic.Int32, maxTicks), stop: make(chan struct{})}
	for c := range cfg.Callers {
		l.wg.Go(func() { l.caller(c) })
	}
	return l
}

func key(caller, k int) string { return "rot:" + strconv.Itoa(caller) + ":" + strconv.Itoa(k) }

func (l *load) caller(c int) {
	for seq := uint64(1); ; seq++ {
		select {
		case <-l.stop:
			return
		default:
		}
		k := key(c, int(seq%uint64(l.cfg.Keys)))
		val := strconv.AppendUint(nil, seq, 10)
		if !l.call(func(ctx context.Context) error { return l.s.Set(ctx, k, val) }) {
			continue
		}
		l.call(func(ctx context.Context) error {
			got, err := l.s.Get(ctx, k)
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
	target := l.total.Load() + int64(n)
	deadline := time.Now().Add(d)
	for l.total.Load() < target {
		if time.Now().After(deadline) {
			return fmt.Errorf("fewer than %d calls succeeded in %v", n, d)
		}
		time.Sleep(tick) // a bounded poll of a counter, not synchronisation
	}
	return nil
}

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

// figures are one run's results.
type figures struct {
	Steps int // rotations or renewals done
	// InPlace counts the rotations after which every connection the
	// client had before was still open and authenticated as the new user
	// before the previous one was deleted; Stale, the connections still authenticated as the previous
	// user when it was deleted, over all rotations.
	InPlace, Stale int
	// Switch is, per rotation, the time from the provider's change until
	// every connection was the new user (-1: not within -auth-wait).
	Switch     []time.Duration
	OK         int // successful calls over the rotations or renewals
	Failed     int // failed calls over them
	Errors     map[string]int
	Wrong      int // GETs that did not return the value just set
	Reconnects int // connections the server saw the client open over them
	Conns      int // the client's connections when they began
	ConnsEnd   int // and at the end
	Closed     int // Conns + Reconnects - ConnsEnd: connections the client lost or closed
	Handshakes int // TLS handshakes the client made over them
	OpsPerSec  float64
	// Window is the longest time without any successful call, to within
	// a tick.
	Window time.Duration
}

// measure works out f's figures of the calls over the phase that began at
// from (since the load began) and ran to the end of ticks.
func measure(f *figures, ticks []int, failures []failure, from time.Duration) {
	f.Errors = map[string]int{}
	for _, fl := range failures {
		if fl.at >= from {
			f.Failed++
			f.Errors[fl.class]++
		}
	}
	lo := min(int(from/tick), len(ticks))
	run := 0
	for _, n := range ticks[lo:] {
		f.OK += n
		if n == 0 {
			run++
			f.Window = max(f.Window, time.Duration(run)*tick)
		} else {
			run = 0
		}
	}
	if d := time.Duration(len(ticks)-lo) * tick; d > 0 {
		f.OpsPerSec = float64(f.OK) / d.Seconds()
	}
}

// clientConns returns, for each connection in a CLIENT LIST reply whose
// name is name, its id and the user it is authenticated as.
func clientConns(list, name string) map[int64]string {
	conns := map[int64]string{}
	for _, line := range strings.Split(list, "\n") {
		var id int64
		user, named := "", false
		for _, field := range strings.Fields(line) {
			switch k, v, _ := strings.Cut(field, "="); k {
			case "id":
				id, _ = strconv.ParseInt(v, 10, 64)
			case "name":
				named = v == name
			case "user":
				user = v
			}
		}
		if named {
			conns[id] = user
		}
	}
	return conns
}

// stale counts the connections not authenticated as user.
func stale(conns map[int64]string, user string) int {
	n := 0
	for _, u := range conns {
		if u != user {
			n++
		}
	}
	return n
}

// inPlace reports whether every connection of before is still open in
// after and authenticated as user: switched without a reconnect.
func inPlace(before, after map[int64]string, user string) bool {
	for id := range before {
		if after[id] != user {
			return false
		}
	}
	return true
}
