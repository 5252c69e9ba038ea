package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ziplinekv/zipline/internal/pace"

	"github.com/ziplinekv/zipline/bench/harness"
	"github.com/ziplinekv/zipline/testbed"
)

// The benchmark's fixed settings.
const (
	key         = "storm:k"
	getTimeout  = 5 * time.Second        // each GET's deadline
	readerPause = 10 * time.Millisecond  // a reader's sleep between GETs
	openTail    = 2 * time.Second        // sampled after the last SET
	after       = 5 * time.Second        // sampled after the move and after the failover
	startBound  = 10 * time.Minute       // starting and settling the cluster
	eventBound  = 2 * time.Minute        // the move, the promotion, the settling after it
	pollEvery   = 10 * time.Millisecond  // ROLE polls for the promotion
	settleEvery = 100 * time.Millisecond // settle checks after it
)

// The phases, in order.
const (
	phaseOpen = iota
	phaseIdle
	phaseMove
	phaseFailover
	phaseRecovery
	nPhases
)

var phaseNames = [nPhases]string{"open", "idle", "slot move", "failover", "until recovered"}

// recoveryBound bounds the phase after the failover's, which lasts until
// every client's latest GET succeeded.
// go-redis v9 reloads its cluster state on MOVED and ASK and otherwise
// only every ClusterStateReloadInterval (60 s by default), not on a
// connection refused: the bound leaves room for that.
const recoveryBound = 90 * time.Second

// kindResult is one client kind's run on its own cluster.
type kindResult struct {
	kind   string
	server string
	phases []*phaseStats
	notes  []string
	err    error
}

func (r *kindResult) note(format string, a ...any) {
	r.notes = append(r.notes, fmt.Sprintf(format, a...))
}

// runKind starts a fresh cluster, opens o.n clients of kind k on it and
// takes them through the phases.
func runKind(ctx context.Context, o *options, k clientKind) (res *kindResult) {
	res = &kindResult{kind: k.name}
	for i := range nPhases {
		res.phases = append(res.phases, &phaseStats{name: phaseNames[i], topo: counts{}, probes: counts{}, errs: map[string]int{}})
	}
	res.err = runPhases(ctx, o, k, res)
	return res
}

