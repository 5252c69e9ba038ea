package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ziplinekv/zipline/internal/pace"

	"github.com/ziplinekv/zipline/cmd/zipline/bench/compression"
	"github.com/ziplinekv/zipline/cmd/zipline/bench/sysstat"
	"github.com/ziplinekv/zipline/testbed/corpus"
)

// demoCompression shows what transparent compression saves on realistic
// values: the server memory for 5,000 JSON documents of ~1.9 KB and HTML
// fragments of ~1.2 KB stored without compression, with zstd and with LZ4,
// then SET and GET throughput with and without it. Its keys carry their
// own prefix and are deleted afterwards, so it can run against a server
// given with -addr.
func demoCompression(ctx context.Context, d *demoEnv) error {
	const prefix = demoCompressionPrefix
	keys := demoCompressionKeys
	fmt.Printf("\n== Compression (byte-compatible with Valkey GLIDE) ==\n\n")
	if d.addr == "" {
		fmt.Println("Skipped: its clients dial the server by address alone, and this -url needs more (credentials,")
		fmt.Println("TLS, a database or a socket). Run the demo without -url, or with -addr, to see it.")
		return nil
	}
	variants := compression.ZiplineVariants()
	memData := compression.NewDataset(corpus.JSON1884, keys, 1, prefix+"mem:") // the key names every class uses
	data := compression.NewDataset(corpus.JSON1884, keys, 1, prefix+"tps:")
	// Runs delete their keys as they go; this catches what an error or
	// Ctrl-C leaves behind, with a context of its own.
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if _, err := d.client.Unlink(cctx, append(memData.Keys, data.Keys...)...); err != nil {
			fmt.Fprintln(os.Stderr, "demo: deleting the compression keys:", err)
		}
	}()
	mem, err := compression.MeasureMemory(ctx, compression.MemoryConfig{Addr: d.addr,
		Classes: []corpus.Class{corpus.JSON1884, corpus.HTML1247}, Keys: keys, KeyPrefix: prefix + "mem:"}, variants)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "values\tB/value\tserver memory: none\tzstd\tLZ4\tsaved: zstd\tLZ4\tGLIDE published: zstd\tLZ4\t")
	for _, r := range mem {
		fmt.Fprintf(tw, "%d × %s\t%.0f\t", r.Keys, r.Class, r.MeanSize())
		for _, b := range compression.Backends {
			run, _ := r.Run(compression.ZiplineName, b)
			fmt.Fprintf(tw, "%.2f MB\t", float64(run.Bytes)/1e6)
		}
		for _, b := range []compression.Backend{compression.Zstd, compression.LZ4} {
			s, _ := r.Saved(compression.ZiplineName, b)
			fmt.Fprintf(tw, "%.1f %%\t", 100*s)
		}
		for _, b := range []compression.Backend{compression.Zstd, compression.LZ4} {
			p, _ := compression.Published(r.Class.String(), b)
			fmt.Fprintf(tw, "%.1f %%\t", 100*p)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	fmt.Println("\nMemory is the server's used_memory growth (MB = 10^6 B); values read back unchanged. GLIDE's published")
	fmt.Println("figures come from its own corpus; bench/cmd/compbench runs the full comparison, beside GLIDE Go.")
	return demoCompressionThroughput(ctx, d, data, variants)
}

// demoCompressionKeys is how many values each part of the compression demo
// stores; tests lower it.
var demoCompressionKeys = 5000

// demoCompressionPrefix starts the names of the compression section's keys:
// prefix+"mem:0000000" … for the memory table, prefix+"tps:0000000" … for
// the throughput table (compression.NewDataset's names).
const demoCompressionPrefix = "zipline-demo:compression:"

// declareCompressionKeys declares the keys demoCompression writes.
func declareCompressionKeys(k *demoKeys) {
	for _, part := range []string{"mem:", "tps:"} {
		k.add(demoCompressionKeys, func(i int) string { return fmt.Sprintf("%s%s%07d", demoCompressionPrefix, part, i) })
	}
}

// The throughput table measures each variant in demoCompressionRounds
// rounds (tests lower it); each round runs every variant once, in an order
// rotated from round to round, so that drift on a shared machine hits them
// alike, and each figure is the median of its rounds. A round during which
// other processes used more than demoNoisyOther % of one CPU (read from
// /proc, bench/harness's threshold) is left out of a figure when enough
// others remain. A figure is marked as too noisy to trust when its middle
// rounds spread over more than demoNoisySpread of their median, or too few
// quiet rounds remain.
var demoCompressionRounds = 5

const (
	demoNoisySpread = 0.20
	demoNoisyOther  = 25.0
)

// demoThroughputGoroutines and demoThroughputBatch are the throughput
// table's cell: goroutines sharing one client, keys per batch.
const demoThroughputGoroutines, demoThroughputBatch = 64, 10

// demoCompressionThroughput measures and prints the throughput table:
// SET and GET keys/s with each backend, the median of several rounds.
func demoCompressionThroughput(ctx context.Context, d *demoEnv, data compression.Dataset, variants []compression.Variant) error {
	g, batch, rounds := demoThroughputGoroutines, demoThroughputBatch, max(demoCompressionRounds, 1)
	// Each phase lasts a tenth of the demo's run time, between 300 ms and
	// 2 s, after 150 ms of warm-up (the client is warm already: it wrote
	// every key first). With the default -d 3s the table takes about 16 s
	// and measures each figure for 1.5 s, in 5 rounds of 300 ms.
	phase := min(max(d.dur/10, 300*time.Millisecond), 2*time.Second)
	cfg := compression.MatrixConfig{Addr: d.addr, Data: data, Goroutines: []int{g}, Batches: []int{batch},
		Duration: phase, Warmup: 150 * time.Millisecond, StopTimeout: 5 * time.Second, ServerPID: serverPID(d.srv)}
	// The quiet-machine check before measuring: what other processes use
	// while the demo is idle. During the phases, with a server of its own
	// (whose CPU it can tell apart), the demo reads it for each phase.
	idle := sysstat.Take()
	if pace.Sleep(ctx, 300*time.Millisecond) != nil {
		return ctx.Err()
	}
	tp := demoThroughput{idleOther: sysstat.Take().Sub(idle).OtherPercent(), rounds: rounds, knowOther: d.srv != nil}
	for r := range rounds {
		order := append(append([]compression.Variant(nil), variants[r%len(variants):]...), variants[:r%len(variants)]...)
		m, err := compression.RunMatrix(ctx, cfg, order)
		if err != nil {
			return err
		}
		for _, b := range compression.Backends {
			for _, op := range compression.Ops {
				p, ok := m.Point(compression.ZiplineName, b, op, g, batch)
				if !ok {
					if p.Failed == "" {
						p.Failed = "not measured"
					}
					tp.failures = append(tp.failures, fmt.Sprintf("%s %s, round %d of %d: failed (%s)", b.Label(), op, r+1, rounds, p.Failed))
					continue
				}
				tp.add(b, op, r, p)
			}
		}
	}

	fmt.Printf("\n%d goroutines, batches of %d %s values (%d keys). Each figure is the median of %d rounds of %v per\n"+
		"phase, the variants in an order rotated from round to round; spread is (max - min) / median of its middle rounds:\n\n",
		g, batch, corpus.JSON1884, len(data.Keys), rounds, phase)
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "compression\tSET keys/s\tvs none\tGET keys/s\tvs none\tclient CPU µs/key (SET, GET)\tspread (SET, GET)\t")
	noisy := false
	for _, b := range compression.Backends {
		fmt.Fprintf(tw, "%s\t", b.Label())
		var cpu, spread []string
		for _, op := range compression.Ops {
			st, ok := tp.stats(b, op)
			if !ok {
				fmt.Fprintf(tw, "failed\t\t")
				cpu, spread = append(cpu, "-"), append(spread, "-")
				continue
			}
			mark := ""
			if st.noisy {
				mark, noisy = " *", true
			}
			ratio := "1.00×"
			if b != compression.None {
				ratio = "-"
				if x, ok := tp.ratio(b, op); ok {
					ratio = fmt.Sprintf("%.2f×", x)
				}
			}
			fmt.Fprintf(tw, "%.0f%s\t%s\t", st.tps, mark, ratio)
			cpu = append(cpu, fmt.Sprintf("%.2f", st.clientUS))
			spread = append(spread, fmt.Sprintf("%.0f %%", 100*st.spread))
		}
		fmt.Fprintf(tw, "%s\t%s\t\n", strings.Join(cpu, ", "), strings.Join(spread, ", "))
	}
	tw.Flush()
	for _, f := range tp.failures {
		fmt.Println("  " + f)
	}
	if noisy {
		fmt.Printf("\n* Too noisy to trust: the middle rounds of this figure spread over %.0f %% of their median, or fewer than\n"+
			"  %d quiet rounds were left. Rerun on a quiet machine, or with a longer -d.\n", 100*demoNoisySpread, tp.quorum())
	}
	if w := tp.warning(); w != "" {
		fmt.Println("\n" + w)
	}
	return nil
}

