package pipe

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/internal/testkit"
	"github.com/ziplinekv/zipline/testbed/servertest"
)

// idleConnectionHeap is what an idle connection may hold on the heap
// (issue 42: a client of a 1,000-node cluster holds a connection per node
// before it sends a command). The stack of its writer goroutine comes on
// top (its reader goroutine ends while it idles).
const idleConnectionHeap = 8 << 10

// What an idle connection costs: 400 pipes, each used first (a burst of
// pipelined requests and an 8 KiB value, which grow its buffers), then
// left idle until its health check has run twice (the first gives the
// buffers back): heap and stacks over the number of connections, measured
// without the race detector. Before the buffers shrank and the reader
// goroutine ended: 29.8 KiB of heap and 10.1 KiB of stacks.
func TestIdleConnectionMemory(t *testing.T) {
	servertest.MeasuredWithoutRace(t)
	const conns = 400
	srv := testkit.NewServer(t, testkit.Config{})
	ctx := context.Background()
	opts := testOptions(srv.Addr)
	opts.HealthCheckInterval = 20 * time.Millisecond
	{
		p := newPipe(t, opts)
		if _, err := do(ctx, p, "SET", "big", strings.Repeat("v", 8<<10)); err != nil {
			t.Fatal(err)
		}
	}
	beforeHeap, beforeStack := memoryInUse()
	pipes := make([]*Pipe, conns)
	defer func() { // not t.Cleanup: its closures would count as the pipes'
		for _, p := range pipes {
			if p != nil {
				p.Close()
			}
		}
	}()
	for i := range pipes {
		p, err := New(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		pipes[i] = p
	}
	for _, p := range pipes {
		burst(t, p, 64)
		if v, err := do(ctx, p, "GET", "big"); err != nil || len(v.Bytes()) != 8<<10 {
			t.Fatalf("GET big: %d bytes, %v", len(v.Bytes()), err)
		}
	}
	// Idle: every pipe's health check has gone out and come back twice
	// since its last request (bounded wait for a timer-driven event).
	starts := make([]uint64, conns)
	for i, p := range pipes {
		starts[i] = p.Stats().Batches.Load()
	}
	for i, p := range pipes {
		idleShrunk(t, p, starts[i])
	}
	afterHeap, afterStack := memoryInUse()
	heap := float64(afterHeap-beforeHeap) / conns
	stack := float64(afterStack-beforeStack) / conns
	per := heap + stack
	t.Logf("an idle connection costs %.0f bytes: %.0f of heap (goal %d), %.0f of goroutine stacks", per, heap, idleConnectionHeap, stack)
	if heap > idleConnectionHeap {
		t.Errorf("an idle connection holds %.0f bytes of heap (goal %d): its buffers were not given back", heap, idleConnectionHeap)
	}
	runtime.KeepAlive(pipes)
}

// burst sends n pipelined GETs at once and waits for their replies.
func burst(t *testing.T, p *Pipe, n int) {
	t.Helper()
	errs := make(chan error, n)
	for range n {
		go func() {
			_, err := do(context.Background(), p, "GET", "big")
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// idleShrunk waits until p has written two health checks since it had
// written start batches.
func idleShrunk(t *testing.T, p *Pipe, start uint64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for p.Stats().Batches.Load() < start+2 {
		if time.Now().After(deadline) {
			t.Fatal("no health check written while idle")
		}
		time.Sleep(5 * time.Millisecond) // waiting for a timer-driven event
	}
}

// memoryInUse returns the heap in use and the goroutine stacks, after a
// collection.
func memoryInUse() (heap, stacks uint64) {
	for range 20 { // each cycle halves the stacks that use under a quarter
		runtime.GC()
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc, m.StackInuse
}