func runPhases(ctx context.Context, o *options, k clientKind, res *kindResult) error {
	logf := func(format string, a ...any) {
		fmt.Fprintf(os.Stderr, "%s [%s] %s\n", time.Now().Format("15:04:05"), k.name, fmt.Sprintf(format, a...))
	}
	start := time.Now()
	sctx, cancel := context.WithTimeout(ctx, startBound)
	defer cancel()
	cl, err := testbed.StartCluster(sctx, testbed.ClusterConfig{Kind: o.kind, Primaries: o.primaries, Replicas: 1})
	if err != nil {
		return fmt.Errorf("starting the cluster: %w", err)
	}
	unregister := harness.AtAbort(cl.Stop)
	defer unregister()
	defer cl.Stop()
	topo, err := cl.Settle(sctx)
	if err != nil {
		return fmt.Errorf("settling the new cluster: %w", err)
	}
	logf("cluster of %d nodes up in %v", len(cl.Nodes()), time.Since(start).Round(time.Millisecond))

	// Everything the phases need is read now, before the sampling: from
	// here on the benchmark sends no command that the sampler counts
	// except through node.do, which keeps count.
	nodes := make([]*node, 0, len(cl.Nodes()))
	byServer := map[*testbed.Server]*node{}
	for _, s := range cl.Nodes() {
		n := newNode(s)
		nodes = append(nodes, n)
		byServer[s] = n
	}
	res.server = describe(ctx, nodes[0])
	slot := testbed.KeySlot(key)
	owner, ok := topo.Owner(slot)
	if !ok {
		return fmt.Errorf("no primary serves slot %d", slot)
	}
	ps := topo.Primaries()
	target := ps[0]
	if target.ID == owner.ID {
		target = ps[1]
	}
	var primaries []*node
	for _, p := range ps {
		primaries = append(primaries, byServer[p.Server])
	}
	var targetReplicas []*node
	for _, r := range topo.Replicas(target.ID) {
		targetReplicas = append(targetReplicas, byServer[r.Server])
	}
	if len(targetReplicas) == 0 {
		return fmt.Errorf("the target primary %s has no replica", target.Addr)
	}
	primaryIDs := map[string]bool{}
	for _, p := range ps {
		primaryIDs[p.ID] = true
	}

	defer func() {
		for _, n := range nodes {
			n.close()
		}
	}()
	s, err := startSampler(ctx, nodes, res.phases)
	if err != nil {
		return err
	}
	var finishOnce sync.Once
	finish := func() { finishOnce.Do(s.finish) }
	defer finish()
	phaseAt := make([]time.Time, nPhases+1)
	var rd *readers
	setPhase := func(i int) {
		if rd != nil {
			rd.enter(i)
		}
		phaseAt[i] = time.Now()
		if i > 0 {
			res.phases[i-1].dur = phaseAt[i].Sub(phaseAt[i-1])
		}
		if i < nPhases {
			s.setPhase(i)
		}
	}

	// 1. Open: the clients opened together, each seeded with one node,
	// each SETting the key once.
	setPhase(phaseOpen)
	addrs := cl.Addrs()
	clients := make([]store, o.n)
	errs := make([]error, o.n)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Go(func() {
			c, err := k.open(addrs[i%len(addrs)])
			if err != nil {
				errs[i] = fmt.Errorf("client %d: open: %w", i, err)
				return
			}
			clients[i] = c
			sctx, cancel := context.WithTimeout(ctx, getTimeout)
			defer cancel()
			if err := c.Set(sctx, key); err != nil {
				errs[i] = fmt.Errorf("client %d: SET: %w", i, err)
			}
		})
	}
	wg.Wait()
	defer closeAll(clients)
	opened := time.Since(phaseAt[phaseOpen])
	if err := errors.Join(errs...); err != nil {
		return err
	}
	res.note("%d clients opened and SET %q in %v", o.n, key, opened.Round(time.Millisecond))
	logf("%d clients opened and SET in %v", o.n, opened.Round(time.Millisecond))
	if err := pace.Sleep(ctx, openTail); err != nil {
		return err
	}

	// 2. Idle.
	setPhase(phaseIdle)
	logf("idle for %v", o.idle)
	if err := pace.Sleep(ctx, o.idle); err != nil {
		return err
	}
	conns, connsAt := maxConnections(ctx, nodes)
	fds, _ := os.ReadDir("/proc/self/fd")
	res.note("connections at the end of the idle phase: at most %d on one node (%s; INFO clients connected_clients, "+
		"the benchmark's own one included); %d open descriptors in the benchmark's process", conns, connsAt, len(fds))

	// 3. Slot move, with every client reading the key.
	setPhase(phaseMove)
	rd = startReaders(ctx, clients, res.phases)
	defer rd.stop()
	from, to := byServer[owner.Server], byServer[target.Server]
	logf("moving slot %d from %s to %s", slot, from.srv.Addr, to.srv.Addr)
	mctx, mcancel := context.WithTimeout(ctx, eventBound)
	moveStart := time.Now()
	err = moveSlot(mctx, slot, from, to, owner.ID, target.ID, primaries)
	mcancel()
	if err != nil {
		return fmt.Errorf("moving slot %d: %w", slot, err)
	}
	moved := time.Since(moveStart)
	rd.markTail()
	res.note("slot move: slot %d (key %q) from %s to %s in %v", slot, key, from.srv.Addr, to.srv.Addr, moved.Round(time.Millisecond))
	logf("moved in %v", moved.Round(time.Millisecond))
	if err := pace.Sleep(ctx, after); err != nil {
		return err
	}

	// 4. Failover: the new owner killed, its replica promoted.
	setPhase(phaseFailover)
	logf("killing %s", to.srv.Addr)
	fctx, fcancel := context.WithTimeout(ctx, eventBound)
	defer fcancel()
	killStart := time.Now()
	killedNodes.Store(to.srv, true)
	to.srv.Kill()
	promoted, polls, err := awaitPrimary(fctx, targetReplicas)
	if err != nil {
		return fmt.Errorf("failover of %s: %w", to.srv.Addr, err)
	}
	window := time.Since(killStart)
	var live []*node
	for _, n := range nodes {
		if n != to {
			live = append(live, n)
		}
	}
	if err := awaitSettled(fctx, live, promoted, slot); err != nil {
		return fmt.Errorf("failover of %s: %w", to.srv.Addr, err)
	}
	settled := time.Since(killStart)
	rd.markTail()
	res.note("failover: killed %s (SIGKILL); its replica %s answered ROLE as primary after %v; every running node reported "+
		"cluster_state:ok, all slots ok and the key's slot served by it after %v (the benchmark's own %d ROLE polls "+
		"that found it are subtracted from the ROLE figures)", to.srv.Addr, promoted.srv.Addr,
		window.Round(time.Millisecond), settled.Round(time.Millisecond), polls)
	logf("promoted %s after %v, settled after %v", promoted.srv.Addr, window.Round(time.Millisecond), settled.Round(time.Millisecond))
	if err := pace.Sleep(ctx, after); err != nil {
		return err
	}

	// 5. Until every client reads again: the readers go on until every
	// client's latest GET succeeded, for at most recoveryBound.
	setPhase(phaseRecovery)
	failing, err := rd.awaitRecovered(ctx, recoveryBound)
	if err != nil {
		return err
	}
	if failing > 0 {
		res.note("**%d of %d clients' latest GET still failed %v after the failover phase** (%v after the kill)",
			failing, o.n, recoveryBound, time.Since(killStart).Round(time.Millisecond))
	}
	if last := rd.lastFailure(); last.After(killStart) {
		rel := last.Sub(killStart.Add(settled)).Round(time.Millisecond)
		when := fmt.Sprintf("%v after", rel)
		if rel < 0 {
			when = fmt.Sprintf("%v before", -rel)
		}
		res.note("the last failed GET ended %v after the kill, %s the cluster had settled",
			last.Sub(killStart).Round(time.Millisecond), when)
	} else {
		res.note("no GET failed after the kill")
	}
	setPhase(nPhases)
	finish()
	rd.stop()

	res.note("sampling: %d reads of a running node failed; the longest time between two samples of a node was %v",
		s.errs, maxInterval(res.phases).Round(time.Millisecond))
	// Sanity: no failover other than the one caused.
	t, err := cl.Topology(ctx)
	if err != nil {
		res.note("topology afterwards: %v", err)
		return nil
	}
	var unexpected []string
	for _, p := range t.Primaries() {
		if !primaryIDs[p.ID] && p.Server != promoted.srv {
			unexpected = append(unexpected, p.Addr)
		}
	}
	if len(unexpected) > 0 || len(t.Primaries()) != o.primaries {
		res.note("**unexpected**: afterwards %d primaries serve slots; promoted other than the one killed: %v", len(t.Primaries()), unexpected)
	}
	return nil
}

