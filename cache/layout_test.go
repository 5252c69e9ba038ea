package cache

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/internal/testkit"
	"github.com/ziplinekv/zipline/layout"
)

// With a layout namespace as its store, a Cache keeps its values zipped
// into the namespace's buckets, each with the cache's TTL as its field's
// expiry, and loads a key once.
func TestLayoutStore(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{Kind: testkit.Valkey}) // hash field expiry
	c := newClient(t, srv.Addr)
	ctx := context.Background()
	users, err := layout.New(ctx, c, layout.Namespace{Prefix: "user:", ZipAs: "u:", Buckets: layout.Dense(100)})
	if err != nil {
		t.Fatal(err)
	}
	type user struct{ Name string }
	ca := New[user](c, Options{TTL: time.Minute, Store: Layout(users)})
	var loads atomic.Int64
	load := func(context.Context) (user, error) { loads.Add(1); return user{"ada"}, nil }
	for range 3 {
		if u, err := ca.Fetch(ctx, "user:12345", load); err != nil || u.Name != "ada" {
			t.Fatalf("Fetch: %+v %v", u, err)
		}
	}
	if n := loads.Load(); n != 1 {
		t.Fatalf("%d loads, want 1", n)
	}
	if n, err := c.Exists(ctx, "user:12345"); err != nil || n != 0 {
		t.Fatalf("a plain key user:12345 exists (%d, %v): the value should be in a bucket", n, err)
	}
	if d, err := users.TTL(ctx, "user:12345"); err != nil || d <= 0 || d > time.Minute {
		t.Fatalf("the value's TTL in its bucket: %v %v, want the cache's minute", d, err)
	}
}
