package zipline

import (
	"context"
	"flag"
	"net"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/internal/testkit"
)

var scale = flag.Bool("scale", false, "run TestScale: 48 primaries and 200 clients (make scale)")

// queryRate samples every node's topology queries (CLUSTER SHARDS and
// SLOTS answered) and failover probes (ROLE) once a second, and keeps the
// most any node answered in one second.
type queryRate struct {
	cl    *testkit.Cluster
	stop  chan struct{}
	done  chan struct{}
	most  atomic.Int64 // topology queries
	roles atomic.Int64 // ROLE
	over  atomic.Int64 // node-seconds with more than 5 topology queries
	total atomic.Int64 // topology queries in all
}

func startQueryRate(t *testing.T, cl *testkit.Cluster) *queryRate {
	q := &queryRate{cl: cl, stop: make(chan struct{}), done: make(chan struct{})}
	prev, prevRoles := topologyQueries(t, cl), commandCalls(cl, "role")
	go func() {
		defer close(q.done)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-q.stop:
				return
			case <-tick.C:
			}
			now, roles := topologyQueries(t, cl), commandCalls(cl, "role")
			for addr, n := range now {
				d := int64(n - prev[addr])
				q.total.Add(d)
				if d > q.most.Load() {
					q.most.Store(d)
				}
				if d > 5 {
					q.over.Add(1)
				}
			}
			for addr, n := range roles {
				if d := int64(n - prevRoles[addr]); d > q.roles.Load() {
					q.roles.Store(d)
				}
			}
			prev, prevRoles = now, roles
		}
	}()
	return q
}

// finish stops the sampling and returns the most topology queries one node
// answered in one second.
func (q *queryRate) finish() int64 {
	close(q.stop)
	<-q.done
	return q.most.Load()
}

// current waits until every client routes slot to the primary at addr,
// and returns how long that took (bounded by d).
func current(t *testing.T, cs []*Client, slot int32, addr string, d time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for _, c := range cs {
		cc := c.s.top.(*cluster)
		for {
			if r := cc.routes[slot].Load(); r != nil && r.primary != nil && r.primary.addr == addr {
				break
			}
			if time.Since(start) > d {
				t.Errorf("a client still routes slot %d elsewhere than %s after %v", slot, addr, d)
				return time.Since(start)
			}
			time.Sleep(10 * time.Millisecond) // bounded poll of the client's routes
		}
	}
	return time.Since(start)
}

