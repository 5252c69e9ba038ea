package zipline

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/internal/testkit"
)

// maxRecovery bounds how long after a promotion the promoted replica's
// slots wait to be served, beside the machine's own lateness in the same
// stretch: a few probe intervals. Before the probe, this took up to
// minQueryInterval (0.7-1.0 s).
const maxRecovery = 3 * failoverProbeInterval

// kill -9 of a primary while 200 goroutines GET and SET 10,000 keys. Calls
// fail only inside the failover window, with the documented classes; after
// it, none; every acknowledged write stays readable, but for the killed
// primary's unreplicated tail, which is counted.
func TestClusterKillPrimaryUnderLoad(t *testing.T) {
	for _, kind := range []testkit.Kind{testkit.Redis, testkit.Valkey} {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			c, cl := clusterClient(t, kind, Options{IOTimeout: 2 * time.Second})
			ctx := context.Background()
			l := startClusterLoad(c, 200)
			l.waitOK(t, 20000)
			victim, err := cl.KeyOwner(ctx, "k:0")
			if err != nil {
				t.Fatal(err)
			}
			topo, _ := cl.Topology(ctx)
			vn, _ := topo.Node(victim)
			inVictim := func(slot int32) bool {
				for _, r := range vn.Slots {
					if int(slot) >= r.First && int(slot) <= r.Last {
						return true
					}
				}
				return false
			}
			back := l.watch(inVictim)
			killAt := time.Since(l.start)
			p, err := cl.Kill(ctx, victim)
			if err != nil {
				t.Fatal(err)
			}
			promotedAt := killAt + p.Window
			l.waitOK(t, 20000)
			// The victim's slots are served again soon after the promotion:
			// the replicas are probed, rather than the topology asked again
			// at its rate limit (a second per node). Promotion is when the
			// cluster helper's poll saw it, a few milliseconds late at most.
			// A timer late by 200 ms on a machine running other packages'
			// tests beside this one delays the client as much (seen once:
			// 315 ms under -race in CI), so that lateness is allowed for.
			back.mu.Lock()
			recovered, lastServed := back.gapEnd-promotedAt, back.last
			back.mu.Unlock()
			machine := l.late.between(promotedAt, back.gapEnd)
			if lastServed <= promotedAt {
				t.Errorf("the victim's slots were not served after the promotion (last success at %v, promotion at %v)", lastServed, promotedAt)
			} else if recovered > maxRecovery+machine {
				t.Errorf("the victim's slots were served again %v after the promotion; want at most %v and the machine's lateness in that time, %v", recovered, maxRecovery, machine)
			}
			failures := l.finish()
			var late []failure
			for _, f := range failures {
				if !errors.Is(f.err, ErrConnLost) && !errors.Is(f.err, ErrNotSent) {
					t.Errorf("failure of an undocumented class at %v: %v", f.at, f.err)
				}
				// A second after the promotion, and what the scheduler added
				// in that time: the load's timers and the failing calls'
				// goroutines run late on a loaded machine.
				if f.at < killAt || f.at > promotedAt+time.Second+l.late.overRan(promotedAt, f.at) {
					late = append(late, f)
				}
			}
			if len(late) > 0 {
				t.Errorf("%d failures outside the failover window [%v, %v]: first %v at %v", len(late), killAt, promotedAt, late[0].err, late[0].at)
			}
			// The failover shows in the reconnect counter (the OTel metric
			// zipline.pipeline.reconnects): it stayed at 0 on a cluster.
			if st := c.Stats(); st.Reconnects == 0 {
				t.Errorf("Stats().Reconnects = 0 after a primary was killed and its slots served again")
			}
			lost := l.verify(t, inVictim)
			first, last := time.Duration(0), time.Duration(0)
			if len(failures) > 0 {
				first, last = failures[0].at-killAt, failures[len(failures)-1].at-killAt
			}
			t.Logf("%s: failover window %v (kill to promotion); served again %v after the promotion (timers %v late in that time); %d calls failed, from +%v to +%v; %d acknowledged writes lost with the unreplicated tail; %d calls ok",
				kind, p.Window, recovered, machine, len(failures), first, last, lost, l.ok.Load())
		})
	}
}

