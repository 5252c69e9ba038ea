// Command codeccmp measures zipline's codec against libzstd and liblz4, the
// C libraries under Valkey GLIDE's compression, on the same real JSON
// documents (100 B, 2 KB, 64 KB; see codecref.Docs), in one process, in
// interleaved rounds, and prints a markdown report: stored sizes side by
// side, then CPU ns per value on each side and their ratio, medians of the
// rounds.
//
// It needs cgo and the C headers (apt-get install libzstd-dev liblz4-dev)
// and the build tag clibs:
//
//	cd bench && go run -tags clibs ./codecref/cmd/codeccmp                 # 9 rounds × 15 cells × 2 sides × 200 ms, ~1 min
//	cd bench && go run -tags clibs ./codecref/cmd/codeccmp -goroutines 64 -ops 'zstd encode'
//
// With -base REV it races the codec of this work tree (A) against the one at
// a git revision (B, built with bench/revbuild): it builds the command
// twice, then runs the two binaries one round each in turn, swapping the
// order every other round, and reports A against B beside each one's
// ratio to the C libraries:
//
//	cd bench && go run -tags clibs ./codecref/cmd/codeccmp -base HEAD -rounds 9
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/ziplinekv/zipline/bench/codecref"
	"github.com/ziplinekv/zipline/bench/harness"
	"github.com/ziplinekv/zipline/bench/revbuild"
)

func main() {
	var (
		rounds     = flag.Int("rounds", 9, "rounds: each runs every cell, both sides")
		dur        = flag.Duration("time", 200*time.Millisecond, "measured time per cell and side, per round")
		docs       = flag.String("docs", "100B,2KB,64KB", "documents")
		ops        = flag.String("ops", strings.Join(codecref.Ops, ","), "operations")
		goroutines = flag.Int("goroutines", 1, "goroutines running each side at once (CPU per value is the process's)")
		jsonOut    = flag.Bool("json", false, "print the measurements as JSON lines (what -base runs)")
		base       = flag.String("base", "", "A/B: race this work tree's codec against the one at this git revision")
		out        = flag.String("out", "", "also write the report here")
	)
	flag.Parse()
	if !codecref.Available {
		fmt.Fprintln(os.Stderr, "codeccmp: built without the C libraries: run with -tags clibs (cgo, apt-get install libzstd-dev liblz4-dev)")
		os.Exit(2)
	}
	all, err := codecref.Docs()
	check(err)
	picked, err := harness.ParseNames(*docs, all, func(d codecref.Doc) string { return d.Name })
	check(err)
	opList, err := harness.ParseNames(*ops, codecref.Ops, func(s string) string { return s })
	check(err)
	cfg := codecref.Config{Docs: picked, Ops: opList, Rounds: *rounds, Time: *dur, Goroutines: *goroutines}

	if *jsonOut {
		enc := json.NewEncoder(os.Stdout)
		cfg.Log = func(m codecref.Measurement) { check(enc.Encode(m)) }
		_, err := codecref.Run(cfg)
		check(err)
		return
	}
	sizes, err := codecref.Setup(picked)
	check(err)
	var buf bytes.Buffer
	w := io.MultiWriter(os.Stdout, &buf)
	fmt.Fprintf(w, "# zipline's codec against libzstd and liblz4\n\n")
	fmt.Fprintf(w, "```sh\ncd bench && go run -tags clibs ./codecref/cmd/codeccmp %s\n```\n\n", strings.Join(os.Args[1:], " "))
	for _, l := range append(harness.Environment(""), "C libraries: "+codecref.Versions()) {
		fmt.Fprintf(w, "- %s\n", l)
	}
	fmt.Fprintf(w, "- %d rounds; each runs every cell, zipline and C one after the other (order alternating), %v each, %d goroutine(s); CPU ns per value is the process's CPU time over the values done; figures are medians of the rounds, ± half their range\n\n", *rounds, *dur, max(*goroutines, 1))
	writeSizes(w, picked, sizes)

	if *base != "" {
		ms, hash, err := raceBase(cfg, *base, os.Args[1:])
		check(err)
		writeAB(w, picked, opList, ms, *base, hash)
	} else {
		fmt.Fprintf(os.Stderr, "measuring: %d rounds of %d cells\n", *rounds, len(picked)*len(opList))
		ms, err := codecref.Run(cfg)
		check(err)
		writeRatios(w, picked, opList, ms)
	}
	if *out != "" {
		check(os.WriteFile(*out, buf.Bytes(), 0o644))
	}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "codeccmp:", err)
		os.Exit(1)
	}
}

func writeSizes(w io.Writer, docs []codecref.Doc, sizes []codecref.Sizes) {
	fmt.Fprintf(w, "## Stored sizes (bytes, GLIDE's 5-byte header included)\n\n")
	fmt.Fprintf(w, "| document | what | plain | zstd zipline | zstd libzstd (GLIDE: no content size) | zstd libzstd (ZSTD_compressCCtx) | LZ4 zipline | LZ4 liblz4 | LZ4 bytes identical |\n")
	fmt.Fprintf(w, "|---|---|--:|--:|--:|--:|--:|--:|---|\n")
	for i, s := range sizes {
		fmt.Fprintf(w, "| %s | %s | %d | %d | %d | %d | %d | %d | %v |\n", s.Doc, docs[i].How, s.Plain,
			s.ZstdZipline, s.ZstdC, s.ZstdCWithSize, s.LZ4Zipline, s.LZ4C, s.LZ4Same)
	}
	fmt.Fprintf(w, "\nA value stored at its plain size was not compressed (compression did not make it shorter).\n\n")
}

