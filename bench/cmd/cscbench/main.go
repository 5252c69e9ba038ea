// Command cscbench measures what a client-side cache hit costs: ns per
// cached GET that is served from the process, and allocations per such
// read, for zipline (Options.ClientCache + Client.Cached), rueidis (DoCache)
// and go-redis v9 (Options.ClientSideCacheConfig, its experimental
// client-side cache), at 1 and 64 goroutines sharing one client.
//
//	cd bench && go run ./cmd/cscbench -out results/csc.md
//
// Why: a hit never leaves the process, so its cost is all client code (a
// lookup, validity checks, counters, building the result) and is paid on
// every read an application serves from the cache. zipline's target is
// ≤ 100 ns and 0 allocations per hit at one goroutine; 64 goroutines show
// what contention on the cache's locks and counters adds.
//
// Set-up: one redis-server on a free loopback port (testbed),
// the benchmark's 1,000 keys (bench.Keys, 16 B) written once with 64-byte
// values (bench.Prefill). Each cell makes a fresh client, reads every key
// twice (the first pass fills the cache, the second must be all hits),
// then runs its goroutines through a warm-up and a measured window of
// fixed duration, each walking the keys round-robin from its own offset and
// checking every value's length. Nothing writes during a cell, so every read
// should be a hit; the report counts the misses each client reports during
// the window (it should be 0). ns/op is the window divided by the reads
// done in it by all goroutines together (as testing.B's RunParallel
// reports it); allocations per op are runtime.MemStats.Mallocs over the
// window divided by the reads, for the whole process. Rounds interleave the
// clients, the order rotating every round; the report gives medians.
//
// Before the rounds (-commands), it counts what a cached read costs the
// server, for every client including the two-command forms that are not
// timed by default (zipline's Cached(ttl).IgnoringKeyTTL(), rueidis's
// ToStaticTTL): a fresh client reads every key once, each read a miss,
// then again, each a hit, and INFO commandstats before and after each pass
// gives the commands per miss and per hit, by command.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ziplinekv/zipline/bench"
	"github.com/ziplinekv/zipline/bench/harness"
	"github.com/ziplinekv/zipline/cmd/zipline/bench/sysstat"
	"github.com/ziplinekv/zipline/testbed"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "cscbench:", err)
		os.Exit(1)
	}
}

// valueSize is the size of every cached value.
const valueSize = 64

type options struct {
	clients  []*client
	conc     []int
	rounds   int
	duration time.Duration
	warmup   time.Duration
	maxOther float64
	maxWait  time.Duration
	out      string
	commands bool
}

func parseFlags() (*options, error) {
	var (
		names    = flag.String("clients", harness.JoinNames(clients, clientName), "comma list of clients")
		conc     = flag.String("conc", "1,64", "goroutines sharing one client")
		rounds   = flag.Int("rounds", 5, "rounds over all cells; tables show the median")
		duration = flag.Duration("duration", time.Second, "measured time per cell")
		warmup   = flag.Duration("warmup", 200*time.Millisecond, "unmeasured time per cell, after the cache is filled")
		maxOther = flag.Float64("max-other", 25, "quiet gate: wait up to -max-wait before a cell for other processes to use ≤ this % of one CPU, and measure a cell again when they used more; 0 turns it off")
		maxWait  = flag.Duration("max-wait", 5*time.Second, "quiet gate: longest wait before a cell")
		out      = flag.String("out", "", "also write the markdown report to this file (rewritten after every round)")
		commands = flag.Bool("commands", true, "first count the server commands per miss and per hit of every client, "+
			harness.JoinNames(allClients, clientName)+" (about a second)")
	)
	flag.Parse()
	if flag.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", flag.Args())
	}
	o := &options{rounds: *rounds, duration: *duration, warmup: *warmup, maxOther: *maxOther, maxWait: *maxWait, out: *out,
		commands: *commands}
	if o.rounds < 1 || o.duration <= 0 || o.warmup < 0 || o.maxOther < 0 {
		return nil, fmt.Errorf("need -rounds ≥ 1, -duration > 0, -warmup ≥ 0, -max-other ≥ 0")
	}
	var err error
	if o.conc, err = harness.ParseInts(*conc, 1, 4096); err != nil {
		return nil, fmt.Errorf("-conc: %w", err)
	}
	if o.clients, err = harness.ParseNames(*names, allClients, clientName); err != nil {
		return nil, fmt.Errorf("-clients: %w", err)
	}
	return o, nil
}

