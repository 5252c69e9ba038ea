package main

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"math"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/ziplinekv/zipline/bench/harness"
	"github.com/ziplinekv/zipline/cmd/zipline/bench/chart"
)

// report is everything one sentinelbench invocation produced.
type report struct {
	session  *harness.Session // the command line, the machine at the end
	opts     *options
	env      []string // harness.Environment at the start
	server   string
	started  time.Time
	elapsed  time.Duration
	outcomes []outcome
}

var scenarioTitles = map[string]string{
	scenarioKill:   "kill: SIGKILL of the primary",
	scenarioManual: "manual: SENTINEL FAILOVER (the old primary stays up and is demoted)",
}

func (r *report) write(w io.Writer) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	row := func(cells ...string) { p("| %s |\n", strings.Join(cells, " | ")) }
	o := r.opts
	p("# Sentinel failover: the primary killed or failed over under a write load\n\n")
	p("Issue 33. Command:\n\n```\n%s\n```\n\n", r.session.Command)
	for _, e := range r.env {
		p("- %s\n", e)
	}
	if r.session.MachineAfter != "" {
		p("- machine at end: %s\n", r.session.MachineAfter)
	}
	p("- the machine is shared and noisy: its %d CPUs also run the group's 6 server processes (3 data nodes, 3 sentinels) "+
		"and whatever else runs beside the benchmark\n", runtime.NumCPU())
	if r.server != "" {
		p("- servers: %s, a fresh group for every run: 1 primary, 2 replicas, 3 sentinels (quorum 2), "+
			"down-after-milliseconds 1000, failover-timeout 5000, parallel-syncs 1, no persistence (the test bed's defaults, "+
			"`testbed.StartSentinel`)\n", r.server)
	}
	if r.elapsed > 0 {
		p("- run time: %v for %d runs\n", r.elapsed.Round(time.Second), len(r.outcomes))
	}
	p("\n")
	r.writeMethod(w)

	for _, sc := range o.scenarios {
		p("\n## %s\n\n", scenarioTitles[sc])
		p("Medians over the rounds, (min–max) beside them. Times are from the fault.\n\n")
		row("client", "runs", "sentinels named the new primary", "window", "window, kept writes only", "failed calls",
			"timeout / connection / READONLY / other", "acknowledged writes", "lost, acked before the fault",
			"lost, acked after the fault", "of which after the promotion began")
		row("---", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:")
		for _, c := range o.clients {
			ocs := r.runs(c.name, sc)
			if len(ocs) == 0 {
				row(c.name, "0", "", "", "", "", "", "", "", "", "")
				continue
			}
			get := func(f func(oc outcome) float64) []float64 {
				var v []float64
				for _, oc := range ocs {
					v = append(v, f(oc))
				}
				return v
			}
			var kindCells []string
			for _, k := range kinds {
				kindCells = append(kindCells, count(get(func(oc outcome) float64 { return float64(oc.fig.ByKind[k]) })))
			}
			promo := get(func(oc outcome) float64 { return float64(oc.fig.LostAfterPromotion) })
			promoCell := count(promo)
			if slices.Contains(promo, -1) {
				promoCell += " (promotion not seen in some run)"
			}
			row(c.name, fmt.Sprint(len(ocs)),
				secs(get(func(oc outcome) float64 { return oc.fo.Named.Seconds() })),
				secs(get(func(oc outcome) float64 { return oc.fig.Window.Seconds() })),
				secs(get(func(oc outcome) float64 { return oc.fig.Durable.Seconds() })),
				count(get(func(oc outcome) float64 { return float64(oc.fig.Failed) })),
				strings.Join(kindCells, " / "),
				count(get(func(oc outcome) float64 { return float64(oc.fig.Acked) })),
				count(get(func(oc outcome) float64 { return float64(oc.fig.LostBefore) })),
				count(get(func(oc outcome) float64 { return float64(oc.fig.LostAfter) })),
				promoCell)
		}
		if fails := r.failures(sc); len(fails) > 0 {
			p("\nFailed runs (not in the medians):\n\n")
			for _, oc := range fails {
				p("- %s, round %d: %s\n", oc.client, oc.round, oc.err)
			}
		}
		r.writeGoal(w, sc)
	}

	p("\n## Clients\n\n")
	vers := moduleVersions()
	for _, c := range o.clients {
		v := vers[c.module]
		if v == "" {
			v = "(version unknown)"
		}
		p("- **%s** (%s %s): %s\n", c.name, c.module, v, c.desc)
	}
	p("\nEach is configured as its documentation shows for Sentinel and otherwise left at its defaults; none is told " +
		"about the test bed's faster sentinels. Their own log lines are dropped from stderr (`-quiet-clients`), which " +
		"changes nothing they do.\n")

	if o.svg != "" {
		p("\n## Chart\n\n![acknowledged, failed and lost writes per %v around the fault, round 1](%s)\n\n"+
			"Round 1 of each scenario: writes acknowledged and kept, calls failed, and writes acknowledged but lost, "+
			"per %v by the time their result came, from %s to %s around the fault.\n",
			chartBucket, baseName(o.svg), chartBucket, signed(chartLo), signed(chartHi))
	}

	p("\n## Every run\n\n<details><summary>%d runs</summary>\n\n", len(r.outcomes))
	p("Times from the fault. *named*/*settled*: the test bed's Failover (a sentinel named a replica that answered as a " +
		"primary / the group settled). Events: when the bench's own subscription to every sentinel first heard them (first…last when " +
		"several sentinels said it at different times: each says +switch-master once it learns the new primary). " +
		"*lost after* gives the acknowledgement times of the first and last of them. *keys*: DBSIZE of the final primary " +
		"(acknowledged writes kept, plus failed calls that ran anyway). *check*: from the bench's Settle to the fault " +
		"(the test bed's own settle check before it).\n\n")
	row("scenario", "client", "round", "named", "settled", "window (from)", "kept-only window (from)", "calls", "failed",
		"failed by class", "acked", "lost before", "lost after", "after promotion", "keys", "odown / promoting / promoted / switch-master / old primary demoted",
		"check", "run")
	row("---", "---", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "---", "--:", "--:", "--:", "--:", "--:", "---", "--:", "--:")
	for _, oc := range r.outcomes {
		if oc.err != nil {
			row(oc.scenario, oc.client, fmt.Sprint(oc.round), "FAIL: "+strings.ReplaceAll(oc.err.Error(), "|", "/"),
				"", "", "", "", "", "", "", "", "", "", "", "", "", oc.runTime.Round(100*time.Millisecond).String())
			continue
		}
		f := oc.fig
		var classes []string
		for _, k := range slices.SortedFunc(maps.Keys(f.Classes), func(a, b string) int {
			return cmp.Or(f.Classes[b]-f.Classes[a], strings.Compare(a, b))
		}) {
			classes = append(classes, fmt.Sprintf("%s %d", strings.ReplaceAll(k, "|", "/"), f.Classes[k]))
		}
		var evs []string
		for _, ev := range eventOrder {
			if t, ok := oc.events[ev]; ok {
				e := "+" + ms(t).String()
				if l := oc.lastEvents[ev]; l-t > 10*time.Millisecond {
					e += "…+" + ms(l).String()
				}
				evs = append(evs, e)
			} else {
				evs = append(evs, "–")
			}
		}
		named := "+" + ms(oc.fo.Named).String()
		if oc.again {
			named += " (failed over again)"
		}
		lostAfter := fmt.Sprint(f.LostAfter)
		if f.LostAfter > 0 {
			lostAfter += " (" + lostRange(f) + ")"
		}
		promo := fmt.Sprint(f.LostAfterPromotion)
		if f.LostAfterPromotion < 0 {
			promo = "?"
		}
		row(oc.scenario, oc.client, fmt.Sprint(oc.round), named, "+"+ms(oc.fo.Settled).String(),
			fmt.Sprintf("%v (%s)", ms(f.Window), signed(f.WindowFrom)), fmt.Sprintf("%v (%s)", ms(f.Durable), signed(f.DurableFrom)),
			fmt.Sprint(f.Writes), fmt.Sprint(f.Failed), strings.Join(classes, ", "), fmt.Sprint(f.Acked),
			fmt.Sprint(f.LostBefore), lostAfter, promo, fmt.Sprint(oc.dbsize), strings.Join(evs, " / "),
			ms(oc.settleGap).String(), oc.runTime.Round(100*time.Millisecond).String())
	}
	p("\n</details>\n")
}

