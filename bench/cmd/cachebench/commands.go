package main

import (
	"context"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/bench"
)

// commandCounter reads what the server ran, by command, from INFO
// commandstats, on a connection of its own.
type commandCounter struct{ c *zipline.Client }

func newCommandCounter(addr string) (*commandCounter, error) {
	c, err := zipline.New(zipline.Options{Addr: addr, Logger: quiet})
	if err != nil {
		return nil, err
	}
	return &commandCounter{c: c}, nil
}

func (cc *commandCounter) Close() error { return cc.c.Close() }

// snapshot returns the server's calls so far.
func (cc *commandCounter) snapshot(ctx context.Context) (bench.CommandCalls, error) {
	info, err := cc.c.Info(ctx, "commandstats")
	if err != nil {
		return nil, err
	}
	return bench.ParseCommandStats(info)
}

// notCounted are left out of what ran: the counting itself (INFO) and
// health checks (PING).
var notCounted = map[string]bool{"info": true, "ping": true}
