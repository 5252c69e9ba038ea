package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ziplinekv/zipline/internal/pace"

	"github.com/ziplinekv/zipline/bench"
	"github.com/ziplinekv/zipline/bench/harness"
	"github.com/ziplinekv/zipline/bench/netshape"
	"github.com/ziplinekv/zipline/cmd/zipline/bench/latency"
	"github.com/ziplinekv/zipline/cmd/zipline/bench/sysstat"
	"github.com/ziplinekv/zipline/testbed"
)

// smallSize is the small values' size.
const smallSize = 64

// profileResult is what one profile measured.
type profileResult struct {
	Setup netshape.Setup
	Cells []cell
}

// cell is one client under one load in one round.
type cell struct {
	Client string
	Mixed  bool // large values moving beside the small GETs
	Round  int
	// Small GETs: count, latency quantiles (p50, p99, p99.9).
	SmallOps int
	Small    [3]time.Duration
	// Large values: operations (SETs plus GETs) and their p99.
	LargeOps int
	LargeP99 time.Duration
	Elapsed  time.Duration
	Errors   int
	FirstErr string `json:",omitempty"`
	OtherCPU float64
}

var quantiles = [3]float64{0.5, 0.99, 0.999}

// measure runs every round on path: a redis-server of its own, the small
// keys and one large key per mover, then each client with the small GETs
// alone and with the large values moving.
func (c config) measure(ctx context.Context, path *netshape.Path, _ struct{}) (profileResult, error) {
	var res profileResult
	srv, err := testbed.Start(testbed.Config{})
	if err != nil {
		return res, err
	}
	defer srv.Stop()
	if err := bench.Prefill(srv.Addr, bench.Value(smallSize)); err != nil {
		return res, err
	}
	addr, err := path.Front(srv.Addr)
	if err != nil {
		return res, err
	}
	for round := range c.Rounds {
		for i := range c.Clients {
			name := c.Clients[(i+round)%len(c.Clients)]
			for _, mixed := range []bool{false, true} {
				prof := ""
				if c.CPUProfile != "" && mixed && round == 0 {
					prof = fmt.Sprintf("%s-%s-%s.pprof", c.CPUProfile, path.Profile.Name, name)
				}
				cl, err := c.runCell(ctx, addr, srv.PID(), name, mixed, prof)
				cl.Round = round
				res.Cells = append(res.Cells, cl)
				fmt.Fprintf(os.Stderr, "[%s] round %d %-8s mixed=%-5v small p50 %6.2fms p99 %7.2fms p99.9 %7.2fms (%d)  large %d ops p99 %.1fms  errors %d %s\n",
					path.Profile.Name, round+1, name, mixed, ms(cl.Small[0]), ms(cl.Small[1]), ms(cl.Small[2]), cl.SmallOps,
					cl.LargeOps, ms(cl.LargeP99), cl.Errors, cl.FirstErr)
				if err != nil {
					return res, err
				}
			}
		}
	}
	return res, nil
}

const (
	phaseWarmup int32 = iota
	phaseMeasure
	phaseStop
)

// maxOps bounds each goroutine's loop by count as well as by time.
const maxOps = 1 << 34

// stopTimeout is how long the goroutines get to return after the window.
const stopTimeout = 30 * time.Second

// runCell runs one client for the warm-up and the measured window:
// c.Small goroutines GET the small keys round-robin and, if mixed,
// c.Movers goroutines SET and GET a large value each. Only an interrupt
// is an error; a failing client is recorded in the cell.
func (c config) runCell(ctx context.Context, addr string, serverPID int, name string, mixed bool, prof string) (cell, error) {
	out := cell{Client: name, Mixed: mixed}
	f, _ := bench.Lookup(name)
	runtime.GC()
	cl, err := f.New(addr, c.Small+c.Movers)
	if err != nil {
		out.Errors, out.FirstErr = 1, err.Error()
		return out, ctx.Err()
	}
	var phase atomic.Int32
	small := make([]latency.Recorder, c.Small)
	movers := make([]latency.Recorder, c.Movers)
	if !mixed {
		movers = nil
	}
	large := bench.Value(c.Large)
	opCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Failures count from the warm-up on, latencies in the window only;
	// calls cut short by the stop count as neither.
	record := func(w *latency.Recorder, d time.Duration, err error) {
		if ph := phase.Load(); ph == phaseMeasure || err != nil && ph != phaseStop {
			w.Done(d, err)
		}
	}
	var wg sync.WaitGroup
	for g := range small {
		wg.Go(func() {
			w := &small[g]
			k := g * len(bench.Keys) / len(small)
			for range maxOps {
				if phase.Load() == phaseStop {
					return
				}
				t := time.Now()
				n, err := cl.Get(opCtx, bench.Keys[k])
				if err == nil && n != smallSize {
					err = fmt.Errorf("GET %s: %d bytes, want %d", bench.Keys[k], n, smallSize)
				}
				record(w, time.Since(t), err)
				k = (k + 1) % len(bench.Keys)
			}
		})
	}
	for g := range movers {
		wg.Go(func() {
			w := &movers[g]
			key := fmt.Sprintf("zl:large:%d", g)
			for range maxOps {
				if phase.Load() == phaseStop {
					return
				}
				t := time.Now()
				err := cl.Set(opCtx, key, large)
				record(w, time.Since(t), err)
				t = time.Now()
				n, err := cl.Get(opCtx, key)
				if err == nil && n != len(large) {
					err = fmt.Errorf("GET %s: %d bytes, want %d", key, n, len(large))
				}
				record(w, time.Since(t), err)
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	pace.Sleep(ctx, c.Warmup)
	stopProfile := startProfile(prof)
	s0 := sysstat.Take(serverPID)
	phase.Store(phaseMeasure)
	pace.Sleep(ctx, c.Duration)
	phase.Store(phaseStop)
	u := sysstat.Take(serverPID).Sub(s0)
	stopProfile()
	select {
	case <-done:
	case <-time.After(stopTimeout):
		cancel()
		select {
		case <-done:
			out.FirstErr = "goroutines returned only once their context was cancelled"
		case <-time.After(stopTimeout):
			return out, fmt.Errorf("%s: goroutines still running %v after the window; abandoned", name, 2*stopTimeout)
		}
	}
	cl.Close()
	out.Elapsed, out.OtherCPU = u.Elapsed, u.OtherPercent()
	var hs, hl latency.Recorder
	for i := range small {
		hs.Merge(&small[i])
	}
	for i := range movers {
		hl.Merge(&movers[i])
	}
	for i, q := range quantiles {
		out.Small[i] = hs.Hist.Quantile(q)
	}
	out.SmallOps, out.LargeOps, out.LargeP99 = hs.Ops, hl.Ops, hl.Hist.Quantile(0.99)
	out.Errors = hs.Errors + hl.Errors
	if err := errors.Join(hs.FirstErr, hl.FirstErr); err != nil && out.FirstErr == "" {
		out.FirstErr = err.Error()
	}
	if ctx.Err() != nil {
		return out, ctx.Err()
	}
	if out.SmallOps == 0 {
		return out, errors.New("no small GET succeeded: " + out.FirstErr)
	}
	return out, nil
}

// startProfile starts a CPU profile into path, if set, and returns what
// stops it. A profile that cannot be written is skipped.
func startProfile(path string) (stop func()) {
	stop, err := harness.StartCPUProfile(path)
	if err != nil {
		return func() {}
	}
	return stop
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }
