package zipline

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/internal/testkit"
)

// The clients of a fleet, asked for a new topology together (as a failover
// or a slot move makes every one of them ask), spread their queries over
// the primaries: 60 clients on a cluster of 9 primaries each ask three
// nodes, 180 queries that would all land on the first three primaries in
// slot order (60 each, 0 on the other six); drawn afresh per refresh, no
// node takes twice its share.
func TestTopologyQueriesSpreadOverNodes(t *testing.T) {
	cl := testkit.NewCluster(t, testkit.ClusterConfig{Kind: testkit.Redis, Primaries: 9, Replicas: -1})
	ctx := context.Background()
	const clients = 60
	cs := make([]*Client, clients)
	for i := range cs {
		c, err := New(Options{Addrs: cl.Addrs()[:1], Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := c.Ping(ctx); err != nil {
			t.Fatal(err)
		}
		cs[i] = c
	}
	// Each client asked the seed when it started; a refresh skips a node
	// asked within minQueryInterval, so it picks among the other eight.
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
	if share := clients * 3 / 8; most > 2*share {
		t.Errorf("a node took %d of the %d queries, more than twice its share (%d): %s", most, clients*3, share, per)
	}
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
