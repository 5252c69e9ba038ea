package zipline

// This file is what the carriers of several servers share (the cluster,
// whose shards each have a primary and replicas, and Sentinel's group): a
// server reached by a direct carrier, its measured round trip, and how a
// read picks among a primary and its replicas (Options.ReadFrom).

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ziplinekv/zipline/internal/resp"
)

// node is one server of a cluster or of a Sentinel group.
type node struct {
	addr string
	*direct
	queried time.Time // last topology query (cluster); owned by the refresher
	rtt     atomic.Int64
}

// up reports whether the node's connection is live now: a replica that is
// down is passed over at once rather than tried and retried until the
// cluster (or Sentinel) marks it failed.
func (n *node) up() bool {
	return n != nil && n.pipe != nil && n.pipe.Connected()
}

// zone is the availability zone the node's server says it is in (Valkey
// 8's availability-zone, in HELLO), "" if it says none.
func (n *node) zone() string { return n.pipe.Server().AvailabilityZone }

// readTarget picks which of a primary and its replicas serves a read,
// under Options.ReadFrom. sticky is the replica ReadPreferReplica keeps
// (modulo their number), rr the counter the round-robin modes advance.
// The replicas are sorted by address, so a given sticky names the same
// replica from one refresh to the next. Replicas that are down are passed
// over; with none up, the primary serves.
func (s *shared) readTarget(primary *node, replicas []*node, sticky uint32, rr *atomic.Uint32) *node {
	if len(replicas) == 0 {
		return primary
	}
	switch s.opts.ReadFrom {
	case ReadPreferReplica:
		if n := replicaUp(replicas, sticky, ""); n != nil {
			return n
		}
	case ReadReplicaRoundRobin:
		if n := replicaUp(replicas, rr.Add(1), ""); n != nil {
			return n
		}
	case ReadLowestLatency:
		best := primary
		for _, n := range replicas {
			if n.up() && (best == nil || n.rtt.Load() < best.rtt.Load()) {
				best = n
			}
		}
		return best
	case ReadAZAffinity:
		from := rr.Add(1)
		if az := s.opts.AvailabilityZone; az != "" {
			if n := replicaUp(replicas, from, az); n != nil {
				return n
			}
		}
		if n := replicaUp(replicas, from, ""); n != nil {
			return n
		}
	}
	return primary
}

// replicaUp returns the first of replicas that has a live connection (and
// is in zone, unless zone is ""), counting from the one at index from
// (modulo their number), or nil if none has.
func replicaUp(replicas []*node, from uint32, zone string) *node {
	n := uint32(len(replicas))
	for i := range n {
		if nd := replicas[(from+i)%n]; nd.up() && (zone == "" || nd.zone() == zone) {
			return nd
		}
	}
	return nil
}

// latencyProbeInterval is how often ReadLowestLatency measures nodes.
const latencyProbeInterval = 2 * time.Second

// latencyProbes returns what ticks when a carrier's nodes are due to be
// measured (ReadLowestLatency: every latencyProbeInterval), or nil when
// nothing reads their round trips; stop releases the ticker.
func (s *shared) latencyProbes() (tick <-chan time.Time, stop func()) {
	if s.opts.ReadFrom != ReadLowestLatency {
		return nil, func() {}
	}
	t := time.NewTicker(latencyProbeInterval)
	return t.C, t.Stop
}

// retiredNodes keeps the counters of the nodes a carrier has closed:
// Stats are cumulative, and a node that leaves must not take its counts
// along.
type retiredNodes struct {
	mu sync.Mutex
	st Stats
}

// keep adds n's counters (its solo connections' and bulk lane's too).
func (r *retiredNodes) keep(n *node) {
	var st Stats
	n.stats(&st)
	r.mu.Lock()
	r.st.addRetired(&st)
	r.mu.Unlock()
}

// addTo adds the counters kept to st.
func (r *retiredNodes) addTo(st *Stats) {
	r.mu.Lock()
	st.addRetired(&r.st)
	r.mu.Unlock()
}

// probeLatency PINGs every node and keeps a moving average of its round
// trip, which ReadLowestLatency reads.
func (s *shared) probeLatency(ctx context.Context, nodes []*node) {
	var wg sync.WaitGroup
	for _, n := range nodes {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, s.opts.DialTimeout)
			defer cancel()
			start := time.Now()
			rtt := int64(time.Hour) // unreachable: last choice
			if _, err := s.nodeDo(ctx, n, "PING"); err == nil {
				rtt = int64(time.Since(start))
			}
			if old := n.rtt.Load(); old != 0 && rtt != int64(time.Hour) {
				rtt = (3*old + rtt) / 4
			}
			n.rtt.Store(rtt)
		})
	}
	wg.Wait()
}

// nodeDo sends one command of string arguments to a node's shared
// connection, past hooks (the Client's own housekeeping), and returns its
// reply; an error reply is the error.
func (s *shared) nodeDo(ctx context.Context, n *node, args ...string) (resp.Value, error) {
	r := s.newRequest()
	r.call.Buf = appendCommandStrings(r.call.Buf, args...)
	r.call.N = 1
	defer r.release()
	if err := r.sendOn(ctx, n.pipe); err != nil {
		return resp.Value{}, err
	}
	v := r.replies[0]
	return v, s.replyError(v)
}

// answersAsPrimary reports whether a ROLE reply is a primary's.
func answersAsPrimary(v resp.Value) bool {
	parts, err := Value{v}.AsSlice()
	if err != nil || len(parts) == 0 {
		return false
	}
	role, _ := parts[0].AsString()
	return isPrimaryRole(role)
}

// isPrimaryRole reports whether a node's role, as CLUSTER SHARDS or ROLE
// names it, is a primary's: Redis says "master", Valkey 8 and later may say
// "primary".
func isPrimaryRole(role string) bool { return role == "master" || role == "primary" }
