package testbed

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ClusterConfig describes a cluster to start. The zero value starts a Redis
// Cluster of three primaries with one replica each.
type ClusterConfig struct {
	Kind Kind
	// Primaries is the number of shards; 0 means 3, the fewest that
	// redis-cli --cluster create accepts.
	Primaries int
	// Replicas is the number of replicas of each primary: 0 means 1, and a
	// negative number means none.
	Replicas int
	// NodeTimeout is cluster-node-timeout; 0 means one second. It sets how
	// long a silent node takes to be suspected and so how long a failover
	// takes: the servers' default, 15 s, is far too slow for tests.
	NodeTimeout time.Duration
	// Args are extra configuration directives for every node.
	Args []string
}

// Cluster is a Redis Cluster or Valkey Cluster of local processes, each
// node a Server in its own temporary directory (which holds its
// nodes.conf, so that a killed node restarts as the same node).
//
// Its operations break the cluster the way production breaks and then wait,
// bounded by their context (or, without a deadline, by a default that grows
// with NodeTimeout), until it has settled again: see Settle. Nodes paused
// with Server.Pause or Cluster.Pause, and nodes that are down, are left out
// of the checks until they are resumed or restarted.
type Cluster struct {
	Kind        Kind
	NodeTimeout time.Duration

	nodes []*Server // in start order; roles change, the slice does not
	cli   string    // redis-cli
}

// Timings of the waits. Polls are of server state, never blind sleeps.
const (
	settleEvery = 20 * time.Millisecond // whole-cluster checks: a few commands per node
	roleEvery   = 5 * time.Millisecond  // one ROLE: the failover window is measured by it
	callTimeout = time.Second           // one command of a poll
	maxPolls    = 100_000               // every poll is bounded in count as well as time
	busOffset   = 10000                 // the cluster bus listens on port+10000
)

