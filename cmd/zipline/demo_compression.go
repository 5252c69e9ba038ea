package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ziplinekv/zipline/cmd/zipline/bench/compression"
	"github.com/ziplinekv/zipline/cmd/zipline/bench/corpus"
)

// demoCompression shows what transparent compression saves on realistic
// values: the server memory for 5,000 JSON documents of ~1.9 KB and HTML
// fragments of ~1.2 KB stored without compression, with zstd and with LZ4,
// then SET and GET throughput with and without it. Its keys carry their
// own prefix and are deleted afterwards, so it can run against a server
// given with -addr.
func demoCompression(ctx context.Context, d *demoEnv) error {
	const prefix = "zipline-demo:compression:"
	keys := demoCompressionKeys
	fmt.Printf("\n== Compression (byte-compatible with Valkey GLIDE) ==\n\n")
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

	// Throughput: 64 goroutines sending batches of 10, a third of the
	// demo's run time per variant (capped, so the section stays short).
	phase := min(max(d.dur/6, 200*time.Millisecond), 2*time.Second)
	cfg := compression.MatrixConfig{Addr: d.addr, Data: data, Goroutines: []int{64}, Batches: []int{10},
		Duration: phase, Warmup: 100 * time.Millisecond, StopTimeout: 5 * time.Second, ServerPID: serverPID(d.srv)}
	m, err := compression.RunMatrix(ctx, cfg, variants)
	if err != nil {
		return err
	}
	fmt.Printf("\n%d goroutines, batches of %d %s values (%d keys), %v per phase:\n\n", 64, 10, corpus.JSON1884, keys, phase)
	tw = tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "compression\tSET keys/s\tvs none\tGET keys/s\tvs none\tclient CPU µs/key (SET, GET)\t")
	for _, b := range compression.Backends {
		fmt.Fprintf(tw, "%s\t", b.Label())
		var cpu []string
		for _, op := range compression.Ops {
			p, ok := m.Point(compression.ZiplineName, b, op, 64, 10)
			if !ok {
				fmt.Fprintf(tw, "failed (%s)\t\t", p.Failed)
				cpu = append(cpu, "-")
				continue
			}
			ratio := "1.00×"
			if b != compression.None {
				if x, ok := m.Ratio(compression.ZiplineName, b, op, 64, 10); ok {
					ratio = fmt.Sprintf("%.2f×", x)
				}
			}
			fmt.Fprintf(tw, "%.0f\t%s\t", p.TPS(), ratio)
			cpu = append(cpu, fmt.Sprintf("%.2f", p.ClientUS))
		}
		fmt.Fprintf(tw, "%s\t\n", strings.Join(cpu, ", "))
	}
	tw.Flush()
	fmt.Println("\nMemory is the server's used_memory growth (MB = 10^6 B); values read back unchanged. GLIDE's published")
	fmt.Println("figures come from its own corpus; `zipline bench compression` and bench/cmd/compbench run the full comparison.")
	return nil
}

// demoCompressionKeys is how many values each part of the compression demo
// stores; tests lower it.
var demoCompressionKeys = 5000
