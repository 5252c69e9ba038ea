package doordash

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/ziplinekv/zipline/bench/netshape"
	"github.com/ziplinekv/zipline/cmd/zipline/bench/chart"
	"github.com/ziplinekv/zipline/cmd/zipline/bench/compression"
)

// Report is a whole run: what was measured on each profile, and how it
// compares with DoorDash's figures and the goals.
type Report struct {
	Title, Command string
	Date           time.Time
	Machine        string
	GoVersion      string
	Menus          int
	Seed           int64
	Goroutines     int
	Rounds         int
	Variants       []compression.Variant
	Reference      string
	Examples       []Example // the corpus beside DoorDash's two examples
	Profiles       []ProfileResult
	Chart          string // file name of the latency chart, beside the report
	Notes          []string
}

// Example is one of DoorDash's published examples beside a generated menu
// of the same size.
type Example struct {
	Name           string
	Size, DoorDash int     // plaintext and DoorDash's LZ4 size
	LZ4, Zstd      float64 // our ratios at that size (mean of 4 menus)
}

// doordashTimes are DoorDash's measured seconds for 10,000 menus.
var doordashTimes = map[Op][2]float64{Set: {16.526179, 12.802149}, Get: {12.047090, 6.434711}} // none, LZ4

// Cell is the median over rounds of one variant's phase on one profile.
type Cell struct {
	Runs                 int
	Elapsed              time.Duration
	Latency              []time.Duration // at Quantiles, pointwise medians
	Wire                 int64           // -1 unknown
	ClientCPU, ServerCPU time.Duration
	ClientSys, ServerSys float64 // system calls per operation; -1 unknown
	Faults               float64 // the client's minor page faults per operation
	AllocKB              float64 // KB the client allocated per operation
	GCs                  uint32
	Stored               int64
	Errors               int
	FirstErr             string
	OtherCPU             float64 // the most any round saw, % of one CPU
}

// OpsPerSec is the operations per second of the cell's median pass.
func (c Cell) OpsPerSec(n int) float64 { return float64(n) / c.Elapsed.Seconds() }

// Quantile returns the cell's latency at q, one of Quantiles.
func (c Cell) Quantile(q float64) time.Duration {
	i := slices.Index(Quantiles, q)
	if i < 0 || i >= len(c.Latency) {
		return 0
	}
	return c.Latency[i]
}

// Cell returns the median of variant's op over the profile's rounds; ok
// is false if no round completed it.
func (pr ProfileResult) Cell(variant string, op Op) (Cell, bool) {
	var phases []Phase
	var stored []int64
	for _, r := range pr.Runs {
		if r.Variant != variant || r.Failed != "" {
			continue
		}
		p := r.Set
		if op == Get {
			p = r.Get
		}
		if p.Ops == 0 || p.Elapsed <= 0 {
			continue
		}
		phases, stored = append(phases, p), append(stored, r.Stored)
	}
	if len(phases) == 0 {
		return Cell{}, false
	}
	c := Cell{Runs: len(phases), Stored: median(stored), OtherCPU: -1}
	c.Elapsed = median(collect(phases, func(p Phase) time.Duration { return p.Elapsed }))
	c.Wire = median(collect(phases, func(p Phase) int64 { return p.Wire }))
	c.ClientCPU = median(collect(phases, func(p Phase) time.Duration { return p.ClientCPU }))
	c.ServerCPU = median(collect(phases, func(p Phase) time.Duration { return p.ServerCPU }))
	perOp := func(n int64, p Phase) float64 {
		if n < 0 {
			return -1
		}
		return float64(n) / float64(max(p.Ops+p.Errors, 1))
	}
	c.ClientSys = median(collect(phases, func(p Phase) float64 { return perOp(p.ClientSyscalls, p) }))
	c.ServerSys = median(collect(phases, func(p Phase) float64 { return perOp(p.ServerSyscalls, p) }))
	c.Faults = median(collect(phases, func(p Phase) float64 { return perOp(p.ClientFaults, p) }))
	c.AllocKB = median(collect(phases, func(p Phase) float64 { return perOp(int64(p.Allocated), p) / 1000 }))
	c.GCs = uint32(median(collect(phases, func(p Phase) int64 { return int64(p.GCs) })))
	for i := range Quantiles {
		c.Latency = append(c.Latency, median(collect(phases, func(p Phase) time.Duration {
			if i < len(p.Latency) {
				return p.Latency[i]
			}
			return 0
		})))
	}
	for _, p := range phases {
		c.Errors += p.Errors
		if c.FirstErr == "" {
			c.FirstErr = p.FirstErr
		}
		c.OtherCPU = max(c.OtherCPU, p.OtherCPU)
	}
	return c, true
}

