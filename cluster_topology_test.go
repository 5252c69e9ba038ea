package zipline

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/internal/testkit"
)

// A node closed as unused by one install while a redirect was routing a
// slot to it (the failover watch and the refresher install shard maps of
// their own; a MOVED looks its node up before it takes the lock) must not
// stay in the route table: every request for the slot would fail as not
// sent, and the shard map, found unchanged at each refresh, was never
// installed again. An idle Client through a rolling restart failed its
// first reads so, with "too many cluster redirects and retries; the last:
// zipline: client closed".
func TestClusterRouteToClosedNodeRepaired(t *testing.T) {
	c, cl := clusterClient(t, testkit.Redis, Options{})
	cc := c.s.top.(*cluster)
	ctx := context.Background()
	topo, err := cl.Settle(ctx)
	if err != nil {
		t.Fatal(err)
	}
	key := "route:k"
	slot := keySlot(key)
	owner, err := cl.KeyOwner(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	primary, _ := topo.Node(owner)
	if err = c.Set(ctx, key, []byte("v")); err != nil {
		t.Fatal(err)
	}

	// The race, its two sides in turn: a MOVED has looked the node up,
	// then an install closes it as unused.
	stale, err := cc.node(ctx, primary.Server.Addr)
	if err != nil {
		t.Fatal(err)
	}
	closeRegistered := func(n *node) {
		cc.mu.Lock()
		delete(cc.nodes, n.addr)
		cc.mu.Unlock()
		n.close() // as closeNodes does, but waited for
	}
	closeRegistered(stale)
	if cc.movedTo(slot, primary.Server.Addr, stale) {
		t.Fatal("movedTo routed a slot to a node no longer registered")
	}

	// Whatever path leaves a closed node in a route, the next refresh
	// installs the shard map again, though it has not changed.
	cc.mu.Lock()
	cc.routes[slot].Store(&route{primary: stale})
	cc.mu.Unlock()
	if cc.routesComplete() {
		t.Fatal("routesComplete with a closed node in a route")
	}
	start := time.Now()
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	v, err := c.Get(rctx, key)
	if err != nil || string(v) != "v" {
		t.Fatalf("GET through a route to a closed node: %q, %v", v, err)
	}
	t.Logf("repaired in %v", time.Since(start).Round(time.Millisecond))
	if !cc.routesComplete() {
		t.Error("the routes still use a closed node")
	}
}

// A command that goes round until maxRedirects says why it went round the
// last time, and carries no value.
func TestClusterTooManyRedirectsSaysWhy(t *testing.T) {
	f := flight{errs: make([]error, 2), done: make([]bool, 2)}
	f.errs[0] = &ServerError{Prefix: "CLUSTERDOWN", Message: "CLUSTERDOWN The cluster is down"}
	f.failWaiting(errTooManyRedirects)
	if got := f.errs[0].Error(); !strings.Contains(got, "too many cluster redirects") || !strings.Contains(got, "CLUSTERDOWN") {
		t.Errorf("error %q does not say why", got)
	}
	if got := f.errs[1].Error(); got != "zipline: too many cluster redirects and retries" {
		t.Errorf("error %q", got)
	}
}
