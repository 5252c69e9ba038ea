package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/cmd/zipline/bench/latency"
	"github.com/ziplinekv/zipline/cmd/zipline/bench/sysstat"
	"github.com/ziplinekv/zipline/testbed"
)

// cmdDemo is "zipline demo", the main job.
var cmdDemo = &command{
	name:     "demo",
	summary:  "run a mixed workload through zipline and through one request per round trip, and compare",
	synopsis: "[flags]",
	doc: `Runs a mixed GET/SET workload through zipline's one shared, implicitly pipelined connection
and through one request per round trip (a connection per goroutine, as a pool gives), and
compares them; then shows compression, namespaces (key layouts) and the WebSocket fanout.

Without -addr or -url it starts a local redis-server, stopped on exit. Against a server of
yours it first checks that the server holds none of the keys it writes, and deletes them all
when it ends; the compression section, which dials by address alone, is skipped when the
server needs more than its address (a URL with a password, TLS, a database or a socket).
-cluster runs it on a local Redis Cluster instead, and -failover kills a primary midway.`,
	flags: demoFlags,
}

// demoFlags defines the demo's flags and returns what runs it.
func demoFlags(fs *flag.FlagSet) func(context.Context, []string) error {
	server := addServerFlags(fs, "", "server `host:port` (default: start a local redis-server); the demo refuses a server that\n"+
		"holds any of the keys it writes, and deletes them all when it ends", urlFlagHelp)
	conc := fs.Int("c", 256, "goroutines for the concurrent run")
	dur := fs.Duration("d", 3*time.Second, "duration of each run")
	size := fs.Int("size", 256, "value size in bytes")
	keys := fs.Int("keys", 10_000, "distinct keys")
	getRatio := fs.Float64("get", 0.8, "fraction of GETs; the rest are SETs")
	cluster := fs.Bool("cluster", false, "run on a local Redis Cluster (3 primaries, 1 replica each) instead of one server")
	kill := fs.Bool("failover", false, "with -cluster: kill a primary (SIGKILL) in the middle of the run and show the failover")
	return func(ctx context.Context, _ []string) error {
		switch {
		case *kill && !*cluster:
			return usagef("-failover needs -cluster")
		case *cluster && server.given():
			return usagef("-cluster starts its own cluster: leave out -addr and -url")
		case *conc < 1 || *keys < 1 || *size < 0 || *dur <= 0:
			return usagef("need -c ≥ 1, -keys ≥ 1, -size ≥ 0 and -d > 0")
		}
		opts, err := server.options()
		if err != nil {
			return err
		}
		w := workload{keys: *keys, value: demoValue(*size), getRatio: *getRatio}
		if *cluster {
			return clusterDemo{w: w, conc: *conc, dur: *dur, failover: *kill}.run(ctx)
		}
		return demo(ctx, opts, server.none(), w, *conc, *dur)
	}
}

