package compression

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ziplinekv/zipline/internal/pace"

	"github.com/ziplinekv/zipline/cmd/zipline/bench/latency"
	"github.com/ziplinekv/zipline/cmd/zipline/bench/sysstat"
)

// Op is a phase of a matrix cell.
type Op int

// A cell runs its SET phase, then its GET phase.
const (
	Set Op = iota
	Get
)

// Ops lists the phases in the order a cell runs them.
var Ops = []Op{Set, Get}

// String returns "SET" or "GET".
func (o Op) String() string {
	if o == Get {
		return "GET"
	}
	return "SET"
}

// GLIDE's matrix: goroutines × pipeline batch size.
var (
	GLIDEGoroutines = []int{1, 2, 4, 8, 10, 25, 100, 1000}
	GLIDEBatches    = []int{1, 5, 10, 20, 50}
)

// MatrixConfig says what RunMatrix measures.
type MatrixConfig struct {
	Addr       string
	Data       Dataset       // the keys and values every cell writes and reads
	Goroutines []int         // default GLIDEGoroutines
	Batches    []int         // default GLIDEBatches
	Duration   time.Duration // measured time of each phase; default 2s
	Warmup     time.Duration // unmeasured time before it; default 500ms
	// ServerPID, if not 0, is the server process, for server µs per op
	// (read from /proc).
	ServerPID int
	Progress  io.Writer // one line per phase; nil for none
	// AfterCell, if set, is called with the results so far after every
	// cell (all variants), e.g. to rewrite a report.
	AfterCell func(*Matrix)
	// StopTimeout is how long a phase waits for its goroutines after the
	// measured window before cancelling their context, and again before
	// giving up on them; default 30s.
	StopTimeout time.Duration
}

func (c MatrixConfig) withDefaults() MatrixConfig {
	if len(c.Goroutines) == 0 {
		c.Goroutines = GLIDEGoroutines
	}
	if len(c.Batches) == 0 {
		c.Batches = GLIDEBatches
	}
	if c.Duration <= 0 {
		c.Duration = 2 * time.Second
	}
	if c.Warmup < 0 {
		c.Warmup = 0
	} else if c.Warmup == 0 {
		c.Warmup = 500 * time.Millisecond
	}
	if c.StopTimeout <= 0 {
		c.StopTimeout = 30 * time.Second
	}
	return c
}

// Point is one phase of one cell for one variant.
type Point struct {
	Client     string
	Backend    Backend
	Op         Op
	Goroutines int
	Batch      int
	Ops        uint64        // keys written or read in the measured window
	Elapsed    time.Duration // length of the window
	P50, P99   time.Duration // per call: one SET/GET, or one batch
	ClientUS   float64       // µs of client-process CPU per key
	ServerUS   float64       // µs of server CPU per key; -1 when unknown
	OtherCPU   float64       // % of one CPU other processes used; -1 when unknown
	Errors     uint64        // failed keys, warm-up included (wrong lengths read count too)
	FirstErr   string
	Failed     string // why the point has no usable numbers; "" when it has
}

// TPS is keys per second in the measured window, 0 for a failed point.
func (p Point) TPS() float64 {
	if p.Failed != "" || p.Elapsed <= 0 {
		return 0
	}
	return float64(p.Ops) / p.Elapsed.Seconds()
}

// Matrix is RunMatrix's result.
type Matrix struct {
	Goroutines []int
	Batches    []int
	Clients    []string // in variant order, each once
	Backends   []Backend
	Duration   time.Duration
	Warmup     time.Duration
	Keys       int
	ValueClass string
	MeanSize   float64
	Points     []Point
}

// Point returns the point measured for these coordinates.
func (m *Matrix) Point(client string, b Backend, op Op, g, batch int) (Point, bool) {
	for _, p := range m.Points {
		if p.Client == client && p.Backend == b && p.Op == op && p.Goroutines == g && p.Batch == batch {
			return p, p.Failed == "" && p.Ops > 0
		}
	}
	return Point{}, false
}

// Ratio returns TPS with backend b over TPS without compression, for the
// same client, op and cell.
func (m *Matrix) Ratio(client string, b Backend, op Op, g, batch int) (float64, bool) {
	p, ok1 := m.Point(client, b, op, g, batch)
	base, ok2 := m.Point(client, None, op, g, batch)
	if !ok1 || !ok2 {
		return 0, false
	}
	return p.TPS() / base.TPS(), true
}

// Versus returns client a's TPS over client b's for the same backend, op
// and cell.
func (m *Matrix) Versus(a, b string, backend Backend, op Op, g, batch int) (float64, bool) {
	pa, ok1 := m.Point(a, backend, op, g, batch)
	pb, ok2 := m.Point(b, backend, op, g, batch)
	if !ok1 || !ok2 {
		return 0, false
	}
	return pa.TPS() / pb.TPS(), true
}

// PhaseTime estimates a cell's wall time per variant: prefill, two
// phases, client set-up.
func (c MatrixConfig) PhaseTime() time.Duration {
	c = c.withDefaults()
	return 2*(c.Duration+c.Warmup) + 300*time.Millisecond
}

