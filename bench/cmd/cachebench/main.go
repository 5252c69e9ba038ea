// Command cachebench measures cache-aside: zipf-distributed reads of
// 100,000 user records through a cache in front of a simulated database
// (2 ms per load), at a 95 % hit ratio. It compares the zipline cache
// package without a local tier and with zipline's client-side cache as its
// store, go-redis/cache with its local TinyLFU, and rueidis DoCache
// (client-side caching).
//
//	cd bench && go run ./cmd/cachebench -out results/cacheaside.md
//
// Misses come from writes: before 5 % of the reads (-miss), the worker
// invalidates the key it is about to read, through the variant's own API,
// as an application does after updating the record. So every variant sees
// the same hit ratio, whatever its speed, and its database loads show how
// well it keeps concurrent misses of one key off the database. Records never
// expire during a run (TTL 10 minutes).
//
// One variant runs at a time, on a fresh client (so local tiers start
// cold and warm up during -warmup); rounds visit every variant in a
// rotating order, and the report shows medians over rounds.
//
// The report also counts what each variant costs the server: the commands
// it ran during the measured windows (INFO commandstats, before and after
// each window, INFO and PING left out) over the reads done in them, in all
// and by command. A read that hits a local tier costs none; a miss costs
// what the variant's cached read sends (zipline's c.Cached: CLIENT CACHING
// YES, GET, PTTL; with IgnoringKeyTTL, no PTTL; rueidis DoCache: CLIENT
// CACHING YES, MULTI, PTTL, GET, EXEC, or with ToStaticTTL CLIENT CACHING
// YES, GET), plus its load and store, and the invalidations' DELs.
//
// Stale reads: each record has a version in the simulated database. An
// invalidation first makes a new version (the application's write), then
// invalidates through the variant, and then commits the version; a read
// that returns a version older than the last one committed before it began
// is stale. The classic cache-aside race makes them: a load that read the
// record before the write stores it after the invalidation.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ziplinekv/zipline/bench"
	"github.com/ziplinekv/zipline/bench/harness"
	"github.com/ziplinekv/zipline/cmd/zipline/bench/latency"
	"github.com/ziplinekv/zipline/cmd/zipline/bench/sysstat"
	"github.com/ziplinekv/zipline/testbed"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

type options struct {
	variants []variant
	keys     int
	conc     int
	miss     float64
	dbDelay  time.Duration
	zipfS    float64
	duration time.Duration
	warmup   time.Duration
	rounds   int
	addr     string
	pid      int // the server's, for its CPU time; 0 if unknown
	out      string
	// cpuProfile is where a CPU profile of the whole run goes (empty: none).
	cpuProfile string
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "cachebench:", err)
		os.Exit(1)
	}
}

func parseFlags() (*options, error) {
	var names []string
	for _, v := range variants {
		names = append(names, v.name)
	}
	o := &options{}
	list := flag.String("variants", strings.Join(names, ","), "comma-separated variants")
	flag.IntVar(&o.keys, "keys", 100_000, "distinct records")
	flag.IntVar(&o.conc, "conc", 64, "goroutines")
	flag.Float64Var(&o.miss, "miss", 0.05, "fraction of reads preceded by an invalidation of their key (the miss ratio)")
	flag.DurationVar(&o.dbDelay, "db", 2*time.Millisecond, "simulated database latency per load")
	flag.Float64Var(&o.zipfS, "zipf", 1.01, "zipf exponent s (> 1) of the key popularity")
	flag.DurationVar(&o.duration, "duration", 3*time.Second, "measured time per cell")
	flag.DurationVar(&o.warmup, "warmup", time.Second, "unmeasured time per cell before measuring")
	flag.IntVar(&o.rounds, "rounds", 3, "rounds over all variants; the tables show medians")
	flag.StringVar(&o.addr, "addr", "", "existing server (default: start a redis-server on a free port)")
	flag.StringVar(&o.out, "out", "", "also write the markdown report here")
	flag.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run (this process) here; run one variant to read it")
	flag.Parse()
	vs, err := lookupVariants(strings.Split(*list, ","))
	if err != nil {
		return nil, err
	}
	o.variants = vs
	if o.zipfS <= 1 || o.keys < 1 || o.conc < 1 || o.rounds < 1 || o.miss < 0 || o.miss > 1 {
		return nil, fmt.Errorf("bad flags")
	}
	return o, nil
}