// demo runs the demo on the server opts reaches, or, if local, on a local
// redis-server it starts: w with one goroutine and with conc, each for
// dur, then the demo's sections.
func demo(ctx context.Context, opts zipline.Options, local bool, w workload, conc int, dur time.Duration) error {
	var srv *testbed.Server
	if local {
		addr, s, stop, err := localServer("")
		if err != nil {
			return err
		}
		defer stop()
		opts.Addr, srv = addr, s
	}
	serverAddr := describeServer(opts)
	// What the library logs while the demo runs (a layout's warning that the
	// server cannot expire hash fields) is printed after the tables, never
	// inside them.
	notes := &logNotes{}
	if opts.Logger == nil {
		opts.Logger = slog.New(notes)
		defer notes.print(os.Stdout)
	}

	c, err := zipline.New(opts)
	if err != nil {
		return err
	}
	defer c.Close()
	// The baseline lends each goroutine a connection of its own, as a pool
	// does: zipline's dedicated connections, so that both sides run the
	// same client code and differ only in sharing.
	poolOpts := opts
	poolOpts.MaxDedicatedConns = max(conc, 1)
	pool, err := zipline.New(poolOpts)
	if err != nil {
		return err
	}
	defer pool.Close()
	shared := func() (*zipline.Client, func(), error) { return c, func() {}, nil }
	ownConn := func() (*zipline.Client, func(), error) {
		d, err := pool.Dedicated(ctx)
		if err != nil {
			return nil, nil, err
		}
		return d, func() { d.Close() }, nil
	}

	env := &demoEnv{addr: dialAddr(opts), srv: srv, client: c, dur: dur}
	// Every key the demo writes is declared before the first write. A
	// server given with -addr must hold none of them, and the deferred
	// cleanup deletes them all, on every path out of here.
	written := &env.keys
	written.add(w.keys, w.key)
	for _, section := range demoSections {
		section.declare(written)
	}
	if srv == nil {
		if err := written.checkUnused(ctx, c, serverAddr); err != nil {
			return err
		}
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		n, err := written.remove(cctx, c)
		switch {
		case err != nil:
			fmt.Fprintf(os.Stderr, "demo: deleting the demo's keys from %s: %v; it may have left some of %s\n",
				serverAddr, err, written.describe())
		case srv == nil:
			fmt.Printf("\nDeleted the %d keys the demo had left on %s (%s).\n", n, serverAddr, written.describe())
		}
	}()
	if err := w.prefill(ctx, c); err != nil {
		return err
	}
	fmt.Printf("workload: %.0f%% GET / %.0f%% SET of %d B values over %d keys, %v per run\n\n",
		100*w.getRatio, 100*(1-w.getRatio), len(w.value), w.keys, dur)

	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "goroutines\tclient\tops/s\tp50\tp99\tp99.9\tserver µs/op\treqs/write\t")
	for _, n := range []int{1, conc} {
		before := c.Stats()
		zl, err := w.run(ctx, n, dur, srv, shared)
		if err != nil {
			return err
		}
		after := c.Stats()
		reqsPerWrite := float64(after.Requests-before.Requests) / float64(max(after.Writes-before.Writes, 1))
		base, err := w.run(ctx, n, dur, srv, ownConn)
		if err != nil {
			return err
		}
		zl.print(tw, n, "zipline", fmt.Sprintf("%.1f", reqsPerWrite))
		base.print(tw, n, "1 req/round trip", "1.0")
		fmt.Fprintf(tw, "\tzipline / baseline\t%.2f×\t\t\t\t\t\t\n", zl.opsPerSec()/base.opsPerSec())
	}
	tw.Flush()
	fmt.Println("\n\"1 req/round trip\" gives each goroutine a connection of its own (Client.Dedicated) and waits for")
	fmt.Println("each reply before sending the next request, as a pool client does. zipline shares one connection:")
	fmt.Println("with one goroutine it costs the same round trip; with many, requests share writes.")

	for _, section := range demoSections {
		if err := section.run(ctx, env); err != nil {
			return err
		}
	}
	return nil
}

// demoSection is one section of the demo after the pipelining table.
type demoSection struct {
	run     func(context.Context, *demoEnv) error
	declare func(*demoKeys) // declares every key run writes
}

// demoSections run in order.
var demoSections = []demoSection{
	{demoCompression, declareCompressionKeys},
	{demoLayouts, declareLayoutKeys},
	{demoFanout, func(*demoKeys) {}}, // PUBLISH only: no keys
}

// demoEnv is what the demo's sections share: the server, a client on it,
// the duration of a timed run, and the keys the demo writes.
type demoEnv struct {
	// addr is the server's address for the sections that dial it by
	// address alone (bench/compression's clients); "" when reaching it takes
	// more than its address (see dialAddr).
	addr   string
	srv    *testbed.Server // nil when the demo runs against -addr or -url
	client *zipline.Client
	dur    time.Duration
	keys   demoKeys
}

// dialAddr returns the address through which a client made with
// Options{Addr: addr} alone reaches the same server as o: o's (first)
// address if o adds nothing a connection needs (credentials, TLS, a
// database, a socket), else "".
func dialAddr(o zipline.Options) string {
	if o.Username != "" || o.Password != "" || o.TLSConfig != nil || o.DB != 0 || (o.Network != "" && o.Network != "tcp") {
		return ""
	}
	if o.Addr == "" && len(o.Addrs) > 0 {
		return o.Addrs[0] // a cluster's seed: one is enough
	}
	return o.Addr
}

// demoValue returns the workload's value of size bytes.
func demoValue(size int) []byte {
	v := make([]byte, size)
	for i := range v {
		v[i] = 'a' + byte(i%26)
	}
	return v
}

