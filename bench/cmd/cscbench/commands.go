package main

import (
	"context"
	"fmt"

	"github.com/ziplinekv/zipline/bench"
	"github.com/ziplinekv/zipline/testbed"
)

// commandCount is what one cached read costs the server, for one client:
// the commands the server ran while a fresh client read every key once
// (each read a miss) and then again (each read a hit).
type commandCount struct {
	client       string
	misses, hits bench.CommandCalls
	reads        uint64 // per pass
	reported     uint64 // misses the client reported during the first pass
	failed       string
}

func commandSnapshot(s *testbed.Server) (bench.CommandCalls, error) {
	info, err := s.Info(context.Background(), "commandstats")
	if err != nil {
		return nil, err
	}
	return bench.ParseCommandStats(info)
}

// notPerRead are the commands that are not a read's cost: the counting
// itself (INFO), health checks (PING) and connection set-up (a client may
// open a connection on first use of it, after the read cscbench makes to
// connect).
var notPerRead = map[string]bool{"info": true, "ping": true, "hello": true, "client|tracking": true,
	"client|setinfo": true, "client|setname": true, "auth": true, "select": true}

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
	cc = commandCount{client: c.name, reads: uint64(len(bench.Keys))}
	cl, err := c.open(s.Addr)
	if err != nil {
		cc.failed = "connect: " + err.Error()
		return cc
	}
	defer cl.close()
	ctx := context.Background()
	cl.get(ctx, "cscbench:connect") // missing: its error is expected
	var snaps [3]bench.CommandCalls
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
	cc.misses, cc.hits, cc.reported = snaps[1].Since(snaps[0], notPerRead), snaps[2].Since(snaps[1], notPerRead), reported
	return cc
}

func (cc commandCount) line() string {
	if cc.failed != "" {
		return fmt.Sprintf("commands %-24s FAIL %s", cc.client, cc.failed)
	}
	return fmt.Sprintf("commands %-24s per miss %s (%s), per hit %s", cc.client, bench.PerRead(cc.misses.Total(), cc.reads, -1),
		cc.misses.Per(cc.reads, -1), bench.PerRead(cc.hits.Total(), cc.reads, -1))
}