// A manual CLUSTER FAILOVER under the same load: no call fails, and the
// client stalls none by more than 250 ms. The stall is the slowest call on
// the failed-over shard's keys beyond the larger of two waits the client
// does not cause: the slowest call on the other shards' keys in the same
// run (on a loaded machine a garbage collection waiting for starved
// threads pauses every call for a while, failover or not), and the pause
// of the former primary itself, which holds every client's writes from
// the start of the failover until it learns it was demoted, measured by a
// probe writing to the shard without zipline. That pause took 10-55 ms on
// a quiet machine and grows with the load on the servers.
func TestClusterManualFailoverUnderLoad(t *testing.T) {
	for _, kind := range []testkit.Kind{testkit.Redis, testkit.Valkey} {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			c, cl := clusterClient(t, kind, Options{})
			ctx := context.Background()
			l := startClusterLoad(c, 200)
			l.waitOK(t, 20000)
			topo, err := cl.Settle(ctx)
			if err != nil {
				t.Fatal(err)
			}
			primary := topo.Primaries()[0]
			replica := topo.Replicas(primary.ID)[0]
			moved := func(slot int32) bool {
				for _, r := range primary.Slots {
					if int(slot) >= r.First && int(slot) <= r.Last {
						return true
					}
				}
				return false
			}
			stayed := func(slot int32) bool { return !moved(slot) }
			probeKey := ""
			for i := 0; probeKey == ""; i++ {
				if k := "probe:" + strconv.Itoa(i); moved(keySlot(k)) {
					probeKey = k
				}
			}
			var serverPause atomic.Int64
			probeStop, probeDone := make(chan struct{}), make(chan struct{})
			go func() {
				defer close(probeDone)
				for {
					select {
					case <-probeStop:
						return
					default:
					}
					t0 := time.Now()
					v, err := primary.Server.Do(ctx, "SET", probeKey, "p")
					atomicMax(&serverPause, int64(time.Since(t0)))
					if err != nil || v.IsError() {
						return // MOVED: the former primary knows it was demoted
					}
				}
			}()
			l.resetSlowest()
			p, err := cl.Failover(ctx, replica.Server)
			close(probeStop)
			<-probeDone
			if err != nil {
				t.Fatal(err)
			}
			l.waitOK(t, 20000)
			failures := l.finish()
			for _, f := range failures {
				t.Errorf("call failed during a manual failover at %v: %v", f.at, f.err)
			}
			onMoved, movedAt := l.slowestCall(moved)
			onOthers, _ := l.slowestCall(stayed)
			pause := time.Duration(serverPause.Load())
			// The 250 ms are the client's; what the scheduler added while the
			// slowest call waited (a race-enabled suite beside CPU-bound
			// processes runs its goroutines late) is the machine's.
			machine := l.late.overRan(movedAt, movedAt+onMoved)
			if onMoved > max(onOthers, pause)+250*time.Millisecond+machine {
				t.Errorf("a call on the failed-over shard stalled %v; the former primary paused writes %v, calls on the others took at most %v, and the scheduler's lateness in that call was %v",
					onMoved, pause, onOthers, machine)
			}
			l.verify(t, nil)
			t.Logf("%s: promoted in %v; the former primary paused writes %v; slowest call on the failed-over shard %v (timers %v late in it), on the others %v; %d calls ok",
				kind, p.Window, pause, onMoved, machine, onOthers, l.ok.Load())
		})
	}
}

// Resharding 1,000 slots under a load that mixes GET/SET, MGET/MSET across
// slots, Batches, hash-tagged transactions and Watch, with redis-cli
// --cluster reshard (slot by slot, MIGRATING/IMPORTING: ASK, TRYAGAIN) on
// Redis, and Valkey 9's atomic slot migration (CLUSTER MIGRATESLOTS): no
// call fails (MOVED, ASK and TRYAGAIN are followed or waited out), and no
// node answers the client more than one topology query a second.
func TestClusterReshardUnderLoad(t *testing.T) {
	for _, tc := range []struct {
		name string
		kind testkit.Kind
		move func(*testkit.Cluster, context.Context, *testkit.Server, *testkit.Server, int) (testkit.Resharding, error)
	}{
		{"redis-cli", testkit.Redis, (*testkit.Cluster).Reshard},
		{"atomic", testkit.Valkey, (*testkit.Cluster).MigrateSlots},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			testReshardUnderLoad(t, tc.kind, tc.move)
		})
	}
}

