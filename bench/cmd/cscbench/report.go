package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/ziplinekv/zipline/bench"
	"github.com/ziplinekv/zipline/bench/harness"
)

// report is everything one cscbench invocation produced.
type report struct {
	harness.Header
	opts       *options
	results    []result
	commands   []commandCount
	notes      []string
	quiet      string
	waited     time.Duration
	remeasured int
}

// runs is one client's results at one concurrency.
type runs struct {
	ns, allocs, cpu []float64
	misses          uint64
	failures        []string
}

type cellKey struct {
	client string
	conc   int
}

func (r *report) aggregate() map[cellKey]*runs {
	m := map[cellKey]*runs{}
	for _, res := range r.results {
		k := cellKey{res.client, res.conc}
		if m[k] == nil {
			m[k] = &runs{}
		}
		a := m[k]
		if res.failed != "" {
			a.failures = append(a.failures, fmt.Sprintf("round %d: %s", res.round, res.failed))
			continue
		}
		a.ns = append(a.ns, res.nsPerOp())
		a.allocs = append(a.allocs, res.allocs)
		a.cpu = append(a.cpu, res.cpu)
		a.misses += res.misses
	}
	return m
}

// nsSpread formats ns/op: the median and ±half the range in percent.
func nsSpread(v []float64) string {
	s := fmt.Sprintf("%.1f", harness.Median(v))
	if len(v) > 1 {
		s += fmt.Sprintf(" ±%.0f%%", 100*harness.Spread(v))
	}
	return s
}

