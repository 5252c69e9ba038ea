package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ziplinekv/zipline/bench/harness"
)

// report is everything one subbench invocation produced.
type report struct {
	harness.Header
	opts       *options
	results    []result
	notes      []string
	quiet      string
	waited     time.Duration
	remeasured int
}

// summary is one variant's results over the rounds.
type summary struct {
	rates, pubRates, allocs, cpu, server []float64
	received, published                  int64 // all rounds
	dropped, gaps                        int64 // all rounds; -1 when the client does not count them
	badSize                              int64
	lossy                                int // rounds that lost messages
	failures                             []string
}

func (r *report) summarise() map[string]*summary {
	m := map[string]*summary{}
	for _, v := range r.opts.variants {
		m[v.String()] = &summary{dropped: -1, gaps: -1}
	}
	for _, res := range r.results {
		s := m[res.variant.String()]
		if res.failed != "" {
			s.failures = append(s.failures, fmt.Sprintf("round %d: %s", res.round, res.failed))
			continue
		}
		s.rates = append(s.rates, res.rate())
		s.pubRates = append(s.pubRates, res.pubRate())
		s.allocs = append(s.allocs, res.allocs)
		s.cpu = append(s.cpu, res.cpu)
		if res.server >= 0 {
			s.server = append(s.server, res.server)
		}
		s.received += res.received
		s.published += res.published
		s.badSize += res.badSize
		if res.received < res.published {
			s.lossy++
		}
		if res.dropped >= 0 {
			s.dropped = max(s.dropped, 0) + res.dropped
			s.gaps = max(s.gaps, 0) + res.gaps
		}
	}
	return m
}