// TestScale is make scale: a cluster of 48 primaries (each with a replica)
// on this machine, and 200 clients in one process, through a slot move, a
// failover and a reshard of 2,000 slots under load. It prints the figures
// issue 42 asks for: the most topology queries one node answered in one
// second (goal at most 5), the time until every client routes to the new
// owner (goal under 10 s), connections per node, heap per client; and
// the reshard's failed, wrong and lost calls (goal 0). Minutes; not in
// make test.
func TestScale(t *testing.T) {
	if !*scale {
		t.Skip("run with -scale (make scale)")
	}
	const primaries, clients = 48, 200
	ctx := context.Background()
	start := time.Now()
	cl := testkit.NewCluster(t, testkit.ClusterConfig{Primaries: primaries})
	topo, err := cl.Settle(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("cluster of %d primaries and %d replicas up in %v", primaries, primaries, time.Since(start).Round(time.Millisecond))

	// 200 clients opened together, as a deploy opens them.
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	rate := startQueryRate(t, cl)
	start = time.Now()
	cs := make([]*Client, clients)
	var wg sync.WaitGroup
	for i := range cs {
		wg.Go(func() {
			c, err := New(Options{Addrs: []string{cl.Addrs()[i%len(cl.Addrs())]}, Logger: quiet})
			if err != nil {
				t.Error(err)
				return
			}
			cs[i] = c
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	defer func() {
		for _, c := range cs {
			c.Close()
		}
	}()
	opened := time.Since(start)
	key := "scale:k"
	for _, c := range cs {
		if err := c.Set(ctx, key, []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	conns := 0
	for _, p := range topo.Primaries() {
		info, err := p.Server.Info(ctx, "clients")
		if err != nil {
			t.Fatal(err)
		}
		n, _ := strconv.Atoi(info["connected_clients"])
		conns = max(conns, n)
	}
	time.Sleep(2 * time.Second) // the measurement's window, not synchronisation
	opening := rate.finish()
	t.Logf("%d clients opened in %v; at most %d connections on a primary; heap %.1f MiB per client; at most %d topology queries on one node in one second while they opened",
		clients, opened.Round(time.Millisecond), conns, float64(after.HeapAlloc-before.HeapAlloc)/clients/(1<<20), opening)

	// Idle: 40 s, past every client's first periodic refresh.
	rate = startQueryRate(t, cl)
	time.Sleep(40 * time.Second) // the measurement's window, not synchronisation
	idle := rate.finish()
	t.Logf("idle for 40 s: at most %d topology queries on one node in one second", idle)

	// A slot moves while every client reads a key in it.
	rate = startQueryRate(t, cl)
	slot := keySlot(key)
	from, err := cl.KeyOwner(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	ps := topo.Primaries()
	to := ps[0].Server
	if to == from {
		to = ps[1].Server
	}
	stop := make(chan struct{})
	var failed atomic.Int64
	for _, c := range cs {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				if _, err := c.Get(rctx, key); err != nil {
					failed.Add(1)
				}
				cancel()
				time.Sleep(10 * time.Millisecond) // each client's pace
			}
		})
	}
	// Reshard moves a primary's lowest slots: the key's own slot moves
	// with the servers' commands instead, so that the clients' key moves.
	moveSlot(t, cl, slot, from, to)
	moved := current(t, cs, slot, to.Addr, 30*time.Second)
	time.Sleep(5 * time.Second) // the refreshes the move set off: the measurement's window
	most := rate.finish()
	t.Logf("slot move: every client current %v after it (goal < 10 s); at most %d topology queries on one node in one second (goal <= 5; %d node-seconds over 5; %d in all); %d GETs failed",
		moved.Round(time.Millisecond), most, rate.over.Load(), rate.total.Load(), failed.Load())
	if most > 5 {
		t.Errorf("%d topology queries on one node in one second through a slot move (goal 5)", most)
	}

	// The new owner is killed: its replica takes over.
	rate = startQueryRate(t, cl)
	p, err := cl.Kill(ctx, to)
	if err != nil {
		t.Fatal(err)
	}
	failedOver := current(t, cs, slot, p.Primary.Addr, 30*time.Second)
	time.Sleep(5 * time.Second) // the refreshes the failover set off: the measurement's window
	most = rate.finish()
	close(stop)
	wg.Wait()
	t.Logf("failover: promoted in %v; every client current %v after the cluster settled on it; at most %d topology queries on one node in one second (goal <= 5; %d node-seconds over 5; %d in all), and at most %d failover probes (ROLE) on one node in one second; %d GETs failed in all",
		p.Window.Round(time.Millisecond), failedOver.Round(time.Millisecond), most, rate.over.Load(), rate.total.Load(), rate.roles.Load(), failed.Load())
	if most > 5 {
		t.Errorf("%d topology queries on one node in one second through a failover (goal 5)", most)
	}
	if failedOver > 10*time.Second || moved > 10*time.Second {
		t.Errorf("clients current after %v (move) and %v (failover): goal under 10 s", moved, failedOver)
	}

	// 2,100 slots resharded under load through one client: nothing wrong,
	// nothing lost.
	if topo, err = cl.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	l := startShapedLoad(cs[0], 64, loadShape{mixed: 4})
	l.waitOK(t, 5000)
	ps = topo.Primaries()
	start = time.Now()
	// redis-cli checks all 96 nodes around every move: a long bound.
	rctx, cancel := context.WithTimeout(ctx, 20*time.Minute)
	defer cancel()
	for i := 1; i <= 7; i++ { // 300 slots from each of seven primaries to the next: 2,100
		if _, err := cl.Reshard(rctx, ps[i].Server, ps[i+1].Server, 300); err != nil {
			t.Fatal(err)
		}
	}
	l.waitOK(t, 5000)
	failures := l.finish()
	for i, f := range failures {
		if i == 10 {
			break
		}
		t.Errorf("call failed during the reshard at %v: %v", f.at, f.err)
	}
	lost := l.verify(t, nil)
	l.verifyMixed(t)
	t.Logf("2,100 slots resharded in %v under 64+4 callers: %d calls ok, %d failed, %d lost", time.Since(start).Round(time.Millisecond),
		l.ok.Load()+l.mixedOK.Load(), len(failures), lost)
}

// moveSlot moves one slot from one primary to another the way redis-cli
// does (IMPORTING, MIGRATING, MIGRATE of its keys, NODE everywhere).
func moveSlot(t *testing.T, cl *testkit.Cluster, slot int32, from, to *testkit.Server) {
	t.Helper()
	ctx := context.Background()
	topo, err := cl.Topology(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fromNode, _ := topo.Node(from)
	toNode, _ := topo.Node(to)
	s := strconv.Itoa(int(slot))
	do := func(srv *testkit.Server, args ...any) {
		t.Helper()
		if _, err := srv.Do(ctx, args...); err != nil {
			t.Fatalf("%v on %s: %v", args, srv.Addr, err)
		}
	}
	do(to, "CLUSTER", "SETSLOT", s, "IMPORTING", fromNode.ID)
	do(from, "CLUSTER", "SETSLOT", s, "MIGRATING", toNode.ID)
	host, port, err := net.SplitHostPort(to.Addr)
	if err != nil {
		t.Fatal(err)
	}
	for {
		v, err := from.Do(ctx, "CLUSTER", "GETKEYSINSLOT", s, 100)
		if err != nil {
			t.Fatal(err)
		}
		keys := v.Elems()
		if len(keys) == 0 {
			break
		}
		args := []any{"MIGRATE", host, port, "", 0, 5000, "KEYS"}
		for _, k := range keys {
			args = append(args, string(k.Bytes()))
		}
		do(from, args...)
	}
	// The two owners first, as redis-cli does, then every other primary.
	do(to, "CLUSTER", "SETSLOT", s, "NODE", toNode.ID)
	do(from, "CLUSTER", "SETSLOT", s, "NODE", toNode.ID)
	for _, n := range cl.Nodes() {
		if n == to || n == from {
			continue
		}
		if info, err := n.Info(ctx, "replication"); err == nil && info["role"] == "master" {
			do(n, "CLUSTER", "SETSLOT", s, "NODE", toNode.ID)
		}
	}
}