type workload struct {
	keys     int
	value    []byte
	getRatio float64
}

func (w workload) key(i int) string { return "demo:" + strconv.Itoa(i) }

func (w workload) prefill(ctx context.Context, c *zipline.Client) error {
	b := c.Batch()
	for i := range w.keys {
		b.Set(w.key(i), w.value)
		if b.Len() == 1000 {
			if err := b.Exec(ctx); err != nil {
				return err
			}
		}
	}
	return b.Exec(ctx)
}

type runResult struct {
	ops       uint64
	elapsed   time.Duration
	hist      latency.Histogram
	serverCPU time.Duration
	errs      uint64
}

func (r *runResult) opsPerSec() float64 { return float64(r.ops) / r.elapsed.Seconds() }

func (r *runResult) print(tw *tabwriter.Writer, n int, name, reqsPerWrite string) {
	cpu := "-"
	if r.serverCPU > 0 {
		cpu = fmt.Sprintf("%.1f", float64(r.serverCPU.Microseconds())/float64(r.ops))
	}
	fmt.Fprintf(tw, "%d\t%s\t%.0f\t%v\t%v\t%v\t%s\t%s\t\n", n, name, r.opsPerSec(),
		round(r.hist.Quantile(0.5)), round(r.hist.Quantile(0.99)), round(r.hist.Quantile(0.999)), cpu, reqsPerWrite)
	if r.errs > 0 {
		fmt.Fprintf(tw, "\t(%d errors)\t\t\t\t\t\t\t\n", r.errs)
	}
}

func round(d time.Duration) time.Duration {
	if d > time.Millisecond {
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(100 * time.Nanosecond)
}

// run drives n goroutines for d, each on the client that conn returns.
func (w workload) run(ctx context.Context, n int, d time.Duration, srv *testbed.Server,
	conn func() (*zipline.Client, func(), error)) (*runResult, error) {
	clients := make([]*zipline.Client, n)
	for i := range clients {
		c, release, err := conn()
		if err != nil {
			return nil, err
		}
		defer release()
		clients[i] = c
	}
	var (
		stop  atomic.Bool
		wg    sync.WaitGroup
		hists = make([]latency.Histogram, n)
		ops   = make([]uint64, n)
		errs  atomic.Uint64
	)
	cpu0 := sysstat.Take(serverPID(srv))
	for g := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			for !stop.Load() {
				key := w.key(rng.IntN(w.keys))
				t0 := time.Now()
				var err error
				if rng.Float64() < w.getRatio {
					_, err = clients[g].Get(ctx, key)
				} else {
					err = clients[g].Set(ctx, key, w.value)
				}
				if err != nil {
					errs.Add(1)
					continue
				}
				hists[g].Record(time.Since(t0))
				ops[g]++
			}
		}()
	}
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
	stop.Store(true)
	wg.Wait()
	used := sysstat.Take(serverPID(srv)).Sub(cpu0)
	res := &runResult{elapsed: used.Elapsed, errs: errs.Load()}
	if used.ServerOK {
		res.serverCPU = used.Server
	}
	for g := range n {
		res.hist.Merge(&hists[g])
		res.ops += ops[g]
	}
	return res, ctx.Err()
}

// serverPID returns the process of srv, or 0 for a server given with -addr.
func serverPID(srv *testbed.Server) int {
	if srv == nil {
		return 0
	}
	return srv.PID()
}

// logNotes is a slog.Handler that keeps the distinct messages of warnings
// and errors, for the demo to print after its tables.
type logNotes struct {
	mu   sync.Mutex
	msgs []string
}

func (n *logNotes) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (n *logNotes) WithAttrs([]slog.Attr) slog.Handler           { return n }
func (n *logNotes) WithGroup(string) slog.Handler                { return n }

func (n *logNotes) Handle(_ context.Context, r slog.Record) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !slices.Contains(n.msgs, r.Message) {
		n.msgs = append(n.msgs, r.Message)
	}
	return nil
}

func (n *logNotes) print(w io.Writer) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.msgs) == 0 {
		return
	}
	fmt.Fprintln(w, "\nWhat the library logged while the demo ran:")
	for _, m := range n.msgs {
		fmt.Fprintf(w, "  - %s\n", m)
	}
}
