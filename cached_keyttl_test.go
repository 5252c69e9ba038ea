package zipline

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/internal/testkit"
)

// Tests of Cached.IgnoringKeyTTL, the two-command form of a cached read,
// against both servers.

var cachedServerKinds = []testkit.Kind{testkit.Redis, testkit.Valkey}

// cachedClientOnKind is cachedClient on a server of kind started with args.
func cachedClientOnKind(t *testing.T, kind testkit.Kind, cfg ClientCache, args ...string) (*Client, *Client, *testkit.Server) {
	t.Helper()
	if _, err := testkit.Binary(kind); err != nil {
		t.Skip(err)
	}
	if cfg.MaxBytes == 0 {
		cfg.MaxBytes = 16 << 20
	}
	srv := testkit.NewServer(t, testkit.Config{Kind: kind, Args: args})
	c, err := New(Options{Addr: srv.Addr, Logger: quiet, ClientCache: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	w, err := New(Options{Addr: srv.Addr, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return c, w, srv
}

// waitCacheInvalidations waits, within waitFor's bound, until c has handled at
// least n invalidations: a round trip orders their arrival before its
// reply, but their handler runs on a goroutine of its own.
func waitCacheInvalidations(t *testing.T, c *Client, n uint64) {
	t.Helper()
	waitFor(t, func() bool { return c.Stats().Cache.Invalidations >= n })
}

// allCommandCalls returns INFO commandstats as calls per command
// ("get", "client|caching", ...).
func allCommandCalls(t *testing.T, srv *testkit.Server) map[string]int {
	t.Helper()
	info, err := srv.Info(context.Background(), "commandstats")
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]int{}
	for k, v := range info {
		name, ok := strings.CutPrefix(k, "cmdstat_")
		if !ok {
			continue
		}
		n, _, _ := strings.Cut(strings.TrimPrefix(v, "calls="), ",")
		calls[name], _ = strconv.Atoi(n)
	}
	return calls
}

// allCallsSince is what the server ran since before, by command, leaving out
// INFO (the counting itself) and PING (health checks).
func allCallsSince(t *testing.T, srv *testkit.Server, before map[string]int) map[string]int {
	t.Helper()
	d := map[string]int{}
	for name, n := range allCommandCalls(t, srv) {
		if name == "info" || name == "ping" || n == before[name] {
			continue
		}
		d[name] = n - before[name]
	}
	return d
}

// A miss costs exactly the commands documented, counted by the server: per
// key, CLIENT CACHING YES (OPTIN only), GET, and PTTL unless IgnoringKeyTTL;
// through Get and through MGet alike. A hit costs none.
func TestCachedIgnoringKeyTTLCommandsPerMiss(t *testing.T) {
	for _, kind := range cachedServerKinds {
		for _, broadcast := range []bool{false, true} {
			for _, ignore := range []bool{false, true} {
				mode := "optin"
				if broadcast {
					mode = "bcast"
				}
				form := "default"
				if ignore {
					form = "ignoring-key-ttl"
				}
				t.Run(string(kind)+"/"+mode+"/"+form, func(t *testing.T) {
					testCommandsPerMiss(t, kind, broadcast, ignore)
				})
			}
		}
	}
}

func testCommandsPerMiss(t *testing.T, kind testkit.Kind, broadcast, ignore bool) {
	c, w, srv := cachedClientOnKind(t, kind, ClientCache{Broadcast: broadcast})
	ctx := context.Background()
	const n = 10
	var single, multi []string
	for i := range n {
		single = append(single, "s:"+strconv.Itoa(i))
		multi = append(multi, "m:"+strconv.Itoa(i))
	}
	b := w.Batch()
	for i := range n {
		b.Set(single[i], []byte("v"), PX(time.Hour)) // with a TTL, so that PTTL has one to read
		b.Set(multi[i], []byte("v"))
	}
	if err := b.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	// In BCAST mode the writes above are invalidations on their way to c:
	// once handled, they cannot cancel the fills below.
	if broadcast {
		waitCacheInvalidations(t, c, 2*n)
	}
	view := c.Cached(time.Hour)
	if ignore {
		view = view.IgnoringKeyTTL()
	}
	want := map[string]int{"get": n}
	if !broadcast {
		want["client|caching"] = n
	}
	if !ignore {
		want["pttl"] = n
	}
	perMiss := 0
	for _, m := range want {
		perMiss += m
	}
	perMiss /= n

	before := allCommandCalls(t, srv)
	for _, k := range single {
		if v, err := view.Get(ctx, k); err != nil || string(v) != "v" {
			t.Fatalf("Get %s: %q %v", k, v, err)
		}
	}
	if got := allCallsSince(t, srv, before); !maps.Equal(got, want) {
		t.Fatalf("%d misses through Get ran %v on the server, want %v (%d commands per miss)", n, got, want, perMiss)
	}
	before = allCommandCalls(t, srv)
	vs, err := view.MGet(ctx, multi...)
	if err != nil || len(vs) != n || slices.ContainsFunc(vs, func(v []byte) bool { return string(v) != "v" }) {
		t.Fatalf("MGet: %q %v", vs, err)
	}
	if got := allCallsSince(t, srv, before); !maps.Equal(got, want) {
		t.Fatalf("an MGet of %d misses ran %v on the server, want %v (%d commands per miss)", n, got, want, perMiss)
	}
	// All were cached: reading them again runs nothing.
	before = allCommandCalls(t, srv)
	hits := c.Stats().Cache.Hits
	for _, k := range single {
		view.Get(ctx, k)
	}
	view.MGet(ctx, multi...)
	if got := allCallsSince(t, srv, before); len(got) != 0 || c.Stats().Cache.Hits != hits+2*n {
		t.Fatalf("%d hits ran %v on the server (hits %d -> %d)", 2*n, got, hits, c.Stats().Cache.Hits)
	}
	t.Logf("%s: %d commands per miss: %v", srv.Kind, perMiss, want)
}

// Entries read through IgnoringKeyTTL are still invalidated when another
// client overwrites or deletes their keys, through Get and MGet, in both
// tracking modes.
func TestCachedIgnoringKeyTTLInvalidatesOnWrites(t *testing.T) {
	for _, kind := range cachedServerKinds {
		for _, broadcast := range []bool{false, true} {
			t.Run(string(kind)+"/broadcast="+strconv.FormatBool(broadcast), func(t *testing.T) {
				c, w, srv := cachedClientOnKind(t, kind, ClientCache{Broadcast: broadcast})
				ctx := context.Background()
				view := c.Cached(time.Hour).IgnoringKeyTTL()
				keys := []string{"a", "b", "c"}
				for _, k := range keys {
					if err := w.Set(ctx, k, []byte("v1"), PX(time.Hour)); err != nil {
						t.Fatal(err)
					}
				}
				if broadcast { // the writes' invalidations are handled before the fills
					waitCacheInvalidations(t, c, uint64(len(keys)))
				}
				if vs, err := view.MGet(ctx, keys...); err != nil || string(vs[2]) != "v1" {
					t.Fatalf("fill: %q %v", vs, err)
				}
				gets := getCalls(t, srv)
				if vs, _ := view.MGet(ctx, keys...); string(vs[0]) != "v1" || getCalls(t, srv) != gets {
					t.Fatal("the entries were not cached")
				}
				for round := 2; round <= 4; round++ {
					want := "v" + strconv.Itoa(round)
					for _, k := range keys {
						if err := w.Set(ctx, k, []byte(want)); err != nil {
							t.Fatal(err)
						}
					}
					if err := c.Ping(ctx); err != nil { // the invalidations precede this reply
						t.Fatal(err)
					}
					if v, err := view.Get(ctx, "a"); err != nil || string(v) != want {
						t.Fatalf("Get after a write of %s: %q %v", want, v, err)
					}
					if vs, err := view.MGet(ctx, keys...); err != nil || string(vs[1]) != want || string(vs[2]) != want {
						t.Fatalf("MGet after a write of %s: %q %v", want, vs, err)
					}
				}
				if _, err := w.Del(ctx, "a"); err != nil {
					t.Fatal(err)
				}
				c.Ping(ctx)
				if _, err := view.Get(ctx, "a"); !errors.Is(err, Nil) {
					t.Fatalf("Get after DEL: %v", err)
				}
				if st := c.Stats().Cache; st.Invalidations < 9 {
					t.Fatalf("stats %+v", st)
				}
			})
		}
	}
}

// The lifetimes, with the server's active expiry off so that nothing but
// the clock and the client's own bounds can end an entry: through Cached an
// entry ends with its key's TTL; through IgnoringKeyTTL it outlives its
// expired key (the documented cost) but never the TTL given to Cached, and
// the invalidation that the key's deletion sends, once something accesses
// it, ends it.
func TestCachedIgnoringKeyTTLLifetime(t *testing.T) {
	for _, kind := range cachedServerKinds {
		t.Run(string(kind), func(t *testing.T) {
			c, w, srv := cachedClientOnKind(t, kind, ClientCache{}, "--enable-debug-command", "local")
			ctx := context.Background()
			if _, err := srv.Do(ctx, "DEBUG", "SET-ACTIVE-EXPIRE", "0"); err != nil {
				t.Fatal(err)
			}
			const life = 500 * time.Millisecond
			type read struct {
				key  string
				exp  []Expiry
				view Cached
			}
			reads := []read{
				{"expiring:default", []Expiry{PX(life)}, c.Cached(time.Hour)},
				{"expiring:ignoring", []Expiry{PX(life)}, c.Cached(time.Hour).IgnoringKeyTTL()},
				{"lasting:ignoring", []Expiry{PX(time.Hour)}, c.Cached(life).IgnoringKeyTTL()},
				{"nottl:ignoring", nil, c.Cached(life).IgnoringKeyTTL()},
			}
			begin := time.Now() // before every key's TTL began
			for _, r := range reads {
				if err := w.Set(ctx, r.key, []byte("v"), r.exp...); err != nil {
					t.Fatal(err)
				}
			}
			for _, r := range reads {
				if v, err := r.view.Get(ctx, r.key); err != nil || string(v) != "v" {
					t.Fatalf("fill %s: %q %v", r.key, v, err)
				}
			}
			filled := time.Now() // after every entry's life began
			hit := func(r read) (bool, []byte, error) {
				t.Helper()
				hits := c.Stats().Cache.Hits
				v, err := r.view.Get(ctx, r.key)
				return c.Stats().Cache.Hits == hits+1, v, err
			}
			for _, r := range reads {
				if ok, _, _ := hit(r); !ok {
					if time.Since(begin) >= life {
						t.Skipf("the machine is too slow for this test: %v to write, fill and read 4 keys", time.Since(begin))
					}
					t.Fatalf("%s was not cached", r.key)
				}
			}
			// Time passing is what is under test here, not a synchronisation.
			time.Sleep(time.Until(filled.Add(life + 50*time.Millisecond)))

			// Cached: the entry ended with its key's TTL (the key is still
			// there, expired: this read's GET deletes it, and the server
			// invalidates it; once that is handled, no invalidation is
			// waiting to refuse the hits below).
			invalidations := c.Stats().Cache.Invalidations
			if ok, v, err := hit(reads[0]); ok || !errors.Is(err, Nil) {
				t.Fatalf("Cached outlived its key's TTL: hit %v, %q %v", ok, v, err)
			}
			waitCacheInvalidations(t, c, invalidations+1)
			// IgnoringKeyTTL: the entry outlives its expired key, since no
			// invalidation has come.
			if ok, v, err := hit(reads[1]); !ok || string(v) != "v" || err != nil {
				t.Fatalf("IgnoringKeyTTL with active expiry off: hit %v, %q %v; want the value served past its key's expiry", ok, v, err)
			}
			// ... but not the TTL given to Cached, whatever the key's.
			for _, r := range reads[2:] {
				if ok, v, err := hit(r); ok || string(v) != "v" || err != nil {
					t.Fatalf("%s outlived the TTL given to Cached: hit %v, %q %v", r.key, ok, v, err)
				}
			}
			// Something else reads the expired key: the server deletes it and
			// invalidates the entry; a round trip orders that before the read.
			if _, err := w.Get(ctx, reads[1].key); !errors.Is(err, Nil) {
				t.Fatalf("the key did not expire on the server: %v", err)
			}
			if err := c.Ping(ctx); err != nil {
				t.Fatal(err)
			}
			if ok, v, err := hit(reads[1]); ok || !errors.Is(err, Nil) {
				t.Fatalf("after its key's lazy expiry: hit %v, %q %v", ok, v, err)
			}
		})
	}
}

// Does the server invalidate a key that its active expire cycle deletes,
// with nothing accessing the key? Yes, on both servers: an entry read
// through IgnoringKeyTTL (for an hour) of a key with a 100 ms TTL is
// dropped, with no read of the key by anyone, once the cycle finds it. The
// log gives the lag after the key's expiry (alone in its database here,
// so found by the next cycle; a database with many keys with a TTL is
// swept at about 200 keys a second, and the lag grows with it).
func TestCachedIgnoringKeyTTLActiveExpiry(t *testing.T) {
	for _, kind := range cachedServerKinds {
		t.Run(string(kind), func(t *testing.T) {
			c, w, _ := cachedClientOnKind(t, kind, ClientCache{})
			ctx := context.Background()
			view := c.Cached(time.Hour).IgnoringKeyTTL()
			const ttl = 100 * time.Millisecond
			var lags []time.Duration
			for i := range 5 {
				key := "expiring:" + strconv.Itoa(i)
				set := time.Now() // at or before the server starts the TTL
				if err := w.Set(ctx, key, []byte("v"), PX(ttl)); err != nil {
					t.Fatal(err)
				}
				// The time is looked at before the value: a read that came
				// after the key's expiry finds it gone, which is the machine's
				// slowness, not the cache's.
				v, err := view.Get(ctx, key)
				if time.Since(set) >= ttl {
					t.Skipf("the machine is too slow for this test: %v to write and read a key", time.Since(set))
				}
				if err != nil || string(v) != "v" {
					t.Fatalf("fill: %q %v", v, err)
				}
				invalidations := c.Stats().Cache.Invalidations
				// Look at the cache itself: a read through the view would go to
				// the server once the entry is gone, but it must not be what
				// expires the key.
				cc := c.s.cache
				sh := cc.shard(key)
				cached := func() bool {
					sh.mu.RLock()
					defer sh.mu.RUnlock()
					return sh.entries[key] != nil
				}
				if !cached() {
					t.Fatal("not cached")
				}
				deadline := set.Add(10 * time.Second)
				for c.Stats().Cache.Invalidations == invalidations {
					if time.Now().After(deadline) {
						t.Fatalf("%s: no invalidation within 10s of a key's expiry by the active expire cycle (cached: %v)", kind, cached())
					}
					time.Sleep(time.Millisecond) // bounded poll of the push's arrival
				}
				lags = append(lags, time.Since(set)-ttl)
				if cached() {
					t.Fatal("invalidated, yet still cached")
				}
			}
			slices.Sort(lags)
			t.Logf("%s: an entry of a key with a %v TTL, alone in its database, was invalidated by active expiry %v to %v (median %v) after the key's expiry",
				kind, ttl, lags[0].Round(time.Millisecond), lags[len(lags)-1].Round(time.Millisecond), lags[len(lags)/2].Round(time.Millisecond))
		})
	}
}
