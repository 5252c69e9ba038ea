// Command compbench reproduces Valkey GLIDE's compression benchmark with
// zipline and GLIDE Go side by side, on one redis-server, in one run: the
// memory saved per corpus class (10,000 values, used_memory delta,
// FLUSHALL between runs) and the TPS matrix (goroutines × batch, SET then
// GET, no compression / zstd / LZ4). It writes a markdown report with the
// command line, the tables, the points that miss issue 3's bar and GLIDE's
// published figures, and SVG charts beside it.
//
//	cd bench
//	go run -tags glide ./cmd/compbench -out results/compression.md          # memory + full matrix, ~22 min
//	go run -tags glide ./cmd/compbench -quick -out results/compression.md   # memory + 9 cells, ~2 min
//
// The memory part (9 classes × 6 variants × 10,000 values) takes ~25 s;
// the matrix ~5.3 s per cell and variant at the default -duration 2s
// -warmup 500ms (40 cells × 6 variants ≈ 21 min), ~1.4 s with -quick
// (9 cells). -memory=false or -matrix=false runs one part only. Without
// -tags glide only zipline runs (no cgo). This is the benchmark's one front door;
// its engine is the CLI module's cmd/zipline/bench/compression (whose
// memory table the demo also shows).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"

	"github.com/ziplinekv/zipline/bench/harness"
	"github.com/ziplinekv/zipline/cmd/zipline/bench/compression"
)

// Filled by glide.go under the glide build tag.
var (
	extraVariants []compression.Variant
	reference     string
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "compbench:", err)
		os.Exit(1)
	}
}

func run() error {
	fs := flag.NewFlagSet("compbench", flag.ContinueOnError)
	out := fs.String("out", "", "markdown report (charts are written beside it); empty prints the report")
	clients := fs.String("clients", "", "comma list of clients to run (zipline, \"GLIDE Go\"); default all built in")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run (Go code only; GLIDE's Rust shows as cgo calls)")
	suite := compression.RegisterFlags(fs)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: compbench [flags]   (build with -tags glide to include GLIDE Go)\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(os.Args[1:]); err != nil {
		return err
	}
	s, err := suite()
	if err != nil {
		return err
	}
	variants := append(compression.ZiplineVariants(), extraVariants...)
	if *clients != "" {
		want := map[string]bool{}
		for _, c := range strings.Split(*clients, ",") {
			want[strings.ToLower(strings.TrimSpace(c))] = true
		}
		var keep []compression.Variant
		for _, v := range variants {
			if want[strings.ToLower(v.Client)] {
				keep = append(keep, v)
			}
		}
		if len(keep) == 0 {
			return fmt.Errorf("-clients %q matches none of the clients built in", *clients)
		}
		variants = keep
	}
	s.Reference = ""
	for _, v := range variants {
		if v.Client == reference {
			s.Reference = reference
		}
	}
	s.Out = *out
	s.Command = "cd bench && go run " + buildTags() + "./cmd/compbench " + strings.Join(quoteArgs(os.Args[1:]), " ")
	s.Title = "Compression benchmark: zipline and GLIDE Go, GLIDE's method"
	s.Notes = notes(s)
	s.Progress, s.Stdout = os.Stderr, os.Stdout
	stopProfile, err := harness.StartCPUProfile(*cpuProfile)
	if err != nil {
		return err
	}
	defer stopProfile()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	_, err = s.Run(ctx, variants)
	return err
}

func buildTags() string {
	if reference != "" {
		return "-tags glide "
	}
	return ""
}

func quoteArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsAny(a, " \"'") {
			a = fmt.Sprintf("%q", a)
		}
		out[i] = a
	}
	return out
}

func notes(s *compression.Suite) []string {
	n := []string{
		"Method, as GLIDE's blog describes it (shared/notes/glide-compression.md §7), with the differences that matter: " +
			"the corpus is testbed/corpus (GLIDE's was never published), generated with seed 1, the same keys and values for " +
			"every client; the server is Debian's redis-server 7.0, not Valkey 8; client and server share this machine's " +
			"CPUs instead of two 8-vCPU hosts, so absolute TPS is far below GLIDE's and CPU spent compressing competes with the " +
			"server; every client is shared by the cell's goroutines (GLIDE's harness gave each goroutine its own client). " +
			"Both clients use default options apart from compression, at default levels (zstd 3, LZ4 0).",
		"Memory runs store the values in batches of 100 through the client under test, read 16 back through it and compare " +
			"them, close it, and wait for used_memory to settle before reading it. Every variant makes one unrecorded run " +
			"first (the server allocates some memory once, on first use: ~60 KB on the first store), and the server's " +
			"per-command latency histograms and slow log are off, so used_memory moves only with the data.",
	}
	if s.Quick {
		n = append(n, "**Quick run** (-quick): a sample of the matrix with short phases on a shared machine; ratios from "+
			"400 ms phases are noisy (±10-20 %). The full matrix is `-quick=false` (the default).")
	}
	return n
}
