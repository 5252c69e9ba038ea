package zipline

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/internal/resp"
	"github.com/ziplinekv/zipline/internal/testkit"
	"github.com/ziplinekv/zipline/testbed/servertest"
)

// simCluster is a cluster simulated in process, at a size no machine here
// runs as servers: shards of a primary and a replica, each node a
// listener on loopback that answers what a Client asks a cluster node
// (HELLO, CLUSTER SHARDS, GET with MOVED for slots it does not own), and
// counts the topology queries it answers.
type simCluster struct {
	nodes []*simNode // primary of shard s at 2s, its replica at 2s+1

	mu    sync.RWMutex
	owner [slotCount]int32 // the shard serving each slot
	reply []byte           // CLUSTER SHARDS, made afresh at each change

	wg sync.WaitGroup
}

type simNode struct {
	index   int // in simCluster.nodes: shard index/2, a replica when odd
	ln      net.Listener
	addr    string
	port    int
	queries atomic.Int64 // CLUSTER SHARDS answered
	mu      sync.Mutex
	conns   []net.Conn
}

func newSimCluster(t testing.TB, shards int) *simCluster {
	t.Helper()
	sc := &simCluster{}
	for i := range 2 * shards {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		n := &simNode{index: i, ln: ln, addr: ln.Addr().String(), port: ln.Addr().(*net.TCPAddr).Port}
		sc.nodes = append(sc.nodes, n)
	}
	for slot := range slotCount {
		sc.owner[slot] = int32(slot * shards / slotCount)
	}
	sc.reply = sc.shardsReply()
	for _, n := range sc.nodes {
		sc.wg.Add(1)
		go sc.accept(n)
	}
	t.Cleanup(sc.close)
	return sc
}

func (sc *simCluster) close() {
	for _, n := range sc.nodes {
		n.ln.Close()
		n.mu.Lock()
		for _, c := range n.conns {
			c.Close()
		}
		n.mu.Unlock()
	}
	sc.wg.Wait()
}

// move gives slots [lo, hi] to shard s: their former owners answer MOVED
// from then on, and CLUSTER SHARDS says so.
func (sc *simCluster) move(lo, hi int, s int32) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	for slot := lo; slot <= hi; slot++ {
		sc.owner[slot] = s
	}
	sc.reply = sc.shardsReply()
}

// shardsReply is CLUSTER SHARDS (RESP3) of the current owners. Callers
// hold mu, or own sc alone.
func (sc *simCluster) shardsReply() []byte {
	ranges := make([][][2]int, len(sc.nodes)/2)
	for slot := 0; slot < slotCount; {
		s, end := sc.owner[slot], slot
		for end+1 < slotCount && sc.owner[end+1] == s {
			end++
		}
		ranges[s] = append(ranges[s], [2]int{slot, end})
		slot = end + 1
	}
	b := fmt.Appendf(nil, "*%d\r\n", len(ranges))
	for s, rs := range ranges {
		b = fmt.Appendf(b, "%%2\r\n+slots\r\n*%d\r\n", 2*len(rs))
		for _, r := range rs {
			b = fmt.Appendf(b, ":%d\r\n:%d\r\n", r[0], r[1])
		}
		b = fmt.Appendf(b, "+nodes\r\n*2\r\n")
		for i, role := range []string{"master", "replica"} {
			n := sc.nodes[2*s+i]
			b = fmt.Appendf(b, "%%7\r\n+id\r\n$40\r\n%040d\r\n+port\r\n:%d\r\n+ip\r\n$9\r\n127.0.0.1\r\n+endpoint\r\n$9\r\n127.0.0.1\r\n"+
				"+role\r\n$%d\r\n%s\r\n+replication-offset\r\n:1\r\n+health\r\n$6\r\nonline\r\n", 2*s+i, n.port, len(role), role)
		}
	}
	return b
}