func (r *report) write(w io.Writer) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	row := func(cells ...string) { p("| %s |\n", strings.Join(cells, " | ")) }
	m := r.aggregate()

	r.Header.Write(w)
	p("\nEvery read is a hit: the 1,000 keys are read twice before the window and nothing writes meanwhile. "+
		"ns/op is the measured window over the reads all goroutines completed in it (so at 64 goroutines on this "+
		"machine it is the inverse of the throughput, not a latency); allocations per op are the whole process's "+
		"mallocs over the window per read. Medians over %d round(s), the clients' order rotating every round; ± is "+
		"half the min–max range as a percentage of the median.\n", r.opts.rounds)
	for _, n := range r.notes {
		p("\n> %s\n", n)
	}

	p("\n## Summary\n\n")
	row("goroutines", "zipline ns/op", "zipline allocs/op", "best peer", "best peer ns/op / zipline ns/op")
	row("--:", "--:", "--:", "---", "--:")
	for _, conc := range r.opts.conc {
		z := m[cellKey{"zipline", conc}]
		best, bestNs := "", math.Inf(1)
		for _, c := range r.opts.clients {
			if strings.HasPrefix(c.name, "zipline") { // zipline and its other forms are not peers
				continue
			}
			if a := m[cellKey{c.name, conc}]; a != nil && len(a.ns) > 0 && harness.Median(a.ns) < bestNs {
				best, bestNs = c.name, harness.Median(a.ns)
			}
		}
		zn, za, ratio := "–", "–", "–"
		if z != nil && len(z.ns) > 0 {
			zn, za = fmt.Sprintf("%.1f", harness.Median(z.ns)), harness.Num(harness.Median(z.allocs))
			if best != "" {
				x := bestNs / harness.Median(z.ns)
				ratio = fmt.Sprintf("**%.2f**", x)
				if x < 1 {
					ratio += " ✗"
				}
			}
		}
		bs := "–"
		if best != "" {
			bs = fmt.Sprintf("%s %.1f ns", best, bestNs)
		}
		row(fmt.Sprint(conc), zn, za, bs, ratio)
	}
	if z := m[cellKey{"zipline", 1}]; z != nil && len(z.ns) > 0 {
		ns, allocs := harness.Median(z.ns), harness.Median(z.allocs)
		verdict := "met"
		if ns > 100 || allocs >= 0.005 {
			verdict = "**not met**"
		}
		p("\nzipline's target at one goroutine, ≤ 100 ns and 0 allocations per hit: %s (%.1f ns, %s allocs).\n",
			verdict, ns, harness.Num(allocs))
	}

	r.writeCommands(w)

	for _, t := range []struct {
		title string
		cell  func(a *runs) string
	}{
		{"ns per cached GET (median ±half-range)", func(a *runs) string { return nsSpread(a.ns) }},
		{"Allocations per cached GET (whole process)", func(a *runs) string { return harness.Num(harness.Median(a.allocs)) }},
		{"Process CPU, ns per cached GET", func(a *runs) string { return fmt.Sprintf("%.1f", harness.Median(a.cpu)) }},
		{"Misses the client reported during the windows (all rounds; should be 0)", func(a *runs) string { return fmt.Sprint(a.misses) }},
	} {
		p("\n## %s\n\n", t.title)
		cells := []string{"client"}
		align := []string{"---"}
		for _, conc := range r.opts.conc {
			cells = append(cells, fmt.Sprintf("c=%d", conc))
			align = append(align, "--:")
		}
		row(cells...)
		row(align...)
		for _, c := range r.opts.clients {
			cells := []string{c.name}
			for _, conc := range r.opts.conc {
				switch a := m[cellKey{c.name, conc}]; {
				case a == nil:
					cells = append(cells, "–")
				case len(a.ns) == 0:
					cells = append(cells, "FAIL")
				default:
					cells = append(cells, t.cell(a))
				}
			}
			row(cells...)
		}
	}
	for _, c := range r.opts.clients {
		for _, conc := range r.opts.conc {
			if a := m[cellKey{c.name, conc}]; a != nil {
				for _, f := range a.failures {
					p("\n%s c=%d %s\n", c.name, conc, f)
				}
			}
		}
	}

	var others []float64
	for _, res := range r.results {
		if res.failed == "" && res.other >= 0 {
			others = append(others, res.other)
		}
	}
	noise := harness.Noise{Others: others, Gate: r.quiet, Waited: r.waited, Remeasured: r.remeasured}
	noise.Write(w, "cscbench and redis-server")

	p("\n<details><summary>Raw rounds</summary>\n\n")
	row("round", "goroutines", "client", "ns/op", "allocs/op", "CPU ns/op", "reads", "misses", "other CPU %", "failure")
	row("--:", "--:", "---", "--:", "--:", "--:", "--:", "--:", "--:", "---")
	for _, res := range r.results {
		if res.failed != "" {
			row(fmt.Sprint(res.round), fmt.Sprint(res.conc), res.client, "", "", "", "", "", "", strings.ReplaceAll(res.failed, "|", "/"))
			continue
		}
		row(fmt.Sprint(res.round), fmt.Sprint(res.conc), res.client, fmt.Sprintf("%.1f", res.nsPerOp()), harness.Num(res.allocs),
			fmt.Sprintf("%.1f", res.cpu), fmt.Sprint(res.ops), fmt.Sprint(res.misses), harness.Percent(res.other), "")
	}
	p("\n</details>\n")
}

// writeCommands writes what a cached read costs the server, per client.
func (r *report) writeCommands(w io.Writer) {
	if len(r.commands) == 0 {
		return
	}
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	p("\n## Server commands per cached read\n\n")
	p("A fresh client read each of the %d keys once (every read a miss), then again (every read a hit); INFO "+
		"commandstats before and after each pass, over the reads; INFO, PING and connection set-up (HELLO, CLIENT TRACKING, "+
		"CLIENT SETINFO...) left out.\n\n", len(bench.Keys))
	p("| client | commands per miss | by command | commands per hit | misses the client reported in the first pass |\n")
	p("| --- | --: | --- | --: | --: |\n")
	for _, cc := range r.commands {
		if cc.failed != "" {
			p("| %s | FAIL %s | | | |\n", cc.client, strings.ReplaceAll(cc.failed, "|", "/"))
			continue
		}
		p("| %s | %s | %s | %s | %d |\n", cc.client, bench.PerRead(cc.misses.Total(), cc.reads, -1), cc.misses.Per(cc.reads, -1),
			bench.PerRead(cc.hits.Total(), cc.reads, -1), cc.reported)
	}
	for _, c := range allClients {
		if !slices.Contains(r.opts.clients, c) {
			p("\n- `%s` (counted, not timed): %s\n", c.name, c.desc)
		}
	}
}
