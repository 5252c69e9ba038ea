package zipline

// This file keeps a cluster's route table current: refreshed from the
// nodes' accounts (cluster_shards.go) on demand and periodically, patched
// by MOVED, with a node's connections made once and closed when it leaves.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"
)

// askRefresh asks the refresher for a new shard map, without waiting. The
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
// topology query per second from one client. A fleet is many clients: on
// a large cluster, a refresh that an event asked for (a MOVED, a lost
// connection, CLUSTERDOWN: what every client sees at once) is paced
// (eventPacing), and asks one node (see refreshBudget).
func (c *cluster) refresher() {
	defer c.wg.Done()
	t := time.NewTimer(jittered(DefaultClusterRefreshInterval))
	defer t.Stop()
	probe, stopProbes := c.s.latencyProbes()
	defer stopProbes()
	if probe != nil {
		c.s.probeLatency(c.life, c.allNodes())
	}
	var pacing eventPacing
	for {
		event := false
		select {
		case <-c.life.Done():
			return
		case <-probe:
			c.s.probeLatency(c.life, c.allNodes())
			continue
		case <-c.refreshAsked:
			if !pacing.wait(c) {
				return
			}
			event = true
		case <-t.C:
		}
		// A refresh, whatever asked for it, puts the periodic one off:
		// during a storm it would be one more query.
		t.Reset(jittered(DefaultClusterRefreshInterval))
		before := c.installed.Load()
		ctx, cancel := context.WithTimeout(c.life, c.s.opts.DialTimeout)
		if err := c.refreshNow(ctx); err != nil && c.life.Err() == nil {
			c.s.opts.Logger.Debug("zipline: cluster topology refresh failed", "err", err)
		}
		cancel()
		if event {
			pacing.done(c.installed.Load() != before)
		}
	}
}

// eventPacing spaces the refreshes that events ask for on a large cluster
// (refreshBudget's spread). The first after a calm goes at a moment drawn
// at random within the spread, so that the clients of a fleet that all saw
// the event spread their queries over it; asks that arrive meanwhile are
// the same refresh. The next goes no sooner than a spread later, and one
// more spread later for each refresh in a row that found nothing new, up
// to four spreads: a failover or a slot move changes the map once, and the
// errors that go on until the cluster has settled would otherwise cost a
// refresh per spread, each a query to some node from every client. On a
// small cluster the spread is zero: a refresh goes at once.
type eventPacing struct {
	at    time.Time // the last event refresh, or when it is due
	quiet int       // event refreshes in a row that changed nothing
}

// wait holds an event's refresh until its moment. It reports false when
// the client closed meanwhile.
func (p *eventPacing) wait(c *cluster) bool {
	spread, _ := refreshBudget(c.queryable())
	if spread <= 0 {
		return true
	}
	now := time.Now()
	if now.Sub(p.at) > 4*spread {
		p.quiet = 0 // a calm since the last
	}
	at := now.Add(rand.N(spread))
	if next := p.next(spread); at.Before(next) {
		at = next
	}
	p.at = at
	t := time.NewTimer(at.Sub(now))
	defer t.Stop()
	select {
	case <-c.life.Done():
		return false
	case <-t.C:
	}
	select { // what was asked while waiting is this refresh
	case <-c.refreshAsked:
	default:
	}
	return true
}

// next returns the earliest moment for the next event refresh: a spread
// after the last, two or four while refreshes find nothing new.
func (p *eventPacing) next(spread time.Duration) time.Time {
	return p.at.Add(spread << min(p.quiet, 2))
}

// done records whether the refresh just made installed a new map.
func (p *eventPacing) done(changed bool) {
	if changed {
		p.quiet = 0
	} else {
		p.quiet++
	}
}

