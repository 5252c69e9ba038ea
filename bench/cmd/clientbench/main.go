// Command clientbench compares zipline with other Go Redis/Valkey clients on
// one redis-server: parallel GET and SET at several concurrencies and value
// sizes, reporting throughput, latency, allocations and CPU per operation,
// and the server's own pipelined ceiling from redis-benchmark.
//
//	cd bench && go run -tags glide ./cmd/clientbench -out results/clients.md
//
// One client runs at a time; each run visits every cell once, clients in a
// rotating order, so drift over the run hits all clients alike. Cells report
// the median over runs. See README.md.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/ziplinekv/zipline/bench"
	"github.com/ziplinekv/zipline/bench/harness"
	"github.com/ziplinekv/zipline/testbed"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "clientbench:", err)
		os.Exit(1)
	}
}

type options struct {
	clients   []bench.Factory
	grid      harness.Grid
	duration  time.Duration
	warmup    time.Duration
	runs      int
	addr      string
	serverPID int
	out       string
	ceiling   bool
	ceilingN  int
	maxOther  float64
	maxWait   time.Duration
	json      bool
	idle      string
	busy      int
	record    *harness.Recorders
}

func parseFlags() (*options, error) {
	var (
		clients   = flag.String("clients", "", "comma-separated clients to run (default all built in: "+bench.Names()+")")
		grid      = harness.GridFlags(flag.CommandLine)
		duration  = flag.Duration("duration", 2*time.Second, "measured time per cell")
		warmup    = flag.Duration("warmup", 500*time.Millisecond, "unmeasured warm-up per cell")
		runs      = flag.Int("runs", 3, "runs over all cells; tables show the median")
		addr      = flag.String("addr", "", "existing server host:port (default: start a redis-server on a free port)")
		serverPID = flag.Int("server-pid", 0, "with -addr: pid of the server, to read its CPU time from /proc")
		out       = flag.String("out", "", "also write the markdown report to this file (rewritten after every run)")
		quick     = flag.Bool("quick", false, "smoke test: -duration 1s -warmup 300ms -runs 1 -ceiling-n 200000 unless set explicitly")
		ceiling   = flag.Bool("ceiling", true, "measure the server ceiling with redis-benchmark -P 16")
		ceilingN  = flag.Int("ceiling-n", 1000000, "redis-benchmark -n (requests per test)")
		maxOther  = flag.Float64("max-other", 25, "re-measure a cell once if other processes used more than this % of one CPU during it, "+
			"and wait up to -max-wait for such a quiet moment before each cell; 0 turns both off")
		maxWait = flag.Duration("max-wait", 5*time.Second, "longest wait for a quiet moment before a cell")
		idle    = flag.String("idle", "os", "idle CPUs during the run: os (the kernel's choice, as most hosts run) or poll (kept out of sleep states through /dev/cpu_dma_latency, needs root; see harness/idle.go)")
		busy    = flag.Int("busy", 0, "CPU-bound processes kept running beside the whole run, as on a host that is rarely idle (2 on a 2-core machine: every core shared); turns -max-other off")
		record  = harness.RecorderFlags(flag.CommandLine)
		asJSON  = flag.Bool("json", false, "print each cell's result as one JSON object per line (harness.Result) instead of the markdown report; cmd/abbench reads it")
	)
	flag.Parse()
	if flag.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", flag.Args())
	}
	if *quick {
		if err := harness.QuickDefaults(map[string]string{"duration": "1s", "warmup": "300ms", "runs": "1", "ceiling-n": "200000"}); err != nil {
			return nil, err
		}
	}
	o := &options{duration: *duration, warmup: *warmup, runs: *runs, addr: *addr, serverPID: *serverPID,
		out: *out, ceiling: *ceiling, ceilingN: *ceilingN, maxOther: *maxOther, maxWait: *maxWait, json: *asJSON, idle: *idle,
		busy: *busy, record: record}
	if o.runs < 1 || o.duration <= 0 || o.warmup < 0 || o.ceilingN < 1 || o.maxOther < 0 || o.maxWait < 0 || o.busy < 0 {
		return nil, fmt.Errorf("need -runs ≥ 1, -duration > 0, -warmup ≥ 0, -ceiling-n ≥ 1, -max-other ≥ 0, -max-wait ≥ 0, -busy ≥ 0")
	}
	if o.busy > 0 {
		o.maxOther = 0 // the busy processes are the point: no waiting for them to go quiet
	}
	var err error
	if o.grid, err = grid(); err != nil {
		return nil, err
	}
	if o.clients, err = bench.Pick(*clients); err != nil {
		return nil, fmt.Errorf("-clients: %w", err)
	}
	return o, nil
}

