package main

import (
	"runtime"
	"sync"
	"time"

	"github.com/ziplinekv/zipline/bench"
	"github.com/ziplinekv/zipline/bench/harness"
)

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
	harness.Measurement
	remeasured bool // a first attempt was too noisy and was replaced
	clientName string
}

// runner runs cells against one server.
type runner struct {
	addr      string
	serverPID int // 0 when unknown
	warmup    time.Duration
	duration  time.Duration
	harness.Runner
}

// runCell prefills the keys, creates a fresh client and measures it:
// goroutine g starts at key g×NumKeys/conc and walks the keys round-robin,
// checking every GET's length.
func (rn *runner) runCell(spec cellSpec) (res result) {
	res.cellSpec = spec
	res.clientName = spec.factory.Name
	res.ServerCPU = -1
	val := bench.Value(spec.size)
	if err := bench.Prefill(rn.addr, val); err != nil {
		res.Failed = "prefill: " + err.Error()
		return res
	}
	runtime.GC()
	c, err := spec.factory.New(rn.addr, spec.conc)
	if err != nil {
		res.Failed = "connect: " + err.Error()
		return res
	}
	closeClient := sync.OnceFunc(func() { c.Close() })
	defer closeClient()
	get := spec.op == "get"
	res.Measurement = rn.Measure(harness.Cell{
		Conc: spec.conc, Warmup: rn.warmup, Duration: rn.duration, ServerPIDs: []int{rn.serverPID},
		Close: closeClient,
		Op:    func(g int) harness.Op { return bench.KeyOp(c, get, g*bench.NumKeys/spec.conc, val) },
	})
	return res
}