func testReshardUnderLoad(t *testing.T, kind testkit.Kind, move func(*testkit.Cluster, context.Context, *testkit.Server, *testkit.Server, int) (testkit.Resharding, error)) {
	c, cl := clusterClient(t, kind, Options{})
	ctx := context.Background()
	l := startShapedLoad(c, 100, loadShape{mixed: 8})
	l.waitOK(t, 10000)
	topo, err := cl.Settle(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ps := topo.Primaries()
	before := topologyQueries(t, cl)
	start := time.Now()
	// 1,000 slots from the first primary to the second; under make soak,
	// on round the primaries and back again, six moves.
	var res testkit.Resharding
	for i := range soakCount(1, 6) {
		from, to := ps[i%3].Server, ps[(i+1)%3].Server
		if res, err = move(cl, ctx, from, to, 1000); err != nil {
			t.Fatal(err)
		}
		l.waitOK(t, 10000)
	}
	elapsed := time.Since(start)
	after := topologyQueries(t, cl)
	failures := l.finish()
	for _, f := range failures {
		t.Errorf("call failed during resharding at %v: %v", f.at, f.err)
	}
	l.verify(t, nil)
	l.verifyMixed(t)
	// One client: at most one query per node per second, and one more in
	// flight at each edge of the window.
	limit := int(elapsed.Seconds()) + 2
	var counts []string
	for addr, n := range after {
		q := n - before[addr]
		if q > limit {
			t.Errorf("node %s answered %d topology queries in %v from one client (limit %d)", addr, q, elapsed, limit)
		}
		counts = append(counts, strconv.Itoa(q))
	}
	t.Logf("%s: moved %d slots in %v; %d GET/SET and %d MGET/MSET/Batch/Tx/Watch calls ok; topology queries per node in %v: %s (limit %d)",
		kind, len(res.Slots), res.Took.Round(time.Millisecond), l.ok.Load(), l.mixedOK.Load(), elapsed.Round(time.Millisecond), strings.Join(counts, " "), limit)
}

// topologyQueries counts, per node, the CLUSTER SHARDS and CLUSTER SLOTS
// calls it has answered (INFO commandstats).
func topologyQueries(t *testing.T, cl *testkit.Cluster) map[string]int {
	t.Helper()
	return commandCalls(cl, "cluster|shards", "cluster|slots")
}

// commandCalls returns how many times each node has run the commands
// named (as INFO commandstats names them: "get", "cluster|shards"), in
// all.
func commandCalls(cl *testkit.Cluster, names ...string) map[string]int {
	out := map[string]int{}
	for _, n := range cl.Nodes() {
		info, err := n.Info(context.Background(), "commandstats")
		if err != nil {
			continue // a node taken down
		}
		for _, name := range names {
			calls, _, _ := strings.Cut(strings.TrimPrefix(info["cmdstat_"+name], "calls="), ",")
			n2, _ := strconv.Atoi(calls)
			out[n.Addr] += n2
		}
	}
	return out
}

// 100 topology changes (manual failovers back and forth, and a node killed
// and restarted): afterwards the Client's goroutines, descriptors and heap
// are back where they were, and it serves every key.
func TestClusterTopologyChangesLeaveNothingBehind(t *testing.T) {
	c, cl := clusterClient(t, testkit.Valkey, Options{})
	ctx := context.Background()
	for i := range 100 {
		c.Set(ctx, "k:"+strconv.Itoa(i), []byte("v"))
	}
	base := testkit.Snapshot()
	topo, err := cl.Settle(ctx)
	if err != nil {
		t.Fatal(err)
	}
	changes := 0
	for changes < 99 {
		for _, p := range topo.Primaries() {
			if changes == 99 {
				break
			}
			rep := topo.Replicas(p.ID)[0]
			if _, err := cl.Failover(ctx, rep.Server); err != nil {
				t.Fatal(err)
			}
			changes++
			if err := c.Set(ctx, "k:"+strconv.Itoa(changes), []byte("v")); err != nil {
				t.Fatalf("SET after change %d: %v", changes, err)
			}
		}
		if topo, err = cl.Settle(ctx); err != nil {
			t.Fatal(err)
		}
	}
	victim := topo.Primaries()[0]
	if _, err := cl.Kill(ctx, victim.Server); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Restart(ctx, victim.Server); err != nil {
		t.Fatal(err)
	}
	changes++
	// The restarted node is dialled again on the connection's own backoff
	// (up to ReconnectBackoffMax); until then a call to its shard fails
	// after FailoverWait with ErrShardDown, not sent. Each key is served
	// within a bounded time, and nothing else may fail.
	served := time.Now().Add(10 * time.Second)
	for i := range 100 {
		for {
			v, err := c.Get(ctx, "k:"+strconv.Itoa(i))
			if errors.Is(err, ErrShardDown) && time.Now().Before(served) {
				continue
			}
			if err != nil || string(v) != "v" {
				t.Fatalf("after %d changes, k:%d = %q %v", changes, i, v, err)
			}
			break
		}
	}
	testkit.ExpectBaseline(t, base, testkit.Tolerance{Goroutines: 4, FDs: 4, HeapBytes: 8 << 20}, 10*time.Second)
	t.Logf("%d topology changes; now %v (baseline %v)", changes, testkit.Snapshot(), base)
}

// A refresh storm: with a shard down, every node answers CLUSTERDOWN, and
// 64 clients in one process keep hammering. Each node sees at most one
// topology query per second per client.
func TestClusterRefreshStorm(t *testing.T) {
	cl := testkit.NewCluster(t, testkit.ClusterConfig{})
	ctx := context.Background()
	const clients = 64
	cs := clusterClients(t, cl.Addrs()[0], clients)
	topo, err := cl.Settle(ctx)
	if err != nil {
		t.Fatal(err)
	}
	down, err := cl.KillShard(ctx, topo.Primaries()[0].Server)
	if err != nil {
		t.Fatal(err)
	}
	before := topologyQueries(t, cl)
	start := time.Now()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var calls, clusterDown atomic.Int64
	for _, c := range cs {
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
					_, err := c.Get(cctx, "k:"+strconv.Itoa(i))
					cancel()
					calls.Add(1)
					if err != nil {
						clusterDown.Add(1)
					}
				}
			}()
		}
	}
	time.Sleep(3 * time.Second) // the storm's duration: the measurement window
	close(stop)
	wg.Wait()
	elapsed := time.Since(start)
	after := topologyQueries(t, cl)
	limit := int(float64(clients)*elapsed.Seconds()) + clients // plus one each in flight at the edges
	for addr, n := range after {
		if q := n - before[addr]; q > limit {
			t.Errorf("node %s answered %d topology queries in %v from %d clients, more than 1 per second each (%d)", addr, q, elapsed, clients, limit)
		} else {
			t.Logf("node %s: %d topology queries in %v (limit %d)", addr, q, elapsed.Round(time.Millisecond), limit)
		}
	}
	if clusterDown.Load() == 0 {
		t.Fatal("no call met the downed shard")
	}
	t.Logf("%d calls, %d failed while the shard was down (%d nodes down)", calls.Load(), clusterDown.Load(), len(down.Nodes))
}

