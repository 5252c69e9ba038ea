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
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ziplinekv/zipline/bench"
	"github.com/ziplinekv/zipline/bench/measure"
	"github.com/ziplinekv/zipline/cmd/zipline/bench/sysstat"
	"github.com/ziplinekv/zipline/internal/localserver"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "clientbench:", err)
		os.Exit(1)
	}
}

type options struct {
	clients   []bench.Factory
	grid      measure.Grid
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
}

func parseFlags() (*options, error) {
	var (
		clients   = flag.String("clients", "", "comma-separated clients to run (default all built in: "+bench.Names()+")")
		grid      = measure.GridFlags(flag.CommandLine)
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
		asJSON  = flag.Bool("json", false, "print each cell's result as one JSON object per line (measure.Result) instead of the markdown report; cmd/abbench reads it")
	)
	flag.Parse()
	if flag.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", flag.Args())
	}
	if *quick {
		set := map[string]bool{}
		flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
		if !set["duration"] {
			*duration = time.Second
		}
		if !set["warmup"] {
			*warmup = 300 * time.Millisecond
		}
		if !set["runs"] {
			*runs = 1
		}
		if !set["ceiling-n"] {
			*ceilingN = 200000
		}
	}
	o := &options{duration: *duration, warmup: *warmup, runs: *runs, addr: *addr, serverPID: *serverPID,
		out: *out, ceiling: *ceiling, ceilingN: *ceilingN, maxOther: *maxOther, maxWait: *maxWait, json: *asJSON}
	if o.runs < 1 || o.duration <= 0 || o.warmup < 0 || o.ceilingN < 1 || o.maxOther < 0 || o.maxWait < 0 {
		return nil, fmt.Errorf("need -runs ≥ 1, -duration > 0, -warmup ≥ 0, -ceiling-n ≥ 1, -max-other ≥ 0, -max-wait ≥ 0")
	}
	var err error
	if o.grid, err = grid(); err != nil {
		return nil, err
	}
	if *clients == "" || *clients == "all" {
		o.clients = bench.All()
	} else {
		for _, name := range strings.Split(*clients, ",") {
			name = strings.TrimSpace(name)
			f, ok := bench.Lookup(name)
			if !ok {
				hint := ""
				if name == "glide" {
					hint = " (build with -tags glide; it needs cgo and gcc)"
				}
				return nil, fmt.Errorf("-clients: unknown client %q%s; built in: %s", name, hint, bench.Names())
			}
			o.clients = append(o.clients, f)
		}
	}
	return o, nil
}

