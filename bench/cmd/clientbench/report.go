package main

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/ziplinekv/zipline/bench/harness"
)

// report is everything one clientbench invocation produced.
type report struct {
	harness.Header
	grid     harness.Grid
	runs     int
	results  []harness.Result
	ceilings []ceilingResult
	ceilCmd  string
	notes    []string

	quiet           string // how the quiet gate was set, empty when off
	quietWaited     time.Duration
	quietRemeasured int
}

const ziplineName = "zipline"

// batchName is zipline sending Batches of 16 (bench.Factory.Batch): not a
// peer, and set beside the ceiling, whose 16 pipelined requests it matches.
const batchName = "zipline-batch16"

// isPeer reports whether a client is a peer of zipline's, not one of its
// own forms.
func isPeer(name string) bool { return name != ziplineName && name != batchName }

// cellKey identifies one table cell across runs.
type cellKey struct {
	client string
	op     string
	size   int
	conc   int
}

func (r *report) aggregate() map[cellKey]*harness.Runs {
	m := map[cellKey]*harness.Runs{}
	for i := range r.results {
		res := &r.results[i]
		k := cellKey{res.Client, res.Op, res.Size, res.Conc}
		if m[k] == nil {
			m[k] = &harness.Runs{}
		}
		m[k].Add(res.Run, &res.Measurement)
	}
	return m
}

// bestPeer returns the peer with the highest median throughput in a column.
func bestPeer(m map[cellKey]*harness.Runs, clients []harness.Client, op string, size, conc int) (string, float64) {
	best, bestV := "", math.NaN()
	for _, c := range clients {
		if !isPeer(c.Name) {
			continue
		}
		a := m[cellKey{c.Name, op, size, conc}]
		if a == nil || a.N() == 0 {
			continue
		}
		if v := a.OpsPerSec(); best == "" || v > bestV {
			best, bestV = c.Name, v
		}
	}
	return best, bestV
}

func (r *report) hasZipline() bool { return r.has(ziplineName) }

