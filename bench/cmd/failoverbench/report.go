package main

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"

	"github.com/ziplinekv/zipline/bench/harness"
)

// report is everything one failoverbench invocation produced.
type report struct {
	session  *harness.Session // the command line, the machine before and after
	opts     *options
	server   string
	outcomes []outcome
}

// firstRound returns round 1's outcomes in the order of -clients.
func (r *report) firstRound() []outcome {
	var out []outcome
	for _, f := range r.opts.clients {
		for _, oc := range r.outcomes {
			if oc.round == 1 && oc.client == f.Name {
				out = append(out, oc)
			}
		}
	}
	return out
}

func (r *report) write(w io.Writer) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	row := func(cells ...string) { p("| %s |\n", strings.Join(cells, " | ")) }
	cfg := r.opts.cfg
	p("# Failover timeline: kill -9 of a cluster primary under load\n\n")
	p("Command:\n\n```\n%s\n```\n\n", r.session.Command)
	p("- date: %s\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	p("- machine at start: %s\n- machine at end: %s\n- go: %s\n", r.session.MachineBefore, r.session.MachineAfter, runtime.Version())
	p("- server: %s, a fresh cluster of 3 primaries with 1 replica each for every client run, cluster-node-timeout %v\n",
		r.server, r.opts.nodeTimeout)
	p("- load: %d goroutines, each a loop of GET (%.0f %%) or SET of %d B values on one of %d prefilled keys at random, "+
		"every call with a %v deadline, %v of pause after a failed call; %v of warm-up, then %v before the kill and %v after\n",
		cfg.Goroutines, 100*cfg.GetRatio, len(cfg.Value), cfg.Keys, cfg.CallTimeout, cfg.RetryPause,
		cfg.Warmup, cfg.Before, cfg.After)
	p("- clients: default options each (see the cluster benchmark's list), given %d of the nodes' addresses as seeds, "+
		"in start order; the first is the primary of slot 0, the one killed\n", r.opts.seeds)
	p("\nTimes are from the SIGKILL. *Promoted* is the cluster's side: when the victim's replica first answered ROLE as "+
		"a primary (polled every 5 ms). *Errors* run from the first failed call's return to the last one's. *p99 back* is "+
		"when the client was back to normal for at least %v: no failed call, a p99 within %.0f× the p99 before the kill, "+
		"and calls starting in every bucket (a bucket without any means every goroutine was stuck in a call). Calls are "+
		"bucketed by start, so a call that waits out the failover counts where it started. Throughput is successful "+
		"calls per second before the kill, from the kill until *p99 back*, and after.\n\n", cfg.Stable, cfg.Degraded)
	row("client", "round", "promoted", "errors", "first error", "last error", "error window", "p99 before", "peak p99",
		"p99 back", "kops/s before / during / after", "error classes")
	row("---", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "---")
	for _, oc := range r.outcomes {
		if oc.err != nil {
			row(oc.client, fmt.Sprint(oc.round), "FAIL: "+strings.ReplaceAll(oc.err.Error(), "|", "/"), "", "", "", "", "", "", "", "", "")
			continue
		}
		t := oc.tl
		first, last, window := "–", "–", "0"
		if t.LastErr > 0 {
			first, last, window = "+"+ms(t.FirstErr).String(), "+"+ms(t.LastErr).String(), ms(t.Window()).String()
		}
		var peak time.Duration
		for _, b := range t.Buckets {
			if b.Start >= 0 {
				peak = max(peak, b.P99)
			}
		}
		var classes []string
		for _, c := range t.Classes {
			classes = append(classes, fmt.Sprintf("%s %d", c.Name, c.Count))
		}
		row(oc.client, fmt.Sprint(oc.round), "+"+ms(t.Promotion.Window).String(), fmt.Sprint(t.Errors), first, last, window,
			ms(t.BaselineP99).String(), ms(peak).String(), "+"+ms(t.Recovered).String(),
			fmt.Sprintf("%.0f / %.0f / %.0f", t.Before.PerSecond()/1e3, t.During.PerSecond()/1e3, t.After.PerSecond()/1e3),
			strings.Join(classes, ", "))
	}
	if r.opts.rounds > 1 {
		p("\nMedians over the rounds:\n\n")
		row("client", "rounds", "promoted", "errors", "error window", "p99 back", "p99 back − promoted")
		row("---", "--:", "--:", "--:", "--:", "--:", "--:")
		for _, f := range r.opts.clients {
			var prom, errs, window, back, lag []float64
			for _, oc := range r.outcomes {
				if oc.client != f.Name || oc.tl == nil {
					continue
				}
				t := oc.tl
				prom = append(prom, t.Promotion.Window.Seconds())
				errs = append(errs, float64(t.Errors))
				window = append(window, t.Window().Seconds())
				back = append(back, t.Recovered.Seconds())
				lag = append(lag, (t.Recovered - t.Promotion.Window).Seconds())
			}
			secs := func(v []float64) string { return fmt.Sprintf("%.2fs", harness.Median(v)) }
			row(f.Name, fmt.Sprint(len(prom)), secs(prom), fmt.Sprintf("%.0f", harness.Median(errs)), secs(window), secs(back), secs(lag))
		}
	}
	if r.opts.svg != "" {
		p("\nChart (round 1): `%s`\n", r.opts.svg)
	}

	first := r.firstRound()
	p("\n<details><summary>Per bucket, round 1: successful calls, failed calls, p99 (ms)</summary>\n\n")
	head, align := []string{"start, s"}, []string{"--:"}
	for _, oc := range first {
		head, align = append(head, oc.client), append(align, "--:")
	}
	row(head...)
	row(align...)
	var starts []time.Duration
	for _, oc := range first {
		if oc.tl != nil && len(oc.tl.Buckets) > len(starts) {
			starts = starts[:0]
			for _, b := range oc.tl.Buckets {
				starts = append(starts, b.Start)
			}
		}
	}
	for i, start := range starts {
		cells := []string{fmt.Sprintf("%+.1f", start.Seconds())}
		for _, oc := range first {
			if oc.tl == nil || i >= len(oc.tl.Buckets) {
				cells = append(cells, "")
				continue
			}
			b := oc.tl.Buckets[i]
			cells = append(cells, fmt.Sprintf("%d, %d, %.1f", b.Calls, b.Errors, float64(b.P99)/float64(time.Millisecond)))
		}
		row(cells...)
	}
	p("\n</details>\n")
}