// demoThroughput collects the rounds of the throughput table.
type demoThroughput struct {
	rounds    int
	points    map[demoCell][]demoRound // successful rounds
	failures  []string
	idleOther float64 // % of one CPU other processes used before the table; -1 unknown
	knowOther bool    // whether the phases' OtherCPU leaves the server out
}

type demoCell struct {
	b  compression.Backend
	op compression.Op
}

type demoRound struct {
	round int
	p     compression.Point
}

func (t *demoThroughput) add(b compression.Backend, op compression.Op, round int, p compression.Point) {
	if t.points == nil {
		t.points = map[demoCell][]demoRound{}
	}
	c := demoCell{b, op}
	t.points[c] = append(t.points[c], demoRound{round, p})
}

// disturbed reports whether other processes used more than demoNoisyOther
// during p.
func (t *demoThroughput) disturbed(p compression.Point) bool {
	return t.knowOther && p.OtherCPU > demoNoisyOther
}

// quorum is how many quiet rounds a figure needs: a majority.
func (t *demoThroughput) quorum() int { return t.rounds/2 + 1 }

// used returns the rounds a figure is computed from: its quiet ones if
// there are a quorum of them, else all, and whether they were enough.
func (t *demoThroughput) used(c demoCell) ([]demoRound, bool) {
	all := t.points[c]
	var quiet []demoRound
	for _, r := range all {
		if !t.disturbed(r.p) {
			quiet = append(quiet, r)
		}
	}
	if len(quiet) >= t.quorum() {
		// With -addr, the phases cannot tell other processes from the
		// server: only the check before the table can speak for them.
		return quiet, t.knowOther || t.idleOther <= demoNoisyOther
	}
	return all, false
}