// StartCluster starts the nodes on free loopback ports, joins them with
// redis-cli --cluster create (redis-cli 7 builds Valkey clusters too), and
// waits until the cluster has settled. It returns an error wrapping
// ErrNoBinary if the server or redis-cli is missing.
func StartCluster(ctx context.Context, cfg ClusterConfig) (*Cluster, error) {
	if cfg.Kind == "" {
		cfg.Kind = Redis
	}
	if cfg.Primaries == 0 {
		cfg.Primaries = 3
	}
	if cfg.Primaries < 3 {
		return nil, fmt.Errorf("testbed: a cluster needs at least 3 primaries, not %d", cfg.Primaries)
	}
	switch {
	case cfg.Replicas == 0:
		cfg.Replicas = 1
	case cfg.Replicas < 0:
		cfg.Replicas = 0
	}
	if cfg.NodeTimeout <= 0 {
		cfg.NodeTimeout = time.Second
	}
	if _, err := Binary(cfg.Kind); err != nil {
		return nil, err
	}
	cli, err := findBinary("redis-cli", "ZIPLINE_REDIS_CLI")
	if err != nil {
		return nil, err
	}
	// A cluster that does not form within its bound (redis-cli waiting for
	// the nodes to agree, which they do in about two seconds, seen once to
	// hang past fifteen in a suite of four test binaries) is stopped and
	// made again on other ports, once.
	var errs []error
	for attempt := 1; attempt <= 2; attempt++ {
		c, err := startCluster(ctx, cfg, cli)
		if err == nil {
			return c, nil
		}
		errs = append(errs, fmt.Errorf("attempt %d: %w", attempt, err))
		if errors.Is(err, ErrNoBinary) || ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// startCluster starts, joins and settles one cluster for StartCluster.
func startCluster(ctx context.Context, cfg ClusterConfig, cli string) (*Cluster, error) {
	c := &Cluster{Kind: cfg.Kind, NodeTimeout: cfg.NodeTimeout, cli: cli}
	ctx, cancel := c.bound(ctx)
	defer cancel()

	args := append([]string{
		"--cluster-enabled", "yes",
		"--cluster-config-file", "nodes.conf",
		"--cluster-node-timeout", strconv.FormatInt(cfg.NodeTimeout.Milliseconds(), 10),
		// Full syncs start at once instead of waiting 5 s for more
		// replicas, so that replicas are in sync soon after a (re)start.
		"--repl-diskless-sync-delay", "0",
		// Replicas load a full sync straight from the socket: Valkey 9
		// otherwise saves it from a background thread and notices the end
		// only on its once-a-second replication cron, which keeps a
		// resynced replica out of sync for a second more.
		"--repl-diskless-load", "swapdb",
	}, cfg.Args...)
	total := cfg.Primaries * (1 + cfg.Replicas)
	// Started together: a node takes tens of milliseconds to answer.
	c.nodes = make([]*Server, total)
	errs := make([]error, total)
	ports := &portSet{used: make(map[int]bool)}
	var wg sync.WaitGroup
	for i := range total {
		wg.Go(func() { c.nodes[i], errs[i] = startNode(Config{Kind: cfg.Kind, Args: args}, ports.pick) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		c.Stop()
		return nil, err
	}
	create := []string{"--cluster", "create"}
	create = append(create, c.Addrs()...)
	create = append(create, "--cluster-replicas", strconv.Itoa(cfg.Replicas), "--cluster-yes")
	if _, err := c.runCLI(ctx, create...); err != nil {
		err = fmt.Errorf("%w%s", err, c.logTails())
		c.Stop()
		return nil, err
	}
	if _, err := c.Settle(ctx); err != nil {
		err = fmt.Errorf("%w%s", err, c.logTails())
		c.Stop()
		return nil, err
	}
	return c, nil
}

// logTails is the end of every node's log, for an error that says why a
// cluster did not form.
func (c *Cluster) logTails() string {
	var b strings.Builder
	for _, s := range c.nodes {
		tail := s.logTail()
		if i := strings.LastIndexByte(tail[:max(len(tail)-600, 0)], '\n'); i >= 0 {
			tail = tail[i+1:]
		}
		fmt.Fprintf(&b, "\n--- %s's log, its end:\n%s", s.Addr, tail)
	}
	return b.String()
}

// Stop kills every node by its PID (paused ones too) and removes their
// directories. It is safe to call more than once.
func (c *Cluster) Stop() { stopAll(c.nodes) }

// Nodes returns every node in start order, whatever its role or state.
func (c *Cluster) Nodes() []*Server { return slices.Clone(c.nodes) }

// Addrs returns every node's address, in start order: seeds for a client.
func (c *Cluster) Addrs() []string { return addrsOf(c.nodes) }

// Server returns the node listening on addr (as in a MOVED or ASK
// redirection), or nil.
func (c *Cluster) Server(addr string) *Server { return serverAt(c.nodes, addr) }

// Topology returns the cluster as the first running node that answers sees
// it, without waiting for the nodes to agree; after an operation has
// returned, they do.
func (c *Cluster) Topology(ctx context.Context) (Topology, error) {
	err := errors.New("no node is running")
	for _, s := range c.running() {
		var v nodesView
		if v, err = c.view(ctx, s); err == nil {
			return c.topology(v), nil
		}
	}
	return Topology{}, fmt.Errorf("testbed: topology: %w", err)
}

// SlotOwner returns the primary that serves slot, according to Topology.
func (c *Cluster) SlotOwner(ctx context.Context, slot int) (*Server, error) {
	t, err := c.Topology(ctx)
	if err != nil {
		return nil, err
	}
	n, ok := t.Owner(slot)
	if !ok || n.Server == nil {
		return nil, fmt.Errorf("testbed: no known primary serves slot %d", slot)
	}
	return n.Server, nil
}

// KeyOwner returns the primary that serves key's slot (KeySlot).
func (c *Cluster) KeyOwner(ctx context.Context, key string) (*Server, error) {
	return c.SlotOwner(ctx, KeySlot(key))
}

// Settle waits until the cluster is healthy and every running node agrees
// on it, and returns the topology they agree on. Healthy means that every
// running node (not down, not paused):
//
//   - reports cluster_state:ok and knows every node, none in handshake;
//   - sees every running node, and flags none of them as failing;
//   - sees all 16384 slots served by running primaries, none migrating;
//   - if it is a replica, is in sync with its primary
//     (master_link_status:up, no sync in progress);
//
// and that all of them report the same IDs, addresses, roles, primaries and
// slots for the running nodes.
func (c *Cluster) Settle(ctx context.Context) (Topology, error) {
	ctx, cancel := c.bound(ctx)
	defer cancel()
	var t Topology
	err := poll(ctx, settleEvery, "waiting for the cluster to settle", func() (err error) {
		t, err = c.probe(ctx)
		return err
	})
	return t, err
}

// AwaitReplicas waits until every running replica has received every
// write its primary had taken when AwaitReplicas was called: replication
// is asynchronous, so a primary killed right after a write may take it
// along, and a test or demo that kills one after loading data calls this
// first, so that the replica it promotes holds that data.
func (c *Cluster) AwaitReplicas(ctx context.Context) error {
	ctx, cancel := c.bound(ctx)
	defer cancel()
	t, err := c.Topology(ctx)
	if err != nil {
		return err
	}
	type wait struct {
		replica *Server
		offset  int64 // the primary's replication offset
	}
	var waits []wait
	for _, p := range t.Primaries() {
		if p.Server == nil {
			continue
		}
		off, err := replOffset(ctx, p.Server, "master_repl_offset")
		if err != nil {
			return err
		}
		for _, r := range runningServers(t.Replicas(p.ID)) {
			waits = append(waits, wait{r, off})
		}
	}
	return poll(ctx, settleEvery, "waiting for the replicas to catch up", func() error {
		for _, w := range waits {
			off, err := replOffset(ctx, w.replica, "slave_repl_offset")
			if err != nil {
				return err
			}
			if off < w.offset {
				return fmt.Errorf("replica %s at offset %d, its primary was at %d", w.replica.Addr, off, w.offset)
			}
		}
		return nil
	})
}

// replicationInfo returns s's INFO replication, within callTimeout.
func replicationInfo(ctx context.Context, s *Server) (map[string]string, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	repl, err := s.Info(ctx, "replication")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.Addr, err)
	}
	return repl, nil
}

// replOffset reads one replication offset from s's INFO replication.
func replOffset(ctx context.Context, s *Server, field string) (int64, error) {
	repl, err := replicationInfo(ctx, s)
	if err != nil {
		return 0, err
	}
	off, err := strconv.ParseInt(repl[field], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: INFO replication %s %q: %w", s.Addr, field, repl[field], err)
	}
	return off, nil
}

// Promotion is what a failover did.
type Promotion struct {
	// Primary is the replica that became primary, and Former the primary
	// it replaced. Both are nil when no failover was needed (Kill of a
	// replica).
	Primary, Former *Server
	// Window runs from the kill (or CLUSTER FAILOVER) until Primary first
	// answered ROLE as a primary: how long the slots had no writable
	// primary, to within a few milliseconds of polling.
	Window time.Duration
	// Settled runs from the same moment until the cluster had settled.
	Settled time.Duration
}

// Kill kills node (SIGKILL, as a crash would). If it was a primary, Kill
// waits until one of its replicas has been promoted, and measures the
// window; then, either way, until the cluster has settled without it.
// Killing a primary that has no running replica is refused, since the
// cluster could not recover: KillShard does that on purpose.
func (c *Cluster) Kill(ctx context.Context, node *Server) (Promotion, error) {
	ctx, cancel := c.bound(ctx)
	defer cancel()
	t, err := c.Topology(ctx)
	if err != nil {
		return Promotion{}, err
	}
	n, ok := t.Node(node)
	if !ok || !node.running() {
		return Promotion{}, fmt.Errorf("testbed: kill: %s is not a running node of this cluster", node.Addr)
	}
	var replicas []*Server
	if n.Role == Primary && len(n.Slots) > 0 {
		replicas = runningServers(t.Replicas(n.ID))
		if len(replicas) == 0 {
			return Promotion{}, fmt.Errorf("testbed: kill: primary %s has no running replica to take over (KillShard takes a shard down)", node.Addr)
		}
	}
	start := time.Now()
	node.Kill()
	var p Promotion
	if len(replicas) > 0 {
		p.Former = node
		if p.Primary, err = c.awaitPrimary(ctx, replicas); err != nil {
			return p, fmt.Errorf("testbed: kill %s: %w", node.Addr, err)
		}
		p.Window = time.Since(start)
	}
	_, err = c.Settle(ctx)
	p.Settled = time.Since(start)
	return p, err
}

// Failover runs CLUSTER FAILOVER on replica (a manual failover: its
// primary stops writes, the replica catches up and takes over), waits until
// replica is primary, and then until the cluster has settled, with the
// former primary a replica of it.
func (c *Cluster) Failover(ctx context.Context, replica *Server) (Promotion, error) {
	ctx, cancel := c.bound(ctx)
	defer cancel()
	t, err := c.Topology(ctx)
	if err != nil {
		return Promotion{}, err
	}
	n, ok := t.Node(replica)
	if !ok || n.Role != Replica {
		return Promotion{}, fmt.Errorf("testbed: failover: %s is not a replica of this cluster", replica.Addr)
	}
	primary, ok := t.ByID(n.PrimaryID)
	if !ok || primary.Server == nil {
		return Promotion{}, fmt.Errorf("testbed: failover: %s replicates unknown node %s", replica.Addr, n.PrimaryID)
	}
	p := Promotion{Former: primary.Server}
	start := time.Now()
	if _, err := replica.Do(ctx, "CLUSTER", "FAILOVER"); err != nil {
		return Promotion{}, fmt.Errorf("testbed: failover %s: %w", replica.Addr, err)
	}
	if p.Primary, err = c.awaitPrimary(ctx, []*Server{replica}); err != nil {
		return p, fmt.Errorf("testbed: failover %s: %w", replica.Addr, err)
	}
	p.Window = time.Since(start)
	t, err = c.Settle(ctx)
	p.Settled = time.Since(start)
	if err != nil {
		return p, err
	}
	if f, _ := t.Node(p.Former); f.Role != Replica || f.PrimaryID != n.ID {
		return p, fmt.Errorf("testbed: failover %s: former primary %s is %s of %q", replica.Addr, p.Former.Addr, f.Role, f.PrimaryID)
	}
	return p, nil
}

// Roll is one shard's turn in a rolling restart: when its switch (the
// failover, or the kill) began and ended, and the nodes it went between.
type Roll struct {
	Former, Primary        *Server
	SwitchStart, SwitchEnd time.Time
	// Promoted is when the replica was seen to answer as the primary,
	// before the cluster had settled (SwitchEnd).
	Promoted time.Time
}

// RollShard takes the shard of the i-th primary (in slot order) through a
// rolling restart's turn as operators run one: its replica restarted and
// waited for until in sync, the switch to it (CLUSTER FAILOVER, or with
// kill the primary killed and the replica promoted by the cluster), and
// the former primary restarted, back as a replica, and waited for until
// in sync. It needs a replica per primary.
func (c *Cluster) RollShard(ctx context.Context, i int, kill bool) (Roll, error) {
	restart := func(node *Server) error {
		if _, err := c.Restart(ctx, node); err != nil {
			return err
		}
		return c.AwaitReplicas(ctx)
	}
	t, err := c.Settle(ctx)
	if err != nil {
		return Roll{}, err
	}
	primaries := t.Primaries()
	if i < 0 || i >= len(primaries) {
		return Roll{}, fmt.Errorf("testbed: roll: no primary %d of %d", i, len(primaries))
	}
	primary := primaries[i]
	replicas := runningServers(t.Replicas(primary.ID))
	if len(replicas) == 0 {
		return Roll{}, fmt.Errorf("testbed: roll: primary %s has no running replica", primary.Server.Addr)
	}
	r := Roll{Former: primary.Server, Primary: replicas[0]}
	if err := restart(r.Primary); err != nil {
		return r, err
	}
	r.SwitchStart = time.Now()
	var p Promotion
	if kill {
		p, err = c.Kill(ctx, r.Former)
	} else {
		p, err = c.Failover(ctx, r.Primary)
	}
	r.SwitchEnd, r.Promoted = time.Now(), r.SwitchStart.Add(p.Window)
	if err != nil {
		return r, err
	}
	return r, restart(r.Former)
}

// Restart starts nodes again on their ports and from their nodes.conf (a
// node still running is killed first: a crash and a quick restart), then
// waits until the cluster has settled with them. A former primary whose
// slots were taken over comes back as a replica of the node that took
// them; a node that was a replica comes back as one and resyncs.
func (c *Cluster) Restart(ctx context.Context, nodes ...*Server) (Topology, error) {
	ctx, cancel := c.bound(ctx)
	defer cancel()
	for _, s := range nodes {
		if c.Server(s.Addr) != s {
			return Topology{}, fmt.Errorf("testbed: restart: %s is not a node of this cluster", s.Addr)
		}
		// The port was free a moment ago; a server that exits at once
		// (another process took the port) is retried, a few times.
		var err error
		for range 3 {
			if err = s.Restart(); err == nil {
				if err = s.checkPID(ctx); err != nil {
					s.kill()
				}
			}
			if !errors.Is(err, errExited) {
				break
			}
		}
		if err != nil {
			return Topology{}, fmt.Errorf("testbed: restart %s: %w", s.Addr, err)
		}
	}
	return c.Settle(ctx)
}

// Pause freezes node (SIGSTOP): it keeps its connections but answers
// nothing, like a hung host. Pause does not wait: whether the cluster
// fails the node over depends on how long it stays paused compared with
// NodeTimeout. Tests should prefer testkit.Pause, which resumes at cleanup.
func (c *Cluster) Pause(node *Server) error { return node.Pause() }

// Resume continues a paused node (SIGCONT) and waits until the cluster has
// settled with it: a primary that was failed over meanwhile has become a
// replica and resynced.
func (c *Cluster) Resume(ctx context.Context, node *Server) (Topology, error) {
	if err := node.Resume(); err != nil {
		return Topology{}, err
	}
	return c.Settle(ctx)
}

// ShardDown is what KillShard did.
type ShardDown struct {
	// Nodes are the nodes killed, primary first: Restart(ctx, Nodes...)
	// brings the shard back.
	Nodes []*Server
	// Slots are the slots that lost their primary.
	Slots []SlotRange
	// Took runs from the kill until every running node reported
	// cluster_state:fail, answering commands with CLUSTERDOWN.
	Took time.Duration
}

// KillShard kills primary and its replicas, paused ones included (replicas
// first, so that none is promoted), and waits until every other running
// node reports cluster_state:fail.
func (c *Cluster) KillShard(ctx context.Context, primary *Server) (ShardDown, error) {
	ctx, cancel := c.bound(ctx)
	defer cancel()
	t, err := c.Topology(ctx)
	if err != nil {
		return ShardDown{}, err
	}
	n, ok := t.Node(primary)
	if !ok || n.Role != Primary || len(n.Slots) == 0 || !primary.running() {
		return ShardDown{}, fmt.Errorf("testbed: kill shard: %s is not a running primary with slots", primary.Addr)
	}
	var replicas []*Server
	for _, r := range t.Replicas(n.ID) {
		if r.Server != nil && r.Server.alive() {
			replicas = append(replicas, r.Server)
		}
	}
	d := ShardDown{Nodes: append([]*Server{primary}, replicas...), Slots: n.Slots}
	start := time.Now()
	for _, s := range replicas {
		s.Kill()
	}
	primary.Kill()
	err = poll(ctx, settleEvery, "waiting for the cluster to go down", func() error {
		for _, s := range c.running() {
			info, err := c.clusterInfo(ctx, s)
			if err != nil {
				return err
			}
			if st := info["cluster_state"]; st != "fail" {
				return fmt.Errorf("%s reports cluster_state:%s", s.Addr, st)
			}
		}
		return nil
	})
	d.Took = time.Since(start)
	return d, err
}

// Resharding is what Reshard did.
type Resharding struct {
	Slots []int // the slots moved, in order
	Took  time.Duration
}

// Reshard moves n slots, keys included, from one primary to another with
// redis-cli --cluster reshard, and returns once the cluster has settled
// with the new owner.
func (c *Cluster) Reshard(ctx context.Context, from, to *Server, n int) (Resharding, error) {
	ctx, cancel := c.bound(ctx)
	defer cancel()
	before, err := c.Settle(ctx)
	if err != nil {
		return Resharding{}, err
	}
	src, ok1 := before.Node(from)
	dst, ok2 := before.Node(to)
	switch {
	case !ok1 || !ok2 || src.Role != Primary || dst.Role != Primary || from == to:
		return Resharding{}, fmt.Errorf("testbed: reshard: %s and %s are not two primaries of this cluster", from.Addr, to.Addr)
	case n <= 0 || n > src.SlotCount():
		return Resharding{}, fmt.Errorf("testbed: reshard: cannot move %d slots from %s, which has %d", n, from.Addr, src.SlotCount())
	}
	start := time.Now()
	var r Resharding
	// redis-cli gives up at the first error, such as a node that did not
	// answer in time on a loaded machine (CLUSTERDOWN, a timeout), leaving
	// a slot half moved: then the open slots are fixed, the cluster
	// settles, and the slots still to move are moved, up to three times.
	var cliErr error
	for range 3 {
		_, cliErr = c.runCLI(ctx, "--cluster", "reshard", from.Addr,
			"--cluster-from", src.ID, "--cluster-to", dst.ID,
			"--cluster-slots", strconv.Itoa(n-len(r.Slots)), "--cluster-yes")
		if cliErr != nil {
			if ctx.Err() != nil {
				return r, cliErr
			}
			if _, err := c.runCLI(ctx, "--cluster", "fix", from.Addr, "--cluster-yes"); err != nil {
				return r, fmt.Errorf("%w (after %w)", err, cliErr)
			}
		}
		after, err := c.Settle(ctx)
		r.Took = time.Since(start)
		if err != nil {
			return r, fmt.Errorf("%w (after %v)", err, cliErr)
		}
		r.Slots = r.Slots[:0]
		for slot := range Slots {
			was, _ := before.Owner(slot)
			now, _ := after.Owner(slot)
			if was.ID == src.ID && now.ID == dst.ID {
				r.Slots = append(r.Slots, slot)
			}
		}
		if len(r.Slots) >= n {
			break
		}
	}
	if len(r.Slots) != n {
		return r, fmt.Errorf("testbed: reshard moved %d slots, not %d (redis-cli: %v)", len(r.Slots), n, cliErr)
	}
	return r, nil
}

// MigrateSlots moves the first n slots of one primary, keys included, to
// another with Valkey 9's atomic slot migration (CLUSTER MIGRATESLOTS on
// the source: the slots change owner at once when their keys have been
// copied, with no slot left importing or migrating for clients to be
// redirected through), and returns once the cluster has settled with the
// new owner. Servers without it (Redis, Valkey before 9.0) return the
// server's error.
func (c *Cluster) MigrateSlots(ctx context.Context, from, to *Server, n int) (Resharding, error) {
	ctx, cancel := c.bound(ctx)
	defer cancel()
	before, err := c.Settle(ctx)
	if err != nil {
		return Resharding{}, err
	}
	src, ok1 := before.Node(from)
	dst, ok2 := before.Node(to)
	switch {
	case !ok1 || !ok2 || src.Role != Primary || dst.Role != Primary || from == to:
		return Resharding{}, fmt.Errorf("testbed: migrate slots: %s and %s are not two primaries of this cluster", from.Addr, to.Addr)
	case n <= 0 || n > src.SlotCount():
		return Resharding{}, fmt.Errorf("testbed: migrate slots: cannot move %d slots from %s, which has %d", n, from.Addr, src.SlotCount())
	}
	var r Resharding
	args := []any{"CLUSTER", "MIGRATESLOTS"}
	for _, rg := range src.Slots {
		if len(r.Slots) == n {
			break
		}
		last := min(rg.Last, rg.First+n-len(r.Slots)-1)
		args = append(args, "SLOTSRANGE", rg.First, last)
		for slot := rg.First; slot <= last; slot++ {
			r.Slots = append(r.Slots, slot)
		}
	}
	args = append(args, "NODE", dst.ID)
	start := time.Now()
	if _, err := from.Do(ctx, args...); err != nil {
		return r, fmt.Errorf("testbed: migrate slots: %w", err)
	}
	err = poll(ctx, settleEvery, "migrate slots", func() error {
		t, err := c.probe(ctx)
		if err != nil {
			return err
		}
		for _, slot := range r.Slots {
			if o, _ := t.Owner(slot); o.ID != dst.ID {
				return fmt.Errorf("slot %d is still %s's", slot, o.ID)
			}
		}
		return nil
	})
	r.Took = time.Since(start)
	return r, err
}

// probe checks once what Settle waits for, and returns the agreed topology
// or why there is none yet.
func (c *Cluster) probe(ctx context.Context) (Topology, error) {
	live := c.running()
	if len(live) == 0 {
		return Topology{}, errors.New("no node is running")
	}
	var ref Topology
	var refSig, refAddr string
	for _, s := range live {
		info, err := c.clusterInfo(ctx, s)
		if err != nil {
			return Topology{}, err
		}
		if st := info["cluster_state"]; st != "ok" {
			return Topology{}, fmt.Errorf("%s reports cluster_state:%s", s.Addr, st)
		}
		v, err := c.view(ctx, s)
		if err != nil {
			return Topology{}, err
		}
		switch {
		case len(v.nodes) != len(c.nodes):
			return Topology{}, fmt.Errorf("%s knows %d nodes, not %d", s.Addr, len(v.nodes), len(c.nodes))
		case len(v.handshake) > 0:
			return Topology{}, fmt.Errorf("%s has nodes in handshake: %v", s.Addr, v.handshake)
		case len(v.open) > 0:
			return Topology{}, fmt.Errorf("%s has slots migrating or importing: %v", s.Addr, v.open)
		case v.nodes[v.self].Addr != s.Addr:
			return Topology{}, fmt.Errorf("%s calls itself %s", s.Addr, v.nodes[v.self].Addr)
		}
		if v.nodes[v.self].Role == Replica {
			repl, err := replicationInfo(ctx, s)
			if err != nil {
				return Topology{}, err
			}
			if repl["master_link_status"] != "up" || repl["master_sync_in_progress"] != "0" {
				return Topology{}, fmt.Errorf("replica %s is not in sync (master_link_status:%s, master_sync_in_progress:%s)",
					s.Addr, repl["master_link_status"], repl["master_sync_in_progress"])
			}
		}
		t := c.topology(v)
		for _, l := range live {
			switch n, ok := t.Node(l); {
			case !ok:
				return Topology{}, fmt.Errorf("%s does not know %s", s.Addr, l.Addr)
			case n.Failed:
				return Topology{}, fmt.Errorf("%s flags %s as failing", s.Addr, l.Addr)
			}
		}
		served := 0
		for _, p := range t.Primaries() {
			if p.Server == nil || !p.Server.running() {
				return Topology{}, fmt.Errorf("%s sees slots %v served by %s, which is down or paused", s.Addr, p.Slots, p.Addr)
			}
			served += p.SlotCount()
		}
		if served != Slots {
			return Topology{}, fmt.Errorf("%s sees %d slots served, not %d", s.Addr, served, Slots)
		}
		sig := signature(t)
		if refSig == "" {
			ref, refSig, refAddr = t, sig, s.Addr
		} else if sig != refSig {
			return Topology{}, fmt.Errorf("%s and %s disagree:\n%s\nand\n%s", refAddr, s.Addr, refSig, sig)
		}
	}
	return ref, nil
}

// signature describes the running nodes of t, for comparing views.
func signature(t Topology) string {
	var b strings.Builder
	for _, n := range t.Nodes {
		if n.Server != nil && n.Server.running() {
			fmt.Fprintf(&b, "%s %s %s %s %v\n", n.ID, n.Addr, n.Role, n.PrimaryID, n.Slots)
		}
	}
	return b.String()
}

// awaitPrimary polls ROLE on candidates until one answers as a primary.
func (c *Cluster) awaitPrimary(ctx context.Context, candidates []*Server) (*Server, error) {
	var promoted *Server
	err := poll(ctx, roleEvery, "waiting for a replica to be promoted", func() error {
		for _, s := range candidates {
			cctx, cancel := context.WithTimeout(ctx, callTimeout)
			v, err := s.Do(cctx, "ROLE")
			cancel()
			if err == nil && len(v.Elems()) > 0 && string(v.Elems()[0].Bytes()) == "master" {
				promoted = s
				return nil
			}
		}
		return errors.New("no candidate is primary yet")
	})
	return promoted, err
}

// view returns s's CLUSTER NODES.
func (c *Cluster) view(ctx context.Context, s *Server) (nodesView, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	v, err := s.Do(ctx, "CLUSTER", "NODES")
	if err != nil {
		return nodesView{}, fmt.Errorf("%s: %w", s.Addr, err)
	}
	return parseClusterNodes(string(v.Bytes()))
}

// clusterInfo returns s's CLUSTER INFO.
func (c *Cluster) clusterInfo(ctx context.Context, s *Server) (map[string]string, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	v, err := s.Do(ctx, "CLUSTER", "INFO")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.Addr, err)
	}
	return ParseInfo(string(v.Bytes())), nil
}

