package zipline

// This file is the cluster carrier: its nodes and what it gives callers
// through the seam (carrier.go). Its routing and redirects are in
// cluster_route.go, its route table in cluster_topology.go (elected from the
// nodes' CLUSTER SHARDS, cluster_shards.go), failovers in cluster_failover.go,
// transactions, Watch and Dedicated in cluster_lease.go, how Do finds a
// command's keys in spec_keys.go, and splitting a multi-key command by
// slot in crossslot.go.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ziplinekv/zipline/internal/cmdspec"
)

// cluster carries requests to a Redis or Valkey Cluster. Each command goes
// to the node that owns its keys' hash slot, read from a route table that
// the topology refresher fills from the nodes' own accounts (CLUSTER
// SHARDS) and that a MOVED reply patches at once. Every node is reached as
// a single server is: one shared pipelined connection, and dedicated
// connections for blocking commands. A request whose commands live on
// several nodes is split into one pipeline per node, sent in parallel, and
// its replies put back in order.
//
// Redirects and retries happen here, per command: MOVED and ASK follow the
// server; TRYAGAIN, CLUSTERDOWN, LOADING and MASTERDOWN wait and retry
// within the caller's deadline (the command did not run); a command that
// never left the client (ErrNotSent) waits for a new topology and goes
// again; one lost with its connection is not sent again (it may have run),
// unless it only reads: then it goes once more, to the primary.
type cluster struct {
	s     *shared
	seeds []string

	// routes[slot] serves the slot; nil while nobody does.
	routes [slotCount]atomic.Pointer[route]
	// hash of the shard map installed, zero before the first.
	installed atomic.Uint64
	// retired: the counters of the nodes closed so far.
	retired retiredNodes

	mu      sync.Mutex
	nodes   map[string]*node // every node some route uses, and the seeds
	dialing map[string]*dial // connections to new nodes being made
	changed chan struct{}    // closed (and replaced) when routes change
	// current is the shard map installed last (routes may have been patched
	// since by MOVED): the failover watch reads which replicas can take
	// over a shard from it.
	current *shardMap
	// denied holds, by node address, the last MOVED each node answered:
	// the node's own word that it no longer serves the slot, against
	// which a shard map read from another node is checked (see
	// staleAgainst).
	denied map[string]denial

	refreshAsked chan struct{} // capacity 1: a request for a refresh
	// suspect wakes the failover watch (see watchFailovers); capacity 1.
	suspect chan struct{}
	life    context.Context
	stop    context.CancelFunc
	wg      sync.WaitGroup
	rr      atomic.Uint32 // round robin over replicas, and keyless commands over slots
	// replicaPick is which replica of each shard ReadPreferReplica reads
	// from (modulo their number), drawn once per client so that the
	// clients of an application spread over the replicas.
	replicaPick uint32
	// redials counts the connections made to nodes after the first
	// topology: a promoted replica's, a new owner's. With the nodes' own
	// reconnects they are Stats.Reconnects.
	redials atomic.Uint64
}

// route is who serves one slot: its primary, and its replicas for reads.
type route struct {
	primary  *node
	replicas []*node
	// standby holds the addresses of the slot's replicas, connected or
	// not (with ReadPrimary they are not): a MOVED to one of them is a
	// failover (see moved).
	standby []string
}

var _ carrier = (*cluster)(nil)

// Cluster timing. Topology is refreshed on demand (MOVED, a lost primary,
// CLUSTERDOWN) and every DefaultClusterRefreshInterval (give or take a
// quarter, drawn per client and per refresh); whatever the error
// rate, no node is asked for the topology more than once per
// minQueryInterval.
const (
	DefaultClusterRefreshInterval = 15 * time.Second
	minQueryInterval              = time.Second
	// Retrying a command the cluster could not serve yet: backoff doubling
	// from retryBackoffMin to retryBackoffMax, maxRedirects at most.
	retryBackoffMin = 5 * time.Millisecond
	retryBackoffMax = 200 * time.Millisecond
	maxRedirects    = 64
)

// newCluster discovers the cluster from the seed that answered, and
// knows the other seeds for later.
func newCluster(ctx context.Context, s *shared, addr string, seeds []string) (*cluster, error) {
	c := &cluster{s: s, seeds: seeds, nodes: map[string]*node{}, dialing: map[string]*dial{},
		changed: make(chan struct{}), refreshAsked: make(chan struct{}, 1), suspect: make(chan struct{}, 1),
		replicaPick: rand.Uint32()}
	c.life, c.stop = context.WithCancel(context.Background())
	seed, err := c.node(ctx, addr)
	if err != nil {
		c.close()
		return nil, err
	}
	t := loadServerCommands(ctx, seed)
	s.routing.Store(&t)
	if err := c.refreshNow(ctx); err != nil {
		c.close()
		return nil, err
	}
	c.wg.Add(2)
	go c.refresher()
	go c.watchFailovers()
	return c, nil
}

