package bench

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// CommandCalls is what a server ran, as calls per command by INFO
// commandstats name ("get", "client|caching", "multi", ...): the cost of a
// cached read in server commands, which cachebench and cscbench count.
type CommandCalls map[string]uint64

// ParseCommandStats reads an INFO commandstats section, as a Client's (or a
// testbed Server's) Info returns it.
func ParseCommandStats(info map[string]string) (CommandCalls, error) {
	m := CommandCalls{}
	for k, v := range info {
		name, ok := strings.CutPrefix(k, "cmdstat_")
		if !ok {
			continue
		}
		calls, _, _ := strings.Cut(strings.TrimPrefix(v, "calls="), ",")
		n, err := strconv.ParseUint(calls, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("INFO commandstats %s: %q", k, v)
		}
		m[name] = n
	}
	return m, nil
}

// Since is what ran between before and m, leaving out the commands skip
// names (the counting itself, INFO; health checks, PING; set-up).
func (m CommandCalls) Since(before CommandCalls, skip map[string]bool) CommandCalls {
	d := CommandCalls{}
	for name, n := range m {
		if skip[name] || n <= before[name] {
			continue
		}
		d[name] = n - before[name]
	}
	return d
}

// Add adds o's calls to m, which it returns (made if nil).
func (m CommandCalls) Add(o CommandCalls) CommandCalls {
	if m == nil {
		m = CommandCalls{}
	}
	for name, n := range o {
		m[name] += n
	}
	return m
}

// Total is the calls of every command.
func (m CommandCalls) Total() (n uint64) {
	for _, c := range m {
		n += c
	}
	return n
}

// Per formats the calls per read, most frequent first, each with prec
// decimals (-1: as few as needed): "GET 1, CLIENT CACHING 0.5", or "none".
func (m CommandCalls) Per(reads uint64, prec int) string {
	if len(m) == 0 {
		return "none"
	}
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int { return cmp.Or(cmp.Compare(m[b], m[a]), strings.Compare(a, b)) })
	var parts []string
	for _, name := range names {
		// "client|caching" is CLIENT CACHING (and a | would end a table cell).
		parts = append(parts, strings.ToUpper(strings.ReplaceAll(name, "|", " "))+" "+PerRead(m[name], reads, prec))
	}
	return strings.Join(parts, ", ")
}

// PerRead formats n calls over reads reads with prec decimals (-1: as few
// as needed).
func PerRead(n, reads uint64, prec int) string {
	return strconv.FormatFloat(float64(n)/float64(max(reads, 1)), 'f', prec, 64)
}
