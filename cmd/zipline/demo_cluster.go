package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/cmd/zipline/bench/failover"
	"github.com/ziplinekv/zipline/testbed"
)

// clusterDemo is `zipline demo -cluster`: the demo's workload on a local
// Redis Cluster of three primaries with a replica each, started for the
// demo and stopped when it ends (Ctrl-C included: the context ends, the
// deferred Stop kills the nodes). With failover set, a primary is killed in
// the middle of the run and the demo shows the failover as the client saw
// it.
type clusterDemo struct {
	w        workload
	conc     int
	dur      time.Duration
	failover bool
}

// clusterNodeTimeout is the demo cluster's cluster-node-timeout: a killed
// primary is failed over in about two of these.
const clusterNodeTimeout = time.Second

func (d clusterDemo) run(ctx context.Context) error {
	start := time.Now()
	cl, err := testbed.StartCluster(ctx, testbed.ClusterConfig{Kind: testbed.Redis, Primaries: 3, Replicas: 1,
		NodeTimeout: clusterNodeTimeout})
	if err != nil {
		return fmt.Errorf("starting a local Redis Cluster: %w", err)
	}
	defer cl.Stop()
	fmt.Printf("started a Redis Cluster of %d nodes (%s, cluster-node-timeout %v) in %v; no persistence; stopped on exit\n\n",
		len(cl.Nodes()), serverVersion(cl.Nodes()[0]), clusterNodeTimeout, time.Since(start).Round(10*time.Millisecond))
	if err := printSlots(ctx, cl); err != nil {
		return err
	}

	seeds := cl.Addrs()[:1]
	c, err := zipline.New(zipline.Options{Addrs: seeds, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	defer c.Close()
	fmt.Printf("\nzipline.New(Options{Addrs: %q}): one seed is enough; the client found every node and routes each\n", seeds)
	fmt.Println("command to its slot's primary over one pipelined connection per node. MGET, MSET and DEL are split by")
	fmt.Println("slot; a Batch is split per node.")
	if err := d.w.prefill(ctx, c); err != nil {
		return err
	}
	fmt.Printf("\nworkload: %.0f%% GET / %.0f%% SET of %d B values over %d keys (on every primary)\n\n",
		100*d.w.getRatio, 100*(1-d.w.getRatio), len(d.w.value), d.w.keys)
	if d.failover {
		return d.runFailover(ctx, cl, c)
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "goroutines\tclient\tops/s\tp50\tp99\tp99.9\tserver µs/op\treqs/write\t")
	shared := func() (*zipline.Client, func(), error) { return c, func() {}, nil }
	for _, n := range []int{1, d.conc} {
		before := c.Stats()
		res, err := d.w.run(ctx, n, d.dur, nil, shared)
		if err != nil {
			return err
		}
		after := c.Stats()
		res.print(tw, n, "zipline", fmt.Sprintf("%.1f", float64(after.Requests-before.Requests)/float64(max(after.Writes-before.Writes, 1))))
	}
	tw.Flush()
	fmt.Println("\nrun with -failover to kill a primary in the middle of the run and see the failover from the client's side.")
	fmt.Println("The compression, layout and fanout sections run on a single server: `zipline demo` without -cluster.")
	return nil
}

// printSlots prints which primary serves which slots, and its replicas.
func printSlots(ctx context.Context, cl *testbed.Cluster) error {
	t, err := cl.Topology(ctx)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "primary\tslots\tcount\treplicas")
	for _, p := range t.Primaries() {
		var ranges, replicas []string
		for _, r := range p.Slots {
			ranges = append(ranges, r.String())
		}
		for _, r := range t.Replicas(p.ID) {
			replicas = append(replicas, r.Addr)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", p.Addr, strings.Join(ranges, ","), p.SlotCount(), strings.Join(replicas, ", "))
	}
	return tw.Flush()
}

// ziplineLoad adapts a zipline Client to the failover load.
type ziplineLoad struct{ c *zipline.Client }

func (z ziplineLoad) Get(ctx context.Context, key string) (int, error) {
	v, err := z.c.Get(ctx, key)
	return len(v), err
}

func (z ziplineLoad) Set(ctx context.Context, key string, val []byte) error {
	return z.c.Set(ctx, key, val)
}

// runFailover runs the workload on d.conc goroutines, kills the primary of
// slot 0 after half of d.dur, keeps going for d.dur after the cluster has
// settled (the client takes a little longer to be back to normal), and
// prints what the client saw.
func (d clusterDemo) runFailover(ctx context.Context, cl *testbed.Cluster, c *zipline.Client) error {
	victim, err := cl.SlotOwner(ctx, 0)
	if err != nil {
		return err
	}
	half := d.dur / 2
	cfg := failover.Config{Cluster: cl, Victim: victim, Goroutines: d.conc, Keys: d.w.keys, KeyPrefix: "demo:",
		Value: d.w.value, GetRatio: d.w.getRatio, Warmup: 300 * time.Millisecond, Before: half, After: half, Tail: d.dur}
	fmt.Printf("%d goroutines; after %v, kill -9 of the primary %s (slot 0 and its range), then %v more once the cluster has settled\n\n",
		d.conc, half, victim.Addr, d.dur)
	t, err := failover.Run(ctx, cfg, ziplineLoad{c})
	if err != nil {
		return err
	}
	p := t.Promotion
	fmt.Printf("the cluster: %s's replica %s was promoted %v after the kill (about two node timeouts and an election);\n",
		p.Former.Addr, p.Primary.Addr, ms(p.Window))
	fmt.Printf("every node agreed on the new topology after %v\n\n", ms(p.Settled))

	fmt.Printf("the client: %d of %d calls failed", t.Errors, t.Calls)
	if t.Errors > 0 {
		fmt.Printf(", from +%v to +%v after the kill (a window of %v)", ms(t.FirstErr), ms(t.LastErr), ms(t.Window()))
	}
	fmt.Println()
	for _, cls := range t.Classes {
		fmt.Printf("  %6d  %s%s\n", cls.Count, cls.Name, classMeaning(cls.Name))
	}
	var slowest time.Duration
	for _, b := range t.Buckets {
		slowest = max(slowest, b.P99)
	}
	fmt.Printf("p99 %v before the kill, %v at worst (calls for the dead primary's slots wait for its successor);\n",
		ms(t.BaselineP99), ms(slowest))
	def := cfg.WithDefaults()
	fmt.Printf("back to normal (no errors, calls flowing, p99 ≤ %.0f× that for %v) from +%v on\n\n", def.Degraded, def.Stable, ms(t.Recovered))

	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "phase\tlength\tcalls/s\tfailed calls\t")
	for _, ph := range []struct {
		name string
		p    failover.Phase
	}{{"before the kill", t.Before}, {"during (kill to recovered)", t.During}, {"after", t.After}} {
		fmt.Fprintf(tw, "%s\t%v\t%.0f\t%d\t\n", ph.name, ms(ph.p.Length), ph.p.PerSecond(), ph.p.Errors)
	}
	tw.Flush()
	fmt.Printf("\n%s\n", strip(t, def.Degraded))
	fmt.Println("  one character per", t.Bucket, "of calls by start: . normal   x failed calls   ~ p99 above the limit   _ no call started (every goroutine waiting)")
	fmt.Printf("\nslots after the failover (%s is down):\n", victim.Addr)
	return printSlots(ctx, cl)
}

// strip draws the timeline as one character per bucket, the kill as |.
func strip(t *failover.Timeline, degraded float64) string {
	var b strings.Builder
	limit := time.Duration(degraded * float64(t.BaselineP99))
	fmt.Fprintf(&b, "%+.1fs ", t.Buckets[0].Start.Seconds())
	for _, k := range t.Buckets {
		if k.Start == 0 {
			b.WriteByte('|')
		}
		switch {
		case k.Errors > 0:
			b.WriteByte('x')
		case k.Calls == 0:
			b.WriteByte('_')
		case k.P99 > limit:
			b.WriteByte('~')
		default:
			b.WriteByte('.')
		}
	}
	last := t.Buckets[len(t.Buckets)-1]
	fmt.Fprintf(&b, " %+.1fs", (last.Start + t.Bucket).Seconds())
	return b.String()
}

// classMeaning explains zipline's error classes in the failover output.
func classMeaning(class string) string {
	switch class {
	case "zipline.ErrConnLost":
		return ": written to the killed primary, no reply; the outcome is unknown, so zipline never retries them"
	case "zipline.ErrNotSent", "zipline.ErrNotConnected (ErrNotSent)":
		return ": never reached a server; safe to retry"
	case "deadline exceeded":
		return ": the call's own deadline ended first"
	}
	return ""
}

// ms rounds d for printing.
func ms(d time.Duration) time.Duration {
	if d >= 10*time.Millisecond {
		return d.Round(time.Millisecond)
	}
	return d.Round(10 * time.Microsecond)
}
