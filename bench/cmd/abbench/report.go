package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ziplinekv/zipline/bench/harness"
)

// report collects the rounds of both sides and writes the A/B table.
type report struct {
	session   *harness.Session // the command line, the machine at the end
	sides     []*side
	opts      *options
	threshold float64
	env       []string
	notes     []string
	cells     []harness.Point // points in the order first measured, Run 0
	rounds    map[harness.Point]map[string][]harness.Result
	runTime   time.Duration // set when the run ends
}

func (r *report) add(sideName string, res harness.Result) {
	key := res.Point
	key.Run = 0
	if r.rounds == nil {
		r.rounds = map[harness.Point]map[string][]harness.Result{}
	}
	if r.rounds[key] == nil {
		r.rounds[key] = map[string][]harness.Result{}
		r.cells = append(r.cells, key)
	}
	r.rounds[key][sideName] = append(r.rounds[key][sideName], res)
}

// point is one row of the table.
type point struct {
	label      string
	a, b       []float64 // ops/s of the successful rounds
	ratio      float64   // median(a) / median(b)
	aFaster    int       // rounds in which A beat B's round of the same number
	paired     int       // rounds in which both sides succeeded
	quietRatio float64   // median(a) / median(b) over the quiet pairs only
	quietPairs int       // paired rounds in which neither side saw other processes above -max-other
	noisy      int       // rounds, either side, with other processes above -max-other
	failed     int
	belowLimit bool
}

func (r *report) point(key harness.Point) point {
	p := point{label: key.String()}
	if len(r.opts.clients) > 1 {
		p.label = key.Client + " " + p.label
	}
	type round struct {
		opsPerSec float64
		quiet     bool
	}
	aByRun := map[int]round{}
	var quietA, quietB []float64
	for _, s := range r.sides {
		for _, res := range r.rounds[key][s.name] {
			quiet := res.OtherCPU >= 0 && res.OtherCPU <= r.opts.maxOther
			if !quiet {
				p.noisy++
			}
			if res.Failed != "" {
				p.failed++
				continue
			}
			v := res.OpsPerSec()
			if s.name == "A" {
				p.a = append(p.a, v)
				aByRun[res.Run] = round{v, quiet}
				continue
			}
			p.b = append(p.b, v)
			if a, ok := aByRun[res.Run]; ok {
				p.paired++
				if a.opsPerSec > v {
					p.aFaster++
				}
				if a.quiet && quiet {
					quietA, quietB = append(quietA, a.opsPerSec), append(quietB, v)
				}
			}
		}
	}
	p.ratio = harness.Median(p.a) / harness.Median(p.b)
	p.quietRatio, p.quietPairs = harness.Median(quietA)/harness.Median(quietB), len(quietA)
	p.belowLimit = !(p.ratio >= r.threshold) // NaN (a side without data) counts as below
	return p
}

func (r *report) write(w io.Writer) {
	pf := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	row := func(cells ...string) { pf("| %s |\n", strings.Join(cells, " | ")) }
	o := r.opts

	pf("# A/B: zipline at two revisions\n\nCommand:\n\n```\n%s\n```\n\n", r.session.Command)
	for _, s := range r.sides {
		rev := ""
		if s.rev != s.hash {
			rev = " (" + s.rev + ")"
		}
		pf("- %s: `%s`%s %s\n", s.name, s.hash, rev, s.subject)
	}
	order := "A, B, A, B..."
	if o.swap {
		order = "A B, B A, A B... (the pair's order swapped every other round)"
	}
	pf("- rounds: %d per point and side, in the order %s, each a fresh clientbench process measuring %v after a %v warm-up; clients %s\n",
		o.rounds, order, o.duration, o.warmup, strings.Join(o.clients, ", "))
	for _, e := range r.env {
		pf("- %s\n", e)
	}
	if r.session.MachineAfter != "" {
		pf("- machine at end: %s\n- run time: %v\n", r.session.MachineAfter, r.runTime.Round(time.Second))
	}
	for _, n := range r.notes {
		pf("\n> %s\n", n)
	}

	pf("\nThroughput in thousands of ops/s: median over rounds ±half the min–max range. A/B is the ratio of the medians; "+
		"✗ marks a point below %.2f. \"A faster\" counts the rounds in which A beat B's round of the same number; "+
		"\"noisy\" counts rounds (both sides) during which other processes used more than %.0f%% of a CPU (or that could not "+
		"tell), and \"A/B quiet\" is the ratio of the medians over the round pairs in which neither side was noisy, with "+
		"their number: on a busy machine the better estimate, once it rests on a few pairs.\n\n", r.threshold, o.maxOther)
	row("point", "A kops/s", "B kops/s", "A/B", "A faster", "noisy", "A/B quiet")
	row("---", "--:", "--:", "--:", "--:", "--:", "--:")
	var below []string
	for _, key := range r.cells {
		p := r.point(key)
		mark := ""
		if p.belowLimit {
			mark = " ✗"
			below = append(below, fmt.Sprintf("%s (%.2f)", p.label, p.ratio))
		}
		noisy := fmt.Sprint(p.noisy)
		if p.failed > 0 {
			noisy += fmt.Sprintf(", %d failed", p.failed)
		}
		quiet := "–"
		if p.quietPairs > 0 {
			quiet = fmt.Sprintf("%.2f (%d)", p.quietRatio, p.quietPairs)
		}
		row(p.label, harness.KopsSpread(p.a), harness.KopsSpread(p.b), fmt.Sprintf("**%.2f**%s", p.ratio, mark),
			fmt.Sprintf("%d/%d", p.aFaster, p.paired), noisy, quiet)
	}
	if len(below) == 0 {
		pf("\nEvery point has A/B ≥ %.2f.\n", r.threshold)
	} else {
		pf("\n%d of %d points below %.2f: %s.\n", len(below), len(r.cells), r.threshold, strings.Join(below, "; "))
	}

	pf("\n<details><summary>Rounds (kops/s, p50/p99 µs, other-process CPU %%)</summary>\n\n")
	row("point", "round", "side", "kops/s", "p50/p99", "other CPU %", "failure")
	row("---", "--:", "---", "--:", "--:", "--:", "---")
	for _, key := range r.cells {
		label := r.point(key).label
		for _, s := range r.sides {
			for _, res := range r.rounds[key][s.name] {
				row(label, fmt.Sprint(res.Run), s.name, harness.Kops(res.OpsPerSec()),
					harness.Us(harness.Micros(res.P50))+"/"+harness.Us(harness.Micros(res.P99)),
					harness.Percent(res.OtherCPU), strings.ReplaceAll(res.Failed, "|", "/"))
			}
		}
	}
	pf("\n</details>\n")
}