// topology attaches the processes to a view.
func (c *Cluster) topology(v nodesView) Topology {
	nodes := slices.Clone(v.nodes)
	for i := range nodes {
		nodes[i].Server = c.Server(nodes[i].Addr)
	}
	return Topology{Nodes: nodes}
}

// running returns the nodes that can answer: alive and not paused.
func (c *Cluster) running() []*Server {
	var live []*Server
	for _, s := range c.nodes {
		if s.running() {
			live = append(live, s)
		}
	}
	return live
}

func runningServers(nodes []Node) []*Server {
	var live []*Server
	for _, n := range nodes {
		if n.Server != nil && n.Server.running() {
			live = append(live, n.Server)
		}
	}
	return live
}

// bound gives ctx a deadline if it has none: every wait ends.
func (c *Cluster) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	// A failover takes about two node timeouts plus an election; a shard
	// coming back waits two node timeouts before it is trusted again.
	return context.WithTimeout(ctx, 10*time.Second+5*c.NodeTimeout)
}

// runCLI runs redis-cli and returns its output, or an error carrying it.
func (c *Cluster) runCLI(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, c.cli, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.CombinedOutput()
	if err != nil {
		tail := out
		if len(tail) > 3000 {
			tail = tail[len(tail)-3000:]
		}
		return out, fmt.Errorf("testbed: redis-cli %s %s: %w\n%s", args[0], args[1], err, bytes.TrimSpace(tail))
	}
	return out, nil
}