type key struct{ doc, op, side string }

func collect(ms []codecref.Measurement) map[key][]float64 {
	v := map[key][]float64{}
	for _, m := range ms {
		k := key{m.Doc, m.Op, m.Side}
		v[k] = append(v[k], m.CPUNs)
	}
	return v
}

func ns(v []float64) string {
	return fmt.Sprintf("%s ±%.0f%%", harness.Num(harness.Median(v)), 100*harness.Spread(v))
}

func writeRatios(w io.Writer, docs []codecref.Doc, ops []string, ms []codecref.Measurement) {
	v := collect(ms)
	fmt.Fprintf(w, "## CPU ns per value, zipline against C\n\n")
	fmt.Fprintf(w, "| document | op | zipline ns | C ns | zipline/C | zipline faster, rounds |\n|---|---|--:|--:|--:|--:|\n")
	for _, d := range docs {
		for _, op := range ops {
			z, c := v[key{d.Name, op, codecref.SideZipline}], v[key{d.Name, op, codecref.SideC}]
			if len(z) == 0 || len(c) == 0 {
				continue
			}
			wins := 0
			for i := range min(len(z), len(c)) {
				if z[i] < c[i] {
					wins++
				}
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | **%.2f** | %d/%d |\n", d.Name, op, ns(z), ns(c),
				harness.Median(z)/harness.Median(c), wins, min(len(z), len(c)))
		}
	}
	fmt.Fprintf(w, "\n")
	for _, op := range ops {
		fmt.Fprintf(w, "- %s: %s\n", op, codecref.OpNotes[op])
	}
	fmt.Fprintln(w)
}

// raceBase builds this command from the work tree (A) and at rev (B), and
// runs them one round each in turn.
func raceBase(cfg codecref.Config, rev string, args []string) ([]codecref.Measurement, string, error) {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "codeccmp-")
	if err != nil {
		return nil, "", err
	}
	defer os.RemoveAll(dir)
	binA, binB := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	build := exec.CommandContext(ctx, "go", "build", "-tags", "clibs", "-o", binA, "./codecref/cmd/codeccmp")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	fmt.Fprintf(os.Stderr, "building A (this work tree)\n")
	if err := build.Run(); err != nil {
		return nil, "", fmt.Errorf("building A: %w", err)
	}
	fmt.Fprintf(os.Stderr, "building B (%s)\n", rev)
	hash, err := revbuild.Build(ctx, revbuild.Options{BenchDir: ".", Package: "./codecref/cmd/codeccmp", Tags: []string{"clibs"}}, rev, binB)
	if err != nil {
		return nil, "", err
	}
	// The children get this command's own flags, less -base and -out, and
	// run one round each.
	var child []string
	flag.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "base", "out", "rounds", "json":
		default:
			child = append(child, "-"+f.Name+"="+f.Value.String())
		}
	})
	child = append(child, "-json", "-rounds=1")
	var ms []codecref.Measurement
	for r := range cfg.Rounds {
		order := []string{"A", "B"}
		if r%2 == 1 {
			order = []string{"B", "A"}
		}
		for _, side := range order {
			bin := map[string]string{"A": binA, "B": binB}[side]
			fmt.Fprintf(os.Stderr, "round %d/%d: %s\n", r+1, cfg.Rounds, side)
			cmd := exec.CommandContext(ctx, bin, child...)
			cmd.Stderr = os.Stderr
			outp, err := cmd.Output()
			if err != nil {
				return nil, hash, fmt.Errorf("round %d, %s: %w", r+1, side, err)
			}
			sc := bufio.NewScanner(bytes.NewReader(outp))
			for sc.Scan() {
				var m codecref.Measurement
				if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
					return nil, hash, err
				}
				m.Round = r
				m.Side = side + "/" + m.Side
				ms = append(ms, m)
			}
		}
	}
	return ms, hash, nil
}

func writeAB(w io.Writer, docs []codecref.Doc, ops []string, ms []codecref.Measurement, rev, hash string) {
	v := collect(ms)
	fmt.Fprintf(w, "## A/B: this work tree (A) against %s (B, %.12s)\n\n", rev, hash)
	fmt.Fprintf(w, "Each round runs A's binary, then B's (B first every other round); each binary measures zipline and C in turn.\n\n")
	fmt.Fprintf(w, "| document | op | A zipline ns | B zipline ns | **A/B** | A faster, rounds | C ns (in A; in B) | A/C | B/C |\n|---|---|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, d := range docs {
		for _, op := range ops {
			a, b := v[key{d.Name, op, "A/" + codecref.SideZipline}], v[key{d.Name, op, "B/" + codecref.SideZipline}]
			ca, cb := v[key{d.Name, op, "A/" + codecref.SideC}], v[key{d.Name, op, "B/" + codecref.SideC}]
			if len(a) == 0 || len(b) == 0 {
				continue
			}
			wins := 0
			for i := range min(len(a), len(b)) {
				if a[i] < b[i] {
					wins++
				}
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | **%.2f** | %d/%d | %s; %s | %.2f | %.2f |\n", d.Name, op, ns(a), ns(b),
				harness.Median(a)/harness.Median(b), wins, min(len(a), len(b)), harness.Num(harness.Median(ca)), harness.Num(harness.Median(cb)),
				harness.Median(a)/harness.Median(ca), harness.Median(b)/harness.Median(cb))
		}
	}
	fmt.Fprintln(w)
	for _, op := range ops {
		fmt.Fprintf(w, "- %s: %s\n", op, codecref.OpNotes[op])
	}
	fmt.Fprintln(w)
}
