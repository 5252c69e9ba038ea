package layout

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/codec"
	"github.com/ziplinekv/zipline/internal/testkit"
)

// clusterBed is a cluster under a test: KEYS on every primary, and
// commands on the primary that owns a key.
type clusterBed struct{ *testkit.Cluster }

func (b clusterBed) keys(t testing.TB, pattern string) []string {
	t.Helper()
	ctx := context.Background()
	topo, err := b.Topology(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range topo.Nodes {
		if n.Role != testkit.Primary || n.SlotCount() == 0 || n.Server == nil {
			continue
		}
		v, err := n.Server.Do(ctx, "KEYS", pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range v.Elems() {
			out = append(out, string(e.Bytes()))
		}
	}
	return out
}

func (b clusterBed) do(ctx context.Context, key string, args ...any) (testkit.Value, error) {
	srv, err := b.KeyOwner(ctx, key)
	if err != nil {
		return testkit.Value{}, err
	}
	return srv.Do(ctx, args...)
}

// newCluster starts a cluster of three primaries, with replicas if asked,
// and returns a client of it.
func newCluster(t *testing.T, kind testkit.Kind, replicas bool) (*zipline.Client, *testkit.Cluster) {
	t.Helper()
	cfg := testkit.ClusterConfig{Kind: kind, Replicas: -1}
	if replicas {
		cfg.Replicas = 1
	}
	cl := testkit.NewCluster(t, cfg)
	c, err := zipline.New(zipline.Options{Addrs: cl.Addrs(), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, cl
}

// keySlot is the server's hash slot, and slotTags name every slot.
func TestKeySlot(t *testing.T) {
	for _, k := range []string{"", "a", "user:1", "u:#1Z", "u:#{u:#1Z}45", "{users}:1", "a{}b", "a{b}c{d}", "}{x}", "{", "x{y"} {
		if got, want := keySlot(k), testkit.KeySlot(k); got != want {
			t.Fatalf("keySlot(%q) = %d, want %d", k, got, want)
		}
	}
	for slot, tag := range slotTags() {
		if keySlot(tag) != slot || strings.ContainsAny(tag, "{}#") {
			t.Fatalf("slot %d has tag %q (slot %d)", slot, tag, keySlot(tag))
		}
	}
}

// Every operation of every layout runs on a cluster: its scripts declare
// their keys and keep to one slot each (the client refuses anything else).
func TestClusterOperations(t *testing.T) {
	for _, kind := range []testkit.Kind{testkit.Redis, testkit.Valkey} {
		t.Run(string(kind), func(t *testing.T) {
			c, _ := newCluster(t, kind, false)
			ctx := context.Background()
			nss := namespaces()
			nss["dense tagged"] = Namespace{Prefix: "user:", ZipAs: "{u}:", Buckets: Dense(100)}
			for name, ns := range nss {
				t.Run(name, func(t *testing.T) {
					if err := c.FlushAll(ctx); err != nil {
						t.Fatal(err)
					}
					storeOperations(t, c, ns)
				})
			}
		})
	}
}

// Queued operations run in a batch on a cluster, split by slot; while
// migrating there they are refused, as each takes several round trips.
func TestClusterQueued(t *testing.T) {
	c, _ := newCluster(t, testkit.Redis, false)
	queuedOperations(t, c, c.Batch())
	s := openStore(t, c, bucketUsers)
	b := c.Batch()
	q := s.In(b)
	results := []error{q.Set("user:1", []byte("x")).Err(), q.Get("user:1").Err(), q.MGet("user:1").Err(),
		q.MSet(zipline.KeyValue{Key: "user:1", Value: []byte("x")}).Err(), q.Del("user:1").Err(), q.Exists("user:1").Err()}
	for i, err := range results {
		if !errors.Is(err, ErrQueuedWhileSplit) {
			t.Fatalf("queued operation %d while migrating on a cluster: %v", i, err)
		}
	}
}

// On a cluster, New refuses stored prefixes whose braces would put a
// bucket and its oversize keys in different slots, and a migration target
// without names for its tombstones.
func TestClusterRefusesPrefixes(t *testing.T) {
	c, _ := newCluster(t, testkit.Redis, false)
	ctx := context.Background()
	for _, tc := range []struct {
		ns   Namespace
		want string // in the error; "" for none
	}{
		{Namespace{Prefix: "user:", ZipAs: "u:", Buckets: Dense(100)}, ""},
		{Namespace{Prefix: "user:", ZipAs: "{u}:", Buckets: Dense(100)}, ""},
		{Namespace{Prefix: "user:", ZipAs: "a}b{c}:", Buckets: Dense(100)}, ""},
		{Namespace{Prefix: "user{:"}, ""}, // no buckets: one key per script
		{Namespace{Prefix: "user:", ZipAs: "u{:", Buckets: Dense(100)}, "'{' that does not open"},
		{Namespace{Prefix: "user:", ZipAs: "u}:", Buckets: Dense(100)}, "'}' without a hash tag"},
		{Namespace{Prefix: "user:", ZipAs: "{}u:", Buckets: Dense(100)}, "'{' that does not open"},
		{Namespace{Prefix: "user{:", Buckets: Hashed(8)}, "'{' that does not open"},
		{Namespace{Prefix: "user:", ZipAs: "u{:", MigrateFrom: &Namespace{Prefix: "user:"}}, "'{' that does not open"},
		{Namespace{Prefix: "user:", ZipAs: "u:", Buckets: Dense(100),
			MigrateFrom: &Namespace{Prefix: "user:", ZipAs: "o{", Buckets: Dense(10)}}, "MigrateFrom"},
		{Namespace{Prefix: "user:", MigrateFrom: &Namespace{Prefix: "user:", ZipAs: "u:"}}, "needs ZipAs or Buckets"},
	} {
		_, err := New(ctx, c, tc.ns)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v", tc.ns, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%+v: %v, want an error with %q", tc.ns, err, tc.want)
		}
	}
	// The same prefixes are fine on a single server.
	single, _ := newClient(t, testkit.Redis)
	if _, err := New(ctx, single, Namespace{Prefix: "user:", ZipAs: "u{:", Buckets: Dense(100)}); err != nil {
		t.Fatal(err)
	}
}

// A migration on a cluster, step by step: reads, writes and deletes during
// it, a move, and the sweep of its tombstones.
func TestClusterMigrationBasics(t *testing.T) {
	for _, kind := range []testkit.Kind{testkit.Redis, testkit.Valkey} {
		t.Run(string(kind), func(t *testing.T) {
			c, cl := newCluster(t, kind, false)
			ctx := context.Background()
			old := openStore(t, c, plainUsers)
			for i := range 20 {
				v := []byte("old-" + strconv.Itoa(i))
				if i%5 == 0 {
					v = bigValue
				}
				if err := old.Set(ctx, "user:"+strconv.Itoa(i), v); err != nil {
					t.Fatal(err)
				}
			}
			s := openStore(t, c, bucketUsers)
			if !s.splitting() {
				t.Fatal("not following the cluster protocol")
			}
			if v, err := s.Get(ctx, "user:1"); err != nil || string(v) != "old-1" {
				t.Fatalf("fallback read: %q %v", v, err)
			}
			vs, err := s.MGet(ctx, "user:1", "user:404", "user:5")
			if err != nil || string(vs[0]) != "old-1" || vs[1] != nil || string(vs[2]) != string(bigValue) {
				t.Fatalf("fallback MGet %s %v", short(vs), err)
			}
			if err := s.Set(ctx, "user:1", []byte("new-1")); err != nil {
				t.Fatal(err)
			}
			if n, _ := c.Exists(ctx, "user:1"); n != 0 {
				t.Fatal("old copy survived a write")
			}
			if n, err := s.Del(ctx, "user:2", "user:404", "user:2"); err != nil || n != 1 {
				t.Fatalf("Del %d %v", n, err)
			}
			if _, err := s.Get(ctx, "user:2"); !errors.Is(err, zipline.Nil) {
				t.Fatalf("deleted value came back: %v", err)
			}
			if n, err := s.Incr(ctx, "user:3"); err == nil {
				t.Fatalf("Incr of a string: %d", n)
			}
			if err := s.Set(ctx, "user:4", []byte("41")); err != nil {
				t.Fatal(err)
			}
			if n, err := s.Incr(ctx, "user:4"); err != nil || n != 42 {
				t.Fatalf("Incr %d %v", n, err)
			}
			if ok, err := s.SetNX(ctx, "user:6", []byte("x")); err != nil || ok {
				t.Fatalf("SetNX of an old key: %v %v", ok, err)
			}
			if ok, err := s.SetNX(ctx, "user:2", []byte("x")); err != nil || !ok {
				t.Fatalf("SetNX of a deleted key: %v %v", ok, err)
			}
			if prev, err := s.GetSet(ctx, "user:7", []byte("seven")); err != nil || string(prev) != "old-7" {
				t.Fatalf("GetSet %q %v", prev, err)
			}
			if n, err := s.Exists(ctx, "user:7", "user:8", "user:404"); err != nil || n != 2 {
				t.Fatalf("Exists %d %v", n, err)
			}
			p, err := s.Migrate(ctx, MigrateOptions{Batch: 3})
			if err != nil || p.Cursor != "0" || p.Moved == 0 {
				t.Fatalf("migrate: %+v %v", p, err)
			}
			if p, err := s.Migrate(ctx, MigrateOptions{}); err != nil || p.Moved+p.Replaced+p.Changed != 0 {
				t.Fatalf("second pass: %+v %v", p, err)
			}
			b := clusterBed{cl}
			if keys := b.keys(t, "user:*"); len(keys) != 0 {
				t.Fatalf("old keys left: %v", keys)
			}
			a := account(t, b, s)
			if a.Orphans != 0 || a.Dangling != 0 || a.Tombstones == 0 {
				t.Fatalf("new layout: %+v", a)
			}
			done := openStore(t, c, Namespace{Prefix: "user:", ZipAs: "u:", Buckets: Dense(100),
				Codec: zipline.Compression{Backend: codec.Zstd}})
			if n, err := done.Sweep(ctx); err != nil || n != a.TombSets {
				t.Fatalf("Sweep %d %v, want %d sets", n, err, a.TombSets)
			}
			if a := account(t, b, s); a.Tombstones != 0 {
				t.Fatalf("after the sweep: %+v", a)
			}
			for i, want := range map[int]string{1: "new-1", 2: "x", 4: "42", 7: "seven", 9: "old-9"} {
				if v, err := done.Get(ctx, "user:"+strconv.Itoa(i)); err != nil || string(v) != want {
					t.Fatalf("user:%d = %q %v, want %q", i, v, err, want)
				}
			}
		})
	}
}

// The migration property (see TestMigrationProperty) on a cluster, where
// a key's two copies are in different slots and the protocol of split.go
// replaces the single server's atomic moves; a mover of the test's own is
// also held between its steps across other operations.
func TestClusterMigrationProperty(t *testing.T) {
	for _, kind := range []testkit.Kind{testkit.Redis, testkit.Valkey} {
		t.Run(string(kind), func(t *testing.T) {
			c, cl := newCluster(t, kind, false)
			for seed := uint64(1); seed <= *propertySeeds; seed++ {
				t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
					if err := c.FlushAll(context.Background()); err != nil {
						t.Fatal(err)
					}
					migrationProperty(t, propertyBed{c: c, b: clusterBed{cl}, kind: kind}, seed, 3000)
				})
			}
		})
	}
}