// demoStats is one figure of the table over its rounds.
type demoStats struct {
	tps      float64 // median keys/s
	spread   float64 // (max - min) / median of the middle rounds
	clientUS float64 // median client CPU per key
	noisy    bool
}

func (t *demoThroughput) stats(b compression.Backend, op compression.Op) (demoStats, bool) {
	rs, enough := t.used(demoCell{b, op})
	if len(rs) == 0 {
		return demoStats{}, false
	}
	var tps, cpu []float64
	for _, r := range rs {
		tps, cpu = append(tps, r.p.TPS()), append(cpu, r.p.ClientUS)
	}
	st := demoStats{tps: median(tps), clientUS: median(cpu)}
	if st.tps > 0 {
		// The middle rounds: without the highest and lowest quarter, so
		// that one odd round of five is tolerated, as the median does.
		trim := len(tps) / 4
		st.spread = (tps[len(tps)-1-trim] - tps[trim]) / st.tps
	}
	st.noisy = !enough || st.spread > demoNoisySpread
	return st, true
}

// ratio is the median over rounds of b's keys/s over no compression's in
// the same round: neighbouring measurements, so drift cancels.
func (t *demoThroughput) ratio(b compression.Backend, op compression.Op) (float64, bool) {
	rs, _ := t.used(demoCell{b, op})
	base, _ := t.used(demoCell{compression.None, op})
	var xs []float64
	for _, r := range rs {
		for _, n := range base {
			if n.round == r.round && n.p.TPS() > 0 {
				xs = append(xs, r.p.TPS()/n.p.TPS())
			}
		}
	}
	if len(xs) == 0 {
		return 0, false
	}
	return median(xs), true
}

// warning says how busy other processes kept the machine, when that was
// over demoNoisyOther, or "".
func (t *demoThroughput) warning() string {
	if !t.knowOther {
		if t.idleOther <= demoNoisyOther {
			return ""
		}
		return fmt.Sprintf("Warning: other processes used %.0f %% of a CPU just before the table was measured, and the demo\n"+
			"cannot tell them from a server given with -addr while it measures: every figure may be disturbed.", t.idleOther)
	}
	phases, busy, most := 0, 0, 0.0
	for _, rs := range t.points {
		for _, r := range rs {
			phases++
			if t.disturbed(r.p) {
				busy++
			}
			most = max(most, r.p.OtherCPU)
		}
	}
	if busy == 0 {
		return ""
	}
	return fmt.Sprintf("Warning: other processes used over %.0f %% of a CPU (up to %.0f %%) during %d of the %d phases. Figures\n"+
		"leave those rounds out where a majority of quiet ones remains, and are marked * where none does.",
		demoNoisyOther, most, busy, phases)
}

// median returns the median of xs, which it sorts.
func median(xs []float64) float64 {
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}
