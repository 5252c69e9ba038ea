package main

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/ziplinekv/zipline/bench/harness"
	"github.com/ziplinekv/zipline/cmd/zipline/bench/sysstat"
)

// report is everything one stormbench invocation produced.
type report struct {
	command string
	opts    *options
	env     []string // harness.Environment at the start, without the server
	server  string
	results []*kindResult
}

func (r *report) write(w io.Writer) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	o := r.opts
	h := harness.Header{
		Title:   fmt.Sprintf("Topology-refresh storm: %d clients in one process, %d primaries", o.n, o.primaries),
		Command: r.command,
		Settings: fmt.Sprintf("%d clients of each kind; for each kind a fresh cluster of %d primaries with one replica each "+
			"(cluster-node-timeout 1 s); idle phase %v", o.n, o.primaries, o.idle),
		Env: append(slices.Clone(r.env), "machine at the end: "+sysstat.Machine(), "server: "+r.server),
	}
	for _, k := range o.kinds {
		h.Clients = append(h.Clients, harness.Client{Name: k.name, Desc: k.desc})
	}
	h.Write(w)
	p("\nPhases, each client kind on its own fresh cluster: *open*, the %d clients opened together, client i seeded "+
		"with node i %% %d only, each SETting %q once, sampled until %v after the last SET; *idle*, %v of nothing; "+
		"*slot move*, every client GETting the key in a loop (%v deadline, %v between GETs) while its slot moves to "+
		"another primary as redis-cli moves one (SETSLOT IMPORTING, MIGRATING, MIGRATE of its keys, SETSLOT NODE on the "+
		"target, the source, every other primary), sampled until %v after the move; *failover*, the new owner killed "+
		"(SIGKILL), the readers going on, sampled until %v after its replica was promoted and every running node "+
		"reported cluster_state:ok, every slot ok and the key's slot on the promoted replica; *until recovered*, "+
		"the readers going on until every client's latest GET succeeded, for at most %v (not a phase of the brief: "+
		"it tells whether and when every client read again).\n\n",
		o.n, 2*o.primaries, key, openTail, o.idle, getTimeout, readerPause, after, after, recoveryBound)
	p("Once a second every node's INFO commandstats is read, and the per-node deltas of the calls of CLUSTER SHARDS, " +
		"CLUSTER SLOTS and CLUSTER NODES (*topology*) and of ROLE and INFO (*probes*) are charged to the phase current " +
		"at the end of the interval. The benchmark's own commands of those names (the sampling's INFO, the ROLE polls " +
		"that find the promoted replica, one INFO clients per node after the idle phase) are counted as they are sent, " +
		"serialised with the node's sampling, and subtracted: the figures are the clients'. *Max/node/s* is the most " +
		"one node answered in one sample interval, nominally 1 s: when that interval was longer than 1.2 s (the " +
		"machine overloaded, the samples late) it is given beside the count, and *longest interval* is the phase's " +
		"longest. *Node-s > 5* counts node-intervals with more than 5 topology queries. *Failed* counts GETs that returned an error (or a " +
		"wrong value); *last 5 s* the failed GETs that ended after the move, or the settled failover, and how many " +
		"clients had one.\n\n")
	row := func(cells ...string) { p("| %s |\n", strings.Join(cells, " | ")) }
	row("client", "phase", "s", "longest interval", "topology max/node/s", "node-s > 5", "topology total", "SHARDS / SLOTS / NODES",
		"ROLE max/node/s", "ROLE total", "INFO max/node/s", "INFO total", "GETs", "failed", "failed in last 5 s (clients)")
	row("---", "---", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:")
	for _, res := range r.results {
		for _, ph := range res.phases {
			if ph.samples == 0 && ph.dur == 0 {
				continue // not reached
			}
			gets, failed, tail := "–", "–", "–"
			if ph.readers {
				gets, failed = fmt.Sprint(ph.gets), fmt.Sprint(ph.failed)
				if ph.tailed {
					tail = fmt.Sprintf("%d (%d)", ph.tailFailed, ph.tailClients)
				}
			}
			row(res.kind, ph.name, fmt.Sprintf("%.1f", ph.dur.Seconds()), fmt.Sprintf("%.1f s", ph.maxInterval.Seconds()),
				perInterval(ph.topoMax, ph.topoMaxIn), fmt.Sprint(ph.topoOver),
				fmt.Sprint(ph.topoTotal()),
				fmt.Sprintf("%d / %d / %d", ph.topo["cluster|shards"], ph.topo["cluster|slots"], ph.topo["cluster|nodes"]),
				perInterval(ph.roleMax, ph.roleMaxIn), fmt.Sprint(ph.probes["role"]), perInterval(ph.infoMax, ph.infoMaxIn),
				fmt.Sprint(ph.probes["info"]),
				gets, failed, tail)
		}
		if res.err != nil {
			row(res.kind, "**FAIL**", "", "", strings.ReplaceAll(firstLine(res.err), "|", "/"), "", "", "", "", "", "", "", "", "", "")
		}
	}
	p("\n## Notes\n")
	for _, res := range r.results {
		p("\n%s:\n\n", res.kind)
		for _, n := range res.notes {
			p("- %s\n", n)
		}
		for _, ph := range res.phases {
			if ph.topoMax > 0 {
				p("- %s: the most topology queries in one interval were on %s\n", ph.name, ph.topoMaxAddr)
			}
			if ph.failedEndingClients > 0 {
				p("- %s: **%d clients' last GET of the phase failed**\n", ph.name, ph.failedEndingClients)
			}
			if len(ph.errs) > 0 {
				p("- %s: GET errors (digits as N): %s\n", ph.name, topErrors(ph.errs, 5))
			}
		}
		if res.err != nil {
			p("- **run failed**: %s\n", strings.ReplaceAll(res.err.Error(), "\n", " "))
		}
	}
}

// perInterval formats the most calls in one sample interval, with the
// interval when it was well over the nominal second.
func perInterval(n uint64, in time.Duration) string {
	if n > 0 && in > 1200*time.Millisecond {
		return fmt.Sprintf("%d (in %.1f s)", n, in.Seconds())
	}
	return fmt.Sprint(n)
}

// topErrors lists the n commonest error classes with their counts.
func topErrors(errs map[string]int, n int) string {
	classes := slices.SortedFunc(maps.Keys(errs), func(a, b string) int { return cmp.Or(cmp.Compare(errs[b], errs[a]), strings.Compare(a, b)) })
	var parts []string
	for i, c := range classes {
		if i == n {
			parts = append(parts, fmt.Sprintf("and %d more classes", len(classes)-n))
			break
		}
		parts = append(parts, fmt.Sprintf("%d × `%s`", errs[c], strings.ReplaceAll(c, "`", "'")))
	}
	return strings.Join(parts, "; ")
}
