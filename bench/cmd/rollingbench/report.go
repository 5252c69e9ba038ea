package main

import (
	"fmt"
	"io"
	"maps"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/ziplinekv/zipline/bench/harness"
	"github.com/ziplinekv/zipline/bench/setget"
)

// report is everything one rollingbench invocation produced.
type report struct {
	session  *harness.Session // the command line, the machine before and after
	opts     *options
	server   string
	outcomes []outcome
}

func (r *report) write(w io.Writer) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	row := func(cells ...string) { p("| %s |\n", strings.Join(cells, " | ")) }
	o := r.opts
	p("# Rolling restarts under load\n\nCommand:\n\n```\n%s\n```\n\n", r.session.Command)
	p("- date: %s\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	p("- machine at start: %s\n- machine at end: %s\n- go: %s\n", r.session.MachineBefore, r.session.MachineAfter, runtime.Version())
	p("- server: %s; for every run a fresh cluster of 3 primaries with a replica each (cluster-node-timeout 1 s), "+
		"or a fresh Sentinel group of a primary, 2 replicas and 3 sentinels (down-after 1 s)\n", r.server)
	p("- load: %d goroutines, each SETting its next key (of %d) to a sequence number and GETting it back, every call "+
		"with a %v deadline and %v of pause after a failed call; %v of warm-up before the restarts\n",
		o.load.Callers, o.load.Keys, o.load.CallTimeout, o.load.RetryPause, warmup)
	p("- restarts, %d time(s) round: cluster, shard by shard: the replica restarted and waited for in sync, the switch "+
		"to it, the former primary restarted and in sync; Sentinel: each replica restarted, the switch, the former "+
		"primary restarted. *graceful* switches with CLUSTER FAILOVER / SENTINEL FAILOVER, *kill* by SIGKILL of the "+
		"primary; *reshard* (cluster) moves %d slots, keys included, from each primary to the next with redis-cli "+
		"--cluster reshard, a step each\n", o.laps, o.reshardSlots)
	p("- clients:\n")
	for _, d := range o.clients {
		p("  - %s: %s\n", d.name, d.desc)
	}
	p("\n*Failed* counts failed calls over the restarts, *per switch* the most in one shard's turn. *Window* is the "+
		"longest time without any successful call (to %v). *Recovery* is, after each switch, the time until the "+
		"successful calls per %v were back to 90 %% of their median before the restarts (the median and the worst "+
		"switch of the run). *Lost* counts keys whose value read back afterwards is older than the last write "+
		"acknowledged; *wrong*, GETs that did not return the value their caller's SET had just had acknowledged.\n\n",
		setget.Tick, recoveryWidth)
	for _, topo := range o.topologies {
		for _, sw := range o.switches {
			if !applies(topo, sw) {
				continue
			}
			p("## %s, %s\n\nMedians over the runs, (min–max) beside them.\n\n", topo, sw)
			row("client", "runs", "switches", "failed", "failed per switch", "window", "recovery, median switch",
				"recovery, worst switch", "kops/s", "lost", "wrong", "errors")
			row("---", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "---")
			for _, d := range o.clients {
				var figs []figures
				var fails []string
				for _, oc := range r.outcomes {
					if oc.topology != topo || oc.switching != sw || oc.client != d.name {
						continue
					}
					if oc.err != nil {
						fails = append(fails, strings.ReplaceAll(oc.err.Error(), "|", "/"))
						continue
					}
					figs = append(figs, oc.fig)
				}
				if len(figs) == 0 {
					row(d.name, "0", "FAIL: "+strings.Join(fails, "; "), "", "", "", "", "", "", "", "", "")
					continue
				}
				ints := func(get func(figures) int) string {
					return harness.MedianRange(figs, func(f figures) float64 { return float64(get(f)) }, "%.0f")
				}
				durs := func(get func(figures) time.Duration) string {
					return harness.MedianRange(figs, func(f figures) float64 { return get(f).Seconds() }, "%.3f s")
				}
				errs := map[string]int{}
				for _, f := range figs {
					for k, v := range f.Errors {
						errs[k] += v
					}
				}
				var classes []string
				for _, k := range slices.Sorted(maps.Keys(errs)) {
					classes = append(classes, fmt.Sprintf("%s %d", k, errs[k]))
				}
				runs := fmt.Sprint(len(figs))
				if len(fails) > 0 {
					runs += fmt.Sprintf(" (+%d failed: %s)", len(fails), strings.Join(fails, "; "))
				}
				row(d.name, runs, ints(func(f figures) int { return f.Switches }), ints(func(f figures) int { return f.Failed }),
					ints(func(f figures) int { return f.MaxFailedPerSwitch }), durs(func(f figures) time.Duration { return f.Window }),
					recoveries(figs, func(f figures) time.Duration { return medianDur(f.Recovery) }),
					recoveries(figs, func(f figures) time.Duration { return worstRecovery(f.Recovery) }),
					harness.MedianRange(figs, func(f figures) float64 { return f.OpsPerSec / 1000 }, "%.1f"),
					ints(func(f figures) int { return f.Lost }), ints(func(f figures) int { return f.Wrong }),
					strings.Join(classes, ", ")+" (all runs)")
			}
			p("\n")
		}
	}
	p("## Every run\n\n")
	row("topology", "switch", "round", "client", "switches", "failed", "per switch", "window", "recovery per switch", "kops/s", "lost", "wrong")
	row("---", "---", "--:", "---", "--:", "--:", "--:", "--:", "---", "--:", "--:", "--:")
	for _, oc := range r.outcomes {
		if oc.err != nil {
			row(oc.topology, oc.switching, fmt.Sprint(oc.round), oc.client, "FAIL: "+strings.ReplaceAll(oc.err.Error(), "|", "/"), "", "", "", "", "", "", "")
			continue
		}
		f := oc.fig
		var rec []string
		for _, d := range f.Recovery {
			rec = append(rec, recovery(d))
		}
		row(oc.topology, oc.switching, fmt.Sprint(oc.round), oc.client, fmt.Sprint(f.Switches), fmt.Sprint(f.Failed),
			fmt.Sprint(f.MaxFailedPerSwitch), f.Window.String(), strings.Join(rec, ", "), fmt.Sprintf("%.1f", f.OpsPerSec/1000),
			fmt.Sprint(f.Lost), fmt.Sprint(f.Wrong))
	}
}

// recovery prints one switch's recovery; -1 means never within the run.
func recovery(d time.Duration) string {
	if d < 0 {
		return "never"
	}
	return d.String()
}

// worstRecovery is the slowest switch's recovery: -1 (never) if any
// never recovered within the run.
func worstRecovery(v []time.Duration) time.Duration {
	worst := time.Duration(0)
	for _, d := range v {
		if d < 0 {
			return -1
		}
		worst = max(worst, d)
	}
	return worst
}

// recoveries prints the median over figs of a recovery, "never" when it
// is a switch not back to full throughput within the run.
func recoveries(figs []figures, get func(figures) time.Duration) string {
	v := make([]time.Duration, len(figs))
	for i, f := range figs {
		v[i] = get(f)
	}
	return recovery(medianDur(v))
}

func medianDur(v []time.Duration) time.Duration {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