// node returns the connection to addr, dialling it if it is new.
//
// A node is dialled once however many callers want it at the same moment:
// after a failover every caller redirected to the new primary asks for it
// together, and a dial each (a hundred handshakes on a loaded machine) held
// them all up for tens of milliseconds. The dial runs on its own, bounded
// by DialTimeout rather than by whichever caller came first, and every
// caller waits for it within its own ctx.
func (c *cluster) node(ctx context.Context, addr string) (*node, error) {
	c.mu.Lock()
	if n := c.nodes[addr]; n != nil {
		c.mu.Unlock()
		return n, nil
	}
	dl := c.dialing[addr]
	if dl == nil {
		if c.life.Err() != nil {
			c.mu.Unlock()
			return nil, fmt.Errorf("%w (%w)", ErrClosed, ErrNotSent)
		}
		dl = &dial{done: make(chan struct{})}
		c.dialing[addr] = dl
		c.wg.Add(1) // under c.mu, before close can wait: see close
		go func() {
			defer c.wg.Done()
			dctx, cancel := context.WithTimeout(c.life, c.s.opts.DialTimeout)
			dl.n, dl.err = c.dialNode(dctx, addr)
			cancel()
			c.mu.Lock()
			delete(c.dialing, addr)
			c.mu.Unlock()
			close(dl.done)
		}()
	}
	c.mu.Unlock()
	select {
	case <-dl.done:
		return dl.n, dl.err
	case <-ctx.Done():
		return nil, notSentErr(ctx.Err())
	}
}

// dial is a connection to a new node being made, which other callers of
// node wait for.
type dial struct {
	done chan struct{} // closed when n and err are set
	n    *node
	err  error
}

// dialNode connects to a node nobody has connected to, and registers it.
//
// Nodes have no solo connections (solo.go): callers spread over the shards,
// so each node's connection has few of them already, and more connections
// to several servers sharing the CPUs cost the servers more than the
// hand-offs they save: at 8 callers on 3 primaries, 8-12 % fewer GETs and
// SETs with them (clusterbench, 3 alternating runs; bench/RESULTS.md
// section 7).
func (c *cluster) dialNode(ctx context.Context, addr string) (*node, error) {
	d, err := newDirectWith(ctx, c.s, addr, nil, 0)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if other := c.nodes[addr]; other != nil { // registered meanwhile (by install's own dial)
		go d.close()
		return other, nil
	}
	if c.life.Err() != nil {
		go d.close()
		return nil, fmt.Errorf("%w (%w)", ErrClosed, ErrNotSent)
	}
	n := &node{addr: addr, direct: d}
	c.nodes[addr] = n
	if c.installed.Load() != 0 {
		c.redials.Add(1)
	}
	return n, nil
}

// eachShard calls fn with each primary's connection, and with replicas
// each connected replica's.
func (c *cluster) eachShard(replicas bool, fn func(carrier) error) error {
	for _, n := range c.nodesOf(replicas) {
		if err := fn(n.direct); err != nil {
			return err
		}
	}
	return nil
}

// serving tells of the node that serves slot now (any node for noSlot).
func (c *cluster) serving(slot int32) endpoint {
	if n := c.target(wireCommand{slot: slot}); n != nil {
		return n.endpoint()
	}
	return endpoint{}
}

func (c *cluster) refresh() { c.askRefresh() }
func (c *cluster) taint()   {}

func (c *cluster) protocol() int {
	for _, n := range c.primaries() {
		return n.pipe.Protocol()
	}
	return 0
}

// primaries returns the nodes that serve slots now, in slot order.
func (c *cluster) primaries() []*node { return c.nodesOf(false) }

// nodesOf returns the nodes the routes name: the primaries, and with
// replicas the connected replicas too, each once.
func (c *cluster) nodesOf(replicas bool) []*node {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*node
	seen := map[*node]bool{}
	add := func(n *node) {
		if n != nil && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	for _, r := range c.routeSet() {
		add(r.primary)
	}
	if replicas {
		for _, r := range c.routeSet() {
			for _, n := range r.replicas {
				add(n)
			}
		}
	}
	return out
}

// stats adds up the nodes' counters and gauges, with the counters of the
// nodes gone. Reconnects counts every node's reconnects, and the
// connections made to nodes after the first topology (see redials).
func (c *cluster) stats(st *Stats) {
	c.mu.Lock()
	nodes := make([]*node, 0, len(c.nodes))
	for _, n := range c.nodes {
		nodes = append(nodes, n)
	}
	c.retired.addTo(st)
	st.Reconnects += c.redials.Load()
	c.mu.Unlock()
	for _, n := range nodes {
		n.stats(st)
	}
}

// close stops the refresher and closes every node.
func (c *cluster) close() error {
	c.stop()
	c.mu.Lock()
	nodes := c.nodes
	c.nodes = map[string]*node{}
	c.mu.Unlock()
	var wg sync.WaitGroup
	for _, n := range nodes {
		wg.Add(1)
		go func() { defer wg.Done(); n.close() }()
	}
	wg.Wait()
	c.wg.Wait()
	return nil
}

// loadServerCommands asks a node for COMMAND; if that fails the table is
// empty, and Do routes what the spec does not know by its first argument.
func loadServerCommands(ctx context.Context, n *node) serverCommands {
	r := n.direct
	req := r.pipe.NewCall()
	req.Buf = appendCommandStrings(req.Buf, "COMMAND")
	req.N = 1
	if err := r.pipe.Do(ctx, req); err != nil {
		return serverCommands{}
	}
	defer req.Release()
	t, err := cmdspec.Parse(req.Reply(0))
	if err != nil {
		return serverCommands{}
	}
	return serverCommands(t)
}
