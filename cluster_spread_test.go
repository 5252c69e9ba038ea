package zipline

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/internal/resp"
	"github.com/ziplinekv/zipline/internal/testkit"
)

// The clients of a fleet, asked for a new topology together (as a failover
// or a slot move makes every one of them ask), spread their queries over
// the primaries: 60 clients on a cluster of 8 primaries each ask three
// nodes, 180 queries that would all land on the first three primaries in
// slot order (60 each, 0 on the other five); drawn afresh per refresh, no
// node takes twice its share.
func TestTopologyQueriesSpreadOverNodes(t *testing.T) {
	// Eight primaries: a small cluster, where a refresh goes at once and
	// asks three nodes (see refreshBudget; a larger one's refresh asks one,
	// after a spread: make scale measures those).
	cl := testkit.NewCluster(t, testkit.ClusterConfig{Kind: testkit.Redis, Primaries: smallCluster, Replicas: -1})
	const clients = 60
	cs := clusterClients(t, cl.Addrs()[0], clients)
	// Each client asked the seed when it started; a refresh skips a node
	// asked within minQueryInterval, so it picks among the other seven.
	before := topologyQueries(t, cl)
	for _, c := range cs {
		c.s.top.refresh()
	}
	want := 0
	for _, n := range before {
		want += n
	}
	want += clients * 3
	var got map[string]int
	deadline := time.Now().Add(10 * time.Second)
	for {
		got = topologyQueries(t, cl)
		total := 0
		for _, n := range got {
			total += n
		}
		if total >= want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d topology queries after 10 s, want %d", total, want)
		}
		time.Sleep(10 * time.Millisecond) // a bounded poll of the servers' counters
	}
	most, per := 0, ""
	for addr, n := range got {
		d := n - before[addr]
		most = max(most, d)
		per += fmt.Sprintf(" %d", d)
	}
	t.Logf("queries per node:%s", per)
	if share := clients * 3 / (smallCluster - 1); most > 2*share {
		t.Errorf("a node took %d of the %d queries, more than twice its share (%d): %s", most, clients*3, share, per)
	}
}

// clusterClients opens n clients seeded with addr, closed when t ends.
func clusterClients(t *testing.T, addr string, n int) []*Client {
	t.Helper()
	cs := make([]*Client, n)
	for i := range cs {
		c, err := New(Options{Addrs: []string{addr}, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		cs[i] = c
	}
	return cs
}

// The periodic refresh is jittered: a quarter either way, drawn each time,
// so that clients opened together drift apart.
func TestRefreshIntervalJittered(t *testing.T) {
	lo, hi := DefaultClusterRefreshInterval, time.Duration(0)
	for range 1000 {
		d := jittered(DefaultClusterRefreshInterval)
		if d < DefaultClusterRefreshInterval*3/4 || d >= DefaultClusterRefreshInterval*5/4 {
			t.Fatalf("jittered %v: outside a quarter of %v", d, DefaultClusterRefreshInterval)
		}
		lo, hi = min(lo, d), max(hi, d)
	}
	if hi-lo < DefaultClusterRefreshInterval/4 {
		t.Fatalf("1,000 draws span only %v to %v", lo, hi)
	}
}

// A small cluster's refresh goes at once and asks three nodes; a larger
// one's asks one, spread over 200 ms per node beyond eight, up to 30 s.
// The failover probes slow by 100 ms per 16 nodes, up to a second.
func TestRefreshBudgetBySize(t *testing.T) {
	for _, tc := range []struct {
		nodes  int
		spread time.Duration
		ask    int
		probe  time.Duration
	}{
		{3, 0, 3, 100 * time.Millisecond},
		{8, 0, 3, 100 * time.Millisecond},
		{9, 200 * time.Millisecond, 1, 100 * time.Millisecond},
		{49, 8200 * time.Millisecond, 1, 300 * time.Millisecond},
		{1000, 30 * time.Second, 1, time.Second},
	} {
		spread, ask := refreshBudget(tc.nodes)
		if spread != tc.spread || ask != tc.ask {
			t.Errorf("%d nodes: spread %v asking %d, want %v asking %d", tc.nodes, spread, ask, tc.spread, tc.ask)
		}
		if got := failoverProbeEvery(tc.nodes); got != tc.probe {
			t.Errorf("%d nodes: failover probes every %v, want %v", tc.nodes, got, tc.probe)
		}
	}
}

// Event refreshes on a large cluster: the next goes at least a spread
// after the last, two and four spreads while they find nothing new, and
// one again after a change.
func TestEventPacingBacksOff(t *testing.T) {
	const spread = time.Second
	t0 := time.Now()
	p := eventPacing{at: t0}
	for i, tc := range []struct {
		changed bool
		wait    time.Duration
	}{
		{false, 2 * spread}, {false, 4 * spread}, {false, 4 * spread}, {true, spread}, {false, 2 * spread},
	} {
		p.done(tc.changed)
		if got := p.next(spread).Sub(t0); got != tc.wait {
			t.Fatalf("refresh %d (new map: %v): the next waits %v after it, want %v", i+1, tc.changed, got, tc.wait)
		}
	}
}

// clusterShardsReply writes what CLUSTER SHARDS answers (RESP3) for a
// cluster of shards primaries with one replica each, the slots split
// evenly.
func clusterShardsReply(shards int) []byte {
	var b []byte
	b = fmt.Appendf(b, "*%d\r\n", shards)
	node := func(i int, role string) {
		b = fmt.Appendf(b, "%%8\r\n+id\r\n$40\r\n%040d\r\n+port\r\n:%d\r\n+ip\r\n$9\r\n127.0.0.1\r\n+endpoint\r\n$9\r\n127.0.0.1\r\n"+
			"+hostname\r\n$0\r\n\r\n+role\r\n$%d\r\n%s\r\n+replication-offset\r\n:12345\r\n+health\r\n$6\r\nonline\r\n",
			i, 10000+i, len(role), role)
	}
	for s := range shards {
		lo, hi := s*slotCount/shards, (s+1)*slotCount/shards-1
		b = fmt.Appendf(b, "%%2\r\n+slots\r\n*2\r\n:%d\r\n:%d\r\n+nodes\r\n*2\r\n", lo, hi)
		node(2*s, "master")
		node(2*s+1, "replica")
	}
	return b
}

// What one topology refresh costs the client at 1,000 nodes (500 shards
// of a primary and a replica): reading CLUSTER SHARDS (about 300 KB) and
// making a shard map of it, for each of the three nodes a refresh asks, and
// the election among the three.
func BenchmarkTopologyRefresh1000Nodes(b *testing.B) {
	reply := clusterShardsReply(500)
	b.SetBytes(int64(len(reply)))
	b.ReportAllocs()
	for b.Loop() {
		views := make([]*shardMap, 3)
		for i := range views {
			r := resp.NewReader(bytes.NewReader(reply), 0, resp.Limits{})
			var v resp.Value
			if err := r.ReadValue(&v); err != nil {
				b.Fatal(err)
			}
			m, err := parseShards(v, "127.0.0.1:10000")
			if err != nil {
				b.Fatal(err)
			}
			views[i] = m
		}
		if m := elect(views, 0); len(m.shards) != 500 {
			b.Fatalf("%d shards", len(m.shards))
		}
	}
}