// refreshBudget returns, for a client that can ask n nodes, how long a
// refresh an event asked for is spread over, and how many nodes a refresh
// asks. Up to smallCluster nodes a refresh goes at once and asks three,
// whose majority is installed (the nodes disagree for a moment after a
// failover); each node's answer costs it little at that size. Beyond, the
// answer grows with the cluster (CLUSTER SHARDS costs a node about 2 ms at
// hundreds of nodes) and so does the fleet: a refresh asks one node, as
// go-redis's and rueidis's do, and an event's refreshes are spread over
// spreadPerNode for each node beyond smallCluster, at most maxRefreshSpread.
// A fleet of k clients that all saw the event then costs each node about
// k / (n × spread) queries a second: 200 clients on 48 primaries, half a
// query a second per node. Since the nodes are drawn at random, some
// node-seconds get several times the mean: at 100 ms per node (one query
// a second on average) make scale saw 6 and 7 on one node in one second
// through a failover (two runs); at 200 ms, at most 4. A MOVED patches
// its route at once and a lost primary's replicas are probed apart
// (cluster_failover.go), so the spread delays no failover and no slot
// move, only the rest of the map.
func refreshBudget(n int) (spread time.Duration, ask int) {
	if n <= smallCluster {
		return 0, 3
	}
	return min(time.Duration(n-smallCluster)*spreadPerNode, maxRefreshSpread), 1
}

const (
	smallCluster     = 8
	spreadPerNode    = 200 * time.Millisecond
	maxRefreshSpread = 30 * time.Second
)

// queryable returns how many nodes the client can ask for the topology.
func (c *cluster) queryable() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.nodes)
}

// refreshNow asks up to three nodes (one on a large cluster: see
// refreshBudget) for their shard map of the cluster and installs the one
// most of them give. Nodes asked less than minQueryInterval ago are
// skipped (or waited for, when every node was).
func (c *cluster) refreshNow(ctx context.Context) error {
	_, ask := refreshBudget(c.queryable())
	queried := c.pickQueried(ctx, ask)
	if len(queried) == 0 {
		return errors.New("zipline: no cluster node to ask for the topology")
	}
	views := make([]*shardMap, len(queried))
	errs := make([]error, len(queried))
	var wg sync.WaitGroup
	for i, n := range queried {
		wg.Add(1)
		go func() {
			defer wg.Done()
			views[i], errs[i] = c.queryShards(ctx, n)
		}()
	}
	wg.Wait()
	var got []*shardMap
	for _, v := range views {
		if v != nil {
			got = append(got, v)
		}
	}
	if len(got) == 0 {
		return fmt.Errorf("zipline: cluster topology: %w", errors.Join(errs...))
	}
	return c.adopt(ctx, elect(got, c.installed.Load()))
}

// adopt installs the shard map a refresh elected, unless it is the one
// installed (and every route's node is still open), or stale against a
// MOVED the client has met since (staleAgainst): then it asks again, of
// other nodes, which will have heard by then.
func (c *cluster) adopt(ctx context.Context, v *shardMap) error {
	if v.hash == c.installed.Load() && c.routesComplete() && c.routesAgree(v) {
		return nil
	}
	if c.staleAgainst(v) {
		c.askRefresh()
		return nil
	}
	return c.install(ctx, v)
}

// jittered returns d give or take a quarter, drawn afresh each time: the
// clients of a fleet, opened together by a deploy, would otherwise refresh
// together every interval, each time a burst on the nodes they ask.
func jittered(d time.Duration) time.Duration {
	return d*3/4 + rand.N(d/2)
}

// pickQueried chooses up to n nodes to ask for the topology: primaries
// first, then replicas, then seeds, none asked within minQueryInterval,
// each group in an order drawn afresh every time, so that the clients of a
// fleet spread their queries over the nodes rather than all ask the owners
// of the lowest slots. When every candidate was asked within the interval,
// it waits (bounded by ctx) for the first to be allowed again.
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
		routes := c.routeSet()
		for _, r := range routes {
			add(r.primary)
		}
		shuffle(cands)
		primaries := len(cands)
		for _, r := range routes {
			for _, rep := range r.replicas {
				add(rep)
			}
		}
		shuffle(cands[primaries:])
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