func run() error {
	o, err := parseFlags()
	if err != nil {
		return err
	}
	sess := harness.Begin("cachebench", "")
	addr := o.addr
	if addr == "" {
		srv, err := testbed.Start(testbed.Config{})
		if err != nil {
			return err
		}
		defer srv.Stop()
		addr, o.pid = srv.Addr, srv.PID()
	}
	stopProfile, err := harness.StartCPUProfile(o.cpuProfile)
	if err != nil {
		return err
	}
	defer stopProfile()
	counter, err := newCommandCounter(addr)
	if err != nil {
		return err
	}
	defer counter.Close()
	const ttl = 10 * time.Minute
	var live []variant
	vers := map[string]*versions{}
	for _, v := range o.variants {
		start := time.Now()
		vers[v.name] = newVersions(o.keys)
		if err := prefill(addr, v, o.keys, ttl); err != nil {
			return fmt.Errorf("%s: prefill: %w", v.name, err)
		}
		fmt.Fprintf(os.Stderr, "%s: prefilled %d records in %v\n", v.name, o.keys, time.Since(start).Round(time.Millisecond))
		live = append(live, v)
	}
	results := map[string][]cell{}
	var cellErr error
	sess.Interleave(o.rounds, len(live), func(r, i int) {
		v := live[i]
		if cellErr != nil {
			return
		}
		runtime.GC()
		c, err := runCell(addr, v, o, ttl, uint64(r-1), counter, vers[v.name])
		if err != nil {
			cellErr = fmt.Errorf("%s: %w", v.name, err)
			return
		}
		results[v.name] = append(results[v.name], c)
		fmt.Fprintf(os.Stderr, "round %d %-31s %8.0f ops/s  p99 %7v  loads %6d (%.2f%% of reads)  commands/read %.3f  stale %d  errors %d  other CPU %.0f%%\n",
			r, v.name, c.opsPerSec(), c.p99.Round(time.Microsecond), c.loads, 100*c.loadRatio(), c.commandsPerRead(), c.stale, c.errors, c.other)
	})
	if cellErr != nil {
		return cellErr
	}
	return sess.End(o.out, func(w io.Writer) { io.WriteString(w, report(o, results, sess)) })
}