// RunMatrix measures every cell (goroutines × batch) for every variant. A
// cell runs the variants back to back, in an order rotated from cell to
// cell, so drift on a shared machine hits them alike and each
// compressed/uncompressed ratio comes from neighbouring measurements. For
// each variant it creates a fresh client shared by all the cell's
// goroutines, writes every key once (so GET always hits this variant's own
// values, compressed or not), then runs the SET phase and the GET phase:
// each goroutine walks its own stretch of the keys, batch keys per call,
// for Warmup and then Duration. Interrupting ctx returns what was measured
// with ctx's error.
func RunMatrix(ctx context.Context, cfg MatrixConfig, variants []Variant) (*Matrix, error) {
	cfg = cfg.withDefaults()
	maxBatch := 0
	for _, b := range cfg.Batches {
		if b < 1 {
			return nil, fmt.Errorf("compression: batch size %d", b)
		}
		maxBatch = max(maxBatch, b)
	}
	for _, g := range cfg.Goroutines {
		if g < 1 {
			return nil, fmt.Errorf("compression: %d goroutines", g)
		}
	}
	n := len(cfg.Data.Keys)
	if n < maxBatch || len(cfg.Data.Values) != n {
		return nil, fmt.Errorf("compression: %d keys and %d values for batches up to %d", n, len(cfg.Data.Values), maxBatch)
	}
	m := &Matrix{Goroutines: cfg.Goroutines, Batches: cfg.Batches, Duration: cfg.Duration, Warmup: cfg.Warmup,
		Keys: n, ValueClass: cfg.Data.Class.String(), MeanSize: cfg.Data.MeanSize()}
	seenC, seenB := map[string]bool{}, map[Backend]bool{}
	for _, v := range variants {
		if !seenC[v.Client] {
			seenC[v.Client] = true
			m.Clients = append(m.Clients, v.Client)
		}
		if !seenB[v.Backend] {
			seenB[v.Backend] = true
			m.Backends = append(m.Backends, v.Backend)
		}
	}
	w := newWorkload(cfg.Data, maxBatch)
	cell := 0
	for _, g := range cfg.Goroutines {
		for _, b := range cfg.Batches {
			for i := range variants {
				v := variants[(i+cell)%len(variants)]
				pts, err := runCell(ctx, cfg, w, v, g, b)
				m.Points = append(m.Points, pts...)
				if err != nil {
					return m, err
				}
			}
			cell++
			if cfg.AfterCell != nil {
				cfg.AfterCell(m)
			}
		}
	}
	return m, nil
}

// workload is the data laid out for allocation-free batches: keys and
// values repeated past the end by the largest batch, so any batch is one
// contiguous slice, and prefix sums of the value lengths, so a GET batch's
// expected total is one subtraction.
type workload struct {
	n    int
	keys []string
	vals [][]byte
	sums []int // sums[i] = total length of vals[:i]
}

func newWorkload(d Dataset, maxBatch int) *workload {
	n := len(d.Keys)
	w := &workload{n: n, keys: append(append([]string(nil), d.Keys...), d.Keys[:maxBatch]...),
		vals: append(append([][]byte(nil), d.Values...), d.Values[:maxBatch]...)}
	w.sums = make([]int, len(w.vals)+1)
	for i, v := range w.vals {
		w.sums[i+1] = w.sums[i] + len(v)
	}
	return w
}

func failedPoints(v Variant, g, b int, why string) []Point {
	var pts []Point
	for _, op := range Ops {
		pts = append(pts, Point{Client: v.Client, Backend: v.Backend, Op: op, Goroutines: g, Batch: b, Failed: why, ServerUS: -1, OtherCPU: -1})
	}
	return pts
}

// runCell measures one variant in one cell: both phases.
func runCell(ctx context.Context, cfg MatrixConfig, w *workload, v Variant, g, b int) ([]Point, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	runtime.GC()
	c, err := v.New(ctx, cfg.Addr)
	if err != nil {
		return failedPoints(v, g, b, "connect: "+err.Error()), nil
	}
	if err := prefill(ctx, c, w); err != nil {
		c.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return failedPoints(v, g, b, "prefill: "+err.Error()), nil
	}
	var pts []Point
	abandoned := false
	for _, op := range Ops {
		p := Point{Client: v.Client, Backend: v.Backend, Op: op, Goroutines: g, Batch: b, ServerUS: -1, OtherCPU: -1}
		if abandoned {
			p.Failed = "skipped: the SET phase's goroutines never returned"
		} else {
			abandoned = runPhase(ctx, cfg, w, c, &p)
		}
		pts = append(pts, p)
		if cfg.Progress != nil {
			fmt.Fprintln(cfg.Progress, progressLine(p))
		}
	}
	if !abandoned {
		c.Close()
	}
	return pts, ctx.Err()
}