func (r *report) writeMethod(w io.Writer) {
	o := r.opts
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	p("## Method\n\n")
	p("- **Runs.** For each of %d round(s), each scenario (%s) and each client (%s; the order rotates by one every round), "+
		"a fresh Sentinel group, a client connected through its sentinels, and the load below. One run at a time.\n",
		o.rounds, strings.Join(o.scenarios, ", "), strings.Join(clientList(o.clients), ", "))
	p("- **Group.** `testbed.StartSentinel` with its defaults (see above). The test bed speeds the sentinels up " +
		"(`SENTINEL DEBUG`, as `testbed/sentinel.go` documents): INFO to the nodes every 1 s instead of 10 s, hello " +
		"messages every 0.5 s instead of 2 s, ping every 0.25 s instead of 1 s. So a demoted old primary is reconfigured " +
		"after about 2 s instead of 8-20 s, and failovers are faster than with production settings.\n")
	p("- **Load.** %d goroutines, each issuing `SET <client>:<round>:<g>:<i> <the same string>` (a new key every call) "+
		"every %v, so about %.0f writes/s: paced, so that replication keeps up and what is lost can be attributed. A call "+
		"slower than the pace is followed by the next at once, with no catching up. Every call has a %v context deadline; "+
		"there is no retry in the load (what a client retries by itself is its own). For each call the bench records when "+
		"its result came and its error.\n",
		o.goroutines, o.pace, float64(o.goroutines)/o.pace.Seconds(), o.deadline)
	p("- **Fault.** After %v of load, the bench waits for the group to be settled (`Settle`), then calls the test "+
		"bed's `KillPrimary` (scenario kill: SIGKILL) or `Failover` (scenario manual: `SENTINEL FAILOVER` to one sentinel; "+
		"the old primary stays up, and the sentinels demote it). These check once more that the group is settled, start "+
		"their clock right before the SIGKILL or the SENTINEL FAILOVER, and return when the group has settled again, "+
		"with `Settled` the time since that instant: so the fault's instant is the return time minus `Settled` "+
		"(monotonic clock). The load goes on until %v after the return, then stops; calls in flight finish.\n",
		o.before, o.after)
	p("- **Window.** The longest interval with no successful write: between two consecutive acknowledgements (of any " +
		"goroutine, by the time the result came), or from the last one to the end of the load. The *kept-only* window " +
		"counts only the acknowledged writes the final primary holds, so that acknowledgements from a server about to be " +
		"demoted do not close it.\n")
	p("- **Failed calls.** Any error: *timeout* (the deadline, or a socket timeout), *connection* (lost, refused, " +
		"closed; for zipline also `ErrNotConnected`, no primary to send to), *READONLY* (a demoted primary refused the " +
		"write), *other*. The finer classes are in the per-run table. The count is of calls, and the load is paced: " +
		"a client that fails at once fails about once per pace per goroutine while it has no primary, one that " +
		"retries or waits inside the call fails less often or not at all.\n")
	p("- **Acknowledged writes lost.** After the load, the bench waits for the group to settle, asks the test bed for " +
		"the primary, and reads every acknowledged key back from it on a plain go-redis connection to its address (not " +
		"through the client under test), with MGET of 1,000 keys at a time; a key missing (or holding another value) is " +
		"a lost write. They are split by the time the acknowledgement came: *before the fault* are what the asynchronous " +
		"replication loses (the primary acknowledged them and died or was replaced before its replica had them: the " +
		"server's own loss, which no client can avoid without WAIT); *after the fault* are the client's: it wrote to a " +
		"server that was no longer going to be the primary. Of those, *after the promotion began* counts the ones " +
		"acknowledged after a sentinel told the chosen replica `REPLICAOF NO ONE` (`+failover-state-send-slaveof-noone`, " +
		"as the bench's own subscription to every sentinel heard it): from then on the old primary's writes cannot reach " +
		"the new one, whatever the replication lag. Between the fault and that instant, in the manual scenario, the old " +
		"primary is still the legitimate primary and its replicas still follow it, so a loss there is replication lag " +
		"again. After a SIGKILL nothing can be acknowledged by the dead server except replies already in the socket " +
		"buffers, which come within a millisecond; the per-run table gives the acknowledgement times of the lost ones.\n")
	p("- **Goal** (issue 33): a shorter window and fewer failed calls than each peer, and 0 acknowledged writes lost " +
		"beyond what the server's replication loses, that is none acknowledged after the fault.\n")
}

