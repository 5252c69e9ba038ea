package doordash

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/bench/netshape"
	"github.com/ziplinekv/zipline/cmd/zipline/bench/compression"
	"github.com/ziplinekv/zipline/codec"
	"github.com/ziplinekv/zipline/testbed"
	"github.com/ziplinekv/zipline/testbed/corpus"
)

// phase makes a phase that took d, with every latency quantile at lat.
func phase(op Op, d, lat time.Duration) Phase {
	p := Phase{Op: op, Elapsed: d, Ops: 100, Wire: 1000}
	for range Quantiles {
		p.Latency = append(p.Latency, lat)
	}
	return p
}

func TestCellMedian(t *testing.T) {
	pr := ProfileResult{Runs: []VariantRun{
		{Variant: "zipline/none", Stored: 500, Set: phase(Set, 3*time.Second, 9*time.Millisecond), Get: phase(Get, 2*time.Second, time.Millisecond)},
		{Variant: "zipline/none", Stored: 500, Set: phase(Set, time.Second, 7*time.Millisecond), Get: phase(Get, 2*time.Second, time.Millisecond)},
		{Variant: "zipline/none", Stored: 500, Set: phase(Set, 2*time.Second, 8*time.Millisecond), Get: phase(Get, 2*time.Second, time.Millisecond)},
		{Variant: "zipline/none", Failed: "connect: refused"},
	}}
	c, ok := pr.Cell("zipline/none", Set)
	if !ok || c.Runs != 3 || c.Elapsed != 2*time.Second || c.Quantile(0.99) != 8*time.Millisecond || c.Stored != 500 {
		t.Errorf("Cell = %+v, %v; want the middle of 3 rounds", c, ok)
	}
	if _, ok := pr.Cell("zipline/lz4", Get); ok {
		t.Error("Cell of a variant never run: ok")
	}
}