func collect[T any](phases []Phase, f func(Phase) T) []T {
	out := make([]T, len(phases))
	for i, p := range phases {
		out[i] = f(p)
	}
	return out
}

// median returns the middle value (the lower of the two middle ones for an
// even count).
func median[T int64 | float64 | time.Duration](v []T) T {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}

// Goal is one point of the bar.
type Goal struct {
	What     string
	Profile  string
	Measured float64
	Bar      float64
	Met      bool
	Detail   string
}

// The goals' bars.
const (
	hideBar     = 0.95 // GET speedup and p99 shrink over the compression ratio, at 1 Gbit/s or less
	unshapedBar = 0.90 // LZ4 GET throughput over uncompressed, unshaped
)

// Goals evaluates the bar on every profile measured: compression
// hiding its CPU on profiles of 1 Gbit/s or less, LZ4's cost unshaped,
// and zipline against the reference.
func (r *Report) Goals() []Goal {
	var goals []Goal
	zl := func(b compression.Backend) string { return compression.Zipline(b).Name() }
	for _, pr := range r.Profiles {
		p := pr.Setup.Profile
		none, okNone := pr.Cell(zl(compression.None), Get)
		for _, b := range []compression.Backend{compression.LZ4, compression.Zstd} {
			c, ok := pr.Cell(zl(b), Get)
			if !ok || !okNone {
				continue
			}
			ratio := float64(none.Stored) / float64(c.Stored)
			speed := none.Elapsed.Seconds() / c.Elapsed.Seconds()
			p99 := float64(none.Quantile(0.99)) / float64(c.Quantile(0.99))
			switch {
			case p.Shaped() && p.Rate <= 1e9:
				goals = append(goals,
					Goal{What: "GET speedup / compression ratio, " + b.Label(), Profile: p.Name, Measured: speed / ratio, Bar: hideBar,
						Met: speed/ratio >= hideBar, Detail: fmt.Sprintf("%.2fx faster, ratio %.2f", speed, ratio)},
					Goal{What: "GET p99 shrink / compression ratio, " + b.Label(), Profile: p.Name, Measured: p99 / ratio, Bar: hideBar,
						Met: p99/ratio >= hideBar, Detail: fmt.Sprintf("p99 %.1f → %.1f ms (%.2fx)", ms(none.Quantile(0.99)), ms(c.Quantile(0.99)), p99)})
			case !p.Shaped() && b == compression.LZ4:
				goals = append(goals, Goal{What: "GET throughput LZ4 / none", Profile: p.Name, Measured: speed, Bar: unshapedBar,
					Met: speed >= unshapedBar, Detail: fmt.Sprintf("p99 %.2fx of none's", 1/p99)})
			}
		}
		if r.Reference == "" {
			continue
		}
		for _, b := range compression.Backends {
			for _, op := range []Op{Set, Get} {
				z, okz := pr.Cell(zl(b), op)
				g, okg := pr.Cell(r.Reference+"/"+b.String(), op)
				if !okz || !okg {
					continue
				}
				x := g.Elapsed.Seconds() / z.Elapsed.Seconds()
				detail := fmt.Sprintf("%.2f s vs %.2f s", z.Elapsed.Seconds(), g.Elapsed.Seconds())
				if link := linkTime(p, z.Wire); link > 0 && z.Elapsed.Seconds() < 1.03*link && g.Elapsed.Seconds() < 1.03*link {
					detail += fmt.Sprintf("; both at the link's rate (its %.0f MB take %.2f s)", float64(z.Wire)/1e6, link)
				}
				goals = append(goals, Goal{What: fmt.Sprintf("zipline / %s, %s %s", r.Reference, op, b.Label()), Profile: p.Name,
					Measured: x, Bar: 1, Met: x >= 1, Detail: detail})
			}
		}
	}
	return goals
}

// linkTime is how long wire bytes take at p's rate, in seconds; 0 when
// unshaped or unknown.
func linkTime(p netshape.Profile, wire int64) float64 {
	if !p.Shaped() || wire <= 0 {
		return 0
	}
	return float64(wire) * 8 / float64(p.Rate)
}

// md collects markdown; writing to memory cannot fail, so the writers
// print freely and WriteMarkdown writes once.
type md struct{ bytes.Buffer }

func (e *md) printf(format string, args ...any) { fmt.Fprintf(e, format, args...) }

