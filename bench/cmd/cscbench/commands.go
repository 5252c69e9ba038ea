package main

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ziplinekv/zipline/bench"
	"github.com/ziplinekv/zipline/testbed"
)

// commandCount is what one cached read costs the server, for one client:
// the commands the server ran while a fresh client read every key once
// (each read a miss) and then again (each read a hit).
type commandCount struct {
	client       string
	misses, hits commandCalls
	reads        int    // per pass
	reported     uint64 // misses the client reported during the first pass
	failed       string
}

// commandCalls is calls per command, by INFO commandstats name ("get",
// "client|caching", "multi", ...).
type commandCalls map[string]uint64

func commandSnapshot(s *testbed.Server) (commandCalls, error) {
	info, err := s.Info(context.Background(), "commandstats")
	if err != nil {
		return nil, err
	}
	m := commandCalls{}
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

// since is what ran between before and m, leaving out the counting itself
// (INFO), health checks (PING) and connection set-up (a client may open a
// connection on first use of it, after the read cscbench makes to connect).
func (m commandCalls) since(before commandCalls) commandCalls {
	d := commandCalls{}
	for name, n := range m {
		if notPerRead[name] || n <= before[name] {
			continue
		}
		d[name] = n - before[name]
	}
	return d
}

// notPerRead are the commands that are not a read's cost.
var notPerRead = map[string]bool{"info": true, "ping": true, "hello": true, "client|tracking": true,
	"client|setinfo": true, "client|setname": true, "auth": true, "select": true}

func (m commandCalls) total() (n uint64) {
	for _, c := range m {
		n += c
	}
	return n
}

// per formats the calls per read, most frequent first: "CLIENT|CACHING 1,
// GET 1".
func (m commandCalls) per(reads int) string {
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
		parts = append(parts, strings.ToUpper(strings.ReplaceAll(name, "|", " "))+" "+perRead(m[name], reads))
	}
	return strings.Join(parts, ", ")
}

func perRead(n uint64, reads int) string {
	return strconv.FormatFloat(float64(n)/float64(max(reads, 1)), 'f', -1, 64)
}

// countCommands measures, for each client, the commands per miss and per
// hit on s: a fresh client reads a key outside the data set first (so that
// connecting, and any connection made on first use, is not counted), then
// every key once, then every key again. Nothing else uses the server
// meanwhile.
func countCommands(s *testbed.Server, cs []*client) []commandCount {
	var out []commandCount
	for _, c := range cs {
		out = append(out, countOne(s, c))
	}
	return out
}

func countOne(s *testbed.Server, c *client) (cc commandCount) {
	cc = commandCount{client: c.name, reads: len(bench.Keys)}
	cl, err := c.open(s.Addr)
	if err != nil {
		cc.failed = "connect: " + err.Error()
		return cc
	}
	defer cl.close()
	ctx := context.Background()
	cl.get(ctx, "cscbench:connect") // missing: its error is expected
	var snaps [3]commandCalls
	var reported uint64
	for pass := range 3 {
		if snaps[pass], err = commandSnapshot(s); err != nil {
			cc.failed = err.Error()
			return cc
		}
		if pass == 2 {
			break
		}
		before := cl.misses()
		for _, k := range bench.Keys {
			if n, err := cl.get(ctx, k); err != nil || n != valueSize {
				cc.failed = fmt.Sprintf("pass %d, %s: %d bytes, %v", pass+1, k, n, err)
				return cc
			}
		}
		if pass == 0 {
			reported = cl.misses() - before
		}
	}
	cc.misses, cc.hits, cc.reported = snaps[1].since(snaps[0]), snaps[2].since(snaps[1]), reported
	return cc
}

func (cc commandCount) line() string {
	if cc.failed != "" {
		return fmt.Sprintf("commands %-24s FAIL %s", cc.client, cc.failed)
	}
	return fmt.Sprintf("commands %-24s per miss %s (%s), per hit %s", cc.client, perRead(cc.misses.total(), cc.reads),
		cc.misses.per(cc.reads), perRead(cc.hits.total(), cc.reads))
}