// closeAll closes the clients together.
func closeAll(clients []store) {
	var wg sync.WaitGroup
	for _, c := range clients {
		if c != nil {
			wg.Go(c.Close)
		}
	}
	wg.Wait()
}

func describe(ctx context.Context, n *node) string {
	v, err := n.do(ctx, "INFO", "server")
	if err != nil {
		return "unknown"
	}
	info := testbed.ParseInfo(string(v.Bytes()))
	if vk := info["valkey_version"]; vk != "" {
		return "valkey " + vk
	}
	return "redis " + info["redis_version"]
}

// maxConnections returns the most connected clients on one node.
func maxConnections(ctx context.Context, nodes []*node) (int, string) {
	most, at := 0, ""
	for _, n := range nodes {
		v, err := n.do(ctx, "INFO", "clients")
		if err != nil {
			continue
		}
		c, _ := strconv.Atoi(testbed.ParseInfo(string(v.Bytes()))["connected_clients"])
		if c > most {
			most, at = c, n.srv.Addr
		}
	}
	return most, at
}

func maxInterval(phases []*phaseStats) time.Duration {
	var d time.Duration
	for _, p := range phases {
		d = max(d, p.maxInterval)
	}
	return d
}

// moveSlot moves slot from one primary to another the way redis-cli does:
// IMPORTING on the target, MIGRATING on the source, MIGRATE of its keys
// in batches, then NODE on the target, the source and every other primary.
func moveSlot(ctx context.Context, slot int, from, to *node, fromID, toID string, primaries []*node) error {
	s := strconv.Itoa(slot)
	if _, err := to.do(ctx, "CLUSTER", "SETSLOT", s, "IMPORTING", fromID); err != nil {
		return err
	}
	if _, err := from.do(ctx, "CLUSTER", "SETSLOT", s, "MIGRATING", toID); err != nil {
		return err
	}
	host, port, err := net.SplitHostPort(to.srv.Addr)
	if err != nil {
		return err
	}
	for {
		v, err := from.do(ctx, "CLUSTER", "GETKEYSINSLOT", s, 100)
		if err != nil {
			return err
		}
		keys := v.Elems()
		if len(keys) == 0 {
			break
		}
		args := []any{"MIGRATE", host, port, "", 0, 5000, "KEYS"}
		for _, k := range keys {
			args = append(args, string(k.Bytes()))
		}
		if _, err := from.do(ctx, args...); err != nil {
			return err
		}
	}
	done := map[*node]bool{}
	for _, n := range append([]*node{to, from}, primaries...) {
		if done[n] {
			continue
		}
		done[n] = true
		if _, err := n.do(ctx, "CLUSTER", "SETSLOT", s, "NODE", toID); err != nil {
			return fmt.Errorf("SETSLOT NODE on %s: %w", n.srv.Addr, err)
		}
	}
	return nil
}