// Watch follows its slot as a unit: the watched key's shard fails over
// while fn runs, so the transaction fn queues on the old primary (now a
// replica) is refused and aborts. fn runs again on the new primary, and
// the increment lands exactly once.
func TestClusterWatchFollowsAFailover(t *testing.T) {
	c, cl := clusterClient(t, testkit.Redis, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const key = "{watched}:n"
	if err := c.Set(ctx, key, []byte("10")); err != nil {
		t.Fatal(err)
	}
	topo, err := cl.Settle(ctx)
	if err != nil {
		t.Fatal(err)
	}
	owner, ok := topo.Owner(testkit.KeySlot(key))
	if !ok {
		t.Fatal("no owner for the watched key's slot")
	}
	replica := topo.Replicas(owner.ID)[0]
	runs := 0
	var firstErr error
	err = c.Watch(ctx, func(w *Client) error {
		runs++
		n, err := w.Get(ctx, key)
		if err != nil {
			return err
		}
		v, _ := strconv.Atoi(string(n))
		if runs == 1 {
			if _, err := cl.Failover(ctx, replica.Server); err != nil {
				t.Fatal(err)
			}
		}
		tx := w.Tx()
		tx.Set(key, []byte(strconv.Itoa(v+1)))
		err = tx.Exec(ctx)
		if runs == 1 {
			firstErr = err
		}
		return err
	}, key)
	if err != nil {
		t.Fatalf("Watch across a failover: %v (fn ran %d times; first run: %v)", err, runs, firstErr)
	}
	if runs != 2 || firstErr == nil {
		t.Fatalf("fn ran %d times, the first ending with %v: want a refused first run and one more", runs, firstErr)
	}
	if v, err := c.Get(ctx, key); err != nil || string(v) != "11" {
		t.Fatalf("after Watch: %q %v, want 11", v, err)
	}
	t.Logf("first run: %v", firstErr)
}
