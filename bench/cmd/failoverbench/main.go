// Command failoverbench draws the failover timeline of zipline and its
// peers: each client runs the same load (64 goroutines of GET and SET over
// 10,000 keys) against its own fresh local Redis Cluster (three primaries,
// one replica each), a primary is killed with SIGKILL, and the calls are
// cut into 100 ms buckets from 2 s before the kill to 8 s after: errors and
// p99 latency per bucket, side by side, as a markdown report and an SVG
// chart, with each client's window (first to last error) and the time
// until its p99 was back to its baseline.
//
//	cd bench && go run ./cmd/failoverbench -out results/failover.md -svg results/failover.svg
//
// The load and the arithmetic are the main module's
// cmd/zipline/bench/failover, which `zipline demo -cluster -failover` runs
// for zipline alone.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/ziplinekv/zipline/bench"
	"github.com/ziplinekv/zipline/bench/harness"
	"github.com/ziplinekv/zipline/cmd/zipline/bench/chart"
	"github.com/ziplinekv/zipline/cmd/zipline/bench/failover"
	"github.com/ziplinekv/zipline/testbed"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "failoverbench:", err)
		os.Exit(1)
	}
}

type options struct {
	clients     []bench.ClusterFactory
	rounds      int
	kind        testbed.Kind
	nodeTimeout time.Duration
	seeds       int
	out, svg    string
	cfg         failover.Config
}

func parseFlags() (*options, error) {
	var (
		clients     = flag.String("clients", "zipline,rueidis,goredis", "comma-separated clients (built in: "+bench.ClusterNames()+")")
		rounds      = flag.Int("rounds", 1, "runs of every client, each on a fresh cluster, in rotating order")
		kind        = flag.String("kind", "redis", "cluster server: redis or valkey")
		nodeTimeout = flag.Duration("node-timeout", time.Second, "cluster-node-timeout")
		seeds       = flag.Int("seeds", 1, "node addresses the clients get, in start order (the first is the primary killed)")
		out         = flag.String("out", "", "write the markdown report to this file")
		svg         = flag.String("svg", "", "write the chart to this file")
		conc        = flag.Int("conc", 64, "goroutines")
		keys        = flag.Int("keys", 10_000, "distinct keys")
		size        = flag.Int("size", 64, "value size in bytes")
		warmup      = flag.Duration("warmup", time.Second, "load before the measured part")
		before      = flag.Duration("before", 2*time.Second, "measured load before the kill")
		after       = flag.Duration("after", 8*time.Second, "measured load after the kill")
		bucket      = flag.Duration("bucket", 100*time.Millisecond, "bucket width")
		timeout     = flag.Duration("timeout", 5*time.Second, "each call's context deadline")
		pause       = flag.Duration("retry-pause", 10*time.Millisecond, "a goroutine's pause after a failed call")
	)
	flag.Parse()
	if flag.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", flag.Args())
	}
	o := &options{rounds: *rounds, kind: testbed.Kind(*kind), nodeTimeout: *nodeTimeout, seeds: *seeds, out: *out, svg: *svg}
	if o.seeds < 1 || o.seeds > 6 {
		return nil, errors.New("-seeds: 1 to 6 (the cluster's nodes)")
	}
	if o.rounds < 1 || *conc < 1 || *keys < 1 || *size < 1 || *before <= 0 || *after <= 0 || *bucket <= 0 || *timeout <= 0 {
		return nil, errors.New("need -rounds, -conc, -keys, -size ≥ 1 and -before, -after, -bucket, -timeout > 0")
	}
	if o.kind != testbed.Redis && o.kind != testbed.Valkey {
		return nil, fmt.Errorf("-kind: %q is neither redis nor valkey", *kind)
	}
	o.cfg = failover.Config{Goroutines: *conc, Keys: *keys, Value: bench.Value(*size), Warmup: *warmup, Before: *before,
		After: *after, Bucket: *bucket, CallTimeout: *timeout, RetryPause: *pause}.WithDefaults()
	var err error
	if o.clients, err = bench.PickCluster(*clients); err != nil {
		return nil, fmt.Errorf("-clients: %w", err)
	}
	return o, nil
}

// outcome is one client's run.
type outcome struct {
	client string
	round  int
	tl     *failover.Timeline
	err    error
}

