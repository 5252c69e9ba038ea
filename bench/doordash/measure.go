package doordash

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/bench/netshape"
	"github.com/ziplinekv/zipline/cmd/zipline/bench/compression"
	"github.com/ziplinekv/zipline/cmd/zipline/bench/latency"
	"github.com/ziplinekv/zipline/cmd/zipline/bench/sysstat"
	"github.com/ziplinekv/zipline/testbed"
	"github.com/ziplinekv/zipline/testbed/corpus"
)

// Op is a phase of a variant's run.
type Op string

const (
	Set Op = "SET"
	Get Op = "GET"
)

// Quantiles are the points of each phase's latency distribution kept for
// the report and the chart.
var Quantiles = []float64{0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.97, 0.99, 0.995, 0.999}

// Phase is one SET or GET pass over all the menus.
type Phase struct {
	Op       Op
	Elapsed  time.Duration
	Ops      int // operations that succeeded
	Errors   int
	FirstErr string `json:",omitempty"`
	// Latency holds the latency at each of Quantiles.
	Latency []time.Duration
	// Wire is the bytes that crossed the path (see netshape.Path.WireBytes),
	// -1 when unknown.
	Wire int64
	// CPU time of the measuring process (the client) and the server.
	ClientCPU, ServerCPU time.Duration
	// Read and write system calls of the client and the server, from
	// /proc/<pid>/io; -1 when unknown.
	ClientSyscalls, ServerSyscalls int64
	// The client's minor page faults, heap bytes allocated and garbage
	// collections.
	ClientFaults int64
	Allocated    uint64
	GCs          uint32
	// OtherCPU is what other processes used, in % of one CPU; -1 unknown.
	OtherCPU float64
}

// Quantile returns the latency at q, which must be one of Quantiles.
func (p Phase) Quantile(q float64) time.Duration {
	for i, x := range Quantiles {
		if x == q && i < len(p.Latency) {
			return p.Latency[i]
		}
	}
	return 0
}

// VariantRun is one variant's SET and GET passes in one round.
type VariantRun struct {
	Variant string // compression.Variant.Name()
	Round   int
	// Stored is the bytes the server holds after the SET pass (STRLEN
	// summed over the keys): Plain over Stored is the compression ratio.
	Stored   int64
	Set, Get Phase
	Failed   string `json:",omitempty"`
}

// ProfileResult is everything measured on one profile.
type ProfileResult struct {
	Setup  netshape.Setup
	Server string
	Corpus CorpusStats
	Runs   []VariantRun
	// Waited is the time spent waiting for other processes to go quiet,
	// and Remeasured the variant runs measured again because they were
	// disturbed.
	Waited     time.Duration
	Remeasured int
}

// noise is the most CPU other processes used during either phase of r, in
// % of one CPU.
func (r VariantRun) noise() float64 { return max(r.Set.OtherCPU, r.Get.OtherCPU) }

// The quiet gate: before each variant the run waits, up to quietWait, for
// a quietSample during which other processes use less than quietCPU % of
// one CPU, until it has waited quietBudget on the profile; a variant whose
// phases saw more than noisyCPU is measured once more.
const (
	quietCPU    = 25
	noisyCPU    = 50
	quietSample = 250 * time.Millisecond
	quietWait   = 15 * time.Second
	quietBudget = 3 * time.Minute // per profile; then the run just measures
)

// waitQuiet waits for the machine to go quiet (see quietCPU) and returns
// how long it waited.
func waitQuiet(ctx context.Context, serverPID int) time.Duration {
	start := time.Now()
	for range int(quietWait / quietSample) {
		s0 := sysstat.Take(serverPID)
		t := time.NewTimer(quietSample)
		select {
		case <-ctx.Done():
			t.Stop()
			return time.Since(start)
		case <-t.C:
		}
		if o := sysstat.Take(serverPID).Sub(s0).OtherPercent(); o >= 0 && o < quietCPU {
			break
		}
	}
	return time.Since(start)
}

// CorpusStats describes the menus a profile ran with.
type CorpusStats struct {
	N        int
	Plain    int64 // bytes
	Min, Max int
}

// ServeChild is the child's side of the run: if this process was started
// by Run inside a profile's namespace, it measures the profile, sends the
// result back and returns true, and the program should exit (non-zero on
// error). Otherwise it returns false. Call it after parsing the flags and
// before anything else.
func ServeChild(ctx context.Context, c *Config) (bool, error) {
	return netshape.Serve(ctx, c.measure)
}