func (r *report) write(w io.Writer) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	row := func(cells ...string) { p("| %s |\n", strings.Join(cells, " | ")) }
	m := r.summarise()

	r.Header.Write(w)
	p("\nEach cell: a fresh client subscribes to a fresh channel, the publisher sends every message as fast as the server "+
		"takes them, and the subscriber's rate is (messages received − 1) / (time of the last − time of the first), timed "+
		"where the client hands the message to the application. Medians over %d round(s), the variants' order rotating "+
		"every round; ± is half the min–max range as a percentage of the median. Client, server and publisher share the "+
		"machine's cores, so compare within this report only.\n", r.opts.rounds)
	for _, n := range r.notes {
		p("\n> %s\n", n)
	}

	// Summary: zipline against the best peer, per protocol.
	p("\n## Summary: zipline / best peer (median messages/s)\n\n")
	row("protocol", "zipline kmsg/s", "best peer", "zipline / best peer", "raw ceiling kmsg/s")
	row("---", "--:", "---", "--:", "--:")
	rawRate := "–"
	for _, v := range r.opts.variants {
		if v.client == rawClient && len(m[v.String()].rates) > 0 {
			rawRate = harness.Kops(harness.Median(m[v.String()].rates))
		}
	}
	for _, proto := range []int{3, 2} {
		z, ok := m[variant{client: clients[0], proto: proto}.String()]
		if !ok {
			continue
		}
		best, bestRate := "", 0.0
		for _, v := range r.opts.variants {
			if v.proto != proto || v.client == rawClient || v.client == clients[0] {
				continue
			}
			if s := m[v.String()]; len(s.rates) > 0 && harness.Median(s.rates) > bestRate {
				best, bestRate = v.client.name, harness.Median(s.rates)
			}
		}
		zs, ratio := "–", "–"
		if len(z.rates) > 0 {
			zs = harness.Kops(harness.Median(z.rates))
			if z.lossy > 0 {
				zs += fmt.Sprintf(" (lost %.1f%% in %d of %d rounds)", 100*(1-float64(z.received)/float64(z.published)), z.lossy, len(z.rates))
			}
			if best != "" {
				x := harness.Median(z.rates) / bestRate
				ratio = fmt.Sprintf("**%.2f**", x)
				if x < 1 {
					ratio += " ✗"
				}
			}
		}
		bs := "–"
		if best != "" {
			bs = fmt.Sprintf("%s %s k", best, harness.Kops(bestRate))
		}
		row(fmt.Sprintf("RESP%d", proto), zs, bs, ratio, rawRate)
	}

	p("\nA rate measured while messages were lost counts only those received; it is not a rate at which the client " +
		"keeps up.\n")

	p("\n## Every variant\n\n")
	p("Received is over all rounds. Client-reported drops are zipline's `Subscription.Stats().Dropped` (messages its " +
		"buffer's overflow policy dropped) and, in brackets, its gaps (`Stats().Gaps`); the raw rounds below give the " +
		"gaps' reasons (`overflow` is the subscription's buffer). None of the three clients drops before its " +
		"subscription's buffer: each pushes back on the socket when its consumer falls behind. Allocations and CPU are the whole benchmark process (the publisher's share is " +
		"about the raw row's) per message received.\n\n")
	row("variant", "subscriber kmsg/s", "publish kmsg/s", "received / published", "rounds with loss",
		"client-reported drops (gaps)", "allocs / msg", "process CPU µs / msg", "redis-server CPU µs / published msg")
	row("---", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:")
	for _, v := range r.opts.variants {
		s := m[v.String()]
		if len(s.rates) == 0 {
			row(v.String(), "FAIL", "", "", "", "", "", "", "")
			continue
		}
		drops := "–"
		if s.dropped >= 0 {
			drops = fmt.Sprintf("%d (%d)", s.dropped, s.gaps)
		}
		recv := fmt.Sprintf("%d / %d", s.received, s.published)
		if s.badSize > 0 {
			recv += fmt.Sprintf(", %d of the wrong size", s.badSize)
		}
		row(v.String(), harness.KopsSpread(s.rates), harness.KopsSpread(s.pubRates), recv,
			fmt.Sprintf("%d of %d", s.lossy, len(s.rates)), drops, harness.Num(harness.Median(s.allocs)),
			harness.Num(harness.Median(s.cpu)), harness.Num(harness.Median(s.server)))
	}
	for _, v := range r.opts.variants {
		for _, f := range m[v.String()].failures {
			p("\n%s: %s\n", v, f)
		}
	}

	p("\nReading it: when a client's publish rate is close to its subscriber rate, the server (or the publisher) set " +
		"the pace and the client kept up; when publishing finished well before the subscriber, the subscriber was the " +
		"bottleneck and the server buffered its backlog (the output-buffer limit is lifted for that). With the " +
		"server's buffer unlimited, a loss is a message the client dropped (or lost to a reconnect, which zipline reports " +
		"as a gap).\n")

	var others []float64
	for _, res := range r.results {
		if res.failed == "" && res.other >= 0 {
			others = append(others, res.other)
		}
	}
	noise := harness.Noise{Others: others, Gate: r.quiet, Waited: r.waited, Remeasured: r.remeasured}
	noise.Write(w, "subbench and redis-server")

	p("\n<details><summary>Raw rounds</summary>\n\n")
	row("round", "variant", "subscriber kmsg/s", "publish kmsg/s", "received", "client drops (gaps)", "allocs / msg",
		"other CPU %", "failure")
	row("--:", "---", "--:", "--:", "--:", "--:", "--:", "--:", "---")
	for _, res := range r.results {
		if res.failed != "" {
			row(fmt.Sprint(res.round), res.variant.String(), "", "", "", "", "", "", strings.ReplaceAll(res.failed, "|", "/"))
			continue
		}
		drops := "–"
		if res.dropped >= 0 {
			drops = fmt.Sprintf("%d (%d)", res.dropped, res.gaps)
			if res.reasons != "" {
				drops = fmt.Sprintf("%d (%d: %s)", res.dropped, res.gaps, res.reasons)
			}
		}
		row(fmt.Sprint(res.round), res.variant.String(), harness.Kops(res.rate()), harness.Kops(res.pubRate()),
			fmt.Sprintf("%d / %d", res.received, res.published), drops, harness.Num(res.allocs), harness.Percent(res.other), "")
	}
	p("\n</details>\n")
}