// WriteMarkdown writes the report.
func (r *Report) WriteMarkdown(w io.Writer) error {
	e := new(md)
	e.printf("# %s\n\n", r.Title)
	e.printf("```sh\n%s\n```\n\n", r.Command)
	e.printf("%s UTC; %s; %s. %d menus (seed %d), %d goroutines per client, %d round(s), variants in rotating order; "+
		"tables show the median round.\n\n", r.Date.UTC().Format("2006-01-02 15:04"), r.Machine, r.GoVersion, r.Menus, r.Seed, r.Goroutines, r.Rounds)
	for _, n := range r.Notes {
		e.printf("%s\n\n", n)
	}
	e.printf("Variants:\n\n")
	for _, v := range r.Variants {
		e.printf("- `%s`: %s\n", v.Name(), v.Config)
	}
	e.printf("\n")
	r.writeCorpus(e)
	r.writeDoorDash(e)
	r.writeGoals(e)
	for _, pr := range r.Profiles {
		r.writeProfile(e, pr)
	}
	if r.Chart != "" {
		e.printf("## Latency distribution\n\n![latency per operation](%s)\n", r.Chart)
	}
	_, err := w.Write(e.Bytes())
	return err
}

func (r *Report) writeCorpus(e *md) {
	e.printf("## Corpus\n\n")
	if len(r.Profiles) > 0 {
		c := r.Profiles[0].Corpus
		e.printf("%d menus from `corpus.Menus`, %.0f MB in all, %d to %d B each (mean %.0f B).\n\n", c.N, float64(c.Plain)/1e6,
			c.Min, c.Max, float64(c.Plain)/float64(max(c.N, 1)))
	}
	if len(r.Examples) > 0 {
		e.printf("| DoorDash's example | size | DoorDash LZ4 | generated menu LZ4 | generated zstd |\n| --- | --: | --: | --: | --: |\n")
		for _, x := range r.Examples {
			e.printf("| %s | %d B | %.2fx (%d B) | %.2fx | %.2fx |\n", x.Name, x.Size, float64(x.Size)/float64(x.DoorDash), x.DoorDash, x.LZ4, x.Zstd)
		}
		e.printf("\n")
	}
}

// writeDoorDash writes DoorDash's table shape: seconds for all the menus,
// per profile and variant, with DoorDash's own figures.
func (r *Report) writeDoorDash(e *md) {
	e.printf("## DoorDash's table\n\nSeconds to SET, then GET, all the menus (DoorDash: 10,000 menus, over its production network).\n\n")
	e.printf("| profile | op |")
	for _, v := range r.Variants {
		e.printf(" %s |", v.Name())
	}
	e.printf(" DoorDash none | DoorDash LZ4 |\n| --- | --- |%s --: | --: |\n", strings.Repeat(" --: |", len(r.Variants)))
	for _, pr := range r.Profiles {
		for _, op := range []Op{Set, Get} {
			e.printf("| %s | %s |", pr.Setup.Profile.Name, op)
			for _, v := range r.Variants {
				if c, ok := pr.Cell(v.Name(), op); ok {
					e.printf(" %.2f |", c.Elapsed.Seconds())
				} else {
					e.printf(" – |")
				}
			}
			d := doordashTimes[op]
			e.printf(" %.1f | %.1f |\n", d[0], d[1])
		}
	}
	e.printf("\n")
}

func (r *Report) writeGoals(e *md) {
	goals := r.Goals()
	if len(goals) == 0 {
		return
	}
	e.printf("## Goals\n\n| goal | profile | measured | bar | | |\n| --- | --- | --: | --: | --- | --- |\n")
	for _, g := range goals {
		mark := "✓"
		if !g.Met {
			mark = "✗"
		}
		e.printf("| %s | %s | %.3f | %.2f | %s | %s |\n", g.What, g.Profile, g.Measured, g.Bar, mark, g.Detail)
	}
	e.printf("\n")
}

