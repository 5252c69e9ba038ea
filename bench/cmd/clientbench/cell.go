package main

import (
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/ziplinekv/zipline/bench"
	"github.com/ziplinekv/zipline/bench/harness"
)

// runner runs cells against one server.
type runner struct {
	addr      string
	serverPID int // 0 when unknown
	warmup    time.Duration
	duration  time.Duration
	record    *harness.Recorders // -trace-dir, -perf-stat-dir
	harness.Runner
}

// runCell prefills the keys, creates a fresh client of f and measures it at
// pt: goroutine g starts at key g×NumKeys/conc and walks the keys
// round-robin, checking every GET's length.
func (rn *runner) runCell(f bench.Factory, pt harness.Point) (m harness.Measurement) {
	m.ServerCPU = -1
	val := bench.Value(pt.Size)
	if err := bench.Prefill(rn.addr, val); err != nil {
		m.Failed = "prefill: " + err.Error()
		return m
	}
	runtime.GC()
	c, err := f.New(rn.addr, pt.Conc)
	if err != nil {
		m.Failed = "connect: " + err.Error()
		return m
	}
	closeClient := sync.OnceFunc(func() { c.Close() })
	defer closeClient()
	get := pt.Op == "get"
	if f.Batch > 1 {
		return rn.runBatchCell(c.(bench.Batcher), f.Batch, get, pt, val, closeClient)
	}
	return rn.Measure(harness.Cell{
		Conc: pt.Conc, Warmup: rn.warmup, Duration: rn.duration, ServerPIDs: []int{rn.serverPID},
		Close:   closeClient,
		Op:      func(g int) harness.Op { return bench.KeyOp(c, get, g*bench.NumKeys/pt.Conc, val) },
		Observe: rn.observer(pt),
	})
}

// runBatchCell measures a Batch factory (bench.Factory.Batch): pt.Conc/n
// goroutines, each sending n commands at a time, so that pt.Conc commands
// are in flight. Throughput, allocations and CPU are per command; the
// latencies are per batch.
func (rn *runner) runBatchCell(c bench.Batcher, n int, get bool, pt harness.Point, val []byte, closeClient func()) harness.Measurement {
	conc := max(pt.Conc/n, 1)
	m := rn.Measure(harness.Cell{
		Conc: conc, Warmup: rn.warmup, Duration: rn.duration, ServerPIDs: []int{rn.serverPID},
		Close:   closeClient,
		Op:      func(g int) harness.Op { return bench.BatchOp(c, get, n, g*bench.NumKeys/conc, val) },
		Observe: rn.observer(pt),
	})
	m.Ops *= uint64(n)
	m.AllocsPerOp /= float64(n)
	m.ClientCPU /= float64(n)
	if m.ServerCPU > 0 {
		m.ServerCPU /= float64(n)
	}
	return m
}

// observer returns what records the cell's window, as -trace-dir and
// -perf-stat-dir ask, in files named after the cell: zipline-get-64-c8-run2.
func (rn *runner) observer(pt harness.Point) func() (stop func()) {
	var pids []int
	if rn.serverPID != 0 {
		pids = []int{rn.serverPID}
	}
	return rn.record.Observe(fmt.Sprintf("%s-%s-%d-c%d-run%d", pt.Client, pt.Op, pt.Size, pt.Conc, pt.Run), rn.duration, pids)
}