// writeGoal says, for a scenario, whether zipline met the goal
// against each peer, on the medians.
func (r *report) writeGoal(w io.Writer, sc string) {
	zl := r.runs("zipline", sc)
	if len(zl) == 0 {
		return
	}
	med := func(ocs []outcome, f func(outcome) float64) float64 {
		var v []float64
		for _, oc := range ocs {
			v = append(v, f(oc))
		}
		return harness.Median(v)
	}
	window := func(oc outcome) float64 { return oc.fig.Window.Seconds() }
	failed := func(oc outcome) float64 { return float64(oc.fig.Failed) }
	kept := func(oc outcome) float64 { return oc.fig.Durable.Seconds() }
	lostAfter := func(oc outcome) float64 { return float64(oc.fig.LostAfter) }
	fmt.Fprintf(w, "\nGoal, on the medians:\n\n")
	for _, c := range r.opts.clients {
		if c.name == "zipline" {
			continue
		}
		peer := r.runs(c.name, sc)
		if len(peer) == 0 {
			continue
		}
		zw, pw, zf, pf := med(zl, window), med(peer, window), med(zl, failed), med(peer, failed)
		zk, pk := med(zl, kept), med(peer, kept)
		fmt.Fprintf(w, "- against %s: window %.3f s vs %.3f s %s; kept-only window %.3f s vs %.3f s %s; failed calls %.0f vs %.0f %s",
			c.name, zw, pw, mark(zw < pw), zk, pk, mark(zk < pk), zf, pf, fewer(zf, pf))
		if lost := med(peer, lostAfter); lost > 0 && pw < pk {
			fmt.Fprintf(w, " (%s's window is closed by acknowledgements it then lost: %s acknowledged writes lost after the fault, median)",
				c.name, trim(lost))
		}
		fmt.Fprintln(w)
	}
	after, runs := 0, 0
	for _, oc := range zl {
		after += oc.fig.LostAfter
		runs++
	}
	fmt.Fprintf(w, "- zipline's acknowledged writes lost after the fault: %d over %d runs %s\n", after, runs, mark(after == 0))
}

