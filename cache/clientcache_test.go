package cache

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ziplinekv/zipline"
)

// With the client-side cache as its store, hits are served in the process
// (no GET reaches the server), and a write through another process's cache
// invalidates the local copy: the next Fetch returns the new value.
func TestClientSideTier(t *testing.T) {
	srv := newServer(t)
	local := func(o *zipline.Options) { o.ClientCache = zipline.ClientCache{MaxBytes: 1 << 20} }
	a := newClient(t, srv.Addr, local)
	b := newClient(t, srv.Addr)
	ctx := context.Background()
	type user struct{ Name string }
	ua := New[user](a, Options{TTL: time.Minute, Store: a.Cached(time.Minute)})
	ub := New[user](b, Options{TTL: time.Minute})
	var loads atomic.Int64
	load := func(name string) func(context.Context) (user, error) {
		return func(context.Context) (user, error) { loads.Add(1); return user{name}, nil }
	}
	if u, err := ua.Fetch(ctx, "user:1", load("ada")); err != nil || u.Name != "ada" {
		t.Fatalf("first Fetch: %+v %v", u, err)
	}
	gets := func() int64 {
		info, err := srv.Info(ctx, "commandstats")
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		fmtSscan(info["cmdstat_get"], &n)
		return n
	}
	// Storing the loaded value invalidated the miss the first Fetch read
	// through the tier: the next Fetch reads the value once.
	if _, err := ua.Fetch(ctx, "user:1", load("never")); err != nil {
		t.Fatal(err)
	}
	before := gets()
	for range 50 {
		if u, err := ua.Fetch(ctx, "user:1", load("never")); err != nil || u.Name != "ada" {
			t.Fatalf("hit: %+v %v", u, err)
		}
	}
	if n := gets() - before; n != 0 {
		t.Fatalf("50 hits sent %d GETs to the server", n)
	}
	if err := ub.Set(ctx, "user:1", user{"grace"}); err != nil {
		t.Fatal(err)
	}
	if err := a.Ping(ctx); err != nil { // the invalidation arrives before this reply
		t.Fatal(err)
	}
	if u, err := ua.Fetch(ctx, "user:1", load("never")); err != nil || u.Name != "grace" {
		t.Fatalf("after another process's write: %+v %v", u, err)
	}
	if loads.Load() != 1 {
		t.Fatalf("%d loads, want 1", loads.Load())
	}
	if st := a.Stats().Cache; st.Hits < 50 || st.Invalidations == 0 {
		t.Fatalf("client cache stats %+v", st)
	}
}

// fmtSscan reads the calls= count of an INFO commandstats line.
func fmtSscan(line string, n *int64) {
	for i := len("calls="); i < len(line) && line[i] >= '0' && line[i] <= '9'; i++ {
		*n = *n*10 + int64(line[i]-'0')
	}
}