// has reports whether the client called name is part of the run.
func (r *report) has(name string) bool {
	for _, c := range r.Clients {
		if c.Name == name {
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
	return harness.Median(v)
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

	r.Header.Write(w)
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
			cells := []string{fmt.Sprintf("%s %s", strings.ToUpper(op), harness.SizeLabel(size))}
			for _, conc := range r.grid.Conc {
				name, v := bestPeer(m, r.Clients, op, size, conc)
				if !r.hasZipline() {
					if name == "" {
						cells = append(cells, "–")
					} else {
						cells = append(cells, fmt.Sprintf("%s %s k", name, harness.Kops(v)))
					}
					continue
				}
				z := m[cellKey{ziplineName, op, size, conc}]
				if z == nil || z.N() == 0 || name == "" {
					cells = append(cells, "–")
					continue
				}
				ratio := z.OpsPerSec() / v
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
		head := []string{"op, value", "ceiling kreq/s", fmt.Sprintf("zipline c=%d kops/s", last), "zipline / ceiling",
			fmt.Sprintf("best peer c=%d", last), "best peer / ceiling"}
		rule := []string{"---", "--:", "--:", "--:", "---", "--:"}
		batched := r.has(batchName)
		if batched {
			head = append(head, fmt.Sprintf("%s (%d goroutines) kops/s", batchName, last/16), batchName+" / ceiling")
			rule = append(rule, "--:", "--:")
		}
		row(head...)
		row(rule...)
		for _, op := range r.grid.Ops {
			for _, size := range r.grid.Sizes {
				ceil := r.ceilingMedian(op, size)
				zs, zr := "–", "–"
				if z := m[cellKey{ziplineName, op, size, last}]; z != nil && z.N() > 0 {
					zs = harness.Kops(z.OpsPerSec())
					zr = fmt.Sprintf("%.2f", z.OpsPerSec()/ceil)
				}
				name, v := bestPeer(m, r.Clients, op, size, last)
				bs, br := "–", "–"
				if name != "" {
					bs = fmt.Sprintf("%s %s", name, harness.Kops(v))
					br = fmt.Sprintf("%.2f", v/ceil)
				}
				cells := []string{fmt.Sprintf("%s %s", strings.ToUpper(op), harness.SizeLabel(size)), harness.Kops(ceil), zs, zr, bs, br}
				if batched {
					ks, kr := "–", "–"
					if z := m[cellKey{batchName, op, size, last}]; z != nil && z.N() > 0 {
						ks = harness.Kops(z.OpsPerSec())
						kr = fmt.Sprintf("%.2f", z.OpsPerSec()/ceil)
					}
					cells = append(cells, ks, kr)
				}
				row(cells...)
			}
		}
		for _, c := range r.ceilings {
			if c.err != "" {
				p("\nceiling %s: %s\n", harness.SizeLabel(c.size), c.err)
			}
		}
	}

	metrics := harness.Metrics("redis-server CPU, µs per op")
	for _, op := range r.grid.Ops {
		for _, size := range r.grid.Sizes {
			p("\n## %s, %s values\n", strings.ToUpper(op), harness.SizeLabel(size))
			for mi, mt := range metrics {
				p("\n%s\n\n", mt.Title)
				header("client")
				for _, c := range r.Clients {
					cells := []string{c.Name}
					for _, conc := range r.grid.Conc {
						a := m[cellKey{c.Name, op, size, conc}]
						switch {
						case a == nil:
							cells = append(cells, "–")
						case a.N() == 0:
							cells = append(cells, "FAIL")
						default:
							cells = append(cells, mt.Cell(a))
						}
					}
					row(cells...)
				}
				if mi == 0 {
					cells := []string{"*best peer*"}
					ratios := []string{"*zipline / best peer*"}
					for _, conc := range r.grid.Conc {
						name, v := bestPeer(m, r.Clients, op, size, conc)
						if name == "" {
							cells = append(cells, "–")
							ratios = append(ratios, "–")
							continue
						}
						cells = append(cells, fmt.Sprintf("%s %s", name, harness.Kops(v)))
						z := m[cellKey{ziplineName, op, size, conc}]
						if z == nil || z.N() == 0 {
							ratios = append(ratios, "–")
						} else {
							ratios = append(ratios, fmt.Sprintf("**%.2f**", z.OpsPerSec()/v))
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
	for _, c := range r.Clients {
		for _, op := range r.grid.Ops {
			for _, size := range r.grid.Sizes {
				for _, conc := range r.grid.Conc {
					a := m[cellKey{c.Name, op, size, conc}]
					if a == nil {
						continue
					}
					where := fmt.Sprintf("%s %s %s c=%d", c.Name, strings.ToUpper(op), harness.SizeLabel(size), conc)
					for _, f := range a.Failures {
						problems = append(problems, where+": "+f)
					}
					if a.Errors > 0 {
						problems = append(problems, fmt.Sprintf("%s: %d errors in total", where, a.Errors))
					}
				}
			}
		}
	}
	var firstErrs []string
	for _, res := range r.results {
		if res.FirstErr != "" {
			firstErrs = append(firstErrs, fmt.Sprintf("%s %s run %d: %s", res.Client, res.Point, res.Run, res.FirstErr))
		}
	}
	noise := harness.Noise{Gate: r.quiet, Waited: r.quietWaited, Remeasured: r.quietRemeasured}
	for i := range r.results {
		noise.Add(&r.results[i].Measurement)
	}
	noise.Write(w, "clientbench and redis-server")

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
	row(append([]string{"run", "client", "op", "value", "conc"}, harness.RawHeader...)...)
	row("--:", "---", "---", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:")
	for _, res := range r.results {
		row(append([]string{fmt.Sprint(res.Run), res.Client, res.Op, fmt.Sprint(res.Size), fmt.Sprint(res.Conc)},
			res.RawCells()...)...)
	}
	for _, c := range r.ceilings {
		var parts []string
		for _, op := range []string{"get", "set"} {
			if v, ok := c.rps[op]; ok {
				parts = append(parts, fmt.Sprintf("%s %s k", strings.ToUpper(op), harness.Kops(v)))
			}
		}
		p("\nceiling %s: %s", harness.SizeLabel(c.size), strings.Join(parts, ", "))
	}
	p("\n\n</details>\n")
}
