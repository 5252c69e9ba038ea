// Command clusterbench compares zipline with other Go clients on one local
// Redis Cluster (three primaries with a replica each): parallel GET and SET
// of single keys, MGET of 100 keys across slots, and a pipeline of 100
// commands across slots, reporting throughput, latency, allocations and
// CPU per operation.
//
//	cd bench && go run -tags glide ./cmd/clusterbench -out results/cluster.md
//
// One client runs at a time; each run visits every cell once, clients in a
// rotating order, and cells report the median over runs. Measurement,
// quiet-machine checks and summaries are package harness's, as in
// cmd/clientbench. See README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ziplinekv/zipline/bench"
	"github.com/ziplinekv/zipline/bench/harness"
	"github.com/ziplinekv/zipline/testbed"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "clusterbench:", err)
		os.Exit(1)
	}
}

type options struct {
	clients     []bench.ClusterFactory
	ops         []bench.ClusterOp
	conc        []int // GET and SET
	batchConc   []int // MGET and batch
	size        int
	duration    time.Duration
	warmup      time.Duration
	runs        int
	kind        testbed.Kind
	out         string
	maxOther    float64
	maxWait     time.Duration
	cpuProfile  string
	mutexProf   string
	blockProf   string
	record      *harness.Recorders
	nodeTimeout time.Duration
}

func parseFlags() (*options, error) {
	var (
		clients   = flag.String("clients", "", "comma-separated clients to run (default all built in: "+bench.ClusterNames()+")")
		ops       = flag.String("ops", "get,set,mget,batch", "comma-separated operations (get, set, mget, batch)")
		conc      = flag.String("conc", "1,8,64,512", "goroutines for GET and SET")
		batchConc = flag.String("batch-conc", "1,64", "goroutines for MGET and batch")
		size      = flag.Int("size", 64, "value size in bytes")
		duration  = flag.Duration("duration", 2*time.Second, "measured time per cell")
		warmup    = flag.Duration("warmup", 500*time.Millisecond, "unmeasured warm-up per cell")
		runs      = flag.Int("runs", 3, "runs over all cells; tables show the median")
		kind      = flag.String("kind", "redis", "cluster server: redis or valkey")
		out       = flag.String("out", "", "also write the markdown report to this file (rewritten after every run)")
		quick     = flag.Bool("quick", false, "smoke test: -duration 1s -warmup 300ms -runs 1 unless set explicitly")
		maxOther  = flag.Float64("max-other", 25, "re-measure a cell once if other processes used more than this % of one CPU during it, "+
			"and wait up to -max-wait for such a quiet moment before each cell; 0 turns both off")
		maxWait     = flag.Duration("max-wait", 5*time.Second, "longest wait for a quiet moment before a cell")
		cpuProfile  = flag.String("cpuprofile", "", "write a CPU profile of the whole run (the client process) to this file")
		mutexProf   = flag.String("mutexprofile", "", "write a mutex contention profile at the end of the run")
		blockProf   = flag.String("blockprofile", "", "write a blocking profile at the end of the run")
		nodeTimeout = flag.Duration("node-timeout", time.Second, "cluster-node-timeout")
		record      = harness.RecorderFlags(flag.CommandLine)
	)
	flag.Parse()
	if flag.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", flag.Args())
	}
	if *quick {
		if err := harness.QuickDefaults(map[string]string{"duration": "1s", "warmup": "300ms", "runs": "1"}); err != nil {
			return nil, err
		}
	}
	o := &options{size: *size, duration: *duration, warmup: *warmup, runs: *runs, kind: testbed.Kind(*kind),
		out: *out, maxOther: *maxOther, maxWait: *maxWait, cpuProfile: *cpuProfile, mutexProf: *mutexProf,
		blockProf: *blockProf, record: record, nodeTimeout: *nodeTimeout}
	if o.runs < 1 || o.duration <= 0 || o.warmup < 0 || o.maxOther < 0 || o.maxWait < 0 || o.size < 1 {
		return nil, errors.New("need -runs ≥ 1, -duration > 0, -warmup ≥ 0, -max-other ≥ 0, -max-wait ≥ 0, -size ≥ 1")
	}
	if o.kind != testbed.Redis && o.kind != testbed.Valkey {
		return nil, fmt.Errorf("-kind: %q is neither redis nor valkey", *kind)
	}
	var err error
	if o.conc, err = harness.ParseInts(*conc, 1, 1<<16); err != nil {
		return nil, fmt.Errorf("-conc: %w", err)
	}
	if o.batchConc, err = harness.ParseInts(*batchConc, 1, 1<<16); err != nil {
		return nil, fmt.Errorf("-batch-conc: %w", err)
	}
	for _, op := range strings.Split(*ops, ",") {
		op := bench.ClusterOp(strings.ToLower(strings.TrimSpace(op)))
		if !slices.Contains(allOps, op) {
			return nil, fmt.Errorf("-ops: unknown op %q (want get, set, mget, batch)", op)
		}
		o.ops = append(o.ops, op)
	}
	if o.clients, err = bench.PickCluster(*clients); err != nil {
		return nil, fmt.Errorf("-clients: %w", err)
	}
	return o, nil
}

var allOps = []bench.ClusterOp{bench.OpGet, bench.OpSet, bench.OpMGet, bench.OpBatch}

// points lists what each client is measured at, in report order.
func (o *options) points() []point {
	var ps []point
	for _, op := range o.ops {
		conc := o.conc
		if op == bench.OpMGet || op == bench.OpBatch {
			conc = o.batchConc
		}
		for _, c := range conc {
			ps = append(ps, point{op, c})
		}
	}
	return ps
}