// awaitPrimary polls ROLE on the candidates until one answers as a
// primary, and returns it and how many ROLEs it sent.
func awaitPrimary(ctx context.Context, candidates []*node) (*node, int, error) {
	polls := 0
	for {
		for _, n := range candidates {
			v, err := n.do(ctx, "ROLE")
			polls++
			if err == nil && len(v.Elems()) > 0 && string(v.Elems()[0].Bytes()) == "master" {
				return n, polls, nil
			}
		}
		if err := pace.Sleep(ctx, pollEvery); err != nil {
			return nil, polls, fmt.Errorf("waiting for a replica to be promoted: %w", err)
		}
	}
}

// awaitSettled waits until every node in live reports cluster_state:ok
// and every slot ok (CLUSTER INFO), and agrees that owner serves slot (a
// GET of the key: the value from owner, MOVED to owner from the others).
// It sends none of the commands the sampler counts.
func awaitSettled(ctx context.Context, live []*node, owner *node, slot int) error {
	moved := fmt.Sprintf("MOVED %d %s", slot, owner.srv.Addr)
	check := func(n *node) error {
		v, err := n.do(ctx, "CLUSTER", "INFO")
		if err != nil {
			return fmt.Errorf("%s: CLUSTER INFO: %w", n.srv.Addr, err)
		}
		info := testbed.ParseInfo(string(v.Bytes()))
		if info["cluster_state"] != "ok" || info["cluster_slots_ok"] != strconv.Itoa(testbed.Slots) {
			return fmt.Errorf("%s: cluster_state:%s cluster_slots_ok:%s", n.srv.Addr, info["cluster_state"], info["cluster_slots_ok"])
		}
		v, err = n.do(ctx, "GET", key)
		switch {
		case n == owner && err != nil:
			return fmt.Errorf("%s (the new owner): GET: %w", n.srv.Addr, err)
		case n != owner && (!v.IsError() || string(v.Bytes()) != moved):
			return fmt.Errorf("%s: GET answered %q (%v), not %q", n.srv.Addr, v.Bytes(), err, moved)
		}
		return nil
	}
	var last error
	for {
		errs := make([]error, len(live))
		var wg sync.WaitGroup
		for i, n := range live {
			wg.Go(func() { errs[i] = check(n) })
		}
		wg.Wait()
		if last = errors.Join(errs...); last == nil {
			return nil
		}
		if err := pace.Sleep(ctx, settleEvery); err != nil {
			return fmt.Errorf("waiting for the cluster to settle: %w; last: %v", err, firstLine(last))
		}
	}
}

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// readers is every client reading the key in a loop, each GET charged to
// the phase current when it returns.
type readers struct {
	phases []*phaseStats
	stage  atomic.Int32 // phase<<1 | 1 once the phase's event has ended
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once

	mu         sync.Mutex
	tailFailed [nPhases]map[int]bool // clients with a failed GET in a phase's tail
	lastFailed [nPhases]map[int]bool // clients whose latest GET in a phase failed
	failing    map[int]bool          // clients whose latest GET failed
	lastFail   time.Time             // when the latest failed GET ended
}