func shuffle(nodes []*node) {
	rand.Shuffle(len(nodes), func(i, j int) { nodes[i], nodes[j] = nodes[j], nodes[i] })
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

// queryShards asks one node for its shard map: CLUSTER SHARDS, or CLUSTER SLOTS on
// servers older than 7.
func (c *cluster) queryShards(ctx context.Context, n *node) (*shardMap, error) {
	v, err := c.s.nodeDo(ctx, n, "CLUSTER", "SHARDS")
	if err == nil {
		return parseShards(v, n.addr)
	}
	var se *ServerError
	if !errors.As(err, &se) {
		return nil, err
	}
	if v, err = c.s.nodeDo(ctx, n, "CLUSTER", "SLOTS"); err != nil {
		return nil, err
	}
	return parseSlots(v, n.addr)
}

// install makes v the route table: it connects to the nodes v names (a
// primary that cannot be reached still gets its route: requests for it fail
// as not sent and wait for the next shard map), then swaps the routes slot by
// slot, and closes the connections of nodes that left.
func (c *cluster) install(ctx context.Context, v *shardMap) error {
	byAddr := map[string]*node{}
	var wg sync.WaitGroup
	var mu sync.Mutex
	addrs := c.connectTo(v)
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
	for a, n := range byAddr {
		// Another install (the failover watch's, the refresher's) may
		// have closed n as unused since it was looked up: route to the
		// node registered now. With none, n stays, and the next refresh
		// installs the shard map again (see routesComplete).
		if m := c.nodes[a]; m != nil && m != n {
			byAddr[a] = m
		}
	}
	known := c.standbyLocked()
	for _, s := range v.shards {
		r := &route{primary: byAddr[s.primary], standby: withStandby(s.replicas, known[byAddr[s.primary]])}
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

// connectTo returns the nodes of v the client connects to: the primaries,
// and the replicas where reads may go. With ReadAZAffinity, where the
// nodes report their zones (Valkey 9.1's CLUSTER SHARDS), a shard with
// replicas in the client's zone has only those connected: at hundreds of
// nodes the others would cost a connection each for reads that never go
// to them. A shard with none there has all its replicas connected.
func (c *cluster) connectTo(v *shardMap) []string {
	o := &c.s.opts
	var addrs []string
	for _, s := range v.shards {
		if s.primary != "" {
			addrs = append(addrs, s.primary)
		}
		if o.ReadFrom == ReadPrimary {
			continue
		}
		n := len(addrs)
		if o.ReadFrom == ReadAZAffinity && o.AvailabilityZone != "" {
			for _, a := range s.replicas {
				if v.zones[a] == o.AvailabilityZone {
					addrs = append(addrs, a)
				}
			}
		}
		if len(addrs) == n {
			addrs = append(addrs, s.replicas...)
		}
	}
	return addrs
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
		c.retired.keep(n)
		c.wg.Add(1)
		go func() { defer c.wg.Done(); n.close() }()
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

// moved patches the routes after a MOVED reply from node from (nil if
// unknown) and asks for a full refresh: the slot's new owner serves it
// from now on, even before the refresh, and so does every other slot of
// its primary when the new owner was that primary's replica (a failover).
func (c *cluster) moved(ctx context.Context, slot int32, addr string, from *node) {
	if from != nil && from.addr != addr {
		c.deny(from.addr, addr, slot)
	}
	for range 3 {
		n, err := c.node(ctx, addr)
		if err != nil {
			break
		}
		if c.movedTo(slot, addr, n) {
			return
		}
		// n was closed as unused (a shard map installed meanwhile had no
		// route to it) between node and movedTo: connect afresh.
	}
	c.askRefresh()
}

// movedTo routes slot to n at addr, which a MOVED named, unless n is no
// longer the node registered for addr: a route to a closed node would
// fail every request for the slot as not sent until the shard map
// changed. It reports whether it could.
func (c *cluster) movedTo(slot int32, addr string, n *node) bool {
	c.mu.Lock()
	if c.nodes[addr] != n {
		c.mu.Unlock()
		return false
	}
	switch cur := c.routes[slot].Load(); {
	case cur != nil && cur.primary != nil && cur.primary != n && slices.Contains(cur.standby, addr):
		// The slot's own replica holds it now: a failover, which hands
		// the replica every slot of its primary at once. Moving them all
		// here spares a MOVED round trip per slot until the next shard map
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
		return true
	}
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
	c.askRefresh()
	return true
}

// A denial is a node's MOVED for a slot: at that moment the node did not
// serve it.
type denial struct {
	slot int32
	at   time.Time
}

// deniedFor is how long a node's MOVED outweighs shard maps read from
// other nodes that still give it the slot (staleAgainst). A node that
// gave a slot away gets it back only through another failover or slot
// move, which takes longer than the cluster's gossip takes to tell every
// node of the first; past this, a map is believed again.
const deniedFor = 2 * minQueryInterval

// deny records that node at addr answered MOVED for slot, pointing to
// owner; a MOVED pointing to a node takes back that node's own denial.
func (c *cluster) deny(addr, owner string, slot int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.denied == nil {
		c.denied = map[string]denial{}
	}
	c.denied[addr] = denial{slot: slot, at: time.Now()}
	delete(c.denied, owner)
}

// staleAgainst reports whether shard map v gives a slot to a node that
// answered MOVED for it within deniedFor: the view of a node that has not
// yet heard of a failover the client has met (or read before the client
// met it). Installing it would send every slot of the failed-over shard
// back to its former primary, each to be MOVED again, and lose what is in
// flight to it when it restarts.
func (c *cluster) staleAgainst(v *shardMap) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for addr, d := range c.denied {
		if time.Since(d.at) > deniedFor {
			delete(c.denied, addr)
			continue
		}
		// The MOVED set the slot's route to the node it named; while that
		// node cannot be reached (killed since, restarting) its word is
		// worth nothing, and the map, which may know the slot's real owner
		// now, is let in.
		if r := c.routes[d.slot].Load(); r != nil && r.primary != nil && !r.primary.direct.pipe.Connected() {
			delete(c.denied, addr)
			continue
		}
		if v.owner(d.slot) == addr {
			return true
		}
	}
	return false
}

// routesComplete reports whether every node the routes use is the node
// registered for its address. A route to a closed node (one an install
// running at the same time closed as unused: see movedTo, install) fails
// every request for its slots, and a shard map found again unchanged is
// otherwise not installed again.
func (c *cluster) routesComplete() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range c.routeSet() {
		if r.primary != nil && c.nodes[r.primary.addr] != r.primary {
			return false
		}
		for _, n := range r.replicas {
			if c.nodes[n.addr] != n {
				return false
			}
		}
	}
	return true
}

// routesAgree reports whether every slot whose route's primary cannot be
// reached now is routed as v says. A MOVED patches routes past the map
// installed (movedTo); when the node it named is gone since (a replica
// that pointed to its primary just before the primary was killed), a
// refresh that finds the installed map again must install it anew, or
// the slots stay on a dead node until the map changes.
func (c *cluster) routesAgree(v *shardMap) bool {
	for i := range c.routes {
		r := c.routes[i].Load()
		if r == nil || r.primary == nil || r.primary.direct.pipe.Connected() {
			continue
		}
		if v.owner(int32(i)) != r.primary.addr {
			return false
		}
	}
	return true
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

// maxStandby bounds the replica addresses a route remembers (see
// withStandby).
const maxStandby = 8

// standbyLocked returns the standby addresses of each primary's routes
// now. c.mu is held.
func (c *cluster) standbyLocked() map[*node][]string {
	out := map[*node][]string{}
	for _, r := range c.routeSet() {
		if r.primary != nil && len(r.standby) > 0 {
			out[r.primary] = r.standby
		}
	}
	return out
}

// withStandby returns the standby addresses of a primary's route in a new
// shard map: the replicas the map names, then those its routes named
// before (up to maxStandby in all). A map read while a replica restarts,
// or in the middle of a manual failover, can leave the replica out, and a
// route that forgot it would take the failover's MOVED for a single slot
// that moved: every other slot would then go on to the former primary,
// one MOVED each, until the next shard map, and those in flight when it
// restarts would be lost. Remembering costs nothing else: standby only
// reads MOVED replies.
func withStandby(replicas, before []string) []string {
	out := replicas
	for _, a := range before {
		if len(out) >= maxStandby {
			break
		}
		if !slices.Contains(out, a) {
			if len(out) == len(replicas) {
				out = slices.Clone(replicas)
			}
			out = append(out, a)
		}
	}
	return out
}

// changes returns a channel closed at the next change of the routes.
func (c *cluster) changes() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.changed
}

// allNodes returns every node the cluster holds a connection to.
func (c *cluster) allNodes() []*node {
	c.mu.Lock()
	defer c.mu.Unlock()
	nodes := make([]*node, 0, len(c.nodes))
	for _, n := range c.nodes {
		nodes = append(nodes, n)
	}
	return nodes
}