func (r *Report) writeProfile(e *md, pr ProfileResult) {
	p := pr.Setup.Profile
	e.printf("## %s\n\n%s. Server: %s. Quiet gate: waited %v for other processes to go quiet, measured %d variant run(s) again.\n\n",
		p.Name, pr.Setup.Describe(), pr.Server, pr.Waited.Round(100*time.Millisecond), pr.Remeasured)
	wire := "MB on the wire"
	if pr.Setup.Mode == netshape.ModeNetNS {
		wire += " (lo, headers included)"
	} else {
		wire += " (proxied payload)"
	}
	base := compression.Zipline(compression.None).Name()
	for _, op := range []Op{Set, Get} {
		e.printf("**%s** (n = %d)\n\n| variant | stored MB (ratio) | total s | ops/s | × none | p50 ms | p99 ms | p99.9 ms | %s | "+
			"client CPU µs/op | server CPU µs/op | client / server syscalls per op | client faults per op, KB allocated per op, GCs | other CPU |\n",
			op, pr.Corpus.N, wire)
		e.printf("| --- | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: |\n")
		ref, okRef := pr.Cell(base, op)
		for _, v := range r.Variants {
			c, ok := pr.Cell(v.Name(), op)
			if !ok {
				e.printf("| %s | failed |%s\n", v.Name(), strings.Repeat(" |", 12))
				continue
			}
			n := pr.Corpus.N
			speed := "–"
			if okRef {
				speed = fmt.Sprintf("%.2f", ref.Elapsed.Seconds()/c.Elapsed.Seconds())
			}
			e.printf("| %s | %.1f (%.2f) | %.2f | %.0f | %s | %.2f | %.2f | %.2f | %s | %.0f | %.0f | %s / %s | %.1f, %.0f, %d | %s |\n",
				v.Name(), float64(c.Stored)/1e6, float64(pr.Corpus.Plain)/float64(max(c.Stored, 1)), c.Elapsed.Seconds(), c.OpsPerSec(n), speed,
				ms(c.Quantile(0.5)), ms(c.Quantile(0.99)), ms(c.Quantile(0.999)), mb(c.Wire),
				perOpUS(c.ClientCPU, n), perOpUS(c.ServerCPU, n), sys(c.ClientSys), sys(c.ServerSys), c.Faults, c.AllocKB, c.GCs, other(c.OtherCPU))
			if c.Errors > 0 {
				e.printf("| ↳ %d errors: %s |%s\n", c.Errors, c.FirstErr, strings.Repeat(" |", 13))
			}
		}
		e.printf("\n")
	}
}

func mb(n int64) string {
	if n < 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f", float64(n)/1e6)
}

func perOpUS(d time.Duration, n int) float64 { return float64(d.Microseconds()) / float64(max(n, 1)) }

func sys(x float64) string {
	if x < 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f", x)
}

func other(pct float64) string {
	if pct < 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f %%", pct)
}

// backendColors colour each backend; peers draw dashed lines.
var backendColors = map[compression.Backend]string{compression.None: "#1f77b4", compression.LZ4: "#2ca02c", compression.Zstd: "#9467bd"}

// peerColors colour the peers' lines, dashed.
var peerColors = map[compression.Backend]string{compression.None: "#d62728", compression.LZ4: "#ff7f0e", compression.Zstd: "#8c564b"}

// LatencyChart draws the latency distribution of every variant, one panel
// per profile and operation: latency (log scale) against percentile, on
// an axis where each step is one more nine.
func (r *Report) LatencyChart(w io.Writer) error {
	ticks := []chart.Tick{{At: nines(0.5), Label: "p50"}, {At: nines(0.9), Label: "p90"}, {At: nines(0.99), Label: "p99"}, {At: nines(0.999), Label: "p99.9"}}
	var xs []float64
	for _, q := range Quantiles {
		xs = append(xs, nines(q))
	}
	var panels []chart.Lines
	for _, pr := range r.Profiles {
		for _, op := range []Op{Set, Get} {
			p := chart.Lines{Title: fmt.Sprintf("%s %s", pr.Setup.Profile.Name, op), XLabel: "percentile", YLabel: "latency, ms",
				XTicks: ticks, LogY: true}
			for _, v := range r.Variants {
				l := chart.Line{Name: v.Name(), X: xs, Color: backendColors[v.Backend]}
				if v.Client != compression.ZiplineName {
					l.Color, l.Dashed = peerColors[v.Backend], true
				}
				c, ok := pr.Cell(v.Name(), op)
				for i := range Quantiles {
					y := math.NaN()
					if ok {
						y = ms(c.Latency[i])
					}
					l.Y = append(l.Y, y)
				}
				p.Lines = append(p.Lines, l)
			}
			panels = append(panels, p)
		}
	}
	title := fmt.Sprintf("DoorDash benchmark: latency of each SET and GET of %d menus, %d goroutines", r.Menus, r.Goroutines)
	return chart.WriteLines(w, title, panels, 2)
}

// nines maps a quantile to its number of nines: p90 → 1, p99 → 2.
func nines(q float64) float64 { return -math.Log10(1 - q) }