// The property test catches a broken protocol: without tombstones, a
// mover that read a value before its deletion brings it back; a move that
// overwrites what the new layout holds loses the write that put it there.
func TestClusterMigrationPropertyCatchesFaults(t *testing.T) {
	c, cl := newCluster(t, testkit.Valkey, false)
	for _, fault := range []string{faultNoTombstones, faultBlindCopy} {
		t.Run(fault, func(t *testing.T) {
			protocolFault = fault
			defer func() { protocolFault = "" }()
			caught := ""
			for seed := uint64(1); seed <= 3 && caught == ""; seed++ {
				if err := c.FlushAll(context.Background()); err != nil {
					t.Fatal(err)
				}
				caught = failure(t, func(t testing.TB) {
					migrationProperty(t, propertyBed{c: c, b: clusterBed{cl}, kind: testkit.Valkey}, seed, 3000)
				})
			}
			if caught == "" {
				t.Fatalf("with %s the property test passed 3 seeds", fault)
			}
			t.Logf("caught: %s", caught)
		})
	}
}

// failure runs fn with a testing.TB whose failures are recorded instead of
// failing t, and returns the first one ("" if none). fn's cleanups run
// before failure returns.
func failure(t *testing.T, fn func(testing.TB)) string {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer r.cleanup()
		fn(r)
	}()
	<-done
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.first
}