// quiet discards the measuring side's own client's connection events.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// measure runs every round of every variant on path: a fresh
// redis-server, the menus, and for each variant a flushed server, a SET
// pass, the stored size, and a GET pass.
func (c *Config) measure(ctx context.Context, path *netshape.Path, _ struct{}) (ProfileResult, error) {
	var res ProfileResult
	t0 := time.Now()
	menus := corpus.Menus(c.Menus, c.Seed)
	res.Corpus = CorpusStats{N: len(menus), Min: len(menus[0]), Max: len(menus[0])}
	for _, m := range menus {
		res.Corpus.Plain += int64(len(m))
		res.Corpus.Min, res.Corpus.Max = min(res.Corpus.Min, len(m)), max(res.Corpus.Max, len(m))
	}
	c.progressf("[%s] %d menus, %.0f MB, in %v\n", path.Profile.Name, len(menus), float64(res.Corpus.Plain)/1e6, time.Since(t0).Round(time.Millisecond))
	keys := make([]string, len(menus))
	for i := range keys {
		keys[i] = fmt.Sprintf("menu:%05d", i)
	}

	srv, err := testbed.Start(testbed.Config{})
	if err != nil {
		return res, fmt.Errorf("starting redis-server: %w", err)
	}
	defer srv.Stop()
	adm, err := zipline.New(zipline.Options{Addr: srv.Addr, Logger: quiet})
	if err != nil {
		return res, err
	}
	defer adm.Close()
	res.Server = serverVersion(ctx, adm, srv)
	front, err := path.Front(srv.Addr)
	if err != nil {
		return res, err
	}
	s := &session{Config: c, path: path, srv: srv, adm: adm, front: front, keys: keys, menus: menus}
	for round := range c.Rounds {
		for i := range c.Variants {
			v := c.Variants[(i+round)%len(c.Variants)]
			var run VariantRun
			// A run disturbed by other processes is measured once more,
			// and the quieter of the two kept.
			for attempt := range 2 {
				if c.QuietGate && res.Waited < quietBudget {
					res.Waited += waitQuiet(ctx, srv.PID())
				}
				r, err := s.runVariant(ctx, v, round)
				if err != nil {
					res.Runs = append(res.Runs, r)
					return res, err
				}
				if attempt == 0 || r.noise() < run.noise() {
					run = r
				}
				c.progressf("[%s] round %d %-16s %s | %s\n", path.Profile.Name, round+1, v.Name(), phaseLine(r.Set), phaseLine(r.Get))
				if !c.QuietGate || run.noise() <= noisyCPU || attempt == 1 {
					break
				}
				res.Remeasured++
			}
			res.Runs = append(res.Runs, run)
		}
	}
	return res, nil
}

// session is one profile's measurement: its path, its server (reached
// directly by the admin client, and by the clients under test at front)
// and the menus.
type session struct {
	*Config
	path  *netshape.Path
	srv   *testbed.Server
	adm   *zipline.Client
	front string
	keys  []string
	menus [][]byte
}

// runVariant measures one variant: a client of its own, on a flushed
// server. A variant that fails is recorded, not fatal; an interrupt is.
func (s *session) runVariant(ctx context.Context, v compression.Variant, round int) (VariantRun, error) {
	run := VariantRun{Variant: v.Name(), Round: round}
	if _, err := s.adm.Do(ctx, "FLUSHALL", "SYNC"); err != nil {
		return run, fmt.Errorf("FLUSHALL: %w", err)
	}
	runtime.GC()
	cl, err := v.New(ctx, s.front)
	if err != nil {
		run.Failed = "connect: " + err.Error()
		return run, ctx.Err()
	}
	defer cl.Close()
	prof := ""
	if s.CPUProfile != "" && round == 0 {
		prof = fmt.Sprintf("%s-%s-%s-%s", s.CPUProfile, s.path.Profile.Name, slug(v.Client), v.Backend)
	}
	run.Set = s.phase(ctx, cl, Set, prof)
	if ctx.Err() != nil {
		return run, ctx.Err()
	}
	if run.Stored, err = compression.SumEach(ctx, s.srv.Addr, "STRLEN", s.keys); err != nil {
		return run, err
	}
	run.Get = s.phase(ctx, cl, Get, prof)
	return run, ctx.Err()
}

// phaseTimeout bounds one pass; the clients' own timeouts fire long before.
const phaseTimeout = 10 * time.Minute