func run() error {
	o, err := parseFlags()
	if err != nil {
		return err
	}
	sess := harness.Begin("failoverbench", "")
	ctx := sess.Context()
	rep := &report{session: sess, opts: o}
	sess.Interleave(o.rounds, len(o.clients), func(r, i int) {
		f := o.clients[i]
		oc := outcome{client: f.Name, round: r}
		var server string
		oc.tl, server, oc.err = runOne(ctx, o, f)
		if rep.server == "" {
			rep.server = server
		}
		logOutcome(oc)
		rep.outcomes = append(rep.outcomes, oc)
	})
	if err := sess.End(o.out, rep.write); err != nil && ctx.Err() == nil {
		return err
	}
	if o.svg != "" {
		var svg bytes.Buffer
		if err := rep.chart().WriteSVG(&svg); err != nil {
			return err
		}
		if err := os.WriteFile(o.svg, svg.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// runOne starts a cluster for f, runs the timeline through f's client and
// stops both. It also describes the server.
func runOne(ctx context.Context, o *options, f bench.ClusterFactory) (*failover.Timeline, string, error) {
	cl, err := testbed.StartCluster(ctx, testbed.ClusterConfig{Kind: o.kind, NodeTimeout: o.nodeTimeout})
	if err != nil {
		return nil, "", fmt.Errorf("starting the cluster: %w", err)
	}
	defer cl.Stop()
	server := string(o.kind)
	if info, err := cl.Nodes()[0].Info(ctx, "server"); err == nil {
		server = fmt.Sprintf("%s %s%s", o.kind, info["redis_version"], info["valkey_version"])
	}
	c, err := f.New(cl.Addrs()[:o.seeds])
	if err != nil {
		return nil, server, fmt.Errorf("%s: connect: %w", f.Name, err)
	}
	defer c.Close()
	cfg := o.cfg
	cfg.Cluster = cl
	tl, err := failover.Run(ctx, cfg, c)
	return tl, server, err
}

func logOutcome(oc outcome) {
	if oc.err != nil {
		fmt.Fprintf(os.Stderr, "[round %d] %-10s FAIL %v\n", oc.round, oc.client, oc.err)
		return
	}
	t := oc.tl
	fmt.Fprintf(os.Stderr, "[round %d] %-10s promoted after %v; %d errors from +%v to +%v; p99 %v before, back after +%v\n",
		oc.round, oc.client, ms(t.Promotion.Window), t.Errors, ms(t.FirstErr), ms(t.LastErr), ms(t.BaselineP99), ms(t.Recovered))
}

// ms rounds d for printing.
func ms(d time.Duration) time.Duration {
	if d >= 10*time.Millisecond {
		return d.Round(time.Millisecond)
	}
	return d.Round(10 * time.Microsecond)
}

// colors are the series' colours, by client order.
var colors = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf"}

// chart draws the first round: p99, failed and successful calls per
// bucket, a line per client, the kill and each client's promotion as marks.
func (r *report) chart() chart.Timeline {
	c := chart.Timeline{
		Title:  fmt.Sprintf("Failover: kill -9 of a primary under %d goroutines (%s, node timeout %v)", r.opts.cfg.Goroutines, r.server, r.opts.nodeTimeout),
		XLabel: "seconds from the kill (calls by start time, " + r.opts.cfg.Bucket.String() + " buckets)",
		Panels: []chart.TimelinePanel{{YLabel: "p99 latency, ms (log)", Log: true}, {YLabel: "failed calls per bucket"},
			{YLabel: "successful calls per bucket"}},
		Marks: []chart.Mark{{X: 0, Label: "kill -9", Color: "black"}},
	}
	for i, oc := range r.firstRound() {
		color := colors[i%len(colors)]
		if oc.tl == nil {
			continue
		}
		if c.X == nil {
			for _, b := range oc.tl.Buckets {
				c.X = append(c.X, b.Start.Seconds())
			}
		}
		p99s, errs, oks := nans(len(c.X)), nans(len(c.X)), nans(len(c.X))
		for j, b := range oc.tl.Buckets[:min(len(c.X), len(oc.tl.Buckets))] {
			if b.Calls+b.Errors > 0 {
				p99s[j] = float64(b.P99) / float64(time.Millisecond)
			}
			errs[j], oks[j] = float64(b.Errors), float64(b.Calls)
		}
		for pi, v := range [][]float64{p99s, errs, oks} {
			c.Panels[pi].Series = append(c.Panels[pi].Series, chart.Series{Name: oc.client, Color: color, Values: v})
		}
		c.Marks = append(c.Marks, chart.Mark{X: oc.tl.Promotion.Window.Seconds(), Color: color, Dashed: true,
			Label: fmt.Sprintf("%s's cluster: replica promoted (+%v)", oc.client, ms(oc.tl.Promotion.Window))})
	}
	return c
}

// nans returns n NaNs: no value, a gap in the line.
func nans(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = math.NaN()
	}
	return v
}