// recorder is a testing.TB that records failures: Fatal ends the goroutine
// that calls it, as testing's does.
type recorder struct {
	testing.TB
	mu       sync.Mutex
	first    string
	cleanups []func()
}

func (r *recorder) record(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.first == "" {
		r.first = msg
	}
}

func (r *recorder) Errorf(format string, args ...any) { r.record(fmt.Sprintf(format, args...)) }
func (r *recorder) Error(args ...any)                 { r.record(fmt.Sprint(args...)) }
func (r *recorder) Fatalf(format string, args ...any) { r.Errorf(format, args...); runtime.Goexit() }
func (r *recorder) Fatal(args ...any)                 { r.Error(args...); runtime.Goexit() }
func (r *recorder) Logf(string, ...any)               {}
func (r *recorder) Helper()                           {}
func (r *recorder) Cleanup(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cleanups = append(r.cleanups, f)
}

func (r *recorder) cleanup() {
	r.mu.Lock()
	fs := r.cleanups
	r.cleanups = nil
	r.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}

// The migration property through a change of the cluster's topology while
// the operations and the migration run: a manual failover of the primary
// of the namespace's busiest slots, and a resharding of 200 slots. Each
// takes a few seconds; operations that fail meanwhile leave their keys
// unknown to the model, and everything else must hold as without one.
func TestClusterMigrationTopology(t *testing.T) {
	for _, kind := range []testkit.Kind{testkit.Redis, testkit.Valkey} {
		t.Run(string(kind), func(t *testing.T) {
			c, cl := newCluster(t, kind, true)
			ctx := context.Background()
			// The primary that serves bucket 0 of the new layout, and
			// another one.
			owner := func() (*testkit.ClusterNode, *testkit.ClusterNode) {
				topo, err := cl.Settle(ctx)
				if err != nil {
					t.Fatal(err)
				}
				slot := testkit.KeySlot("u:#0")
				var own, other *testkit.ClusterNode
				for i, n := range topo.Nodes {
					if n.Role != testkit.Primary {
						continue
					}
					if owns(n, slot) {
						own = &topo.Nodes[i]
					} else if other == nil {
						other = &topo.Nodes[i]
					}
				}
				if own == nil || other == nil {
					t.Fatalf("no primary serves slot %d: %+v", slot, topo)
				}
				return own, other
			}
			for _, change := range []string{"failover", "reshard"} {
				t.Run(change, func(t *testing.T) {
					if err := c.FlushAll(ctx); err != nil {
						t.Fatal(err)
					}
					own, other := owner()
					during := func(ctx context.Context) error {
						if change == "reshard" {
							_, err := cl.Reshard(ctx, own.Server, other.Server, 200)
							return err
						}
						topo, err := cl.Topology(ctx)
						if err != nil {
							return err
						}
						for _, r := range topo.Replicas(own.ID) {
							_, err := cl.Failover(ctx, r.Server)
							return err
						}
						return fmt.Errorf("primary %s has no replica", own.Addr)
					}
					n := migrationProperty(t, propertyBed{c: c, b: clusterBed{cl}, kind: kind, during: during}, 1, 3000)
					if n.failed > n.ops/20 {
						t.Fatalf("%d of %d operations failed during the %s", n.failed, n.ops, change)
					}
				})
			}
		})
	}
}

