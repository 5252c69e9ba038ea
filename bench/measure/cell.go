// Package measure measures one cell of the client benchmark (one client,
// operation, value size and concurrency against one server) and summarises
// repeated measurements. cmd/clientbench runs it; cmd/abbench reads its
// Results back from clientbench processes built at two revisions, so both
// sides of an A/B comparison are measured and summarised by this code alone.
package measure

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ziplinekv/zipline/bench"
	"github.com/ziplinekv/zipline/cmd/zipline/bench/latency"
	"github.com/ziplinekv/zipline/cmd/zipline/bench/sysstat"
)

// maxOpsPerWorker bounds each worker loop by count as well as by time.
const maxOpsPerWorker = 1 << 34

// Cell is one measurement: one client, op, value size and concurrency.
type Cell struct {
	Client string `json:"client"` // a name registered in package bench
	Op     string `json:"op"`     // "get" or "set"
	Size   int    `json:"size"`   // value bytes
	Conc   int    `json:"conc"`   // goroutines sharing the client
	Run    int    `json:"run"`    // which pass over the cells (or round) this is
}

// String names the cell's point without client and run: "GET 64 B c=8".
func (c Cell) String() string {
	return fmt.Sprintf("%s %s c=%d", strings.ToUpper(c.Op), SizeLabel(c.Size), c.Conc)
}

// Result is what one cell measured. It is also the JSON record that
// `clientbench -json` prints, one per line.
type Result struct {
	Cell
	Ops         uint64        `json:"ops"`     // successful operations in the measured window
	Elapsed     time.Duration `json:"elapsed"` // the measured window
	P50         time.Duration `json:"p50"`
	P99         time.Duration `json:"p99"`
	AllocsPerOp float64       `json:"allocs_per_op"`
	ServerCPU   float64       `json:"server_cpu_us"` // µs per op; <0 when unknown
	ClientCPU   float64       `json:"client_cpu_us"` // µs per op
	OtherCPU    float64       `json:"other_cpu"`     // % of one CPU used by other processes during the cell; <0 when unknown
	Errors      uint64        `json:"errors"`        // failed operations, warm-up included
	FirstErr    string        `json:"first_err,omitempty"`
	Remeasured  bool          `json:"remeasured,omitempty"` // a first attempt was too noisy and was replaced
	Failed      string        `json:"failed,omitempty"`     // non-empty when the cell produced no usable numbers
}

// OpsPerSec is the throughput over the measured window.
func (r *Result) OpsPerSec() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Ops) / r.Elapsed.Seconds()
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

// Runner runs cells against one server, one at a time.
type Runner struct {
	Addr      string
	ServerPID int // 0 when unknown
	Warmup    time.Duration
	Duration  time.Duration
	workers   []*worker
}

func (rn *Runner) getWorkers(n int) []*worker {
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

func (rn *Runner) snap() snapshot {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return snapshot{mallocs: ms.Mallocs, cpu: sysstat.Take(rn.ServerPID)}
}

// Run measures one cell: it prefills the keys, creates a fresh client,
// runs cell.Conc goroutines for the warm-up and then for the measured
// window. A failure is reported in Result.Failed, never as a panic.
func (rn *Runner) Run(cell Cell) (res Result) {
	res.Cell = cell
	res.ServerCPU = -1
	f, ok := bench.Lookup(cell.Client)
	if !ok {
		res.Failed = "unknown client " + cell.Client
		return res
	}
	val := bench.Value(cell.Size)
	if err := bench.Prefill(rn.Addr, val); err != nil {
		res.Failed = "prefill: " + err.Error()
		return res
	}
	runtime.GC()
	c, err := f.New(rn.Addr, cell.Conc)
	if err != nil {
		res.Failed = "connect: " + err.Error()
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

	ws := rn.getWorkers(cell.Conc)
	var phase atomic.Int32
	var wg sync.WaitGroup
	base := time.Now()
	get := cell.Op == "get"
	for g, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.loop(c, get, g*bench.NumKeys/cell.Conc, val, &phase, base)
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()

	time.Sleep(rn.Warmup)
	before := rn.snap()
	phase.Store(phaseMeasure)
	time.Sleep(rn.Duration)
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
			res.Failed = "workers did not return within 40s after stop (client hung); abandoned"
			return res
		}
		res.Failed = "workers did not return within 30s after stop; client closed"
	}

	var h latency.Histogram
	for _, w := range ws {
		h.Merge(&w.hist)
		res.Ops += w.ops
		res.Errors += w.errs
		if w.err != nil && res.FirstErr == "" {
			res.FirstErr = w.err.Error()
		}
	}
	used := after.cpu.Sub(before.cpu)
	res.Elapsed = used.Elapsed
	if res.Ops == 0 {
		if res.Failed == "" {
			res.Failed = "no operations completed"
		}
		return res
	}
	if res.Errors > 0 && res.Failed == "" && res.Errors*100 > res.Ops+res.Errors {
		res.Failed = fmt.Sprintf("%d errors and %d successful ops: %s", res.Errors, res.Ops, res.FirstErr)
	}
	n := float64(res.Ops)
	res.P50 = h.Quantile(0.50)
	res.P99 = h.Quantile(0.99)
	res.AllocsPerOp = float64(after.mallocs-before.mallocs) / n
	res.ClientCPU = float64(used.Self) / float64(time.Microsecond) / n
	if used.ServerOK {
		res.ServerCPU = float64(used.Server) / float64(time.Microsecond) / n
	}
	res.OtherCPU = used.OtherPercent()
	return res
}