// phase runs one pass: s.Goroutines goroutines take the menus in order,
// one SET or GET each, until every menu is done. Each GET's length is
// checked against the menu's.
func (s *session) phase(ctx context.Context, cl compression.Client, op Op, prof string) Phase {
	keys, menus, serverPID := s.keys, s.menus, s.srv.PID()
	ctx, cancel := context.WithTimeout(ctx, phaseTimeout)
	defer cancel()
	p := Phase{Op: op}
	if prof != "" {
		f, err := os.Create(prof + "-" + strings.ToLower(string(op)) + ".pprof")
		if err == nil {
			defer f.Close()
			if pprof.StartCPUProfile(f) == nil {
				defer pprof.StopCPUProfile()
			}
		}
	}
	workers := make([]latency.Recorder, s.Goroutines)
	var next atomic.Int64
	var wg sync.WaitGroup
	wire0, ios0, faults0 := s.path.WireBytes(), readIO(os.Getpid(), serverPID), minorFaults()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	s0 := sysstat.Take(serverPID)
	for g := range workers {
		wg.Go(func() {
			w := &workers[g]
			for range len(keys) { // each goroutine does at most every menu
				i := int(next.Add(1)) - 1
				if i >= len(keys) || ctx.Err() != nil {
					return
				}
				t := time.Now()
				var err error
				if op == Set {
					err = cl.SetBatch(ctx, keys[i:i+1], menus[i:i+1])
				} else {
					var n int
					n, err = cl.GetBatch(ctx, keys[i:i+1])
					if err == nil && n != len(menus[i]) {
						err = fmt.Errorf("GET %s returned %d bytes, want %d", keys[i], n, len(menus[i]))
					}
				}
				w.Done(time.Since(t), err)
			}
		})
	}
	wg.Wait()
	u := sysstat.Take(serverPID).Sub(s0)
	wire1, ios1 := s.path.WireBytes(), readIO(os.Getpid(), serverPID)
	p.ClientFaults = minorFaults() - faults0
	runtime.ReadMemStats(&m1)
	p.Allocated, p.GCs = m1.TotalAlloc-m0.TotalAlloc, m1.NumGC-m0.NumGC
	var all latency.Recorder
	for i := range workers {
		all.Merge(&workers[i])
	}
	p.Ops, p.Errors = all.Ops, all.Errors
	if all.FirstErr != nil {
		p.FirstErr = all.FirstErr.Error()
	}
	for _, q := range Quantiles {
		p.Latency = append(p.Latency, all.Hist.Quantile(q))
	}
	p.Elapsed, p.ClientCPU, p.OtherCPU = u.Elapsed, u.Self, u.OtherPercent()
	if u.ServerOK {
		p.ServerCPU = u.Server
	}
	p.Wire = -1
	if wire0 >= 0 && wire1 >= 0 {
		p.Wire = wire1 - wire0
	}
	p.ClientSyscalls, p.ServerSyscalls = ios1[0]-ios0[0], ios1[1]-ios0[1]
	if ios0[0] < 0 || ios1[0] < 0 {
		p.ClientSyscalls = -1
	}
	if ios0[1] < 0 || ios1[1] < 0 {
		p.ServerSyscalls = -1
	}
	return p
}

// readIO returns the read plus write system calls of the two processes so
// far, from /proc/<pid>/io (syscr + syscw), -1 where unknown.
func readIO(pids ...int) [2]int64 {
	out := [2]int64{-1, -1}
	for i, pid := range pids[:min(len(pids), 2)] {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "io"))
		if err != nil {
			continue
		}
		var n int64
		for line := range strings.Lines(string(b)) {
			k, v, _ := strings.Cut(line, ":")
			if k == "syscr" || k == "syscw" {
				x, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				n += x
			}
		}
		out[i] = n
	}
	return out
}

// minorFaults returns this process's minor page faults so far.
func minorFaults() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Minflt
}

// serverVersion describes the server, e.g. "redis 7.0.15 (/usr/bin/redis-server)".
func serverVersion(ctx context.Context, adm *zipline.Client, srv *testbed.Server) string {
	bin, _ := testbed.Binary(srv.Kind)
	m, err := adm.Info(ctx, "server")
	if err != nil {
		return bin
	}
	if v := m["valkey_version"]; v != "" {
		return "valkey " + v + " (" + bin + ")"
	}
	return "redis " + m["redis_version"] + " (" + bin + ")"
}

// phaseLine is a progress summary of a phase.
func phaseLine(p Phase) string {
	s := fmt.Sprintf("%s %6.2fs p99 %7.2fms", p.Op, p.Elapsed.Seconds(), ms(p.Quantile(0.99)))
	if p.Wire >= 0 {
		s += fmt.Sprintf(" %6.0fMB", float64(p.Wire)/1e6)
	}
	if p.Errors > 0 {
		s += fmt.Sprintf(" %d errors (%s)", p.Errors, p.FirstErr)
	}
	return s
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// slug turns a client name into a file-name part: "GLIDE Go" → "glide-go".
func slug(s string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), " ", "-")
}

var errNoRuns = errors.New("doordash: nothing measured")