// fewer marks whether zipline's count a is below the peer's b; a tie at
// zero is neither a win nor a miss.
func fewer(a, b float64) string {
	if a == 0 && b == 0 {
		return "= (none failed on either side)"
	}
	return mark(a < b)
}

func mark(ok bool) string {
	if ok {
		return "✓"
	}
	return "✗"
}

// runs returns the successful runs of client in scenario sc.
func (r *report) runs(client, sc string) []outcome {
	var out []outcome
	for _, oc := range r.outcomes {
		if oc.client == client && oc.scenario == sc && oc.err == nil {
			out = append(out, oc)
		}
	}
	return out
}

func (r *report) failures(sc string) []outcome {
	var out []outcome
	for _, oc := range r.outcomes {
		if oc.scenario == sc && oc.err != nil {
			out = append(out, oc)
		}
	}
	return out
}

// colors are the clients' colours, by -clients order.
var colors = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"}

// chart draws round 1: per scenario, writes acknowledged and kept, calls
// failed, and writes acknowledged but lost, per bucket, a line per client.
func (r *report) chart() chart.Timeline {
	c := chart.Timeline{
		Title: fmt.Sprintf("Sentinel failover under %d goroutines × 1 SET per %v (%s), round 1", r.opts.goroutines,
			r.opts.pace, r.server),
		XLabel: "seconds from the fault (calls by the time their result came, " + chartBucket.String() + " buckets)",
		Marks:  []chart.Mark{{X: 0, Label: "fault: SIGKILL / SENTINEL FAILOVER", Color: "black"}},
	}
	for x := chartLo; x < chartHi; x += chartBucket {
		c.X = append(c.X, x.Seconds())
	}
	for _, sc := range r.opts.scenarios {
		panels := []chart.TimelinePanel{{YLabel: sc + ": acknowledged, kept"}, {YLabel: sc + ": failed calls"},
			{YLabel: sc + ": acknowledged, lost"}}
		for i, cl := range r.opts.clients {
			var oc *outcome
			for j := range r.outcomes {
				if o := &r.outcomes[j]; o.round == 1 && o.scenario == sc && o.client == cl.name && o.err == nil {
					oc = o
				}
			}
			values := [][]float64{nans(len(c.X)), nans(len(c.X)), nans(len(c.X))}
			if oc != nil {
				values = [][]float64{oc.kept, oc.failed, oc.lost}
			}
			for pi, v := range values {
				panels[pi].Series = append(panels[pi].Series, chart.Series{Name: cl.name, Color: colors[i%len(colors)], Values: v})
			}
		}
		c.Panels = append(c.Panels, panels...)
	}
	return c
}

