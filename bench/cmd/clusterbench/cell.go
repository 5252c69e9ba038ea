package main

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/ziplinekv/zipline/bench"
	"github.com/ziplinekv/zipline/bench/harness"
	"github.com/ziplinekv/zipline/testbed"
)

// point is where a client is measured: an operation at a concurrency.
type point struct {
	op   bench.ClusterOp
	conc int
}

func (p point) String() string {
	name := strings.ToUpper(string(p.op))
	if p.op == bench.OpMGet || p.op == bench.OpBatch {
		name = fmt.Sprintf("%s×%d", name, bench.BatchKeys)
	}
	return fmt.Sprintf("%s c=%d", name, p.conc)
}

// cellSpec is one measurement: one client at one point, in one run.
type cellSpec struct {
	factory bench.ClusterFactory
	point
	run int
}

// result is what one cell measured.
type result struct {
	cellSpec
	harness.Measurement
	remeasured bool // a first attempt was too noisy and was replaced
}

// runner runs cells against one cluster.
type runner struct {
	cluster  *testbed.Cluster
	pids     []int // every node's server process
	warmup   time.Duration
	duration time.Duration
	size     int
	record   *harness.Recorders // -trace-dir, -perf-stat-dir
	harness.Runner
}

// runCell prefills the keys, creates a fresh client and measures it.
// Single-key goroutines start at key g×NumKeys/conc and walk the keys
// round-robin; MGET and batch goroutines take windows of BatchKeys
// consecutive keys (which hash to about as many slots, on every primary),
// one window after the other. Every value read is checked for its length.
func (rn *runner) runCell(spec cellSpec) (m harness.Measurement) {
	m.ServerCPU = -1
	val := bench.Value(rn.size)
	seed := rn.cluster.Addrs()[0]
	if err := bench.Prefill(seed, val); err != nil {
		m.Failed = "prefill: " + err.Error()
		return m
	}
	runtime.GC()
	c, err := spec.factory.New(rn.cluster.Addrs()[:1])
	if err != nil {
		m.Failed = "connect: " + err.Error()
		return m
	}
	closeClient := sync.OnceFunc(func() { c.Close() })
	defer closeClient()
	return rn.Measure(harness.Cell{
		Conc: spec.conc, Warmup: rn.warmup, Duration: rn.duration, ServerPIDs: rn.pids, Close: closeClient,
		Op:      func(g int) harness.Op { return newOp(c, spec.point, g, val) },
		Observe: rn.observer(spec),
	})
}

// observer returns what records the cell's window, as -trace-dir and
// -perf-stat-dir ask, in files named after the cell: zipline-get-c8-run2.
func (rn *runner) observer(spec cellSpec) func() (stop func()) {
	name := fmt.Sprintf("%s-%s-c%d-run%d", spec.factory.Name, spec.op, spec.conc, spec.run)
	return rn.record.Observe(name, rn.duration, rn.pids)
}

// newOp returns goroutine g's operation at p.
func newOp(c bench.ClusterClient, p point, g int, val []byte) harness.Op {
	keys, size := bench.Keys, len(val)
	switch p.op {
	case bench.OpGet, bench.OpSet:
		return bench.KeyOp(c, p.op == bench.OpGet, g*len(keys)/p.conc, val)
	default:
		windows := len(keys) / bench.BatchKeys
		w := g % windows
		mget := p.op == bench.OpMGet
		return func(ctx context.Context) error {
			ks := keys[w*bench.BatchKeys : (w+1)*bench.BatchKeys]
			if w++; w == windows {
				w = 0
			}
			if mget {
				n, err := c.MGet(ctx, ks)
				return checkLen(n, err, len(ks)*size)
			}
			n, err := c.Batch(ctx, ks, val)
			return checkLen(n, err, len(ks)/2*size)
		}
	}
}

// checkLen returns err, or an error if n bytes of values were read where
// want were expected.
func checkLen(n int, err error, want int) error {
	if err == nil && n != want {
		err = fmt.Errorf("read %d bytes of values, want %d", n, want)
	}
	return err
}