func progressLine(p Point) string {
	s := fmt.Sprintf("g=%-4d b=%-3d %-9s %-5s %s %10.0f keys/s  p50 %8v  client %5.1f µs/key",
		p.Goroutines, p.Batch, p.Client, p.Backend, p.Op, p.TPS(), p.P50.Round(time.Microsecond), p.ClientUS)
	if p.OtherCPU >= 0 {
		s += fmt.Sprintf("  others %3.0f%% CPU", p.OtherCPU)
	}
	if p.Errors > 0 {
		s += fmt.Sprintf("  %d errors (%s)", p.Errors, p.FirstErr)
	}
	if p.Failed != "" {
		s += "  FAIL: " + p.Failed
	}
	return s
}

// prefill writes every key through c, from 4 goroutines in batches of 100.
func prefill(ctx context.Context, c Client, w *workload) error {
	const workers, batch = 4, 100
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for i := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for lo := i * batch; lo < w.n && errs[i] == nil; lo += workers * batch {
				hi := min(lo+batch, w.n)
				errs[i] = c.SetBatch(ctx, w.keys[lo:hi], w.vals[lo:hi])
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Phases of a run, read by the goroutines before each call.
const (
	phaseWarmup int32 = iota
	phaseMeasure
	phaseStop
)

// maxCalls bounds each goroutine's loop by count as well as by time.
const maxCalls = 1 << 40

// worker is one goroutine's counters, padded so that goroutines do not
// share cache lines.
type worker struct {
	ops      uint64 // keys done in the measured window
	errs     uint64
	firstErr error
	hist     latency.Histogram
	_        [64]byte
}

// runPhase runs p.Op with p.Goroutines goroutines sharing c and fills p.
// It reports true if the goroutines never returned and were abandoned, so
// c must not be closed or used again.
func runPhase(ctx context.Context, cfg MatrixConfig, w *workload, c Client, p *Point) bool {
	g, b := p.Goroutines, p.Batch
	opCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var phase atomic.Int32
	workers := make([]worker, g)
	var wg sync.WaitGroup
	for i := range g {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wk := &workers[i]
			off := (i * w.n / g) % w.n
			for n := 0; n < maxCalls; n++ {
				ph := phase.Load()
				if ph == phaseStop || opCtx.Err() != nil {
					return
				}
				keys := w.keys[off : off+b]
				t0 := time.Now()
				var err error
				if p.Op == Set {
					err = c.SetBatch(opCtx, keys, w.vals[off:off+b])
				} else {
					var got int
					got, err = c.GetBatch(opCtx, keys)
					if want := w.sums[off+b] - w.sums[off]; err == nil && got != want {
						err = fmt.Errorf("GET of %d keys from %s returned %d bytes, want %d", b, keys[0], got, want)
					}
				}
				d := time.Since(t0)
				if off += b; off >= w.n {
					off -= w.n
				}
				if err != nil {
					if opCtx.Err() != nil && phase.Load() == phaseStop {
						return // cancelled at the end, not a failure
					}
					if wk.errs == 0 {
						wk.firstErr = err
					}
					wk.errs += uint64(b)
					continue
				}
				if ph == phaseMeasure {
					wk.ops += uint64(b)
					wk.hist.Record(d)
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()

	if pace.Sleep(ctx, cfg.Warmup) != nil {
		phase.Store(phaseStop)
	}
	var s0, s1 sysstat.Sample
	if phase.Load() != phaseStop {
		s0 = sysstat.Take(cfg.ServerPID)
		phase.Store(phaseMeasure)
		pace.Sleep(ctx, cfg.Duration)
		phase.Store(phaseStop)
		s1 = sysstat.Take(cfg.ServerPID)
	}
	phase.Store(phaseStop)
	select {
	case <-done:
	case <-time.After(cfg.StopTimeout):
		cancel()
		select {
		case <-done:
			p.FirstErr = "goroutines returned only once their context was cancelled"
		case <-time.After(cfg.StopTimeout):
			p.Failed = fmt.Sprintf("goroutines still running %v after the window; abandoned", 2*cfg.StopTimeout)
			return true
		}
	}
	if ctx.Err() != nil {
		p.Failed = "interrupted"
		return false
	}
	var h latency.Histogram
	for i := range workers {
		wk := &workers[i]
		p.Ops += wk.ops
		p.Errors += wk.errs
		if wk.firstErr != nil && p.FirstErr == "" {
			p.FirstErr = wk.firstErr.Error()
		}
		h.Merge(&wk.hist)
	}
	u := s1.Sub(s0)
	p.Elapsed = u.Elapsed
	p.P50, p.P99 = h.Quantile(0.5), h.Quantile(0.99)
	if p.Ops > 0 {
		p.ClientUS = float64(u.Self.Microseconds()) / float64(p.Ops)
		if u.ServerOK {
			p.ServerUS = float64(u.Server.Microseconds()) / float64(p.Ops)
		}
	}
	p.OtherCPU = u.OtherPercent()
	switch {
	case p.Ops == 0:
		p.Failed = "no successful calls"
		if p.FirstErr != "" {
			p.Failed += ": " + p.FirstErr
		}
	case p.Errors*100 > p.Ops:
		p.Failed = fmt.Sprintf("%d failed keys for %d done (over 1%%): %s", p.Errors, p.Ops, p.FirstErr)
	}
	return false
}
