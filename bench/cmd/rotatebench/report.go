package main

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/ziplinekv/zipline/bench/setget"

	"github.com/ziplinekv/zipline/bench/harness"
)

// report is everything one rotatebench invocation produced.
type report struct {
	session  *harness.Session // the command line, the machine at the end
	opts     *options
	env      []string // harness.Environment at the start
	server   string
	outcomes []outcome
}

func (r *report) write(w io.Writer) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	row := func(cells ...string) { p("| %s |\n", strings.Join(cells, " | ")) }
	o := r.opts
	h := harness.Header{
		Title:   "Credential rotation and certificate renewal under load",
		Command: r.session.Command,
		Settings: fmt.Sprintf("%d round(s), interleaved; per run a fresh %s on loopback (persistence off), %d goroutines each "+
			"SETting its next key (of %d) to a sequence number and GETting it back, every call with a %v deadline and %v "+
			"of pause after a failure, %v of warm-up; then %d credential rotations or %d certificate renewals, one every %v",
			o.rounds, o.kind, o.load.Callers, o.load.Keys, o.load.CallTimeout, o.load.RetryPause, warmup, o.rotations,
			o.renewals, o.every),
		Env: append(slices.Clone(r.env), "server: "+r.server, "machine at end: "+r.session.MachineAfter),
	}
	for _, d := range o.clients {
		h.Clients = append(h.Clients, harness.Client{Name: d.label, Desc: d.desc})
	}
	h.Write(w)
	p("\nA *rotation* makes a new ACL user (`ACL SETUSER appN on >password ~* &* +@all`, a random password), has the "+
		"provider return it, polls CLIENT LIST (every 20 ms, for at most %v) until every connection named %q is "+
		"authenticated as it, then deletes the previous user (`ACL DELUSER`), which disconnects any connection still "+
		"authenticated as that one. A *renewal* (mutual TLS) gives the server a new certificate from its CA (`CONFIG SET "+
		"tls-cert-file tls-key-file`) and the client a new one, returned by `tls.Config.GetClientCertificate` from then "+
		"on; both clients get the same `tls.Config` (RootCAs, MinVersion TLS 1.2, GetClientCertificate), and nothing "+
		"forces a new handshake.\n\n", o.authWait, clientName)
	p("Everything is counted from the first rotation or renewal until %v after the last ended (and at least %v after it began). Before each rotation the bench waits "+
		"(bounded poll, at most the same %v) until the client has as many connections as when the rotations began. "+
		"*In place*: rotations after which every connection open before it was still open and the new user when the "+
		"previous one was deleted; *stale*: connections still the previous "+
		"user when it was deleted (summed over a run's rotations); *switch*: from the provider's change until every "+
		"connection was the new user, over all rotations of all runs, median (worst; *never* = not within %v). "+
		"*Reconnects*: connections the server accepted (INFO stats total_connections_received, after less before) less "+
		"the bench's own (one per admin command): every connection the client opened, to replace one or to grow; "+
		"*conns*: the client's connections in CLIENT LIST when the rotations or renewals began → at the end; *closed*: "+
		"conns at the start + reconnects − conns at the end, the connections the client lost or closed; *TLS handshakes*: calls of GetClientCertificate. *Window* is the longest time without any successful "+
		"call (to %v); *wrong*, GETs that did not return the value just set. Errors are classified by "+
		"`failover.Classify` (never their text). zipline has no push: it takes new credentials at its next renewal, due "+
		"at four fifths of their life and at least 1 s before its end, so with -expires %v every %v, which bounds its "+
		"switch; go-redis's streaming provider pushes them to its connections at once.\n\n",
		tail, o.every+tail, o.authWait, o.authWait, setget.Tick, o.expires, renewEvery(o.expires))
	for _, sc := range o.scenarios {
		p("## %s\n\nMedians over the runs, (min–max) beside them.\n\n", sc)
		head := []string{"client", "runs", "rotations", "in place", "stale", "switch", "calls ok", "failed", "reconnects",
			"closed", "conns", "kops/s", "window", "wrong", "errors (all runs)"}
		if sc == "certificates" {
			head = []string{"client", "runs", "renewals", "calls ok", "failed", "reconnects", "closed", "TLS handshakes", "conns",
				"kops/s", "window", "wrong", "errors (all runs)"}
		}
		row(head...)
		align := []string{"---"}
		for range head[1 : len(head)-1] {
			align = append(align, "--:")
		}
		row(append(align, "---")...)
		for _, d := range o.clients {
			if !d.applies(sc) {
				continue
			}
			var figs []figures
			var fails []string
			for _, oc := range r.outcomes {
				if oc.scenario != sc || oc.client.name != d.name {
					continue
				}
				if oc.err != nil {
					fails = append(fails, cell(oc.err.Error()))
					continue
				}
				figs = append(figs, oc.fig)
			}
			if len(figs) == 0 {
				cells := make([]string, len(head))
				cells[0], cells[1], cells[2] = d.label, "0", "FAIL: "+strings.Join(fails, "; ")
				row(cells...)
				continue
			}
			ints := func(get func(figures) int) string {
				return harness.MedianRange(figs, func(f figures) float64 { return float64(get(f)) }, "%.0f")
			}
			runs := fmt.Sprint(len(figs))
			if len(fails) > 0 {
				runs += fmt.Sprintf(" (+%d failed: %s)", len(fails), strings.Join(fails, "; "))
			}
			calls := []string{
				ints(func(f figures) int { return f.OK }), ints(func(f figures) int { return f.Failed }),
				ints(func(f figures) int { return f.Reconnects }), ints(func(f figures) int { return f.Closed }),
			}
			rest := []string{
				ints(func(f figures) int { return f.Conns }) + " → " + ints(func(f figures) int { return f.ConnsEnd }),
				harness.MedianRange(figs, func(f figures) float64 { return f.OpsPerSec / 1000 }, "%.1f"),
				harness.MedianRange(figs, func(f figures) float64 { return f.Window.Seconds() }, "%.2f s"),
				ints(func(f figures) int { return f.Wrong }), errorClasses(figs),
			}
			if sc == "certificates" {
				row(slices.Concat([]string{d.label, runs, ints(func(f figures) int { return f.Steps })}, calls,
					[]string{ints(func(f figures) int { return f.Handshakes })}, rest)...)
				continue
			}
			var sw []time.Duration
			for _, f := range figs {
				sw = append(sw, f.Switch...)
			}
			row(slices.Concat([]string{d.label, runs, ints(func(f figures) int { return f.Steps }),
				ints(func(f figures) int { return f.InPlace }), ints(func(f figures) int { return f.Stale }),
				fmt.Sprintf("%s (%s)", switchTime(medianSwitch(sw)), switchTime(worstSwitch(sw)))}, calls, rest)...)
		}
		p("\n")
	}
	p("## Every run\n\n")
	row("scenario", "round", "client", "steps", "in place", "stale", "switch, median", "calls ok", "failed", "reconnects",
		"closed", "conns", "TLS handshakes", "kops/s", "window", "wrong", "errors")
	row("---", "--:", "---", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "---")
	for _, oc := range r.outcomes {
		if oc.err != nil {
			row(oc.scenario, fmt.Sprint(oc.round), oc.client.label, "FAIL: "+cell(oc.err.Error()), "", "", "", "", "", "", "", "", "", "", "", "", "")
			continue
		}
		f := oc.fig
		inPlace, stale, sw := "", "", ""
		if oc.scenario == "credentials" {
			inPlace, stale, sw = fmt.Sprint(f.InPlace), fmt.Sprint(f.Stale), switchTime(medianSwitch(f.Switch))
		}
		row(oc.scenario, fmt.Sprint(oc.round), oc.client.label, fmt.Sprint(f.Steps), inPlace, stale, sw, fmt.Sprint(f.OK),
			fmt.Sprint(f.Failed), fmt.Sprint(f.Reconnects), fmt.Sprint(f.Closed), fmt.Sprintf("%d → %d", f.Conns, f.ConnsEnd),
			fmt.Sprint(f.Handshakes),
			fmt.Sprintf("%.1f", f.OpsPerSec/1000), fmt.Sprintf("%.2f s", f.Window.Seconds()), fmt.Sprint(f.Wrong),
			errorClasses([]figures{f}))
	}
}