func commandLine() string {
	tags := ""
	if _, ok := bench.Lookup("glide"); ok {
		tags = " -tags glide"
	}
	var b strings.Builder
	b.WriteString("cd bench && go run" + tags + " ./cmd/clientbench")
	for _, a := range os.Args[1:] {
		b.WriteByte(' ')
		b.WriteString(shellQuote(a))
	}
	return b.String()
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_=.,/:+", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func run() error {
	o, err := parseFlags()
	if err != nil {
		return err
	}
	rep := &report{
		command: commandLine(),
		settings: fmt.Sprintf("duration %v, warm-up %v, runs %d, %d prefilled keys of %d B, values %v B, goroutines %v",
			o.duration, o.warmup, o.runs, bench.NumKeys, bench.KeyLen, o.grid.Sizes, o.grid.Conc),
		grid: o.grid, runs: o.runs,
	}
	for _, f := range o.clients {
		rep.clients = append(rep.clients, clientInfo{f.Name, f.Desc})
	}
	if _, ok := bench.Lookup("glide"); !ok {
		rep.notes = append(rep.notes, "glide was not built in (needs -tags glide).")
	}
	fmt.Fprintln(os.Stderr, rep.command)

	// Server.
	rn := &measure.Runner{Warmup: o.warmup, Duration: o.duration, Addr: o.addr}
	var serverVersion string
	if o.addr == "" {
		s, err := localserver.Start(localserver.Config{})
		if err != nil {
			return err
		}
		defer s.Stop()
		rn.Addr, rn.ServerPID = s.Addr, s.PID()
		if _, err := s.Do(context.Background(), "FLUSHALL"); err != nil {
			return fmt.Errorf("FLUSHALL: %w", err)
		}
		if info, err := s.Info(context.Background(), "server"); err == nil {
			serverVersion = "redis " + info["redis_version"] + ", started by clientbench on " + s.Addr
		}
	} else {
		serverVersion = "existing server at " + o.addr
		if o.serverPID > 0 {
			rn.ServerPID = o.serverPID
		} else {
			rep.notes = append(rep.notes, "redis CPU not measured: -addr given without -server-pid.")
		}
	}
	rep.env = environment(serverVersion)

	points := o.grid.Points()
	cells := len(o.clients) * len(points) * o.runs
	cellTime := o.duration + o.warmup + 150*time.Millisecond
	if o.maxOther > 0 {
		cellTime += quietSample
	}
	est := time.Duration(cells) * cellTime
	quiet := &quietGate{maxOther: o.maxOther, maxWait: o.maxWait, budget: est / 2, serverPID: rn.ServerPID}
	fmt.Fprintf(os.Stderr, "%d cells, about %v plus the ceiling runs", cells, est.Round(time.Second))
	if quiet.enabled() {
		fmt.Fprintf(os.Stderr, ", and up to %v more waiting for other processes to go quiet", quiet.budget.Round(time.Second))
		rep.quiet = fmt.Sprintf("before each cell the harness waited up to %v for other processes to use ≤ %.0f%% of a CPU, "+
			"and measured a cell again (keeping the quieter attempt) when they used more during it, within a budget of %v",
			o.maxWait, o.maxOther, quiet.budget.Round(time.Second))
	}
	fmt.Fprintln(os.Stderr)

	var interrupted atomic.Bool
	sigc := make(chan os.Signal, 1)
	signal.Notify(sigc, os.Interrupt)
	go func() {
		<-sigc
		interrupted.Store(true)
		fmt.Fprintln(os.Stderr, "interrupt: stopping after the current cell (again to abort)")
		signal.Stop(sigc)
	}()

	host, port, err := net.SplitHostPort(rn.Addr)
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
	for r := 1; r <= o.runs && !interrupted.Load(); r++ {
		if o.ceiling {
			for _, size := range o.grid.Sizes {
				c := runCeiling(host, port, o.ceilingN, size)
				fmt.Fprintf(os.Stderr, "[run %d] redis-benchmark -P 16 -d %d: GET %s k, SET %s k %s\n",
					r, size, measure.Kops(c.rps["get"]), measure.Kops(c.rps["set"]), c.err)
				rep.ceilings = append(rep.ceilings, c)
			}
		}
		for _, pt := range points {
			for i := range o.clients {
				if interrupted.Load() {
					break
				}
				// Rotate the client order every run.
				cell := pt
				cell.Client, cell.Run = o.clients[(i+r-1)%len(o.clients)].Name, r
				quiet.wait()
				res := rn.Run(cell)
				done++
				logCell(done, cells, &res)
				if quiet.noisy(&res, cellTime) {
					start := time.Now()
					quiet.wait()
					again := rn.Run(cell)
					again.Remeasured = true
					quiet.spend(time.Since(start))
					quiet.remeasured++
					logCell(done, cells, &again)
					if again.Failed == "" && again.OtherCPU < res.OtherCPU {
						res = again
					}
					res.Remeasured = true
				}
				rep.results = append(rep.results, res)
			}
		}
		rep.quietWaited, rep.quietRemeasured = quiet.waited, quiet.remeasured
		if o.out != "" {
			if err := writeReport(o.out, rep); err != nil {
				return err
			}
		}
	}
	rep.quietWaited, rep.quietRemeasured = quiet.waited, quiet.remeasured
	if interrupted.Load() {
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
	} else {
		var buf bytes.Buffer
		rep.write(&buf)
		os.Stdout.Write(buf.Bytes())
	}
	if o.out != "" {
		return writeReport(o.out, rep)
	}
	return nil
}
func writeReport(path string, rep *report) error {
	var buf bytes.Buffer
	rep.write(&buf)
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

func logCell(done, total int, res *measure.Result) {
	again := ""
	if res.Remeasured {
		again = " again"
	}
	prefix := fmt.Sprintf("[run %d %d/%d%s] %s %-17s", res.Run, done, total, again, res.Cell, res.Client)
	if res.Failed != "" {
		fmt.Fprintf(os.Stderr, "%s FAIL %s\n", prefix, res.Failed)
		return
	}
	srv := "–"
	if res.ServerCPU >= 0 {
		srv = fmtNum(res.ServerCPU)
	}
	errs := ""
	if res.Errors > 0 {
		errs = fmt.Sprintf(" errors %d (%s)", res.Errors, res.FirstErr)
	}
	fmt.Fprintf(os.Stderr, "%s %7s kops/s  p50 %6.0fµs p99 %6.0fµs  allocs %5s  redis %5sµs  client %5sµs  other %3s%%%s\n",
		prefix, measure.Kops(res.OpsPerSec()), us(res.P50), us(res.P99), fmtNum(res.AllocsPerOp), srv, fmtNum(res.ClientCPU),
		fmtOther(res.OtherCPU), errs)
}

// environment describes the machine and the module versions.
func environment(server string) []string {
	env := []string{
		"date: " + time.Now().UTC().Format("2006-01-02 15:04 UTC"),
		"machine: " + sysstat.Machine() + " (at start); client and server share these CPUs",
		"go: " + runtime.Version(),
	}
	if server != "" {
		env = append(env, "server: "+server)
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		var mods []string
		for _, d := range bi.Deps {
			switch d.Path {
			case "github.com/redis/rueidis", "github.com/redis/go-redis/v9", "github.com/gomodule/redigo",
				"github.com/joomcode/redispipe", "github.com/mediocregopher/radix/v4",
				"github.com/valkey-io/valkey-glide/go/v2":
				mods = append(mods, d.Path+" "+d.Version)
			case "github.com/ziplinekv/zipline":
				from := "../, this checkout"
				if d.Replace != nil && d.Replace.Path != "../" {
					from = "from " + d.Replace.Path // a revbuild snapshot of another revision
				}
				mods = append(mods, d.Path+" ("+from+")")
			}
		}
		if len(mods) > 0 {
			env = append(env, "modules: "+strings.Join(mods, ", "))
		}
	}
	return env
}