func TestGoals(t *testing.T) {
	run := func(v string, stored int64, get time.Duration, p99 time.Duration) VariantRun {
		return VariantRun{Variant: v, Stored: stored, Set: phase(Set, get, p99), Get: phase(Get, get, p99)}
	}
	r := &Report{Reference: "GLIDE Go", Profiles: []ProfileResult{
		{Setup: netshape.Setup{Profile: netshape.Gbit1}, Runs: []VariantRun{
			run("zipline/none", 1000, 10*time.Second, 20*time.Millisecond),
			run("zipline/lz4", 200, 2*time.Second, 4*time.Millisecond),          // ratio 5, 5x faster: met
			run("zipline/zstd", 100, 2500*time.Millisecond, 5*time.Millisecond), // ratio 10, 4x: missed
			run("GLIDE Go/lz4", 200, 3*time.Second, 4*time.Millisecond),
		}},
		{Setup: netshape.Setup{Profile: netshape.Unshaped}, Runs: []VariantRun{
			run("zipline/none", 1000, time.Second, time.Millisecond),
			run("zipline/lz4", 200, 1200*time.Millisecond, time.Millisecond), // 0.83 of none: missed
		}},
	}}
	got := map[string]bool{}
	for _, g := range r.Goals() {
		got[g.Profile+" "+g.What] = g.Met
	}
	want := map[string]bool{
		"1gbit GET speedup / compression ratio, LZ4":     true,
		"1gbit GET p99 shrink / compression ratio, LZ4":  true,
		"1gbit GET speedup / compression ratio, zstd":    false,
		"1gbit GET p99 shrink / compression ratio, zstd": false,
		"1gbit zipline / GLIDE Go, SET LZ4":              true,
		"1gbit zipline / GLIDE Go, GET LZ4":              true,
		"unshaped GET throughput LZ4 / none":             false,
	}
	for k, met := range want {
		if m, ok := got[k]; !ok || m != met {
			t.Errorf("goal %q: met %v (present %v), want %v", k, m, ok, met)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d goals, want %d: %v", len(got), len(want), got)
	}
}

// TestRunThroughProxy runs the whole benchmark on a few menus, behind the
// rate-limiting proxy (no namespace, no root needed), and checks the
// report and chart.
func TestRunThroughProxy(t *testing.T) {
	if _, err := testbed.Binary(testbed.Redis); errors.Is(err, testbed.ErrNoBinary) {
		t.Skip(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	slow, err := netshape.ParseProfile("200mbit")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "doordash.md")
	c := &Config{Menus: 12, Seed: 1, Goroutines: 4, Rounds: 1, Mode: netshape.ModeProxy,
		Profiles: []netshape.Profile{slow, netshape.Unshaped}, Variants: ZiplineVariants(), Out: out, Command: "test"}
	r, err := Run(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Profiles) != 2 {
		t.Fatalf("%d profiles measured, want 2", len(r.Profiles))
	}
	shaped := r.Profiles[0]
	if shaped.Setup.Mode != netshape.ModeProxy || shaped.Setup.Probe <= 0 {
		t.Errorf("setup %+v", shaped.Setup)
	}
	none, ok1 := shaped.Cell(compression.Zipline(compression.None).Name(), Get)
	lz4, ok2 := shaped.Cell(compression.Zipline(compression.LZ4).Name(), Get)
	if !ok1 || !ok2 || none.Errors+lz4.Errors > 0 {
		t.Fatalf("GET cells: %+v %v, %+v %v", none, ok1, lz4, ok2)
	}
	if none.Wire <= int64(shaped.Corpus.Plain) || lz4.Wire >= none.Wire/3 {
		t.Errorf("wire bytes: none %d (plain %d), LZ4 %d", none.Wire, shaped.Corpus.Plain, lz4.Wire)
	}
	if lz4.Stored*3 > none.Stored {
		t.Errorf("stored: LZ4 %d, none %d", lz4.Stored, none.Stored)
	}
	md, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	svg, err := os.ReadFile(filepath.Join(filepath.Dir(out), "doordash-latency.svg"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## DoorDash's table", "## Goals", "## 200mbit", "zipline/lz4", "rate-limiting TCP proxy", "doordash-latency.svg"} {
		if !bytes.Contains(md, []byte(want)) {
			t.Errorf("report lacks %q", want)
		}
	}
	if !strings.HasPrefix(string(svg), "<svg") || !bytes.Contains(svg, []byte("200mbit GET")) {
		t.Errorf("chart: %.200s", svg)
	}
}

// BenchmarkExpand measures what expanding one menu costs the client:
// codec.Decode into a new buffer, as a GET does, and into a reused one.
// The difference is allocating, zeroing and faulting in the result.
//
//	cd bench && go test -run '^$' -bench Expand ./doordash/
func BenchmarkExpand(b *testing.B) {
	menus := corpus.Menus(500, 1)
	for _, be := range []codec.Backend{codec.LZ4, codec.Zstd} {
		c, err := codec.New(be)
		if err != nil {
			b.Fatal(err)
		}
		var stored [][]byte
		plain := 0
		for _, m := range menus {
			s, _ := c.Encode(nil, m)
			stored = append(stored, s)
			plain += len(m)
		}
		for _, reuse := range []bool{false, true} {
			name := be.String() + "/new"
			if reuse {
				name = be.String() + "/reuse"
			}
			b.Run(name, func(b *testing.B) {
				b.SetBytes(int64(plain / len(menus)))
				var buf []byte
				f0 := minorFaults()
				for i := 0; b.Loop(); i++ {
					if reuse {
						buf, _ = c.Decode(buf[:0], stored[i%len(stored)])
					} else {
						buf, _ = c.Decode(nil, stored[i%len(stored)])
					}
				}
				b.ReportMetric(float64(minorFaults()-f0)/float64(b.N), "faults/op")
			})
		}
	}
}