// result is one cell's measurement.
type result struct {
	client   string
	conc     int
	round    int
	ops      uint64
	elapsed  time.Duration
	allocs   float64 // per op, whole process
	cpu      float64 // this process's CPU, ns per op
	misses   uint64  // reported by the client during the window
	other    float64 // % of one CPU other processes used; <0 unknown
	failed   string
	firstErr string
	errors   uint64
}

func (r *result) nsPerOp() float64 {
	if r.ops == 0 {
		return 0
	}
	return float64(r.elapsed.Nanoseconds()) / float64(r.ops)
}

func (r *result) line() string {
	if r.failed != "" {
		return "FAIL " + r.failed
	}
	return fmt.Sprintf("%8.1f ns/op  %5s allocs/op  cpu %6.1f ns/op  %d ops  misses %d  other %s%%",
		r.nsPerOp(), harness.Num(r.allocs), r.cpu, r.ops, r.misses, harness.Percent(r.other))
}

func run() error {
	o, err := parseFlags()
	if err != nil {
		return err
	}
	sess := harness.Begin("cscbench", "")
	rep := &report{
		Header: harness.Header{Title: "Client-side cache hits: zipline and peer clients",
			Command: sess.Command,
			Settings: fmt.Sprintf("%d keys of %d B with %d-byte values, all cached; duration %v, warm-up %v, rounds %d, goroutines %v",
				bench.NumKeys, bench.KeyLen, valueSize, o.duration, o.warmup, o.rounds, o.conc)},
		opts: o,
	}
	for _, c := range o.clients {
		rep.Clients = append(rep.Clients, harness.Client{Name: c.name, Desc: c.desc})
	}

	s, err := testbed.Start(testbed.Config{})
	if err != nil {
		return err
	}
	defer s.Stop()
	server := "redis, started by cscbench on " + s.Addr
	if info, err := s.Info(context.Background(), "server"); err == nil {
		server = "redis " + info["redis_version"] + ", started by cscbench on " + s.Addr
	}
	rep.Env = harness.Environment(server)
	if err := bench.Prefill(s.Addr, bench.Value(valueSize)); err != nil {
		return fmt.Errorf("prefill: %w", err)
	}
	if o.commands {
		rep.commands = countCommands(s, allClients)
		for _, cc := range rep.commands {
			fmt.Fprintln(os.Stderr, cc.line())
		}
	}

	cells := len(o.clients) * len(o.conc) * o.rounds
	cellTime := o.duration + o.warmup + 200*time.Millisecond
	est := time.Duration(cells) * cellTime
	quiet := &harness.QuietGate{MaxOther: o.maxOther, MaxWait: o.maxWait, Budget: est / 2, ServerPIDs: []int{s.PID()}}
	rep.quiet = quiet.Describe()
	fmt.Fprintf(os.Stderr, "%d cells, about %v\n", cells, est.Round(time.Second))
	done := 0
	sess.Rounds(o.rounds, func(r int) {
		for _, conc := range o.conc {
			sess.Rotated(r, len(o.clients), func(i int) {
				c := o.clients[i]
				done++
				res, _ := harness.MeasureQuietly(quiet, cellTime,
					func() result { return runCell(s.Addr, s.PID(), o, c, conc, r) }, result.judge,
					func(m result, again bool) {
						fmt.Fprintf(os.Stderr, "[round %d %d/%d%s] c=%-3d %-8s %s\n", r, done, cells, harness.AgainTag(again), conc, c.name, m.line())
					})
				rep.results = append(rep.results, res)
			})
		}
		rep.waited, rep.remeasured = quiet.Waited, quiet.Remeasured
		sess.Save(o.out, rep.write)
	})
	if sess.Stopped() {
		rep.notes = append(rep.notes, "interrupted: incomplete run.")
	}
	return sess.End(o.out, rep.write)
}

