package zipline

import (
	"context"
	"math/rand/v2"
	"slices"
	"time"
)

// When a primary fails, its slots can be served again from the moment the
// cluster promotes one of its replicas. The nodes' own accounts of the
// topology say so within milliseconds, but the router asks each node for
// them at most once per minQueryInterval, so calls on the shard waited for
// the next allowed query: 0.7-1.0 s after the promotion in
// bench/cmd/failoverbench, where rueidis took 0.3 s. The replica being
// promoted knows first, and asking it costs little: while a shard's
// primary cannot be reached, its replicas are asked ROLE, a reply of a few
// bytes about the node alone (no topology), every failoverProbeInterval.
// The one that answers as a primary gets the shard at once, and the next
// refresh confirms it with the nodes' agreement.

// failoverProbeInterval is how often, while a shard has no reachable
// primary, each of its replicas is asked for its role (give or take a
// quarter, so that many clients do not ask in step), on a cluster of up to
// probeGroup nodes. Every client of a fleet asks the same replicas, so on
// a larger one the interval grows with the cluster (and the fleet), by
// failoverProbeInterval per probeGroup nodes, up to
// maxFailoverProbeInterval: a second is little beside the node timeout a
// large cluster runs with (15 s by default) before it fails over at all.
// Each probe of that interval is time the shard stays unserved after its
// promotion: at 100 ms per eight nodes (600 ms on 48 primaries), 94 of 200
// clients still failed a read in the 570 ms after the cluster had settled
// (bench/cmd/stormbench); a ROLE costs a node about a microsecond, so the
// 1,000 a second that 200 clients send at 300 ms cost it a tenth of a
// percent.
const (
	failoverProbeInterval    = 100 * time.Millisecond
	maxFailoverProbeInterval = time.Second
	probeGroup               = 16
)

// failoverProbeEvery returns the interval between failover probes for a
// client that can ask n nodes.
func failoverProbeEvery(n int) time.Duration {
	return min(failoverProbeInterval*time.Duration(max(1, n/probeGroup)), maxFailoverProbeInterval)
}

// watchFailovers is the goroutine that probes the replicas of shards
// whose primary is unreachable. It sleeps until a caller asks for a
// refresh (a lost connection, a slot nobody serves), then probes every
// failoverProbeInterval for as long as some shard has no reachable
// primary.
func (c *cluster) watchFailovers() {
	defer c.wg.Done()
	t := time.NewTimer(time.Hour)
	t.Stop()
	for {
		select {
		case <-c.life.Done():
			return
		case <-c.suspect:
		}
		probed := false
		for shards := c.headless(); len(shards) > 0; shards = c.headless() {
			probed = true
			c.probeShards(shards)
			every := failoverProbeEvery(c.queryable())
			t.Reset(every*3/4 + rand.N(every/2))
			select {
			case <-c.life.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
		if probed {
			// Replicas dialled only to be asked, whose primary came back
			// instead, are not kept.
			c.mu.Lock()
			gone := c.unusedLocked()
			c.mu.Unlock()
			c.closeNodes(gone)
		}
	}
}

// headless returns the shards of the current shard map that have replicas but
// no primary this client can reach: none named (the cluster marked it
// failed), or its connection down.
func (c *cluster) headless() []mapShard {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.current == nil || c.life.Err() != nil {
		return nil
	}
	var out []mapShard
	for _, s := range c.current.shards {
		if len(s.replicas) == 0 {
			continue
		}
		if n := c.nodes[s.primary]; s.primary != "" && n.up() {
			continue
		}
		out = append(out, s)
	}
	return out
}

// probeShards asks each shard's replicas for their role, and hands the
// shard to the first that answers as a primary.
func (c *cluster) probeShards(shards []mapShard) {
	ctx, cancel := context.WithTimeout(c.life, c.s.opts.DialTimeout)
	defer cancel()
	for _, s := range shards {
		for _, addr := range s.replicas {
			n, err := c.node(ctx, addr)
			if err != nil {
				continue
			}
			if v, err := c.s.nodeDo(ctx, n, "ROLE"); err != nil || !answersAsPrimary(v) {
				continue
			}
			if err := c.promote(ctx, s, addr); err != nil && c.life.Err() == nil {
				c.s.opts.Logger.Debug("zipline: cluster failover: moving a shard to its new primary failed", "addr", addr, "err", err)
			}
			c.askRefresh() // for the nodes' own account, beyond this shard
			break
		}
	}
}

// promote installs the current shard map with shard s served by its replica at
// addr: what the nodes report once they have heard of the promotion, so
// the next refresh finds the same shard map and changes nothing. Nothing is
// done if the shard map no longer has s.
func (c *cluster) promote(ctx context.Context, s mapShard, addr string) error {
	c.mu.Lock()
	cur := c.current
	c.mu.Unlock()
	if cur == nil {
		return nil
	}
	next := &shardMap{shards: make([]mapShard, 0, len(cur.shards)), zones: cur.zones}
	found := false
	for _, sh := range cur.shards {
		// Installed shard maps are never modified: the copy gets its own
		// slices, which normalise sorts.
		sh = mapShard{ranges: slices.Clone(sh.ranges), primary: sh.primary, replicas: slices.Clone(sh.replicas)}
		if !found && sh.primary == s.primary && slices.Equal(sh.ranges, s.ranges) {
			found = true
			sh.primary = addr
			sh.replicas = slices.DeleteFunc(sh.replicas, func(a string) bool { return a == addr })
		}
		next.shards = append(next.shards, sh)
	}
	if !found {
		return nil
	}
	next.normalise()
	return c.install(ctx, next)
}