// renewEvery is how often zipline renews credentials that live life
// (credentials.go: at 4/5 of it, at least a second before its end).
func renewEvery(life time.Duration) time.Duration { return min(life*4/5, life-time.Second) }

// cell makes text fit in a table cell.
func cell(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "|", "/"), "\n", " ") }

// errorClasses sums the error classes over figs: "class n, ...".
func errorClasses(figs []figures) string {
	errs := map[string]int{}
	for _, f := range figs {
		for k, v := range f.Errors {
			errs[k] += v
		}
	}
	var classes []string
	for _, k := range slices.Sorted(maps.Keys(errs)) {
		classes = append(classes, fmt.Sprintf("%s %d", cell(k), errs[k]))
	}
	return strings.Join(classes, ", ")
}

// switchTime prints a rotation's switch; -1 means not within -auth-wait.
func switchTime(d time.Duration) string {
	if d < 0 {
		return "never"
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}

// switchOrder sorts switch times with "never" (-1) after every other.
func switchOrder(a, b time.Duration) int {
	rank := func(d time.Duration) time.Duration {
		if d < 0 {
			return math.MaxInt64
		}
		return d
	}
	return cmp.Compare(rank(a), rank(b))
}

// medianSwitch is the median of switch times, "never" (-1) ranking last.
func medianSwitch(v []time.Duration) time.Duration {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.SortFunc(s, switchOrder)
	return s[len(s)/2]
}

// worstSwitch is the slowest switch, -1 if one never came.
func worstSwitch(v []time.Duration) time.Duration {
	if len(v) == 0 {
		return 0
	}
	return slices.MaxFunc(v, switchOrder)
}