// poll calls check every interval until it returns nil, and gives up when
// ctx ends (or after maxPolls), with check's last complaint.
func poll(ctx context.Context, every time.Duration, what string, check func() error) error {
	tick := time.NewTicker(every)
	defer tick.Stop()
	var last error
	for range maxPolls {
		if last = check(); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("testbed: %s: %w; last: %v", what, ctx.Err(), last)
		case <-tick.C:
		}
	}
	return fmt.Errorf("testbed: %s: gave up after %d polls; last: %v", what, maxPolls, last)
}

// startNode starts one node, with pick choosing its port, and makes sure
// that the server answering on that port is the process it started: if
// another process took the port between pick's probe and the bind, the
// new server exits, but the other one answers the readiness check.
func startNode(cfg Config, pick func() (int, error)) (*Server, error) {
	var err error
	for range 5 {
		var s *Server
		if s, err = startOn(cfg, pick); err != nil {
			return nil, err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = s.checkPID(ctx)
		cancel()
		if err == nil {
			return s, nil
		}
		s.kill()
		s.cleanup()
	}
	return nil, err
}

// checkPID checks that the server answering on s.Addr is s's process.
// The error wraps errExited when it is another one.
func (s *Server) checkPID(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	info, err := s.Info(ctx, "server")
	if err != nil {
		return fmt.Errorf("testbed: %s: %w", s.Addr, err)
	}
	if pid := strconv.Itoa(s.PID()); info["process_id"] != pid {
		return fmt.Errorf("%w: %s is served by process %s, not %s", errExited, s.Addr, info["process_id"], pid)
	}
	return nil
}

// portSet hands out cluster ports so that no two nodes of one cluster get
// the same port or the same bus port, or one's port as another's bus port:
// the nodes start in parallel, and both would find the port free.
type portSet struct {
	mu   sync.Mutex
	used map[int]bool // ports and bus ports handed out
}

func (ps *portSet) pick() (int, error) {
	for range 100 {
		p, err := clusterPort()
		if err != nil {
			return 0, err
		}
		ps.mu.Lock()
		clash := ps.used[p] || ps.used[p+busOffset]
		if !clash {
			ps.used[p], ps.used[p+busOffset] = true, true
		}
		ps.mu.Unlock()
		if !clash {
			return p, nil
		}
	}
	return 0, errors.New("testbed: found no cluster port unused by the other nodes")
}

// clusterPort returns a port p such that p and its cluster bus port
// p+10000 are both free on loopback. It picks from below the kernel's
// ephemeral range when there is room, so that no outgoing connection can
// take either port while a killed node is down and its Restart is pending;
// otherwise it takes one the kernel chose.
func clusterPort() (int, error) {
	const lowest = 10000
	ephemeral := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil {
				ephemeral = n
			}
		}
	}
	for range 200 {
		var p int
		if room := ephemeral - busOffset - lowest; room > 1000 {
			p = lowest + rand.IntN(room)
		} else {
			var err error
			if p, err = freePort(); err != nil {
				return 0, err
			}
		}
		if p+busOffset <= 65535 && portFree(p) && portFree(p+busOffset) {
			return p, nil
		}
	}
	return 0, errors.New("testbed: found no free port whose bus port (+10000) is free too")
}

// portFree reports whether 127.0.0.1:port can be listened on now.
func portFree(port int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return false
	}
	l.Close()
	return true
}