func glideTag() string {
	if _, ok := bench.LookupCluster("glide"); ok {
		return "glide"
	}
	return ""
}

func run() error {
	o, err := parseFlags()
	if err != nil {
		return err
	}
	stopProfiles, err := startProfiles(o)
	if err != nil {
		return err
	}
	defer stopProfiles()

	sess := harness.Begin("clusterbench", glideTag())
	rep := &report{
		Header: harness.Header{Title: "Cluster benchmark: zipline and peer clients on a Redis Cluster",
			Command: sess.Command,
			Settings: fmt.Sprintf("duration %v, warm-up %v, runs %d, %d prefilled keys of %d B with %d B values; "+
				"GET/SET at %v goroutines, MGET and batch of %d keys at %v", o.duration, o.warmup, o.runs,
				bench.NumKeys, bench.KeyLen, o.size, o.conc, bench.BatchKeys, o.batchConc)},
		clients: o.clients, points: o.points(), runs: o.runs,
	}
	for _, f := range o.clients {
		rep.Clients = append(rep.Clients, harness.Client{Name: f.Name, Desc: f.Desc})
	}
	if glideTag() == "" {
		rep.notes = append(rep.notes, "glide was not built in (needs -tags glide).")
	}

	ctx := context.Background()
	cl, err := testbed.StartCluster(ctx, testbed.ClusterConfig{Kind: o.kind, NodeTimeout: o.nodeTimeout})
	if err != nil {
		return fmt.Errorf("starting the cluster: %w", err)
	}
	defer cl.Stop()
	rn := &runner{cluster: cl, warmup: o.warmup, duration: o.duration, size: o.size,
		record: o.record}
	for _, s := range cl.Nodes() {
		rn.pids = append(rn.pids, s.PID())
	}
	rep.Env = harness.Environment(serverDescription(ctx, cl))

	cells := 0
	for _, p := range rep.points {
		for _, f := range o.clients {
			if f.Does(p.op) {
				cells += o.runs
			}
		}
	}
	cellTime := o.duration + o.warmup + 250*time.Millisecond
	if o.maxOther > 0 {
		cellTime += harness.QuietSample
	}
	est := time.Duration(cells) * cellTime
	quiet := &harness.QuietGate{MaxOther: o.maxOther, MaxWait: o.maxWait, Budget: est / 2, ServerPIDs: rn.pids}
	fmt.Fprintf(os.Stderr, "%d cells, about %v", cells, est.Round(time.Second))
	if quiet.Enabled() {
		fmt.Fprintf(os.Stderr, ", and up to %v more waiting for other processes to go quiet", quiet.Budget.Round(time.Second))
		rep.noise.Gate = quiet.Describe()
	}
	fmt.Fprintln(os.Stderr)

	start := time.Now()
	done := 0
	sess.Rounds(o.runs, func(r int) {
		for _, p := range rep.points {
			sess.Rotated(r, len(o.clients), func(i int) {
				f := o.clients[i]
				if !f.Does(p.op) {
					return
				}
				spec := cellSpec{factory: f, point: p, run: r}
				done++
				m, again := quiet.Measure(cellTime, func() harness.Measurement { return rn.runCell(spec) },
					func(m *harness.Measurement, again bool) {
						fmt.Fprintf(os.Stderr, "[run %d %d/%d%s] %-12s %-17s %s\n", r, done, cells, harness.AgainTag(again), p, f.Name, m.Line())
					})
				rep.results = append(rep.results, result{cellSpec: spec, Measurement: m, remeasured: again})
			})
		}
		rep.noise.Waited, rep.noise.Remeasured = quiet.Waited, quiet.Remeasured
		sess.Save(o.out, rep.write)
	})
	if sess.Stopped() {
		rep.notes = append(rep.notes, "interrupted: incomplete run.")
	}
	fmt.Fprintf(os.Stderr, "done in %v\n", time.Since(start).Round(time.Second))
	return sess.End(o.out, rep.write)
}

// serverDescription names the cluster's server version and shape.
func serverDescription(ctx context.Context, cl *testbed.Cluster) string {
	nodes := cl.Nodes()
	version := string(cl.Kind)
	if info, err := nodes[0].Info(ctx, "server"); err == nil {
		if v := info["valkey_version"]; v != "" {
			version = "valkey " + v
		} else {
			version = "redis " + info["redis_version"]
		}
	}
	return fmt.Sprintf("%s cluster of %d nodes (3 primaries, 1 replica each, cluster-node-timeout %v), started by clusterbench on %s",
		version, len(nodes), cl.NodeTimeout, strings.Join(cl.Addrs(), ", "))
}

// startProfiles starts the profiles the flags ask for and returns what
// stops and writes them.
func startProfiles(o *options) (func(), error) {
	var stops []func()
	stopCPU, err := harness.StartCPUProfile(o.cpuProfile)
	if err != nil {
		return nil, err
	}
	stops = append(stops, stopCPU)
	write := func(name, path string) {
		f, err := os.Create(path)
		if err == nil {
			err = pprof.Lookup(name).WriteTo(f, 0)
			f.Close()
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "clusterbench: %s profile: %v\n", name, err)
		}
	}
	if o.mutexProf != "" {
		runtime.SetMutexProfileFraction(5)
		stops = append(stops, func() { write("mutex", o.mutexProf) })
	}
	if o.blockProf != "" {
		runtime.SetBlockProfileRate(int(10 * time.Microsecond))
		stops = append(stops, func() { write("block", o.blockProf) })
	}
	return sync.OnceFunc(func() {
		for _, stop := range stops {
			stop()
		}
	}), nil
}
