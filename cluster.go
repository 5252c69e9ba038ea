package zipline

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ziplinekv/zipline/internal/cmdspec"
	"github.com/ziplinekv/zipline/internal/resp"
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
// again; one lost with its connection is never retried.
type cluster struct {
	s     *shared
	seeds []string

	// routes[slot] serves the slot; nil while nobody does.
	routes [slotCount]atomic.Pointer[route]
	// hash of the view installed, zero before the first.
	installed atomic.Uint64

	mu      sync.Mutex
	nodes   map[string]*node // every node some route uses, and the seeds
	dialing map[string]*dial // connections to new nodes being made
	changed chan struct{}    // closed (and replaced) when routes change
	// retired holds the counters of the nodes closed so far: Stats are
	// cumulative, and a node that leaves must not take its counts along.
	retired Stats
	// current is the view installed last (routes may have been patched
	// since by MOVED): the failover watch reads which replicas can take
	// over a shard from it.
	current *view

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

// node is one server of the cluster.
type node struct {
	addr string
	*direct
	queried time.Time // last topology query; owned by the refresher
	rtt     atomic.Int64
}

var _ carrier = (*cluster)(nil)

// Cluster timing. Topology is refreshed on demand (MOVED, a lost primary,
// CLUSTERDOWN) and every DefaultClusterRefreshInterval; whatever the error
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
	s.routing = loadCommandTable(ctx, seed)
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
func (c *cluster) dialNode(ctx context.Context, addr string) (*node, error) {
	d, err := newDirect(c.s, addr, ctx)
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

// askRefresh asks the refresher for a new view, without waiting. The
// failover watch looks too: what made the caller ask may be a lost primary.
func (c *cluster) askRefresh() {
	select {
	case c.refreshAsked <- struct{}{}:
	default:
	}
	select {
	case c.suspect <- struct{}{}:
	default:
	}
}

// refresher is the one goroutine that reads topology: on request, and
// periodically. Between two queries of the same node it lets at least
// minQueryInterval pass, so a storm of errors costs each node at most one
// topology query per second.
func (c *cluster) refresher() {
	defer c.wg.Done()
	t := time.NewTicker(DefaultClusterRefreshInterval)
	defer t.Stop()
	var probe <-chan time.Time
	if c.s.opts.ReadFrom == ReadLowestLatency {
		p := time.NewTicker(latencyProbeInterval)
		defer p.Stop()
		probe = p.C
		c.probeLatency()
	}
	for {
		select {
		case <-c.life.Done():
			return
		case <-probe:
			c.probeLatency()
			continue
		case <-c.refreshAsked:
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(c.life, c.s.opts.DialTimeout)
		if err := c.refreshNow(ctx); err != nil && c.life.Err() == nil {
			c.s.opts.Logger.Debug("zipline: cluster topology refresh failed", "err", err)
		}
		cancel()
	}
}

// latencyProbeInterval is how often ReadLowestLatency measures nodes.
const latencyProbeInterval = 2 * time.Second

// probeLatency PINGs every node and keeps a moving average of its round
// trip, which ReadLowestLatency reads.
func (c *cluster) probeLatency() {
	c.mu.Lock()
	nodes := make([]*node, 0, len(c.nodes))
	for _, n := range c.nodes {
		nodes = append(nodes, n)
	}
	c.mu.Unlock()
	var wg sync.WaitGroup
	for _, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(c.life, c.s.opts.DialTimeout)
			defer cancel()
			start := time.Now()
			rtt := int64(time.Hour) // unreachable: last choice
			if _, err := c.nodeDo(ctx, n, "PING"); err == nil {
				rtt = int64(time.Since(start))
			}
			if old := n.rtt.Load(); old != 0 && rtt != int64(time.Hour) {
				rtt = (3*old + rtt) / 4
			}
			n.rtt.Store(rtt)
		}()
	}
	wg.Wait()
}

// refreshNow asks up to three nodes for their view of the cluster and
// installs the one most of them give. Nodes asked less than
// minQueryInterval ago are skipped (or waited for, when every node was).
func (c *cluster) refreshNow(ctx context.Context) error {
	asked := c.pickQueried(ctx, 3)
	if len(asked) == 0 {
		return errors.New("zipline: no cluster node to ask for the topology")
	}
	views := make([]*view, len(asked))
	errs := make([]error, len(asked))
	var wg sync.WaitGroup
	for i, n := range asked {
		wg.Add(1)
		go func() {
			defer wg.Done()
			views[i], errs[i] = c.queryView(ctx, n)
		}()
	}
	wg.Wait()
	var got []*view
	for _, v := range views {
		if v != nil {
			got = append(got, v)
		}
	}
	if len(got) == 0 {
		return fmt.Errorf("zipline: cluster topology: %w", errors.Join(errs...))
	}
	best := elect(got, c.installed.Load())
	if best.hash == c.installed.Load() {
		return nil
	}
	return c.install(ctx, best)
}

// pickQueried chooses up to n nodes to ask for the topology: primaries
// first, then replicas, then seeds, none asked within minQueryInterval.
// When every candidate was, it waits (bounded by ctx) for the first to be
// allowed again.
func (c *cluster) pickQueried(ctx context.Context, n int) []*node {
	for {
		c.mu.Lock()
		var cands []*node
		seen := map[*node]bool{}
		add := func(nd *node) {
			if nd != nil && !seen[nd] {
				seen[nd] = true
				cands = append(cands, nd)
			}
		}
		for _, r := range c.routeSet() {
			add(r.primary)
		}
		for _, r := range c.routeSet() {
			for _, rep := range r.replicas {
				add(rep)
			}
		}
		for _, s := range c.seeds {
			add(c.nodes[s])
		}
		for _, nd := range c.nodes {
			add(nd)
		}
		now := time.Now()
		var out []*node
		wait := time.Duration(-1)
		for _, nd := range cands {
			if since := now.Sub(nd.queried); nd.queried.IsZero() || since >= minQueryInterval {
				nd.queried = now
				out = append(out, nd)
				if len(out) == n {
					break
				}
			} else if w := minQueryInterval - since; wait < 0 || w < wait {
				wait = w
			}
		}
		c.mu.Unlock()
		if len(out) > 0 || wait < 0 {
			return out
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
}

// routeSet returns the distinct routes installed. Callers hold c.mu.
func (c *cluster) routeSet() []*route {
	var out []*route
	var last *route
	for i := range c.routes {
		if r := c.routes[i].Load(); r != nil && r != last {
			out = append(out, r)
			last = r
		}
	}
	return out
}

// queryView asks one node for its view: CLUSTER SHARDS, or CLUSTER SLOTS on
// servers older than 7.
func (c *cluster) queryView(ctx context.Context, n *node) (*view, error) {
	v, err := c.nodeDo(ctx, n, "CLUSTER", "SHARDS")
	if err == nil {
		return parseShards(v, n.addr)
	}
	var se *ServerError
	if !errors.As(err, &se) {
		return nil, err
	}
	if v, err = c.nodeDo(ctx, n, "CLUSTER", "SLOTS"); err != nil {
		return nil, err
	}
	return parseSlots(v, n.addr)
}

// nodeDo runs one command on one node's shared connection.
func (c *cluster) nodeDo(ctx context.Context, n *node, args ...string) (resp.Value, error) {
	r := c.s.newRequest()
	r.call.Buf = appendCommandStrings(r.call.Buf, args...)
	r.call.N = 1
	defer r.release()
	if err := r.sendOn(ctx, n.pipe); err != nil {
		return resp.Value{}, err
	}
	v := r.replies[0]
	return v, c.s.replyError(v)
}

// install makes v the route table: it connects to the nodes v names (a
// primary that cannot be reached still gets its route: requests for it fail
// as not sent and wait for the next view), then swaps the routes slot by
// slot, and closes the connections of nodes that left.
func (c *cluster) install(ctx context.Context, v *view) error {
	byAddr := map[string]*node{}
	var wg sync.WaitGroup
	var mu sync.Mutex
	addrs := v.nodes()
	if c.s.opts.ReadFrom == ReadPrimary {
		addrs = addrs[:0]
		for _, s := range v.shards {
			if s.primary != "" {
				addrs = append(addrs, s.primary)
			}
		}
	}
	for _, a := range addrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if n, err := c.node(ctx, a); err == nil {
				mu.Lock()
				byAddr[a] = n
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if v.covered() > 0 && len(byAddr) == 0 {
		return errors.New("zipline: no cluster node could be reached")
	}
	c.mu.Lock()
	for _, s := range v.shards {
		r := &route{primary: byAddr[s.primary], standby: s.replicas}
		for _, a := range s.replicas {
			if n := byAddr[a]; n != nil {
				r.replicas = append(r.replicas, n)
			}
		}
		if r.primary == nil && len(r.replicas) == 0 {
			r = nil
		}
		for _, rg := range s.ranges {
			for slot := rg[0]; slot <= rg[1]; slot++ {
				if old := c.routes[slot].Load(); old != nil && r != nil && old.primary != r.primary && c.s.cache != nil {
					c.s.cache.slotMoved(slot)
				}
				c.routes[slot].Store(r)
			}
		}
	}
	c.installed.Store(v.hash)
	c.current = v
	gone := c.unusedLocked()
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
	c.closeNodes(gone)
	return nil
}

// unusedLocked removes from c.nodes the nodes no route uses, seeds apart,
// and returns them for closeNodes. Callers hold c.mu.
func (c *cluster) unusedLocked() []*node {
	used := map[*node]bool{}
	for _, r := range c.routeSet() {
		used[r.primary] = true
		for _, rep := range r.replicas {
			used[rep] = true
		}
	}
	var gone []*node
	for a, n := range c.nodes {
		if !used[n] && !c.isSeed(a) {
			delete(c.nodes, a)
			gone = append(gone, n)
		}
	}
	return gone
}

// closeNodes closes nodes that left, in the background: their connections
// close and their goroutines exit before close returns.
func (c *cluster) closeNodes(gone []*node) {
	for _, n := range gone {
		c.retire(n)
		c.wg.Add(1)
		go func() { defer c.wg.Done(); n.close() }()
	}
}

// retire keeps a leaving node's counters (see cluster.retired).
func (c *cluster) retire(n *node) {
	var st Stats
	st.addPipe(n.pipe)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.retired.Writes += st.Writes
	c.retired.Requests += st.Requests
	c.retired.Reconnects += st.Reconnects
	for i := range st.WriteSizes {
		c.retired.WriteSizes[i] += st.WriteSizes[i]
	}
}

func (c *cluster) isSeed(addr string) bool {
	for _, s := range c.seeds {
		if s == addr {
			return true
		}
	}
	return false
}

// moved patches the routes after a MOVED reply and asks for a full
// refresh: the slot's new owner serves it from now on, even before the
// refresh, and so does every other slot of its primary when the new owner
// was that primary's replica (a failover).
func (c *cluster) moved(ctx context.Context, slot int32, addr string) {
	n, err := c.node(ctx, addr)
	if err != nil {
		c.askRefresh()
		return
	}
	c.mu.Lock()
	switch cur := c.routes[slot].Load(); {
	case cur != nil && cur.primary != nil && cur.primary != n && slices.Contains(cur.standby, addr):
		// The slot's own replica holds it now: a failover, which hands
		// the replica every slot of its primary at once. Moving them all
		// here spares a MOVED round trip per slot until the next view
		// (each node is asked at most once a second).
		c.failedOverLocked(cur.primary, n, addr)
	case cur == nil || cur.primary != n:
		if c.s.cache != nil {
			c.s.cache.slotMoved(slot)
		}
		c.routes[slot].Store(&route{primary: n})
	default:
		c.mu.Unlock()
		c.askRefresh()
		return
	}
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
	c.askRefresh()
}

// failedOverLocked gives every slot of primary old to its replica n (at
// addr), which a MOVED showed has taken one of them over. c.mu is held.
func (c *cluster) failedOverLocked(old, n *node, addr string) {
	next := map[*route]*route{} // the slots of a shard share their route
	for slot := range c.routes {
		r := c.routes[slot].Load()
		if r == nil || r.primary != old {
			continue
		}
		nr := next[r]
		if nr == nil {
			nr = &route{primary: n}
			for _, rep := range r.replicas {
				if rep != n {
					nr.replicas = append(nr.replicas, rep)
				}
			}
			for _, a := range r.standby {
				if a != addr {
					nr.standby = append(nr.standby, a)
				}
			}
			next[r] = nr
		}
		if c.s.cache != nil {
			c.s.cache.slotMoved(int32(slot))
		}
		c.routes[slot].Store(nr)
	}
}

// changes returns a channel closed at the next change of the routes.
func (c *cluster) changes() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.changed
}

// isReplicaFor reports whether n was chosen as a replica for ci (a read
// sent to a replica).
func (n *node) isReplicaFor(c *cluster, ci cmdInfo) bool {
	if !ci.readOnly || ci.slot < 0 {
		return false
	}
	r := c.routes[ci.slot].Load()
	return r != nil && r.primary != n
}

// target picks the node for a command: the slot's primary, or, for a read
// with Options.ReadFrom asking for it, a replica. Keyless commands go to
// any primary. nil means nobody serves the slot now.
func (c *cluster) target(ci cmdInfo) *node {
	slot := ci.slot
	if slot < 0 {
		slot = int32(c.rr.Add(1) % slotCount)
	}
	r := c.routes[slot].Load()
	if r == nil {
		return nil
	}
	if !ci.readOnly || len(r.replicas) == 0 {
		return r.primary
	}
	switch c.s.opts.ReadFrom {
	case ReadPreferReplica:
		if n := r.replicaUp(c.replicaPick); n != nil {
			return n
		}
	case ReadReplicaRoundRobin:
		if n := r.replicaUp(c.rr.Add(1)); n != nil {
			return n
		}
	case ReadLowestLatency:
		best := r.primary
		for _, n := range r.replicas {
			if n.up() && (best == nil || n.rtt.Load() < best.rtt.Load()) {
				best = n
			}
		}
		return best
	}
	return r.primary
}

// replicaUp returns the first of the route's replicas that has a live
// connection, counting from the one at index from (modulo their number),
// or nil if none has. The replicas are sorted by address, so a given from
// names the same replica from one topology refresh to the next.
func (r *route) replicaUp(from uint32) *node {
	n := uint32(len(r.replicas))
	for i := range n {
		if nd := r.replicas[(from+i)%n]; nd.up() {
			return nd
		}
	}
	return nil
}

// up reports whether the node's connection is live now: a replica that is
// down is passed over at once rather than tried and retried until the
// cluster marks it failed.
func (n *node) up() bool {
	return n != nil && n.pipe != nil && n.pipe.Connected()
}

func (c *cluster) send(ctx context.Context, r *request) error {
	if r.tx {
		return c.sendTx(ctx, r)
	}
	return c.sendEach(ctx, r)
}

// flight is one request's way through the cluster: a reply or an error per
// command, and what each still needs. It holds only per-command state, and
// nothing ever stores its slices elsewhere: for a request of one command
// (GET, SET: nearly all of them) they then point at arrays on sendEach's
// stack and at the request's own room for one reply, and the whole way
// through the cluster allocates nothing.
type flight struct {
	replies []resp.Value
	errs    []error
	done    []bool
	ask     []string // an ASK target, per command
	primary []bool   // a replica turned the read away: the primary serves it
}

// newFlight makes a flight for len(replies) commands, its state on the
// heap.
func newFlight(replies []resp.Value, errs []error) flight {
	n := len(replies)
	flags := make([]bool, 2*n)
	return flight{replies: replies, errs: errs, done: flags[:n:n], ask: make([]string, n), primary: flags[n:]}
}

// sendEach sends every command of r to its slot's owner, one pipeline per
// node, following redirects and retrying what the cluster could not serve
// yet, until every command has its reply or a final error.
func (c *cluster) sendEach(ctx context.Context, r *request) error {
	n := len(r.cmds)
	var f flight
	// many is f when the request has several commands: its slices are on
	// the heap, and only it is shared with sendGroups's goroutines, so
	// that the arrays a one-command request uses stay on this stack.
	var many flight
	var done, primary [1]bool
	var ask [1]string
	var idx [1]int
	replies, errs := r.one.replies[:], r.one.errs[:]
	allIdx := idx[:]
	if n == 1 {
		f = flight{replies: replies, errs: errs, done: done[:], ask: ask[:], primary: primary[:]}
	} else {
		replies, errs = make([]resp.Value, n), make([]error, n)
		many = newFlight(replies, errs)
		f = many
		allIdx = make([]int, n)
	}
	backoff := retryBackoffMin
	for round := 0; ; round++ {
		// Commands for one node, the common case, go straight to it;
		// those for several go to each in parallel.
		var only *node
		onlyIdx := allIdx[:0]
		var groups []nodeGroup
		waitTopology := false
		for i := range n {
			if f.done[i] {
				continue
			}
			var nd *node
			if f.ask[i] != "" {
				var err error
				if nd, err = c.node(ctx, f.ask[i]); err != nil {
					f.ask[i] = ""
					waitTopology = true
					continue
				}
			} else {
				ci := r.cmds[i]
				ci.readOnly = ci.readOnly && !f.primary[i]
				nd = c.target(ci)
			}
			switch {
			case nd == nil:
				waitTopology = true
			case groups != nil:
				groups = addToGroup(groups, nd, i, n)
			case only == nil || only == nd:
				only = nd
				onlyIdx = append(onlyIdx, i)
			default:
				// Room for every command left in each group: a group
				// never grows by reallocation.
				groups = append(make([]nodeGroup, 0, 4), nodeGroup{only, append(make([]int, 0, n), onlyIdx...)},
					nodeGroup{nd, append(make([]int, 0, n-i), i)})
			}
		}
		var retry int
		var when again
		switch {
		case groups != nil:
			retry, when = c.sendGroups(ctx, r, &many, groups)
		case only != nil:
			retry, when = c.sendGroup(ctx, r, &f, only, onlyIdx)
		}
		if retry == 0 && !waitTopology {
			break
		}
		if round == maxRedirects {
			f.failRest(errors.New("zipline: too many cluster redirects and retries"))
			break
		}
		if waitTopology {
			c.askRefresh()
			when = againOnView
		} else if when == againNow && round == 0 {
			// Every command to send again was told where to go (MOVED,
			// ASK, or a replica's refusal that sends a read to the
			// primary): the first time, it goes now. A pause here held
			// every call behind a failover back by the backoff, on top of
			// the server's own. Redirected again, it backs off: nodes
			// that disagree about a slot for a moment must not bounce a
			// command through every round at once.
			continue
		}
		if err := c.wait(ctx, backoff, when); err != nil {
			f.failRest(notSentErr(err))
			break
		}
		backoff = min(2*backoff, retryBackoffMax)
	}
	// The replies go to r from where they were made, not from f: f's
	// slices are never copied out (see flight).
	return finish(r, replies, errs)
}

// nodeGroup is the commands of a request bound for one node.
type nodeGroup struct {
	nd  *node
	idx []int
}

// addToGroup adds command i to nd's group, or starts one with room for
// the n-i commands that may follow. Nodes are few: a linear search.
func addToGroup(groups []nodeGroup, nd *node, i, n int) []nodeGroup {
	for k := range groups {
		if groups[k].nd == nd {
			groups[k].idx = append(groups[k].idx, i)
			return groups
		}
	}
	return append(groups, nodeGroup{nd, append(make([]int, 0, n-i), i)})
}

// sendGroups sends each node its pipeline, in parallel, and sorts the
// replies: final, redirected or to retry. It returns how many commands
// need another round, and when the round may go (see sendGroup). The
// first group goes from this goroutine, the others each from one of their
// own. They share f's arrays, each writing only its own commands' entries,
// so nothing needs merging afterwards.
func (c *cluster) sendGroups(ctx context.Context, r *request, f *flight, groups []nodeGroup) (retry int, when again) {
	var others struct {
		wg    sync.WaitGroup
		mu    sync.Mutex
		retry int
		when  again
	}
	for _, g := range groups[1:] {
		part := *f // the slices, not the variable: f stays where it is
		others.wg.Add(1)
		go func() {
			defer others.wg.Done()
			retry, when := c.sendGroup(ctx, r, &part, g.nd, g.idx)
			others.mu.Lock()
			others.retry += retry
			others.when = max(others.when, when)
			others.mu.Unlock()
		}()
	}
	retry, when = c.sendGroup(ctx, r, f, groups[0].nd, groups[0].idx)
	others.wg.Wait()
	return retry + others.retry, max(when, others.when)
}

// sendGroup sends the commands idx of the request to one node, each
// preceded by ASKING when an ASK redirect sent it there. It returns how
// many commands need sending again, and when the next round may go: the
// latest any of them needs (see again). Those that never left (a
// connection down) wait like those of a cluster that is down.
func (c *cluster) sendGroup(ctx context.Context, r *request, f *flight, nd *node, idx []int) (retry int, when again) {
	sub := c.s.newRequest()
	defer sub.release()
	call := sub.call
	if p := r.call.Patience; p != 0 {
		call.Patience = p // stored only when it changes (see pipe.Call, line 3)
	}
	sub.blocking = r.blocking
	for _, i := range idx {
		if f.ask[i] != "" {
			call.Buf = append(call.Buf, askingCommand...)
			call.Expect = append(call.Expect, tsStatus)
			call.N++
		}
		ci := r.cmds[i]
		call.Buf = append(call.Buf, r.call.Buf[ci.start:ci.end]...)
		call.Expect = append(call.Expect, r.call.Expect[i])
		call.N++
	}
	err := nd.send(ctx, sub)
	if err != nil {
		for _, i := range idx {
			switch {
			case errors.Is(err, ErrNotSent) && ctx.Err() == nil:
				retry++ // never reached the server: safe to send again
				when = againOnChange
				c.askRefresh()
			default:
				f.errs[i], f.done[i] = err, true
			}
		}
		return retry, when
	}
	k := 0
	for _, i := range idx {
		if f.ask[i] != "" {
			k++ // ASKING's +OK
			f.ask[i] = ""
		}
		v := sub.replies[k]
		k++
		if nd.isReplicaFor(c, r.cmds[i]) && v.IsError() && isRefusal(v) &&
			!strings.HasPrefix(unsafeString(v.Bytes()), "CLUSTERDOWN") {
			// A replica that is loading, or not (or no longer) a replica
			// of this slot: the primary serves the read; nothing to patch.
			f.primary[i] = true
			retry++
			when = max(when, againNow)
			continue
		}
		if again := c.redirected(ctx, f, i, v); again != notAgain {
			if slot, ok := movedSlot(v); ok && r.cmds[i].slot == noSlot {
				// Routing found no keys (a module's command, unknown to the
				// table), but the server did: follow it to their slot,
				// rather than to any node again.
				r.cmds[i].slot = slot
			}
			retry++
			when = max(when, again)
			continue
		}
		f.replies[i], f.done[i] = v, true
	}
	return retry, when
}

var askingCommand = resp.AppendBulkString(resp.AppendArrayLen(nil, 1), "ASKING")

// again says whether, and when, a command goes again. The values are
// ordered: a round goes when the command that must wait longest may.
type again int

const (
	notAgain again = iota // it ran, or failed for good
	againNow              // MOVED or ASK: the reply names where to go
	// againLater is after the backoff: TRYAGAIN and LOADING, which end
	// on the server, not with a change of the routes.
	againLater
	// againOnChange is after the backoff, or at the next change of the
	// routes if that comes first: CLUSTERDOWN, MASTERDOWN, or a node
	// that cannot be reached. A failover ends with the failover watch
	// installing the promoted replica, and the calls held back go to it
	// at once, not up to a backoff (200 ms) later.
	againOnChange
	// againOnView is at the next change of the routes, and at most
	// minQueryInterval: no node serves the slot.
	againOnView
)

// redirected handles a reply that says the command did not run here: MOVED
// and ASK point elsewhere; TRYAGAIN, CLUSTERDOWN, LOADING and MASTERDOWN
// mean later. It reports whether and when the command goes again.
func (c *cluster) redirected(ctx context.Context, f *flight, i int, v resp.Value) again {
	if !v.IsError() {
		return notAgain
	}
	msg := unsafeString(v.Bytes())
	prefix, rest, _ := strings.Cut(msg, " ")
	switch prefix {
	case "MOVED", "ASK":
		slotText, addr, ok := strings.Cut(rest, " ")
		slot, err := strconv.Atoi(slotText)
		if !ok || err != nil || slot < 0 || slot >= slotCount {
			return notAgain
		}
		addr = c.redirectAddr(addr)
		if prefix == "MOVED" {
			c.moved(ctx, int32(slot), addr)
		} else {
			f.ask[i] = addr
		}
		return againNow
	case "TRYAGAIN", "LOADING":
		return againLater
	case "CLUSTERDOWN", "MASTERDOWN":
		c.askRefresh()
		return againOnChange
	}
	return notAgain
}

// movedSlot returns the slot of a MOVED reply.
func movedSlot(v resp.Value) (int32, bool) {
	rest, ok := strings.CutPrefix(unsafeString(v.Bytes()), "MOVED ")
	if !v.IsError() || !ok {
		return 0, false
	}
	slotText, _, _ := strings.Cut(rest, " ")
	slot, err := strconv.Atoi(slotText)
	if err != nil || slot < 0 || slot >= slotCount {
		return 0, false
	}
	return int32(slot), true
}

// redirectAddr completes a redirect's address: a server that does not know
// its own host name sends ":port".
func (c *cluster) redirectAddr(addr string) string {
	if strings.HasPrefix(addr, ":") && len(c.seeds) > 0 {
		host, _, _ := strings.Cut(c.seeds[0], ":")
		return host + addr
	}
	return addr
}

func (f *flight) failRest(err error) {
	for i := range f.done {
		if !f.done[i] {
			f.errs[i], f.done[i] = err, true
		}
	}
}

// finish leaves the replies in the request. If every command failed the
// same way, the request failed as a whole.
func finish(r *request, replies []resp.Value, errs []error) error {
	var first error
	all := true
	for _, err := range errs {
		if err == nil {
			all = false
		} else if first == nil {
			first = err
		}
	}
	if all && first != nil {
		return first
	}
	r.replies = replies
	if first != nil {
		r.errs = errs
	}
	return nil
}

// wait waits before a retry as when says (see again): a redirect that
// bounced, like againLater, waits out the backoff alone, so that nodes
// disagreeing about a slot for a moment (each MOVED changing the routes)
// do not run a command through every round at once. ctx bounds it.
func (c *cluster) wait(ctx context.Context, backoff time.Duration, when again) error {
	d := backoff/2 + rand.N(backoff/2+1)
	var changed <-chan struct{}
	switch when {
	case againOnChange:
		changed = c.changes()
	case againOnView:
		d, changed = minQueryInterval, c.changes()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-c.life.Done():
		return ErrClosed
	case <-changed:
	case <-t.C:
	}
	return nil
}

// sendTx runs a MULTI/EXEC transaction on the owner of its one slot, as a
// unit: when the slot has moved (MOVED while queuing, or EXECABORT after
// one), or is moving (ASK, TRYAGAIN), the whole transaction goes again.
// Nothing of a transaction aborted that way ran.
func (c *cluster) sendTx(ctx context.Context, r *request) error {
	slot := noSlot
	for _, ci := range r.cmds {
		switch {
		case ci.slot == noSlot:
		case slot == noSlot:
			slot = ci.slot
		case ci.slot != slot:
			return &CrossSlotError{Command: "MULTI", Slots: r.slots()}
		}
	}
	backoff := retryBackoffMin
	for round := 0; ; round++ {
		nd := c.target(cmdInfo{slot: slot})
		when := againOnView
		if nd != nil {
			when = notAgain
			sub := c.s.newRequest()
			sub.call.Buf = append(sub.call.Buf, r.call.Buf...)
			sub.call.Expect = append(sub.call.Expect, r.call.Expect...)
			sub.call.N = r.call.N
			err := nd.send(ctx, sub)
			switch {
			case err == nil:
				for _, v := range sub.replies {
					if !v.IsError() || !isRefusal(v) {
						continue
					}
					f := flight{ask: make([]string, 1)}
					a := c.redirected(ctx, &f, 0, v) // a MOVED patches the map
					if !strings.HasPrefix(unsafeString(v.Bytes()), "MOVED ") {
						a = max(a, againLater) // ASK or TRYAGAIN: the slot is moving; wait for the move to end
					}
					when = max(when, againNow, a) // a refusal always goes again
				}
				if when == notAgain {
					r.replies = sub.replies
					r.call, sub.call = sub.call, r.call // the replies live in the call
					sub.release()
					return nil
				}
			case errors.Is(err, ErrNotSent) && ctx.Err() == nil:
				when = againOnChange
				c.askRefresh()
			default:
				sub.release()
				return err
			}
			sub.release()
		}
		if round == maxRedirects {
			return errors.New("zipline: too many cluster redirects and retries for a transaction")
		}
		if when == againNow && round == 0 {
			continue // refused with MOVED only: the map is patched, the new owner takes it now (once: see sendEach)
		}
		if err := c.wait(ctx, backoff, when); err != nil {
			return notSentErr(err)
		}
		backoff = min(2*backoff, retryBackoffMax)
	}
}

// watch runs Watch on the owner of the keys' one slot, as a unit, like
// sendTx: the slot may move, or start moving, while fn runs. The server
// then refuses what fn sends there (MOVED, ASK, TRYAGAIN...), and a
// transaction queued with such a refusal aborts: nothing of it ran. So when
// fn fails after a refusal, the map is patched and fn runs again on the new
// owner, bounded by ctx and maxRedirects. As with ErrTxFailed, fn's reads
// are repeated; its writes belong in the transaction.
func (c *cluster) watch(ctx context.Context, keys []string, run func(carrier) error) error {
	slot := argsSlot(keyArgs(keys))
	if slot == crossSlot {
		return &CrossSlotError{Command: "WATCH", Slots: keySlots(keyArgs(keys))}
	}
	backoff := retryBackoffMin
	for round := 0; ; round++ {
		l, _, err := c.leaseFor(ctx, slot)
		if err != nil {
			return err
		}
		w := &watchLease{carrier: l, slot: slot}
		err = run(w)
		w.close()
		if err == nil || !w.refused.IsError() || ctx.Err() != nil {
			return err
		}
		if round == maxRedirects {
			return fmt.Errorf("zipline: too many cluster redirects and retries for a Watch: %w", err)
		}
		f := flight{ask: make([]string, 1)}
		c.redirected(ctx, &f, 0, w.refused) // a MOVED patches the slot; an ASK waits for the move to end
		if err := c.wait(ctx, backoff, againLater); err != nil {
			return notSentErr(err)
		}
		backoff = min(2*backoff, retryBackoffMax)
	}
}

// watchLease is Watch's connection on a cluster, on the owner of the
// watched keys' slot. A command for another slot is refused with a
// *CrossSlotError before it is sent: the server would refuse it with MOVED
// (or, queued in the transaction, abort EXEC), which means "the slot
// moved" and would run fn again, forever. It notes the first reply by which
// the server refused a command because of where the watched slot is, or is
// going (see cluster.watch).
type watchLease struct {
	carrier // the lease
	slot    int32
	refused resp.Value
}

// watch runs on the lent connection itself: Watch inside Watch's callback.
func (w *watchLease) watch(_ context.Context, _ []string, run func(carrier) error) error {
	return run(w)
}

func (w *watchLease) send(ctx context.Context, r *request) error {
	for _, ci := range r.cmds {
		if ci.slot >= 0 && ci.slot != w.slot {
			name := "WATCH callback"
			if r.tx {
				name = "MULTI"
			}
			slots := r.slots()
			if !slices.Contains(slots, w.slot) {
				slots = append([]int32{w.slot}, slots...)
			}
			return &CrossSlotError{Command: name, Slots: slots}
		}
	}
	err := w.carrier.send(ctx, r)
	if err != nil || w.refused.IsError() {
		return err
	}
	for _, v := range r.replies {
		if v.IsError() && isRefusal(v) {
			w.refused = v
			break
		}
	}
	return nil
}

// isRefusal reports whether an error reply says the command did not run
// because of where its slot is, or is going.
func isRefusal(v resp.Value) bool {
	prefix, _, _ := strings.Cut(unsafeString(v.Bytes()), " ")
	switch prefix {
	case "MOVED", "ASK", "TRYAGAIN", "CLUSTERDOWN", "MASTERDOWN", "LOADING":
		return true
	}
	return false
}

// lease lends a dedicated connection for Dedicated. Which node it goes to
// depends on the first command with a key sent on it (see lazyLease).
func (c *cluster) lease(ctx context.Context) (carrier, error) {
	return &lazyLease{c: c}, nil
}

// lazyLease is a Dedicated Client's carrier on a cluster: it borrows a
// connection from the node that owns the slot of the first command with a
// key, and keeps it: a dedicated connection is one connection. A later
// command for a slot another node serves is refused with a
// *NodeBoundError, rather than sent there to come back as MOVED.
type lazyLease struct {
	c    *cluster
	mu   sync.Mutex
	l    *lease
	node *node // the node of l
	slot int32 // the slot that bound it
}

func (z *lazyLease) bound(ctx context.Context, r *request) (*lease, error) {
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.l != nil {
		for _, ci := range r.cmds {
			if ci.slot >= 0 && ci.slot != z.slot {
				if nd := z.c.target(cmdInfo{slot: ci.slot}); nd != z.node {
					return nil, &NodeBoundError{Bound: z.slot, BoundAddr: z.node.addr, Slot: ci.slot}
				}
			}
		}
		return z.l, nil
	}
	slot := noSlot
	for _, ci := range r.cmds {
		if ci.slot >= 0 {
			slot = ci.slot
			break
		}
	}
	l, nd, err := z.c.leaseFor(ctx, slot)
	if err != nil {
		return nil, err
	}
	z.l, z.node, z.slot = l, nd, slot
	return l, nil
}

func (z *lazyLease) send(ctx context.Context, r *request) error {
	l, err := z.bound(ctx, r)
	if err != nil {
		return err
	}
	return l.send(ctx, r)
}

func (z *lazyLease) lease(context.Context) (carrier, error) {
	return nil, errors.New("zipline: Dedicated called on a dedicated Client")
}

// watch runs on the Dedicated Client's connection itself.
func (z *lazyLease) watch(_ context.Context, _ []string, run func(carrier) error) error {
	return run(z)
}

func (z *lazyLease) eachShard(fn func(carrier) error) error { return fn(z) }
func (z *lazyLease) serving(int32) *direct                  { return nil }
func (z *lazyLease) changes() <-chan struct{}               { return nil }
func (z *lazyLease) refresh()                               {}

// NodeBoundError is a command refused on a Client from Dedicated on a
// cluster: that Client is one connection, to the node that served the slot
// of its first command's keys, and this command's keys are on a slot
// another node serves. Nothing was sent (it matches ErrNotSent).
type NodeBoundError struct {
	Bound     int32  // the slot that bound the connection
	BoundAddr string // its node
	Slot      int32  // the command's slot
}

func (e *NodeBoundError) Error() string {
	return fmt.Sprintf("zipline: this Client from Dedicated is one connection, to %s (which served slot %d when it was "+
		"bound); slot %d is served by another node: use the shared Client, or another Dedicated", e.BoundAddr, e.Bound, e.Slot)
}

// Is makes a NodeBoundError match ErrNotSent.
func (e *NodeBoundError) Is(target error) bool { return target == ErrNotSent }

func (z *lazyLease) protocol() int { return z.c.protocol() }

func (z *lazyLease) stats(st *Stats) {
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.l != nil {
		z.l.stats(st)
	}
}

func (z *lazyLease) close() error {
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.l == nil {
		return nil
	}
	return z.l.close()
}

func (z *lazyLease) taint() {
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.l != nil {
		z.l.taint()
	}
}

// leaseFor lends a dedicated connection to the node that serves slot,
// waiting within ctx for one to.
func (c *cluster) leaseFor(ctx context.Context, slot int32) (*lease, *node, error) {
	backoff := retryBackoffMin
	for {
		if nd := c.target(cmdInfo{slot: slot}); nd != nil {
			l, err := nd.dedicated.lease(ctx)
			if err == nil || !errors.Is(err, ErrNotSent) || ctx.Err() != nil {
				return l, nd, err
			}
		}
		c.askRefresh()
		if err := c.wait(ctx, backoff, againOnView); err != nil {
			return nil, nil, notSentErr(err)
		}
		backoff = min(2*backoff, retryBackoffMax)
	}
}

// eachShard calls fn with each primary's connection.
func (c *cluster) eachShard(fn func(carrier) error) error {
	for _, n := range c.primaries() {
		if err := fn(n.direct); err != nil {
			return err
		}
	}
	return nil
}

// serving returns the connection of the node that serves slot now (any
// node for noSlot), or nil.
func (c *cluster) serving(slot int32) *direct {
	if n := c.target(cmdInfo{slot: slot}); n != nil {
		return n.direct
	}
	return nil
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
func (c *cluster) primaries() []*node {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*node
	seen := map[*node]bool{}
	for _, r := range c.routeSet() {
		if r.primary != nil && !seen[r.primary] {
			seen[r.primary] = true
			out = append(out, r.primary)
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
	st.Writes += c.retired.Writes
	st.Requests += c.retired.Requests
	st.Reconnects += c.retired.Reconnects + c.redials.Load()
	for i := range st.WriteSizes {
		st.WriteSizes[i] += c.retired.WriteSizes[i]
	}
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

// CrossSlotError is a command (or transaction) whose keys hash to
// different slots of a cluster, which the server would refuse. Commands
// that can be split by slot (MGET, MSET, DEL, UNLINK, EXISTS, TOUCH) are
// split instead; others need all their keys in one slot, for instance
// with a hash tag: "{user:7}:name" and "{user:7}:email". It matches
// ErrNotSent: nothing was sent.
type CrossSlotError struct {
	Command string
	Slots   []int32
}

func (e *CrossSlotError) Error() string {
	return fmt.Sprintf("zipline: %s: keys in different cluster slots %v: use a hash tag to put them in one", e.Command, e.Slots)
}

// Is makes a CrossSlotError match ErrNotSent.
func (e *CrossSlotError) Is(target error) bool { return target == ErrNotSent }

// ReadFrom says where a cluster's read-only commands go.
type ReadFrom uint8

const (
	// ReadPrimary sends every command to the slot's primary (the default):
	// reads see every acknowledged write.
	ReadPrimary ReadFrom = iota
	// ReadPreferReplica sends a shard's reads to one of its replicas, the
	// same one for as long as it is connected (each Client draws which at
	// random, so an application's clients spread over the replicas), then
	// to the next replica that is, and to the primary when none is.
	// Replicas lag, so a read may miss a recent write; but one client's
	// reads of a key never go back in time by moving to a replica further
	// behind, except when its replica goes down.
	ReadPreferReplica
	// ReadReplicaRoundRobin spreads reads over every connected replica of
	// the shard in turn, and sends them to the primary when none is
	// connected. A client gets the read capacity of all the replicas, but
	// two reads in a row may come from replicas at different points of the
	// replication stream, so a value can appear and then vanish.
	ReadReplicaRoundRobin
	// ReadLowestLatency sends reads to whichever of the slot's nodes,
	// primary included, answered health checks fastest.
	ReadLowestLatency
)

// commandTable is what the server says of its commands (COMMAND), for the
// commands the spec does not have (a module's, a newer server's): where
// their keys are, and whether they only read. With the spec it lets Do
// route any command on a cluster, and send reads to replicas.
type commandTable cmdspec.Table

// loadCommandTable asks a node for COMMAND; if that fails the table is
// empty, and Do routes what the spec does not know by its first argument.
func loadCommandTable(ctx context.Context, n *node) commandTable {
	r := n.direct
	req := r.pipe.NewCall()
	req.Buf = appendCommandStrings(req.Buf, "COMMAND")
	req.N = 1
	if err := r.pipe.Do(ctx, req); err != nil {
		return commandTable{}
	}
	defer req.Release()
	t, err := cmdspec.Parse(req.Reply(0))
	if err != nil {
		return commandTable{}
	}
	return commandTable(t)
}

// info returns what is known of a command's keys and flags: its row's,
// or, for a command the spec does not have, the server's table's (nil if
// neither knows it). The arguments it reads its keys from follow the
// subcommand's name (see specArgs).
func (t commandTable) info(spec *commandSpec, args []arg) *cmdspec.Command {
	if spec.info.Name != "" {
		return &spec.info
	}
	c := t[spec.name]
	if c != nil && c.Subcommands != nil && len(args) > 0 {
		c = cmdspec.Table(t).Lookup(spec.name, argList(args))
	}
	return c
}

// readOnly reports whether a replica may serve the command.
func (t commandTable) readOnly(spec *commandSpec, args []arg) bool {
	if spec.info.Name != "" {
		return spec.readOnly()
	}
	c := t.info(spec, args)
	return c != nil && c.Has(cmdspec.ReadOnly)
}

// markKeys marks, among a command's arguments, those the server takes for
// keys, when the command came without key marks (Do): found from the
// command's key specs, as the server finds them. A command neither the
// spec nor the server's table knows is routed by its first argument.
func (t commandTable) markKeys(spec *commandSpec, args []arg) {
	c := t.info(spec, args)
	if c == nil {
		if len(args) > 0 {
			args[0] = keyArg(args[0].text())
		}
		return
	}
	var buf [8]int
	if spec.sub == "" {
		for _, i := range c.AppendKeys(buf[:0], argList(args)) {
			args[i] = keyArg(args[i].text())
		}
		return
	}
	// Key specs count the subcommand's name, which args do not hold.
	for _, i := range c.AppendKeys(buf[:0], subArgs(spec.sub, args)) {
		if i > 0 {
			args[i-1] = keyArg(args[i-1].text())
		}
	}
}

// argList is a command's arguments as cmdspec reads them.
func argList(args []arg) cmdspec.Args {
	return cmdspec.Args{N: len(args), At: func(i int) string { return args[i].text() }}
}

// subArgs is a subcommand's arguments as cmdspec reads them: its name,
// then args.
func subArgs(sub string, args []arg) cmdspec.Args {
	return cmdspec.Args{N: 1 + len(args), At: func(i int) string {
		if i == 0 {
			return sub
		}
		return args[i-1].text()
	}}
}
