package pipe

import (
	"sync"
	"testing"
	"time"
)

// latenessProbe measures how late a 1 ms timer fires while a test runs: the
// share of a wait that is the Go scheduler's (and, on two cores shared with
// the servers, other packages' tests and CPU-bound processes, the
// machine's), not the pipe's. The root package's fault tests keep the same
// measure (schedulerProbe). An upper bound on how long a pipe's timer took
// to fire adds the lateness the probe saw over that wait; a lower bound
// never does.
type latenessProbe struct {
	stop, done chan struct{}

	mu    sync.Mutex
	at    []time.Time     // when each tick fired
	total []time.Duration // the lateness summed up to that tick
}

// startLatenessProbe runs a probe until the test ends.
func startLatenessProbe(t *testing.T) *latenessProbe {
	p := &latenessProbe{stop: make(chan struct{}), done: make(chan struct{})}
	go p.run()
	t.Cleanup(func() {
		close(p.stop)
		<-p.done
	})
	return p
}

func (p *latenessProbe) run() {
	defer close(p.done)
	tick := time.NewTimer(time.Millisecond)
	defer tick.Stop()
	var total time.Duration
	for {
		t0 := time.Now()
		tick.Reset(time.Millisecond)
		select {
		case <-p.stop:
			return
		case <-tick.C:
		}
		now := time.Now()
		total += max(0, now.Sub(t0)-time.Millisecond)
		p.mu.Lock()
		p.at, p.total = append(p.at, now), append(p.total, total)
		p.mu.Unlock()
	}
}

// between is the lateness of the ticks that overlapped (from, to],
// including the one under way at to: a stall that delayed a timer due
// before to also delays the tick that spans it. It waits, bounded, for
// that tick to fire.
func (p *latenessProbe) between(t *testing.T, from, to time.Time) time.Duration {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		p.mu.Lock()
		n := len(p.at)
		if n > 0 && !p.at[n-1].Before(to) {
			defer p.mu.Unlock()
			first := 0 // the first tick that ended after from
			for first < n && !p.at[first].After(from) {
				first++
			}
			last := first // the first tick that ended at or after to
			for last < n-1 && p.at[last].Before(to) {
				last++
			}
			sum := p.total[last]
			if first > 0 {
				sum -= p.total[first-1]
			}
			return sum
		}
		p.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatal("the lateness probe's timer did not fire within 5 s")
		}
		time.Sleep(time.Millisecond) // waiting for the probe's next tick, bounded
	}
}