func startReaders(ctx context.Context, clients []store, phases []*phaseStats) *readers {
	ctx, cancel := context.WithCancel(ctx)
	r := &readers{phases: phases, cancel: cancel, failing: map[int]bool{}}
	for i := range nPhases {
		r.tailFailed[i], r.lastFailed[i] = map[int]bool{}, map[int]bool{}
	}
	r.stage.Store(phaseMove << 1)
	for i, c := range clients {
		r.wg.Go(func() {
			for ctx.Err() == nil {
				gctx, gcancel := context.WithTimeout(ctx, getTimeout)
				err := c.Get(gctx, key)
				gcancel()
				if ctx.Err() != nil {
					return // stopped: a GET cut short is not counted
				}
				r.record(i, err)
				if pace.Sleep(ctx, readerPause) != nil {
					return
				}
			}
		})
	}
	return r
}

// markTail notes that the current phase's event has ended: failures from
// now on are its tail's.
func (r *readers) markTail() {
	st := r.stage.Load()
	r.mu.Lock()
	r.phases[st>>1].tailed = true
	r.mu.Unlock()
	r.stage.Store(st | 1)
}

var digits = regexp.MustCompile(`[0-9]+`)

func (r *readers) record(client int, err error) {
	st := r.stage.Load()
	ph, tail := int(st>>1), st&1 == 1
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.failing[client] = true
		r.lastFail = time.Now()
	} else {
		delete(r.failing, client)
	}
	if ph < nPhases { // not after the last phase
		p := r.phases[ph]
		p.readers = true
		p.gets++
		r.lastFailed[ph][client] = err != nil
		if err == nil {
			return
		}
		p.failed++
		if errors.Is(err, errWrong) {
			p.wrongValues++
		}
		if tail {
			p.tailFailed++
			r.tailFailed[ph][client] = true
		}
		class := digits.ReplaceAllString(err.Error(), "N")
		if len(class) > 90 {
			class = class[:90] + "…"
		}
		p.errs[class]++
	}
}

// awaitRecovered waits until no client's latest GET failed, for at most
// bound, and returns how many clients' did then.
func (r *readers) awaitRecovered(ctx context.Context, bound time.Duration) (int, error) {
	deadline := time.Now().Add(bound)
	for {
		r.mu.Lock()
		n := len(r.failing)
		r.mu.Unlock()
		if n == 0 || time.Now().After(deadline) {
			return n, nil
		}
		if err := pace.Sleep(ctx, settleEvery); err != nil {
			return n, err
		}
	}
}

// lastFailure is when the latest failed GET ended (zero if none did).
func (r *readers) lastFailure() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lastFail
}

// enter moves the readers to phase i.
func (r *readers) enter(i int) { r.stage.Store(int32(i) << 1) }

// stop stops the readers and completes the phases' reader figures.
func (r *readers) stop() {
	r.once.Do(func() {
		r.cancel()
		r.wg.Wait()
		r.mu.Lock()
		defer r.mu.Unlock()
		for i, p := range r.phases {
			p.tailClients = len(r.tailFailed[i])
			for _, f := range r.lastFailed[i] {
				if f {
					p.failedEndingClients++
				}
			}
		}
	})
}
