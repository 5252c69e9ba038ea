package main

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ziplinekv/zipline/bench"
	"github.com/ziplinekv/zipline/cmd/zipline/bench/latency"
	"github.com/ziplinekv/zipline/cmd/zipline/bench/sysstat"
)

// maxOpsPerWorker bounds each worker loop by count as well as by time.
const maxOpsPerWorker = 1 << 34

// cellSpec is one measurement: one client, op, value size and concurrency.
type cellSpec struct {
	factory bench.Factory
	op      string // "get" or "set"
	size    int
	conc    int
	run     int
}

// result is what one cell measured.
type result struct {
	cellSpec
	ops        uint64 // successful operations in the measured window
	elapsed    time.Duration
	p50, p99   time.Duration
	allocsOp   float64
	serverCPU  float64 // µs per op; <0 when unknown
	clientCPU  float64 // µs per op
	otherCPU   float64 // % of one CPU used by other processes during the cell; <0 when unknown
	errs       uint64  // failed operations, warm-up included
	firstErr   string
	remeasured bool   // a first attempt was too noisy and was replaced
	failed     string // non-empty when the cell produced no usable numbers
	clientName string
}

func (r *result) opsPerSec() float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return float64(r.ops) / r.elapsed.Seconds()
}

const (
	phaseWarmup int32 = iota
	phaseMeasure
	phaseStop
)

// worker is the per-goroutine state. Workers are reused across cells so the
// harness allocates nothing once a cell is running.
type worker struct {
	hist latency.Histogram
	ops  uint64
	errs uint64
	err  error
	_    [64]byte // keep neighbours' counters off this cache line
}

var errBadLen = errors.New("GET returned a value of the wrong length")

func (w *worker) reset() {
	w.hist.Reset()
	w.ops, w.errs, w.err = 0, 0, nil
}

func (w *worker) loop(c bench.Client, get bool, start int, val []byte, phase *atomic.Int32, base time.Time) {
	ctx := context.Background()
	keys := bench.Keys
	i := start
	size := len(val)
	prev := time.Since(base)
	for n := 0; n < maxOpsPerWorker; n++ {
		ph := phase.Load()
		if ph == phaseStop {
			return
		}
		k := keys[i]
		if i++; i == len(keys) {
			i = 0
		}
		var err error
		if get {
			var l int
			if l, err = c.Get(ctx, k); err == nil && l != size {
				err = errBadLen
			}
		} else {
			err = c.Set(ctx, k, val)
		}
		now := time.Since(base)
		if err != nil {
			w.errs++
			if w.err == nil {
				w.err = err
			}
		} else if ph == phaseMeasure {
			w.hist.Record(time.Duration(now - prev))
			w.ops++
		}
		prev = now
	}
}

// runner runs cells against one server.
type runner struct {
	addr      string
	serverPID int // 0 when unknown
	warmup    time.Duration
	duration  time.Duration
	workers   []*worker
}

func (rn *runner) getWorkers(n int) []*worker {
	for len(rn.workers) < n {
		rn.workers = append(rn.workers, new(worker))
	}
	ws := rn.workers[:n]
	for _, w := range ws {
		w.reset()
	}
	return ws
}

// snapshot is the counters a cell compares before and after its window.
type snapshot struct {
	mallocs uint64
	cpu     sysstat.Sample
}

func (rn *runner) snap() snapshot {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return snapshot{mallocs: ms.Mallocs, cpu: sysstat.Take(rn.serverPID)}
}

func (rn *runner) runCell(spec cellSpec) (res result) {
	res.cellSpec = spec
	res.clientName = spec.factory.Name
	res.serverCPU = -1
	val := bench.Value(spec.size)
	if err := bench.Prefill(rn.addr, val); err != nil {
		res.failed = "prefill: " + err.Error()
		return res
	}
	runtime.GC()
	c, err := spec.factory.New(rn.addr, spec.conc)
	if err != nil {
		res.failed = "connect: " + err.Error()
		return res
	}
	closed := false
	closeClient := func() {
		if !closed {
			closed = true
			c.Close()
		}
	}
	defer closeClient()

	ws := rn.getWorkers(spec.conc)
	var phase atomic.Int32
	var wg sync.WaitGroup
	base := time.Now()
	get := spec.op == "get"
	for g, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.loop(c, get, g*bench.NumKeys/spec.conc, val, &phase, base)
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()

	time.Sleep(rn.warmup)
	before := rn.snap()
	phase.Store(phaseMeasure)
	time.Sleep(rn.duration)
	phase.Store(phaseStop)
	after := rn.snap()

	// Every worker finishes its current op and returns; a client that hangs
	// is closed to unblock it, and abandoned if even that does not help.
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		closeClient()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			res.failed = "workers did not return within 40s after stop (client hung); abandoned"
			return res
		}
		res.failed = "workers did not return within 30s after stop; client closed"
	}

	var h latency.Histogram
	for _, w := range ws {
		h.Merge(&w.hist)
		res.ops += w.ops
		res.errs += w.errs
		if w.err != nil && res.firstErr == "" {
			res.firstErr = w.err.Error()
		}
	}
	used := after.cpu.Sub(before.cpu)
	res.elapsed = used.Elapsed
	if res.ops == 0 {
		if res.failed == "" {
			res.failed = "no operations completed"
		}
		return res
	}
	if res.errs > 0 && res.failed == "" && res.errs*100 > res.ops+res.errs {
		res.failed = fmt.Sprintf("%d errors and %d successful ops: %s", res.errs, res.ops, res.firstErr)
	}
	n := float64(res.ops)
	res.p50 = h.Quantile(0.50)
	res.p99 = h.Quantile(0.99)
	res.allocsOp = float64(after.mallocs-before.mallocs) / n
	res.clientCPU = float64(used.Self) / float64(time.Microsecond) / n
	if used.ServerOK {
		res.serverCPU = float64(used.Server) / float64(time.Microsecond) / n
	}
	res.otherCPU = used.OtherPercent()
	return res
}
