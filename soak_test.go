package zipline

import (
	"context"
	"flag"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/internal/testkit"
)

var soakFor = flag.Duration("soak", 0, "run TestSoak for this long, and the day-two operations' tests longer (make soak)")

// soakCount is how many times a day-two operation (a rotation, a renewal,
// a move) goes: short in make test, long under make soak.
func soakCount(short, long int) int {
	if *soakFor != 0 {
		return long
	}
	return short
}

// TestSoak runs mixed load through random faults for -soak (make soak:
// 10 minutes; not in CI): connection resets, cuts mid-reply, byte flips,
// frozen and slow links, CLIENT KILL, kill -9 and SIGSTOP of the server.
// Every minute it samples goroutines, heap and descriptors; at the end,
// with the load stopped and the Client closed, they must be back at their
// baseline, and they must not have grown from the first minute to the last.
func TestSoak(t *testing.T) {
	if *soakFor == 0 {
		t.Skip("run with -soak=10m (make soak)")
	}
	srv := testkit.NewServer(t, testkit.Config{})
	proxy := testkit.NewProxy(t, srv.Addr)
	base := testkit.Snapshot()
	c, err := New(Options{Addr: proxy.Addr(), IOTimeout: time.Second, ReconnectBackoffMax: 100 * time.Millisecond, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	l := startLoad(c, 256, 2*time.Second)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 11))
	faults := []struct {
		name string
		do   func()
	}{
		{"reset", func() { proxy.ResetAll() }},
		{"cut", func() {
			<-proxy.Arm(testkit.Cut{Dir: testkit.ToClient, After: int64(rng.IntN(1 << 16)), Reset: rng.IntN(2) == 0, MaxConns: 1}).Fired()
		}},
		{"flip", func() {
			<-proxy.Arm(testkit.Corrupt{Dir: testkit.ToClient, At: int64(rng.IntN(1 << 16)), Func: testkit.FlipBits(1 << rng.IntN(8)), MaxConns: 1}).Fired()
		}},
		{"freeze", func() {
			proxy.Freeze(testkit.Both)
			time.Sleep(time.Duration(rng.IntN(1500)) * time.Millisecond)
			proxy.Thaw(testkit.Both)
		}},
		{"slow", func() {
			proxy.SetLatency(testkit.Both, 20*time.Millisecond)
			time.Sleep(time.Second)
			proxy.SetLatency(testkit.Both, 0)
		}},
		{"client-kill", func() { srv.Do(ctx, "CLIENT", "KILL", "TYPE", "normal") }},
		{"kill-9", func() { srv.Kill(); time.Sleep(200 * time.Millisecond); testkit.Restart(t, srv) }},
		{"sigstop", func() {
			resume := testkit.Pause(t, srv)
			time.Sleep(time.Duration(rng.IntN(2000)) * time.Millisecond)
			resume()
		}},
	}
	counts := map[string]int{}
	var samples []testkit.Resources
	// The first sample is taken a minute in, once the load has opened
	// what it keeps open (solo connections, the bulk lane): growth is
	// measured from there.
	start := time.Now()
	nextSample := start.Add(time.Minute)
	for time.Since(start) < *soakFor {
		f := faults[rng.IntN(len(faults))]
		f.do() // the sleeps above hold a fault for a while: they are the fault, not synchronisation
		counts[f.name]++
		proxy.Heal()
		recovered(t, c, 10*time.Second)
		time.Sleep(time.Duration(200+rng.IntN(800)) * time.Millisecond) // load between faults
		if time.Now().After(nextSample) {
			s := testkit.Snapshot()
			samples = append(samples, s)
			t.Logf("%v: %v; %d ok so far", time.Since(start).Round(time.Second), s, l.ok.Load())
			nextSample = nextSample.Add(time.Minute)
		}
	}
	l.finish(t)
	t.Logf("faults: %v; reconnects %d", counts, c.Stats().Reconnects)
	if len(samples) >= 2 {
		first, last := samples[0], samples[len(samples)-1]
		if last.HeapBytes > first.HeapBytes+32<<20 || last.FDs > first.FDs+8 || last.Goroutines > first.Goroutines+32 {
			t.Errorf("grew under load: first minute %v, last %v", first, last)
		}
	}
	c.Close()
	testkit.ExpectBaseline(t, base, testkit.Tolerance{Goroutines: 2, FDs: 2, HeapBytes: 16 << 20}, 10*time.Second)
	t.Logf("after Close: %v (baseline %v)", testkit.Snapshot(), base)
}
