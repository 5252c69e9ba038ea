// Package harness is how the client benchmarks measure on a small, shared
// machine: a cell runs goroutines that call one operation through a warm-up
// and a measured window (latency histogram, allocations, CPU of the client,
// of the server and of everything else), a quiet gate keeps other processes'
// CPU out of the measurements where it can, and Median and Spread summarise
// repeated runs. cmd/clientbench (one server) and cmd/clusterbench (a
// cluster) measure through it, so both tables mean the same thing, and
// cmd/abbench reads back the Results of clientbench processes built at two
// revisions (clientbench -json), so both sides of an A/B comparison are
// measured and summarised by this code alone.
package harness

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ziplinekv/zipline/cmd/zipline/bench/latency"
	"github.com/ziplinekv/zipline/cmd/zipline/bench/sysstat"
)

// Op is one operation of one goroutine: a GET, an MGET, a batch... It
// returns nil on success. An Op belongs to one goroutine and may keep state
// between calls (the next key).
type Op func(ctx context.Context) error

// Cell describes one measurement.
type Cell struct {
	Conc     int           // goroutines, each calling its own Op in a loop
	Warmup   time.Duration // unmeasured time before the window
	Duration time.Duration // the measured window
	// ServerPIDs are the server processes, whose CPU time is the server's
	// (all nodes of a cluster); empty when unknown.
	ServerPIDs []int
	// Op returns goroutine g's operation, g in [0, Conc); it is called for
	// every goroutine before any starts.
	Op func(g int) Op
	// Close closes the client under test. Measure calls it only when the
	// goroutines have not returned 30 s after the window, to unblock them.
	Close func()
	// Observe, when set, is called just before the window and returns what
	// to call just after it: a recorder of what happens in the window alone
	// (see WindowTrace and WindowPerfStat), warm-up excluded.
	Observe func() (stop func())
}

// Measurement is what one cell measured. Its JSON form is part of
// Result's, the record `clientbench -json` prints.
type Measurement struct {
	Ops         uint64        `json:"ops"`     // successful operations in the window
	Elapsed     time.Duration `json:"elapsed"` // the window, as measured
	P50         time.Duration `json:"p50"`     // per operation, as the calling goroutine sees it
	P99         time.Duration `json:"p99"`
	AllocsPerOp float64       `json:"allocs_per_op"` // whole process, over the window
	ServerCPU   float64       `json:"server_cpu_us"` // µs per op; <0 when unknown
	ClientCPU   float64       `json:"client_cpu_us"` // µs per op: this process, every thread
	OtherCPU    float64       `json:"other_cpu"`     // % of one CPU other processes used during the window; <0 when unknown
	Errors      uint64        `json:"errors"`        // failed operations, warm-up included
	FirstErr    string        `json:"first_err,omitempty"`
	Failed      string        `json:"failed,omitempty"` // non-empty when the cell produced no usable numbers
}

// OpsPerSec is the throughput over the window.
func (m *Measurement) OpsPerSec() float64 {
	if m.Elapsed <= 0 {
		return 0
	}
	return float64(m.Ops) / m.Elapsed.Seconds()
}

// maxOpsPerWorker bounds each worker loop by count as well as by time.
const maxOpsPerWorker = 1 << 34

// After the window, how long goroutines get to return before the client is
// closed, and then before they are abandoned.
const (
	stopGrace  = 30 * time.Second
	closeGrace = 10 * time.Second
)

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

func (w *worker) reset() {
	w.hist.Reset()
	w.ops, w.errs, w.err = 0, 0, nil
}

// loop calls op until the phase says stop, recording the time between
// consecutive returns (the operation plus the loop's few nanoseconds).
func (w *worker) loop(op Op, phase *atomic.Int32, base time.Time) {
	ctx := context.Background()
	prev := time.Since(base)
	for n := 0; n < maxOpsPerWorker; n++ {
		ph := phase.Load()
		if ph == phaseStop {
			return
		}
		err := op(ctx)
		now := time.Since(base)
		if err != nil {
			w.errs++
			if w.err == nil {
				w.err = err
			}
		} else if ph == phaseMeasure {
			w.hist.Record(now - prev)
			w.ops++
		}
		prev = now
	}
}

// Runner measures cells one at a time, reusing its workers.
type Runner struct {
	workers []*worker
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

func snap(pids []int) snapshot {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return snapshot{mallocs: ms.Mallocs, cpu: sysstat.Take(pids...)}
}

// Measure runs c: c.Conc goroutines call their Op through the warm-up and
// the window, then stop. The caller creates the client before and closes it
// after. A cell with more than 1 % failed operations, or none successful,
// is marked Failed; a failure is never a panic.
func (rn *Runner) Measure(c Cell) (m Measurement) {
	m.ServerCPU = -1
	ws := rn.getWorkers(c.Conc)
	ops := make([]Op, c.Conc)
	for g := range ops {
		ops[g] = c.Op(g)
	}
	var phase atomic.Int32
	var wg sync.WaitGroup
	base := time.Now()
	for g, w := range ws {
		wg.Go(func() { w.loop(ops[g], &phase, base) })
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()

	time.Sleep(c.Warmup)
	stopObserving := func() {}
	if c.Observe != nil {
		stopObserving = c.Observe()
	}
	before := snap(c.ServerPIDs)
	phase.Store(phaseMeasure)
	time.Sleep(c.Duration)
	phase.Store(phaseStop)
	after := snap(c.ServerPIDs)
	stopObserving()

	// Every worker finishes its current op and returns; a client that hangs
	// is closed to unblock it, and abandoned if even that does not help.
	select {
	case <-done:
	case <-time.After(stopGrace):
		c.Close()
		select {
		case <-done:
		case <-time.After(closeGrace):
			m.Failed = fmt.Sprintf("workers did not return within %v after stop (client hung); abandoned", stopGrace+closeGrace)
			return m
		}
		m.Failed = fmt.Sprintf("workers did not return within %v after stop; client closed", stopGrace)
	}

	var h latency.Histogram
	for _, w := range ws {
		h.Merge(&w.hist)
		m.Ops += w.ops
		m.Errors += w.errs
		if w.err != nil && m.FirstErr == "" {
			m.FirstErr = w.err.Error()
		}
	}
	used := after.cpu.Sub(before.cpu)
	m.Elapsed = used.Elapsed
	if m.Ops == 0 {
		if m.Failed == "" {
			m.Failed = "no operations completed"
		}
		return m
	}
	if m.Errors > 0 && m.Failed == "" && m.Errors*100 > m.Ops+m.Errors {
		m.Failed = fmt.Sprintf("%d errors and %d successful ops: %s", m.Errors, m.Ops, m.FirstErr)
	}
	n := float64(m.Ops)
	m.P50 = h.Quantile(0.50)
	m.P99 = h.Quantile(0.99)
	m.AllocsPerOp = float64(after.mallocs-before.mallocs) / n
	m.ClientCPU = float64(used.Self) / float64(time.Microsecond) / n
	if used.ServerOK {
		m.ServerCPU = float64(used.Server) / float64(time.Microsecond) / n
	}
	m.OtherCPU = used.OtherPercent()
	return m
}