// batch is how many reads a worker does between looks at the stop flag
// and updates of its counter.
const batch = 64

// worker is one goroutine's counters, on a cache line of its own.
type worker struct {
	ops  atomic.Uint64
	errs atomic.Uint64
	err  atomic.Pointer[error]
	_    [40]byte
}

// loop reads keys round-robin from start until stop is set.
func (w *worker) loop(get getFunc, start int, stop *atomic.Bool) {
	ctx := context.Background()
	keys, i := bench.Keys, start%len(bench.Keys)
	for !stop.Load() {
		for range batch {
			n, err := get(ctx, keys[i])
			if i++; i == len(keys) {
				i = 0
			}
			if err == nil && n != valueSize {
				err = fmt.Errorf("read %d bytes, want %d", n, valueSize)
			}
			if err != nil {
				w.fail(err)
			}
		}
		w.ops.Add(batch)
	}
}

// fail records a failed read. It is a function of its own so that only
// a failure moves an error to the heap, not every read's err.
func (w *worker) fail(err error) {
	w.errs.Add(1)
	w.err.CompareAndSwap(nil, &err)
}

func sumOps(ws []*worker) (n uint64) {
	for _, w := range ws {
		n += w.ops.Load()
	}
	return n
}

// runCell makes a fresh client, fills its cache with every key and
// measures conc goroutines reading them. serverPID's CPU is the server's,
// not another process's.
func runCell(addr string, serverPID int, o *options, c *client, conc, round int) (res result) {
	res = result{client: c.name, conc: conc, round: round, other: -1}
	cl, err := c.open(addr)
	if err != nil {
		res.failed = "connect: " + err.Error()
		return res
	}
	defer cl.close()

	// Fill the cache, then check that a second pass is all hits.
	ctx := context.Background()
	for pass := range 2 {
		before := cl.misses()
		for _, k := range bench.Keys {
			if n, err := cl.get(ctx, k); err != nil || n != valueSize {
				res.failed = fmt.Sprintf("fill %s: %d bytes, %v", k, n, err)
				return res
			}
		}
		if m := cl.misses() - before; pass == 1 && m > 0 {
			res.failed = fmt.Sprintf("%d of %d reads missed the cache after it was filled", m, bench.NumKeys)
			return res
		}
	}
	runtime.GC()

	ws := make([]*worker, conc)
	var stop atomic.Bool
	var wg sync.WaitGroup
	for g := range ws {
		ws[g] = new(worker)
		wg.Go(func() { ws[g].loop(cl.get, g*bench.NumKeys/conc, &stop) })
	}
	time.Sleep(o.warmup)

	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	misses0, ops0 := cl.misses(), sumOps(ws)
	cpu0 := sysstat.Take(serverPID)
	time.Sleep(o.duration)
	cpu1 := sysstat.Take(serverPID)
	ops1, misses1 := sumOps(ws), cl.misses()
	runtime.ReadMemStats(&ms1)
	stop.Store(true)
	wg.Wait()

	res.ops, res.misses = ops1-ops0, misses1-misses0
	used := cpu1.Sub(cpu0)
	res.elapsed = used.Elapsed
	res.other = used.OtherPercent()
	for _, w := range ws {
		res.errors += w.errs.Load()
		if p := w.err.Load(); p != nil && res.firstErr == "" {
			res.firstErr = (*p).Error()
		}
	}
	switch {
	case res.errors > 0:
		res.failed = fmt.Sprintf("%d errors: %s", res.errors, res.firstErr)
	case res.ops == 0:
		res.failed = "no reads completed"
	default:
		res.allocs = float64(ms1.Mallocs-ms0.Mallocs) / float64(res.ops)
		res.cpu = float64(used.Self.Nanoseconds()) / float64(res.ops)
	}
	return res
}

// judge says how noisy an attempt was and whether it failed, for
// harness.MeasureQuietly.
func (r result) judge() (other float64, failed bool) { return r.other, r.failed != "" }
