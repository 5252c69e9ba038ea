package main

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/ziplinekv/zipline/bench"
	"github.com/ziplinekv/zipline/bench/harness"
)

// report is everything one clusterbench invocation produced.
type report struct {
	harness.Header
	clients []bench.ClusterFactory
	points  []point
	runs    int
	results []result
	notes   []string
	noise   harness.Noise
}

const ziplineName = "zipline"

// cellKey identifies one table cell across runs.
type cellKey struct {
	client string
	point
}

func (r *report) aggregate() map[cellKey]*harness.Runs {
	m := map[cellKey]*harness.Runs{}
	for i := range r.results {
		res := &r.results[i]
		k := cellKey{res.factory.Name, res.point}
		if m[k] == nil {
			m[k] = &harness.Runs{}
		}
		m[k].Add(res.run, &res.Measurement)
	}
	return m
}

// bestPeer returns the peer with the highest median throughput at p.
func (r *report) bestPeer(m map[cellKey]*harness.Runs, p point) (string, float64) {
	best, bestV := "", math.NaN()
	for _, c := range r.clients {
		a := m[cellKey{c.Name, p}]
		if c.Name == ziplineName || a == nil || a.N() == 0 {
			continue
		}
		if v := a.OpsPerSec(); best == "" || v > bestV {
			best, bestV = c.Name, v
		}
	}
	return best, bestV
}

func (r *report) write(w io.Writer) {
	m := r.aggregate()
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	row := func(cells ...string) { p("| %s |\n", strings.Join(cells, " | ")) }

	r.Header.Write(w)
	p("\nAn op is one call: a GET, a SET, an MGET of %d keys or a pipeline of %d commands (SET and GET alternating), "+
		"whose keys hash to about %d slots on all three primaries. Every cell is the median over runs (%d requested); "+
		"throughput cells add ±half the min–max range as a percentage of the median. Client and servers share the "+
		"machine's cores, so the numbers are only good for comparisons within this run.\n",
		bench.BatchKeys, bench.BatchKeys, bench.BatchKeys, r.runs)
	for _, n := range r.notes {
		p("\n> %s\n", n)
	}

	p("\n## Summary: zipline / best peer (median ops/s)\n\n")
	row("point", "zipline kops/s", "best peer", "kops/s", "zipline / best peer")
	row("---", "--:", "---", "--:", "--:")
	for _, pt := range r.points {
		name, v := r.bestPeer(m, pt)
		zs, ratio := "–", "–"
		if z := m[cellKey{ziplineName, pt}]; z != nil && z.N() > 0 {
			zs = harness.Kops(z.OpsPerSec())
			if name != "" {
				x := z.OpsPerSec() / v
				ratio = fmt.Sprintf("**%.2f**", x)
				if x < 1 {
					ratio += " ✗"
				}
			}
		}
		row(pt.String(), zs, name, harness.Kops(v), ratio)
	}

	tables := harness.Metrics("Server CPU (all six nodes), µs per op")
	for _, t := range tables {
		p("\n## %s\n\n", t.Title)
		head, align := []string{"point"}, []string{"---"}
		for _, c := range r.clients {
			head, align = append(head, c.Name), append(align, "--:")
		}
		row(head...)
		row(align...)
		for _, pt := range r.points {
			cells := []string{pt.String()}
			for _, c := range r.clients {
				switch a := m[cellKey{c.Name, pt}]; {
				case !c.Does(pt.op):
					cells = append(cells, "n/a")
				case a == nil:
					cells = append(cells, "–")
				case a.N() == 0:
					cells = append(cells, "FAIL")
				default:
					cells = append(cells, t.Cell(a))
				}
			}
			row(cells...)
		}
	}

	noise := r.noise
	for i := range r.results {
		noise.Add(&r.results[i].Measurement)
	}
	noise.Write(w, "clusterbench and the cluster's server processes")

	p("\n## Errors and failures\n\n")
	problems := 0
	for _, c := range r.clients {
		for _, pt := range r.points {
			a := m[cellKey{c.Name, pt}]
			if a == nil {
				continue
			}
			for _, f := range a.Failures {
				p("- %s %s: %s\n", c.Name, pt, f)
				problems++
			}
			if a.Errors > 0 {
				p("- %s %s: %d errors in total\n", c.Name, pt, a.Errors)
				problems++
			}
		}
	}
	for _, res := range r.results {
		if res.FirstErr != "" {
			p("- first error: %s %s run %d: %s\n", res.factory.Name, res.point, res.run, res.FirstErr)
			problems++
		}
	}
	if problems == 0 {
		p("none\n")
	}

	p("\n<details><summary>Raw runs (kops/s, p50/p99 µs, allocs/op, server µs/op, client µs/op)</summary>\n\n")
	row(append([]string{"run", "client", "point"}, harness.RawHeader...)...)
	row("--:", "---", "---", "--:", "--:", "--:", "--:", "--:", "--:", "--:")
	for _, res := range r.results {
		row(append([]string{fmt.Sprint(res.run), res.factory.Name, res.point.String()}, res.RawCells()...)...)
	}
	p("\n</details>\n")
}