// prefill stores every record through the variant, from 64 goroutines.
func prefill(addr string, v variant, keys int, ttl time.Duration) error {
	a, err := v.open(addr, &database{ver: newVersions(keys)}, ttl)
	if err != nil {
		return err
	}
	defer a.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for range 64 {
		wg.Go(func() {
			for id := int(next.Add(1) - 1); id < keys; id = int(next.Add(1) - 1) {
				if err := a.Prefill(ctx, makeUser(id, 0)); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// cell is one measured run of one variant.
type cell struct {
	ops, loads, errors uint64
	// stale counts reads that returned a version older than the last one
	// committed (its invalidation returned) before the read began.
	stale    uint64
	elapsed  time.Duration
	p50, p99 time.Duration
	// other is the CPU other processes used during the cell, in percent of
	// one CPU (-1 if unknown): the machine is shared, and this says how
	// much a cell was disturbed.
	other float64
	// cmds is what the server ran during the window, by command.
	cmds bench.CommandCalls
}

func (c cell) opsPerSec() float64 { return float64(c.ops) / c.elapsed.Seconds() }
func (c cell) commandsPerRead() float64 {
	return float64(c.cmds.Total()) / max(float64(c.ops), 1)
}
func (c cell) loadRatio() float64 { return float64(c.loads) / max(float64(c.ops), 1) }

// worker is one goroutine's share of a cell.
type worker struct {
	hist   latency.Histogram
	ops    uint64
	errors uint64
	stale  uint64
}

const (
	phaseWarmup = iota
	phaseMeasure
	phaseStop
)

func runCell(addr string, v variant, o *options, ttl time.Duration, round uint64, counter *commandCounter, ver *versions) (cell, error) {
	db := &database{latency: o.dbDelay, ver: ver}
	a, err := v.open(addr, db, ttl)
	if err != nil {
		return cell{}, err
	}
	defer a.Close()
	ctx, cancel := context.WithTimeout(context.Background(), o.warmup+o.duration+time.Minute)
	defer cancel()
	var phase atomic.Int32
	workers := make([]*worker, o.conc)
	var wg sync.WaitGroup
	for g := range workers {
		w := &worker{}
		workers[g] = w
		// Every variant replays the same key sequence in a round.
		rng := rand.New(rand.NewPCG(round, uint64(g)))
		zipf := rand.NewZipf(rng, o.zipfS, 1, uint64(o.keys-1))
		wg.Go(func() {
			for p := phase.Load(); p != phaseStop; p = phase.Load() {
				id := int(zipf.Uint64())
				if rng.Float64() < o.miss {
					// The record changes in the database, then the cache
					// is told: the application's write path.
					version := ver.change(id)
					if err := a.Invalidate(ctx, id); err != nil && p == phaseMeasure {
						w.errors++
					}
					ver.commit(id, version)
				}
				committed := ver.committed[id].Load()
				start := time.Now()
				u, err := a.Fetch(ctx, id)
				d := time.Since(start)
				if p != phaseMeasure {
					continue
				}
				if err != nil || u.ID != id {
					w.errors++
					continue
				}
				if u.Version < committed {
					w.stale++
				}
				w.ops++
				w.hist.Record(d)
			}
		})
	}
	time.Sleep(o.warmup)
	loads0 := db.loads.Load()
	phase.Store(phaseMeasure)
	before := sysstat.Take(o.pid)
	cmds0, err := counter.snapshot(ctx)
	if err != nil {
		phase.Store(phaseStop)
		wg.Wait()
		return cell{}, err
	}
	time.Sleep(o.duration)
	phase.Store(phaseStop)
	cmds1, err := counter.snapshot(ctx)
	usage := sysstat.Take(o.pid).Sub(before)
	if err != nil {
		wg.Wait()
		return cell{}, err
	}
	elapsed := usage.Elapsed
	loads := db.loads.Load() - loads0
	wg.Wait()
	var c cell
	var all latency.Histogram
	for _, w := range workers {
		c.ops += w.ops
		c.errors += w.errors
		c.stale += w.stale
		all.Merge(&w.hist)
	}
	c.loads, c.elapsed, c.other = uint64(loads), elapsed, usage.OtherPercent()
	c.cmds = cmds1.Since(cmds0, notCounted)
	c.p50, c.p99 = all.Quantile(0.50), all.Quantile(0.99)
	return c, nil
}

func median[T int64 | float64 | time.Duration](xs []T) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func report(o *options, results map[string][]cell, sess *harness.Session) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Command:\n\n```\n%s\n```\n\n", sess.Command)
	fmt.Fprintf(&b, "Cache-aside: %d records, zipf s=%.2f, %d goroutines, %.0f%% of reads after an invalidation, database %v per load; "+
		"%d rounds of %v (after %v warm-up) per variant, medians.\n\n",
		o.keys, o.zipfS, o.conc, 100*o.miss, o.dbDelay, o.rounds, o.duration, o.warmup)
	fmt.Fprintf(&b, "Machine at start: %s; at end: %s.\n\n", sess.MachineBefore, sess.MachineAfter)
	b.WriteString("| variant | ops/s | p50 | p99 | database loads | loads / read | server commands / read | stale reads | errors |\n")
	b.WriteString("| --- | --: | --: | --: | --: | --: | --: | --: | --: |\n")
	for _, v := range o.variants {
		cs := results[v.name]
		if len(cs) == 0 {
			fmt.Fprintf(&b, "| %s | (no run) | | | | | | | |\n", v.name)
			continue
		}
		var ops, ratio []float64
		var p50, p99 []time.Duration
		var loads []int64
		var errs, reads, stale uint64
		var cmds bench.CommandCalls
		for _, c := range cs {
			reads += c.ops
			cmds = cmds.Add(c.cmds)
			ops = append(ops, c.opsPerSec())
			ratio = append(ratio, c.loadRatio())
			p50 = append(p50, c.p50)
			p99 = append(p99, c.p99)
			loads = append(loads, int64(c.loads))
			errs += c.errors
			stale += c.stale
		}
		fmt.Fprintf(&b, "| %s | %.0f | %v | %v | %d | %.2f%% | %.3f | %d | %d |\n", v.name, median(ops),
			median(p50).Round(time.Microsecond), median(p99).Round(time.Microsecond), median(loads), 100*median(ratio),
			float64(cmds.Total())/max(float64(reads), 1), stale, errs)
	}
	b.WriteString("\nServer commands / read: the commands the server ran during the measured windows of all rounds " +
		"(INFO commandstats; INFO and PING left out), over the reads done in them. By command, per read:\n\n")
	b.WriteString("| variant | server commands / read | by command |\n| --- | --: | --- |\n")
	for _, v := range o.variants {
		var reads uint64
		var cmds bench.CommandCalls
		for _, c := range results[v.name] {
			reads += c.ops
			cmds = cmds.Add(c.cmds)
		}
		fmt.Fprintf(&b, "| %s | %.3f | %s |\n", v.name, float64(cmds.Total())/max(float64(reads), 1), cmds.Per(reads, 3))
	}
	b.WriteString("\nVariants:\n\n")
	for _, v := range o.variants {
		fmt.Fprintf(&b, "- `%s`: %s\n", v.name, v.desc)
	}
	b.WriteString("\n<details><summary>Per round</summary>\n\n| variant | round | ops/s | p50 | p99 | loads | commands / read | other processes' CPU |\n| --- | --: | --: | --: | --: | --: | --: | --: |\n")
	for _, v := range o.variants {
		for r, c := range results[v.name] {
			fmt.Fprintf(&b, "| %s | %d | %.0f | %v | %v | %d | %.3f | %.0f%% |\n", v.name, r+1, c.opsPerSec(),
				c.p50.Round(time.Microsecond), c.p99.Round(time.Microsecond), c.loads, c.commandsPerRead(), c.other)
		}
	}
	b.WriteString("\n</details>\n")
	return b.String()
}