func (sc *simCluster) accept(n *simNode) {
	defer sc.wg.Done()
	for {
		c, err := n.ln.Accept()
		if err != nil {
			return
		}
		n.mu.Lock()
		n.conns = append(n.conns, c)
		n.mu.Unlock()
		sc.wg.Add(1)
		go sc.serve(n, c)
	}
}

// serve answers one connection. Its buffers are small: at a thousand
// nodes the servers share the test's memory with the client measured.
func (sc *simCluster) serve(n *simNode, c net.Conn) {
	defer sc.wg.Done()
	defer c.Close()
	r := resp.NewReader(c, 512, resp.Limits{})
	w := bufio.NewWriterSize(c, 512)
	self := int32(n.index / 2)
	primary := n.index%2 == 0
	var v resp.Value
	for {
		if err := r.ReadValue(&v); err != nil {
			return
		}
		args := v.Elems()
		if len(args) == 0 {
			return
		}
		switch cmd := strings.ToUpper(string(args[0].Bytes())); {
		case cmd == "HELLO":
			w.WriteString("%5\r\n+server\r\n+redis\r\n+version\r\n+7.2.0\r\n+proto\r\n:3\r\n+mode\r\n+cluster\r\n+role\r\n+master\r\n")
		case cmd == "CLUSTER" && len(args) > 1 && strings.EqualFold(string(args[1].Bytes()), "SHARDS"):
			n.queries.Add(1)
			sc.mu.RLock()
			w.Write(sc.reply)
			sc.mu.RUnlock()
		case cmd == "GET" && len(args) == 2:
			slot := testkit.KeySlot(string(args[1].Bytes()))
			sc.mu.RLock()
			owner := sc.owner[slot]
			sc.mu.RUnlock()
			if owner == self && primary {
				w.WriteString("$1\r\nv\r\n")
			} else {
				fmt.Fprintf(w, "-MOVED %d %s\r\n", slot, sc.nodes[2*owner].addr)
			}
		case cmd == "INFO":
			w.WriteString("$30\r\n# Cluster\r\ncluster_enabled:1\r\n\r\n")
		case cmd == "PING":
			w.WriteString("+PONG\r\n")
		default:
			w.WriteString("+OK\r\n")
		}
		if r.Buffered() == 0 {
			if w.Flush() != nil {
				return
			}
		}
	}
}

func (sc *simCluster) queries() (total, most int64) {
	for _, n := range sc.nodes {
		q := n.queries.Load()
		total += q
		most = max(most, q)
	}
	return total, most
}

// keyInShard returns a key whose slot shard s serves now.
func (sc *simCluster) keyInShard(s int32) string {
	sc.mu.RLock()
	defer sc.mu.RUnlock()
	for i := 0; ; i++ {
		k := "sim:" + strconv.Itoa(i)
		if sc.owner[testkit.KeySlot(k)] == s {
			return k
		}
	}
}