// owns reports whether primary n serves slot.
func owns(n testkit.ClusterNode, slot int) bool {
	for _, r := range n.Slots {
		if r.First <= slot && slot <= r.Last {
			return true
		}
	}
	return false
}

// A primary that lost its script cache (a restart, or a replica promoted)
// answers NOSCRIPT: only the calls it refused run again, not those other
// primaries ran, which must not run twice (a deletion counted twice reads
// as a key that did not exist).
func TestClusterScriptCacheLost(t *testing.T) {
	c, cl := newCluster(t, testkit.Valkey, false)
	ctx := context.Background()
	s := openStore(t, c, Namespace{Prefix: "user:", ZipAs: "u:", Buckets: Dense(100)})
	// Keys in buckets on at least two primaries.
	var keys []string
	nodes := map[string]bool{}
	for b := 0; len(nodes) < 2; b++ {
		k := "user:" + strconv.Itoa(b*100)
		l, _ := s.locate(k)
		owner, err := cl.KeyOwner(ctx, l.bucket)
		if err != nil {
			t.Fatal(err)
		}
		if !nodes[owner.Addr] {
			nodes[owner.Addr] = true
			keys = append(keys, k)
		}
	}
	for round := range 3 {
		var pairs []zipline.KeyValue
		for _, k := range keys {
			pairs = append(pairs, zipline.KeyValue{Key: k, Value: bigValue})
		}
		if err := s.MSet(ctx, pairs...); err != nil {
			t.Fatal(err)
		}
		// The first key's primary forgets the script.
		l, _ := s.locate(keys[0])
		owner, err := cl.KeyOwner(ctx, l.bucket)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := owner.Do(ctx, "SCRIPT", "FLUSH"); err != nil {
			t.Fatal(err)
		}
		if n, err := s.Del(ctx, keys...); err != nil || n != int64(len(keys)) {
			t.Fatalf("round %d: Del of %d keys = %d, %v", round, len(keys), n, err)
		}
	}
}