// secs formats a median of seconds with the range.
func secs(v []float64) string {
	return fmt.Sprintf("%.3f s (%.3f–%.3f)", harness.Median(v), slices.Min(v), slices.Max(v))
}

// count formats a median of counts with the range.
func count(v []float64) string {
	if slices.Min(v) == slices.Max(v) {
		return fmt.Sprintf("%.0f", v[0])
	}
	return fmt.Sprintf("%s (%.0f–%.0f)", trim(harness.Median(v)), slices.Min(v), slices.Max(v))
}

func trim(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

// lostRange gives when the first and last writes lost after the fault were
// acknowledged.
func lostRange(f figures) string {
	if f.LostAfter == 0 {
		return "–"
	}
	return fmt.Sprintf("acked %s…%s", signed(f.FirstLostAfter), signed(f.LastLostAfter))
}

func clientList(cs []clientDef) []string {
	var n []string
	for _, c := range cs {
		n = append(n, c.name)
	}
	return n
}

// moduleVersions maps the modules linked in to their versions (bench/go.mod's).
func moduleVersions() map[string]string {
	out := map[string]string{}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return out
	}
	for _, d := range bi.Deps {
		v := d.Version
		if d.Replace != nil {
			v = "this checkout (" + d.Replace.Path + ")"
		}
		out[d.Path] = v
	}
	return out
}

func baseName(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// nans returns n NaNs: no value, a gap in the line.
func nans(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = math.NaN()
	}
	return v
}

// signed prints d rounded, with its sign.
func signed(d time.Duration) string {
	if d >= 0 {
		return "+" + ms(d).String()
	}
	return ms(d).String()
}