func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// A Client on a simulated cluster of 1,000 nodes (500 shards of a primary
// and a replica): it opens in bounded time and memory, a topology refresh
// (three nodes asked, CLUSTER SHARDS of 500 shards parsed and elected)
// stays under its bound, and when a range of slots moves, a storm of
// requests for them meets MOVED and follows it without a storm of
// topology queries: the redirects patch the routes, and the nodes are
// asked about as often as one refresh a second allows.
func TestClusterSimulated1000Nodes(t *testing.T) {
	servertest.MeasuredWithoutRace(t)
	const shards = 500
	sc := newSimCluster(t, shards)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	before := heapInUse()
	start := time.Now()
	c, err := New(Options{Addrs: []string{sc.nodes[0].addr, sc.nodes[2].addr}, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	opened := time.Since(start)
	cc := c.s.top.(*cluster)
	// A request to every shard: each primary's connection in use.
	for s := range int32(shards) {
		if v, err := c.Get(ctx, sc.keyInShard(s)); err != nil || string(v) != "v" {
			t.Fatalf("GET on shard %d: %q %v", s, v, err)
		}
	}
	heap := heapInUse() - before // the simulated nodes' connections are in it too
	cc.mu.Lock()
	conns := len(cc.nodes)
	cc.mu.Unlock()

	// Refreshes, timed: nodes are asked at most once a second each, and a
	// refresh asks three, so there are always nodes to ask.
	const refreshes = 5
	start = time.Now()
	for range refreshes {
		if err := cc.refreshNow(ctx); err != nil {
			t.Fatal(err)
		}
	}
	refresh := time.Since(start) / refreshes

	// A range of slots moves from shard 0 to shard 1, and 64 goroutines
	// ask for keys there: each meets MOVED once at most, and the routes
	// follow.
	queriesBefore, _ := sc.queries()
	moving := sc.keyInShard(0)
	slot := testkit.KeySlot(moving)
	sc.move(slot-slot%64, slot-slot%64+63, 1)
	stormStart := time.Now()
	var wg sync.WaitGroup
	var failed atomic.Int64
	var firstErr atomic.Pointer[error]
	for g := range 64 {
		wg.Go(func() {
			for i := range 50 {
				if _, err := c.Get(ctx, moving); err != nil {
					if failed.Add(1) == 1 {
						err = fmt.Errorf("goroutine %d, call %d: %w", g, i, err)
						firstErr.Store(&err)
					}
				}
			}
		})
	}
	wg.Wait()
	storm := time.Since(stormStart)
	queriesAfter, most := sc.queries()

	t.Logf("1,000 nodes: New in %v; %d connections, heap %.1f MiB (%.1f KiB per connection, both ends); refresh %v; "+
		"3,200 GETs through a moved slot range in %v: %d failed, %d topology queries (%d at most on one node)",
		opened.Round(time.Millisecond), conns, float64(heap)/(1<<20), float64(heap)/1024/float64(conns),
		refresh.Round(100*time.Microsecond), storm.Round(time.Millisecond), failed.Load(), queriesAfter-queriesBefore, most)
	if e := firstErr.Load(); e != nil {
		t.Errorf("%d GETs failed through the move; the first: %v", failed.Load(), *e)
	}
	if opened > 10*time.Second {
		t.Errorf("New took %v on 1,000 nodes (bound 10 s)", opened)
	}
	if refresh > time.Second {
		t.Errorf("a topology refresh took %v on 1,000 nodes (bound 1 s)", refresh)
	}
	// The client's connections (one per primary: ReadPrimary) with the
	// simulated nodes' ends of them, and the route table.
	if perConn := heap / uint64(conns); perConn > 128<<10 {
		t.Errorf("%d KiB of heap per connection on 1,000 nodes (bound 128 KiB, both ends)", perConn>>10)
	}
	if conns > shards+2 {
		t.Errorf("%d connections for %d primaries (ReadPrimary: one each, and the seeds)", conns, shards)
	}
	// The storm: one refresh a second at most, three nodes each, plus
	// those in flight at its edges.
	if limit := 3 * (int64(storm.Seconds()) + 2); queriesAfter-queriesBefore > limit {
		t.Errorf("%d topology queries in %v of redirects (bound %d)", queriesAfter-queriesBefore, storm, limit)
	}
	if most > refreshes+4 {
		t.Errorf("one node answered %d topology queries (bound %d)", most, refreshes+4)
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Error("the test ran out of its minute")
	}
}

// One topology refresh of a Client on the simulated 1,000 nodes, whole:
// three nodes asked over loopback, their CLUSTER SHARDS read, parsed and
// elected (an unchanged map is not installed again).
func BenchmarkTopologyRefreshSimulated1000Nodes(b *testing.B) {
	sc := newSimCluster(b, 500)
	c, err := New(Options{Addrs: []string{sc.nodes[0].addr}, Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	cc := c.s.top.(*cluster)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := cc.refreshNow(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
