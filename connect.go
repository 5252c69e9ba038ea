package zipline

import (
	"context"
	"errors"
	"strings"

	"github.com/ziplinekv/zipline/internal/pipe"
)

// This file makes a Client's carrier: it reaches the servers and tells a
// cluster from one server. dial.go sets each connection up (dialing, TLS,
// HELLO, and what each kind of connection needs on every reconnect).

// connect reaches the first seed that answers and, unless Options.Cluster
// says otherwise, asks it whether it is part of a cluster: then the Client
// discovers the cluster from it; else it talks to that one server.
func (s *shared) connect(life context.Context) (carrier, error) {
	if s.opts.Sentinel.MasterName != "" {
		ctx, cancel := context.WithTimeout(life, s.opts.DialTimeout)
		defer cancel()
		k, err := newSentinel(ctx, s)
		if err != nil {
			return nil, err
		}
		s.server.Store(versionOf(k.view.Load().primary.pipe.Server()))
		return k, nil
	}
	seeds := s.opts.Addrs
	if len(seeds) == 0 {
		seeds = []string{s.opts.Addr}
	}
	var errs []error
	for _, addr := range seeds {
		ctx, cancel := context.WithTimeout(life, s.opts.DialTimeout)
		d, err := newDirect(ctx, s, addr)
		if err != nil {
			cancel()
			errs = append(errs, err)
			continue
		}
		mode := s.opts.Cluster
		if mode == ClusterAuto {
			mode = ClusterOff
			if clusterEnabled(ctx, d) {
				mode = ClusterOn
			}
		}
		s.server.Store(versionOf(d.pipe.Server()))
		if mode == ClusterOff {
			cancel()
			return d, nil
		}
		// A cluster's connections are set up differently (see
		// pipeOptions): start again with those.
		d.close()
		s.routing.Store(&serverCommands{})
		c, err := newCluster(ctx, s, addr, seeds)
		cancel()
		if err != nil {
			return nil, err
		}
		return c, nil
	}
	return nil, errors.Join(errs...)
}

// versionOf reads what a server said it is; a server of a kind the spec
// was not read from counts as unknown.
func versionOf(p pipe.Server) *serverVersion {
	switch p.Name {
	case "redis":
		return &serverVersion{kind: serverRedis, version: p.Version}
	case "valkey":
		return &serverVersion{kind: serverValkey, version: p.Version}
	}
	return &serverVersion{}
}

// clusterEnabled asks a server whether it is a cluster node. It is the
// Client's own set-up, so it goes straight to the connection, past hooks.
func clusterEnabled(ctx context.Context, d *direct) bool {
	c := d.pipe.NewCall()
	c.Buf = appendCommandStrings(c.Buf, "INFO", "cluster")
	c.N = 1
	if err := d.pipe.Do(ctx, c); err != nil {
		return false
	}
	defer c.Release()
	return strings.Contains(string(c.Reply(0).Bytes()), "cluster_enabled:1")
}
