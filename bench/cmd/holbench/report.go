package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/ziplinekv/zipline/bench/netshape"
	"github.com/ziplinekv/zipline/cmd/zipline/bench/sysstat"
)

// report is the whole run.
type report struct {
	cfg         config
	command     string
	date        time.Time
	profiles    []profileResult
	interrupted bool
}

// summary is the median over rounds of one client under one load.
type summary struct {
	rounds   int
	small    [3]time.Duration
	p99Range [2]time.Duration // the lowest and highest round's p99
	smallOps float64          // per second
	largeMBs float64          // MB per second moved by the large values
	largeP99 time.Duration
	errors   int
	firstErr string
	other    float64 // the most other processes used in a round, % of one CPU
}

func (pr profileResult) summary(c config, client string, mixed bool) (summary, bool) {
	var cells []cell
	for _, cl := range pr.Cells {
		if cl.Client == client && cl.Mixed == mixed && cl.SmallOps > 0 {
			cells = append(cells, cl)
		}
	}
	if len(cells) == 0 {
		return summary{}, false
	}
	s := summary{rounds: len(cells), other: -1}
	for i := range quantiles {
		s.small[i] = median(cells, func(cl cell) float64 { return float64(cl.Small[i]) }, func(x float64) time.Duration { return time.Duration(x) })
	}
	s.smallOps = median(cells, func(cl cell) float64 { return float64(cl.SmallOps) / cl.Elapsed.Seconds() }, id)
	s.largeMBs = median(cells, func(cl cell) float64 { return float64(cl.LargeOps) * float64(c.Large) / cl.Elapsed.Seconds() / 1e6 }, id)
	s.largeP99 = median(cells, func(cl cell) float64 { return float64(cl.LargeP99) }, func(x float64) time.Duration { return time.Duration(x) })
	s.p99Range = [2]time.Duration{cells[0].Small[1], cells[0].Small[1]}
	for _, cl := range cells {
		s.p99Range = [2]time.Duration{min(s.p99Range[0], cl.Small[1]), max(s.p99Range[1], cl.Small[1])}
		s.errors += cl.Errors
		if s.firstErr == "" {
			s.firstErr = cl.FirstErr
		}
		s.other = max(s.other, cl.OtherCPU)
	}
	return s, true
}

func id(x float64) float64 { return x }

// median returns the middle of f over cells (the lower middle for an even
// count), converted by to.
func median[T any](cells []cell, f func(cell) float64, to func(float64) T) T {
	v := make([]float64, len(cells))
	for i, c := range cells {
		v[i] = f(c)
	}
	slices.Sort(v)
	return to(v[(len(v)-1)/2])
}

// write prints the report to stdout and, if path is set, to path.
func (r *report) write(path string) error {
	var buf bytes.Buffer
	r.markdown(&buf)
	os.Stdout.Write(buf.Bytes())
	if path == "" {
		return nil
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

func (r *report) markdown(w io.Writer) {
	c := r.cfg
	fmt.Fprintf(w, "# Large values in the pipe: small GETs beside %d B values\n\n```sh\n%s\n```\n\n", c.Large, r.command)
	fmt.Fprintf(w, "%s UTC; %s. %d goroutines GET %d-byte values (1000 keys, round-robin); in the \"with large\" rows %d more "+
		"goroutines each SET then GET a %d-byte value of their own, back to back, through the same client. %v per cell after "+
		"%v of warm-up, %d round(s), clients in rotating order; medians over rounds.\n\n",
		r.date.UTC().Format("2006-01-02 15:04"), sysstat.Machine(), c.Small, smallSize, c.Movers, c.Large, c.Duration, c.Warmup, c.Rounds)
	if r.interrupted {
		fmt.Fprintf(w, "**Interrupted**: the tables hold what was measured until then.\n\n")
	}
	for _, pr := range r.profiles {
		p := pr.Setup.Profile
		rate := float64(p.Rate)
		if !p.Shaped() {
			rate = pr.Setup.Probe
		}
		wire := time.Duration(float64(c.Large) * 8 / rate * float64(time.Second))
		fmt.Fprintf(w, "## %s\n\n%s.\n\nWhat the bytes require: one %d-byte value takes %.2f ms at %s. Each mover has one large value in "+
			"flight at a time, and both directions share the path, so a small GET's request and its reply can each queue behind "+
			"at most %d of them: %.1f ms per round trip at most.\n\n",
			p.Name, pr.Setup.Describe(), c.Large, ms(wire), netshape.FormatRate(rate), c.Movers, ms(2*time.Duration(c.Movers)*wire))
		fmt.Fprintf(w, "| client | load | small GET p50 ms | p99 ms | p99 range over rounds | p99.9 ms | p99 with / without large | small GETs/s | large MB/s | large op p99 ms | errors | other CPU |\n")
		fmt.Fprintf(w, "| --- | --- | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: |\n")
		for _, client := range c.Clients {
			alone, okAlone := pr.summary(c, client, false)
			for _, mixed := range []bool{false, true} {
				s, ok := pr.summary(c, client, mixed)
				load := "small alone"
				if mixed {
					load = fmt.Sprintf("with %d × %d KB", c.Movers, c.Large/1000)
				}
				if !ok {
					fmt.Fprintf(w, "| %s | %s | failed | | | | | | | | | |\n", client, load)
					continue
				}
				vs, large, largeP99 := "", "", ""
				if mixed {
					if okAlone {
						vs = fmt.Sprintf("%.1fx", float64(s.small[1])/float64(alone.small[1]))
					}
					large, largeP99 = fmt.Sprintf("%.0f", s.largeMBs), fmt.Sprintf("%.1f", ms(s.largeP99))
				}
				errs := fmt.Sprint(s.errors)
				if s.errors > 0 {
					errs += " (" + s.firstErr + ")"
				}
				fmt.Fprintf(w, "| %s | %s | %.2f | %.2f | %.1f-%.1f | %.2f | %s | %.0f | %s | %s | %s | %.0f %% |\n", client, load,
					ms(s.small[0]), ms(s.small[1]), ms(s.p99Range[0]), ms(s.p99Range[1]), ms(s.small[2]), vs, s.smallOps, large, largeP99, errs, s.other)
			}
		}
		fmt.Fprintln(w)
	}
}