func run() error {
	o, err := parseFlags()
	if err != nil {
		return err
	}
	sess := harness.Begin("clientbench", glideTag())
	rep := &report{
		Header: harness.Header{Title: "Client benchmark: zipline and peer Redis clients",
			Command: sess.Command,
			Settings: fmt.Sprintf("duration %v, warm-up %v, runs %d, %d prefilled keys of %d B, values %v B, goroutines %v",
				o.duration, o.warmup, o.runs, bench.NumKeys, bench.KeyLen, o.grid.Sizes, o.grid.Conc)},
		grid: o.grid, runs: o.runs,
	}
	for _, f := range o.clients {
		rep.Clients = append(rep.Clients, harness.Client{Name: f.Name, Desc: f.Desc})
	}
	if _, ok := bench.Lookup("glide"); !ok {
		rep.notes = append(rep.notes, "glide was not built in (needs -tags glide).")
	}
	idleLine, releaseIdle, err := harness.IdleSetting(o.idle)
	if err != nil {
		return err
	}
	defer releaseIdle()

	// Server.
	rn := &runner{warmup: o.warmup, duration: o.duration, addr: o.addr, record: o.record}
	var serverVersion string
	if o.addr == "" {
		s, err := testbed.Start(testbed.Config{})
		if err != nil {
			return err
		}
		defer s.Stop()
		rn.addr, rn.serverPID = s.Addr, s.PID()
		if _, err := s.Do(context.Background(), "FLUSHALL"); err != nil {
			return fmt.Errorf("FLUSHALL: %w", err)
		}
		if info, err := s.Info(context.Background(), "server"); err == nil {
			serverVersion = "redis " + info["redis_version"] + ", started by clientbench on " + s.Addr
		}
	} else {
		serverVersion = "existing server at " + o.addr
		if o.serverPID > 0 {
			rn.serverPID = o.serverPID
		} else {
			rep.notes = append(rep.notes, "redis CPU not measured: -addr given without -server-pid.")
		}
	}
	rep.Env = harness.Environment(serverVersion)
	if o.idle != "os" {
		rep.Env = append(rep.Env, idleLine)
	}
	if o.busy > 0 {
		stopBusy, err := harness.Busy(o.busy)
		if err != nil {
			return err
		}
		defer stopBusy()
		rep.Env = append(rep.Env, harness.BusyLine(o.busy))
	}

	points := o.grid.Points()
	cells := len(o.clients) * len(points) * o.runs
	cellTime := o.duration + o.warmup + 150*time.Millisecond
	if o.maxOther > 0 {
		cellTime += harness.QuietSample
	}
	est := time.Duration(cells) * cellTime
	quiet := &harness.QuietGate{MaxOther: o.maxOther, MaxWait: o.maxWait, Budget: est / 2, ServerPIDs: []int{rn.serverPID}}
	fmt.Fprintf(os.Stderr, "%d cells, about %v plus the ceiling runs", cells, est.Round(time.Second))
	if quiet.Enabled() {
		fmt.Fprintf(os.Stderr, ", and up to %v more waiting for other processes to go quiet", quiet.Budget.Round(time.Second))
		rep.quiet = quiet.Describe()
	}
	fmt.Fprintln(os.Stderr)

	host, port, err := net.SplitHostPort(rn.addr)
	if err != nil {
		return err
	}
	if o.ceiling {
		if _, err := exec.LookPath("redis-benchmark"); err != nil {
			o.ceiling = false
			rep.notes = append(rep.notes, "redis-benchmark not found on PATH; no ceiling.")
		} else {
			rep.ceilCmd = "redis-benchmark " + strings.Join(ceilingArgs(host, port, o.ceilingN, 0), " ")
			rep.ceilCmd = strings.Replace(rep.ceilCmd, "-d 0", "-d <size>", 1)
		}
	}

	start := time.Now()
	done := 0
	sess.Rounds(o.runs, func(r int) {
		if o.ceiling {
			for _, size := range o.grid.Sizes {
				c := runCeiling(host, port, o.ceilingN, size)
				fmt.Fprintf(os.Stderr, "[run %d] redis-benchmark -P 16 -d %d: GET %s k, SET %s k %s\n",
					r, size, harness.Kops(c.rps["get"]), harness.Kops(c.rps["set"]), c.err)
				rep.ceilings = append(rep.ceilings, c)
			}
		}
		for _, pt := range points {
			sess.Rotated(r, len(o.clients), func(i int) {
				f := o.clients[i]
				cell := pt
				cell.Client, cell.Run = f.Name, r
				done++
				m, again := quiet.Measure(cellTime, func() harness.Measurement { return rn.runCell(f, cell) },
					func(m *harness.Measurement, again bool) { logCell(done, cells, cell, m, again) })
				rep.results = append(rep.results, harness.Result{Point: cell, Measurement: m, Remeasured: again})
			})
		}
		rep.quietWaited, rep.quietRemeasured = quiet.Waited, quiet.Remeasured
		sess.Save(o.out, rep.write)
	})
	if sess.Stopped() {
		rep.notes = append(rep.notes, "interrupted: incomplete run.")
	}
	fmt.Fprintf(os.Stderr, "done in %v\n", time.Since(start).Round(time.Second))
	if o.json {
		enc := json.NewEncoder(os.Stdout)
		for _, res := range rep.results {
			if err := enc.Encode(res); err != nil {
				return err
			}
		}
		return harness.Save(o.out, rep.write)
	}
	return sess.End(o.out, rep.write)
}

func logCell(done, total int, pt harness.Point, m *harness.Measurement, again bool) {
	label := ""
	if again {
		label = " again"
	}
	fmt.Fprintf(os.Stderr, "[run %d %d/%d%s] %s %-17s %s\n", pt.Run, done, total, label, pt, pt.Client, m.Line())
}

// glideTag is the build tag this binary was built with, if any.
func glideTag() string {
	if _, ok := bench.Lookup("glide"); ok {
		return "glide"
	}
	return ""
}
