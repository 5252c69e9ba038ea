package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/ziplinekv/zipline/bench/measure"
)

// report is everything one clientbench invocation produced.
type report struct {
	command  string
	settings string
	env      []string // "key: value" lines about the machine and versions
	clients  []clientInfo
	grid     measure.Grid
	runs     int
	results  []measure.Result
	ceilings []ceilingResult
	ceilCmd  string
	notes    []string

	quiet           string // how the quiet gate was set, empty when off
	quietWaited     time.Duration
	quietRemeasured int
}

type clientInfo struct{ name, desc string }

const ziplineName = "zipline"

// cellKey identifies one table cell across runs.
type cellKey struct {
	client string
	op     string
	size   int
	conc   int
}

type agg struct {
	n                 int
	ops               []float64
	p50, p99          []float64 // µs
	allocs            []float64
	server, clientCPU []float64
	errs              uint64
	failures          []string
}

func (r *report) aggregate() map[cellKey]*agg {
	m := map[cellKey]*agg{}
	for i := range r.results {
		res := &r.results[i]
		k := cellKey{res.Client, res.Op, res.Size, res.Conc}
		a := m[k]
		if a == nil {
			a = &agg{}
			m[k] = a
		}
		a.errs += res.Errors
		if res.Failed != "" {
			a.failures = append(a.failures, fmt.Sprintf("run %d: %s", res.Run, res.Failed))
			continue
		}
		a.n++
		a.ops = append(a.ops, res.OpsPerSec())
		a.p50 = append(a.p50, us(res.P50))
		a.p99 = append(a.p99, us(res.P99))
		a.allocs = append(a.allocs, res.AllocsPerOp)
		a.clientCPU = append(a.clientCPU, res.ClientCPU)
		if res.ServerCPU >= 0 {
			a.server = append(a.server, res.ServerCPU)
		}
	}
	return m
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func fmtNum(v float64) string {
	switch {
	case math.IsNaN(v):
		return "–"
	case v < 10:
		return fmt.Sprintf("%.2f", v)
	case v < 100:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.0f", v)
	}
}

func fmtUs(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	return fmt.Sprintf("%.0f", v)
}

// bestPeer returns the peer with the highest median throughput in a column.
func bestPeer(m map[cellKey]*agg, clients []clientInfo, op string, size, conc int) (string, float64) {
	best, bestV := "", math.NaN()
	for _, c := range clients {
		if c.name == ziplineName {
			continue
		}
		a := m[cellKey{c.name, op, size, conc}]
		if a == nil || a.n == 0 {
			continue
		}
		if v := measure.Median(a.ops); best == "" || v > bestV {
			best, bestV = c.name, v
		}
	}
	return best, bestV
}

func (r *report) hasZipline() bool {
	for _, c := range r.clients {
		if c.name == ziplineName {
			return true
		}
	}
	return false
}

func (r *report) ceilingMedian(op string, size int) float64 {
	var v []float64
	for _, c := range r.ceilings {
		if c.size == size && c.err == "" {
			if x, ok := c.rps[op]; ok {
				v = append(v, x)
			}
		}
	}
	return measure.Median(v)
}

func (r *report) write(w io.Writer) {
	m := r.aggregate()
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	row := func(cells ...string) { p("| %s |\n", strings.Join(cells, " | ")) }
	header := func(first string) {
		cells := []string{first}
		align := []string{"---"}
		for _, c := range r.grid.Conc {
			cells = append(cells, fmt.Sprintf("c=%d", c))
			align = append(align, "--:")
		}
		row(cells...)
		row(align...)
	}

	p("# Client benchmark: zipline and peer Redis clients\n\n")
	p("Command:\n\n```\n%s\n```\n\n", r.command)
	p("Settings: %s\n\n", r.settings)
	for _, e := range r.env {
		p("- %s\n", e)
	}
	p("\nClients:\n\n")
	for _, c := range r.clients {
		p("- `%s`: %s\n", c.name, c.desc)
	}
	p("\nEvery table cell is the median over runs (%d requested); throughput cells add ±half the min–max range as a "+
		"percentage of the median. Client and server share the machine's cores, so the numbers are only good for "+
		"comparisons within this run. See README.md for what each column means.\n", r.runs)
	for _, n := range r.notes {
		p("\n> %s\n", n)
	}

	// Summary: the bar is zipline ≥ best peer in every column.
	p("\n## Summary: zipline / best peer (median ops/s)\n\n")
	if !r.hasZipline() {
		p("zipline was not part of this run; the best peer per column:\n\n")
	}
	header("op, value")
	for _, op := range r.grid.Ops {
		for _, size := range r.grid.Sizes {
			cells := []string{fmt.Sprintf("%s %s", strings.ToUpper(op), measure.SizeLabel(size))}
			for _, conc := range r.grid.Conc {
				name, v := bestPeer(m, r.clients, op, size, conc)
				if !r.hasZipline() {
					if name == "" {
						cells = append(cells, "–")
					} else {
						cells = append(cells, fmt.Sprintf("%s %s k", name, measure.Kops(v)))
					}
					continue
				}
				z := m[cellKey{ziplineName, op, size, conc}]
				if z == nil || z.n == 0 || name == "" {
					cells = append(cells, "–")
					continue
				}
				ratio := measure.Median(z.ops) / v
				mark := ""
				if ratio < 1 {
					mark = " ✗"
				}
				cells = append(cells, fmt.Sprintf("**%.2f**%s (vs %s)", ratio, mark, name))
			}
			row(cells...)
		}
	}

	// Ceiling.
	p("\n## Server ceiling: redis-benchmark -P 16\n\n")
	if len(r.ceilings) == 0 {
		p("not measured\n")
	} else {
		p("`%s` (50 connections, 16 pipelined requests each), median over %d run(s), thousands of requests/s.\n\n",
			r.ceilCmd, len(r.ceilings)/max(1, len(r.grid.Sizes)))
		last := r.grid.Conc[len(r.grid.Conc)-1]
		row("op, value", "ceiling kreq/s", fmt.Sprintf("zipline c=%d kops/s", last), "zipline / ceiling",
			fmt.Sprintf("best peer c=%d", last), "best peer / ceiling")
		row("---", "--:", "--:", "--:", "---", "--:")
		for _, op := range r.grid.Ops {
			for _, size := range r.grid.Sizes {
				ceil := r.ceilingMedian(op, size)
				zs, zr := "–", "–"
				if z := m[cellKey{ziplineName, op, size, last}]; z != nil && z.n > 0 {
					zs = measure.Kops(measure.Median(z.ops))
					zr = fmt.Sprintf("%.2f", measure.Median(z.ops)/ceil)
				}
				name, v := bestPeer(m, r.clients, op, size, last)
				bs, br := "–", "–"
				if name != "" {
					bs = fmt.Sprintf("%s %s", name, measure.Kops(v))
					br = fmt.Sprintf("%.2f", v/ceil)
				}
				row(fmt.Sprintf("%s %s", strings.ToUpper(op), measure.SizeLabel(size)), measure.Kops(ceil), zs, zr, bs, br)
			}
		}
		for _, c := range r.ceilings {
			if c.err != "" {
				p("\nceiling %s: %s\n", measure.SizeLabel(c.size), c.err)
			}
		}
	}

	type metric struct {
		title string
		cell  func(a *agg) string
	}
	metrics := []metric{
		{"Throughput, thousands of ops/s (median ±half-range)", func(a *agg) string {
			s := measure.Kops(measure.Median(a.ops))
			if a.n > 1 {
				s += fmt.Sprintf(" ±%.0f%%", 100*measure.Spread(a.ops))
			}
			return s
		}},
		{"Latency p50 / p99, µs", func(a *agg) string {
			return fmtUs(measure.Median(a.p50)) + " / " + fmtUs(measure.Median(a.p99))
		}},
		{"Allocations per op (whole client process)", func(a *agg) string { return fmtNum(measure.Median(a.allocs)) }},
		{"redis-server CPU, µs per op", func(a *agg) string { return fmtNum(measure.Median(a.server)) }},
		{"Client process CPU, µs per op", func(a *agg) string { return fmtNum(measure.Median(a.clientCPU)) }},
	}
	for _, op := range r.grid.Ops {
		for _, size := range r.grid.Sizes {
			p("\n## %s, %s values\n", strings.ToUpper(op), measure.SizeLabel(size))
			for mi, mt := range metrics {
				p("\n%s\n\n", mt.title)
				header("client")
				for _, c := range r.clients {
					cells := []string{c.name}
					for _, conc := range r.grid.Conc {
						a := m[cellKey{c.name, op, size, conc}]
						switch {
						case a == nil:
							cells = append(cells, "–")
						case a.n == 0:
							cells = append(cells, "FAIL")
						default:
							cells = append(cells, mt.cell(a))
						}
					}
					row(cells...)
				}
				if mi == 0 {
					cells := []string{"*best peer*"}
					ratios := []string{"*zipline / best peer*"}
					for _, conc := range r.grid.Conc {
						name, v := bestPeer(m, r.clients, op, size, conc)
						if name == "" {
							cells = append(cells, "–")
							ratios = append(ratios, "–")
							continue
						}
						cells = append(cells, fmt.Sprintf("%s %s", name, measure.Kops(v)))
						z := m[cellKey{ziplineName, op, size, conc}]
						if z == nil || z.n == 0 {
							ratios = append(ratios, "–")
						} else {
							ratios = append(ratios, fmt.Sprintf("**%.2f**", measure.Median(z.ops)/v))
						}
					}
					row(cells...)
					if r.hasZipline() {
						row(ratios...)
					}
				}
			}
		}
	}

	// Problems.
	var problems []string
	for _, c := range r.clients {
		for _, op := range r.grid.Ops {
			for _, size := range r.grid.Sizes {
				for _, conc := range r.grid.Conc {
					a := m[cellKey{c.name, op, size, conc}]
					if a == nil {
						continue
					}
					where := fmt.Sprintf("%s %s %s c=%d", c.name, strings.ToUpper(op), measure.SizeLabel(size), conc)
					for _, f := range a.failures {
						problems = append(problems, where+": "+f)
					}
					if a.errs > 0 {
						problems = append(problems, fmt.Sprintf("%s: %d errors in total", where, a.errs))
					}
				}
			}
		}
	}
	var firstErrs []string
	for _, res := range r.results {
		if res.FirstErr != "" {
			firstErrs = append(firstErrs, fmt.Sprintf("%s %s %s c=%d run %d: %s", res.Client,
				strings.ToUpper(res.Op), measure.SizeLabel(res.Size), res.Conc, res.Run, res.FirstErr))
		}
	}
	var others []float64
	for _, res := range r.results {
		if res.Failed == "" && res.OtherCPU >= 0 {
			others = append(others, res.OtherCPU)
		}
	}
	if len(others) > 0 {
		busy := 0
		for _, o := range others {
			if o > otherNoisy {
				busy++
			}
		}
		p("\n## Noise\n\nCPU used by processes other than clientbench and redis-server during a cell, in %% of one CPU: "+
			"median %.0f%%, max %.0f%%; %d of %d cells above %d%%. (/proc/stat has 10 ms ticks, so a few %% is rounding.)\n",
			measure.Median(others), slices.Max(others), busy, len(others), otherNoisy)
		if r.quiet != "" {
			p("\nQuiet gate: %s. It waited %v in all and re-measured %d cells.\n",
				r.quiet, r.quietWaited.Round(time.Second), r.quietRemeasured)
		}
	}

	p("\n## Errors and failures\n\n")
	if len(problems) == 0 {
		p("none\n")
	}
	for _, s := range problems {
		p("- %s\n", s)
	}
	for _, s := range firstErrs {
		p("- first error: %s\n", s)
	}

	// Raw per-run numbers, for judging noise.
	p("\n<details><summary>Raw runs (kops/s, p50/p99 µs, allocs/op, redis µs/op, client µs/op)</summary>\n\n")
	row("run", "client", "op", "value", "conc", "kops/s", "p50/p99", "allocs", "redis", "client", "other CPU %", "errors")
	row("--:", "---", "---", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:")
	for _, res := range r.results {
		if res.Failed != "" {
			row(fmt.Sprint(res.Run), res.Client, res.Op, fmt.Sprint(res.Size), fmt.Sprint(res.Conc),
				"FAIL: "+strings.ReplaceAll(res.Failed, "|", "/"), "", "", "", "", "", fmt.Sprint(res.Errors))
			continue
		}
		srv := "–"
		if res.ServerCPU >= 0 {
			srv = fmtNum(res.ServerCPU)
		}
		row(fmt.Sprint(res.Run), res.Client, res.Op, fmt.Sprint(res.Size), fmt.Sprint(res.Conc),
			measure.Kops(res.OpsPerSec()), fmtUs(us(res.P50))+"/"+fmtUs(us(res.P99)), fmtNum(res.AllocsPerOp),
			srv, fmtNum(res.ClientCPU), fmtOther(res.OtherCPU), fmt.Sprint(res.Errors))
	}
	for _, c := range r.ceilings {
		var parts []string
		for _, op := range []string{"get", "set"} {
			if v, ok := c.rps[op]; ok {
				parts = append(parts, fmt.Sprintf("%s %s k", strings.ToUpper(op), measure.Kops(v)))
			}
		}
		p("\nceiling %s: %s", measure.SizeLabel(c.size), strings.Join(parts, ", "))
	}
	p("\n\n</details>\n")
}

// otherNoisy is the other-process CPU (% of one CPU) above which a cell is
// counted as disturbed in the Noise section (the default -max-other).
const otherNoisy = 25

func fmtOther(v float64) string {
	if v < 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f", v)
}
