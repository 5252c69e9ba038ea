package zipline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/ziplinekv/zipline/codec"
	"github.com/ziplinekv/zipline/internal/resp"
	"github.com/ziplinekv/zipline/internal/testkit"
)

// cachedClient is a Client with the client-side cache on, and a second
// Client (a writer) on the same server.
func cachedClient(t *testing.T, cfg ClientCache, opts Options) (*Client, *Client, *testkit.Server) {
	t.Helper()
	if cfg.MaxBytes == 0 {
		cfg.MaxBytes = 16 << 20
	}
	opts.ClientCache = cfg
	c, srv := newTestClient(t, opts)
	w, err := New(Options{Addr: srv.Addr, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return c, w, srv
}

// A value read once is served from the process: the server sees one GET
// for many reads, and the counters say so; MGet mixes hits and misses.
func TestCachedHitsAndMisses(t *testing.T) {
	c, w, srv := cachedClient(t, ClientCache{}, Options{})
	ctx := context.Background()
	w.Set(ctx, "a", []byte("1"))
	w.Set(ctx, "b", []byte("2"))
	before := getCalls(t, srv)
	for range 100 {
		if v, err := c.Cached(time.Minute).Get(ctx, "a"); err != nil || string(v) != "1" {
			t.Fatalf("cached GET: %q %v", v, err)
		}
	}
	if n := getCalls(t, srv) - before; n != 1 {
		t.Fatalf("100 cached reads made %d GETs on the server", n)
	}
	if _, err := c.Cached(time.Minute).Get(ctx, "missing"); !errors.Is(err, Nil) {
		t.Fatalf("missing key: %v", err)
	}
	vs, err := c.Cached(time.Minute).MGet(ctx, "a", "b", "missing", "c")
	if err != nil || string(vs[0]) != "1" || string(vs[1]) != "2" || vs[2] != nil || vs[3] != nil {
		t.Fatalf("cached MGET: %q %v", vs, err)
	}
	st := c.Stats().Cache
	if st.Hits < 100 || st.Misses < 3 || st.Entries != 4 {
		t.Fatalf("stats %+v", st)
	}
}

// Never stale: a writer on another client updates a key while readers hit
// the cache. Once the invalidation has arrived (a round trip on the
// reader's connection, which the server orders after it), no read returns
// an older value; concurrent readers never go backwards.
func TestCachedNeverStaleUnderWrites(t *testing.T) {
	c, w, _ := cachedClient(t, ClientCache{}, Options{})
	ctx := context.Background()
	const key = "version"
	w.Set(ctx, key, []byte("0"))
	var latest atomic.Int64 // the newest version whose invalidation has arrived
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var reads, regressions atomic.Int64
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := int64(0)
			for {
				select {
				case <-stop:
					return
				default:
				}
				floor := latest.Load()
				v, err := c.Cached(time.Minute).Get(ctx, key)
				if err != nil {
					t.Error(err)
					return
				}
				n, _ := strconv.ParseInt(string(v), 10, 64)
				if n < floor || n < last {
					regressions.Add(1)
				}
				last = n
				reads.Add(1)
			}
		}()
	}
	for n := int64(1); n <= 100; n++ {
		if err := w.Set(ctx, key, []byte(strconv.FormatInt(n, 10))); err != nil {
			t.Fatal(err)
		}
		if err := c.Ping(ctx); err != nil { // the invalidation precedes this reply
			t.Fatal(err)
		}
		latest.Store(n)
		if v, _ := c.Cached(time.Minute).Get(ctx, key); string(v) != strconv.FormatInt(n, 10) {
			t.Fatalf("after version %d's invalidation arrived, a read returned %q", n, v)
		}
	}
	close(stop)
	wg.Wait()
	st := c.Stats().Cache
	if regressions.Load() > 0 {
		t.Fatalf("%d reads returned a value older than one whose invalidation had arrived", regressions.Load())
	}
	if st.Hits < 100 || st.Invalidations < 90 {
		t.Fatalf("the test did not exercise the cache: %+v over %d reads", st, reads.Load())
	}
	t.Logf("%d reads, %+v", reads.Load(), st)
}

// A reader that found an entry just before an invalidation removed it
// must not serve it: the invalidation has been handled, so only the
// entry's own state can tell. This is the interleaving behind
// TestCachedNeverStaleUnderWrites's rare stale read, made deterministic:
// found, invalidated, then checked.
func TestCachedEntryFoundBeforeItsInvalidationIsNotServed(t *testing.T) {
	cc := newClientCache(ClientCache{MaxBytes: 1 << 20})
	defer cc.close()
	tc := &trackedConn{}
	tc.lastRead.Store(time.Now().UnixNano())
	const key = "version"
	cc.fill(key, cc.reserve(key, tc), tc, tc.epoch.Load(), noSlot, 0, 0, false, []byte("5"), false, time.Minute)
	found, ok := cc.lookup(key)
	if !ok {
		t.Fatal("the entry just filled is not served")
	}
	push := resp.ArrayValue([]resp.Value{resp.StringValue([]byte("invalidate")),
		resp.ArrayValue([]resp.Value{resp.StringValue([]byte(key))})})
	cc.invalidate(tc, push)
	if cc.valid(found, time.Now()) {
		t.Fatal("an entry removed by an invalidation that has been handled is still valid to a reader that found it before")
	}
	if _, ok := cc.lookup(key); ok {
		t.Fatal("an invalidated key is still served")
	}
}

// Losing the tracking connection drops its entries at once: a write made
// while it was down (whose invalidation never came) is read back, not the
// old cached value.
func TestCachedReconnectDropsEntries(t *testing.T) {
	c, w, srv := cachedClient(t, ClientCache{}, Options{})
	ctx := context.Background()
	w.Set(ctx, "k", []byte("old"))
	if v, _ := c.Cached(time.Minute).Get(ctx, "k"); string(v) != "old" {
		t.Fatalf("first read %q", v)
	}
	if _, err := srv.Do(ctx, "CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"); err != nil {
		t.Fatal(err)
	}
	// The writer was killed too: reconnect it, then write while the
	// reader's tracking connection is gone or new.
	waitFor(t, func() bool { return w.Set(ctx, "k", []byte("new")) == nil })
	waitFor(t, func() bool { return c.Stats().Reconnects > 0 })
	if v, err := c.Cached(time.Minute).Get(ctx, "k"); err != nil || string(v) != "new" {
		t.Fatalf("after the tracking connection was lost: %q %v", v, err)
	}
}

// FLUSHALL invalidates everything (the server sends a null invalidation).
func TestCachedFlushAll(t *testing.T) {
	c, w, _ := cachedClient(t, ClientCache{}, Options{})
	ctx := context.Background()
	for i := range 10 {
		w.Set(ctx, "k"+strconv.Itoa(i), []byte("v"))
		c.Cached(time.Minute).Get(ctx, "k"+strconv.Itoa(i))
	}
	if err := w.FlushAll(ctx); err != nil {
		t.Fatal(err)
	}
	c.Ping(ctx) // the invalidation arrives before this reply
	for i := range 10 {
		if _, err := c.Cached(time.Minute).Get(ctx, "k"+strconv.Itoa(i)); !errors.Is(err, Nil) {
			t.Fatalf("k%d after FLUSHALL: %v", i, err)
		}
	}
}

// An entry lives no longer than the key's own TTL on the server, and
// expired entries are reclaimed without being read again.
func TestCachedTTLAndActiveExpiry(t *testing.T) {
	c, w, srv := cachedClient(t, ClientCache{}, Options{})
	ctx := context.Background()
	w.Set(ctx, "short", []byte("v"), PX(200*time.Millisecond))
	if v, _ := c.Cached(time.Hour).Get(ctx, "short"); string(v) != "v" {
		t.Fatal("first read")
	}
	waitFor(t, func() bool { v, _ := srv.Do(ctx, "EXISTS", "short"); return v.Int() == 0 })
	// The server told c of the expiry when EXISTS found the key expired,
	// but c reads that push on its own connection, in its own time: the
	// local entry's lifetime was reckoned from when c read the key, a
	// little after the server's. A round trip on c's connection orders the
	// push before its reply, so the read below cannot precede it.
	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Cached(time.Hour).Get(ctx, "short"); !errors.Is(err, Nil) {
		t.Fatalf("an entry outlived its key's TTL: %v", err)
	}
	for i := range 50 {
		w.Set(ctx, "e"+strconv.Itoa(i), []byte("v"))
		c.Cached(50*time.Millisecond).Get(ctx, "e"+strconv.Itoa(i))
	}
	// Every e entry goes without being read again. (Counting entries would
	// not tell: the cached miss of "short" stays, an hour, unless the
	// invalidation of its key's expiry is handled after the miss was
	// filled, which drops it too.)
	cc := c.s.cache
	waitFor(t, func() bool {
		for i := range 50 {
			key := "e" + strconv.Itoa(i)
			sh := cc.shard(key)
			sh.mu.RLock()
			ent := sh.entries[key]
			sh.mu.RUnlock()
			if ent != nil {
				return false
			}
		}
		return true
	})
	if st := c.Stats().Cache; st.Expirations < 50 {
		t.Fatalf("expired entries not reclaimed actively: %+v", st)
	}
}

// One memory bound for the whole client: filling past it evicts.
func TestCachedMemoryBound(t *testing.T) {
	const limit = 256 << 10
	c, w, _ := cachedClient(t, ClientCache{MaxBytes: limit}, Options{})
	ctx := context.Background()
	val := bytes.Repeat([]byte("x"), 1000)
	b := w.Batch()
	for i := range 1000 {
		b.Set("m"+strconv.Itoa(i), val)
	}
	b.Exec(ctx)
	for i := range 1000 {
		if v, err := c.Cached(time.Minute).Get(ctx, "m"+strconv.Itoa(i)); err != nil || len(v) != 1000 {
			t.Fatal(err)
		}
	}
	st := c.Stats().Cache
	if st.Bytes > limit || st.Evictions == 0 {
		t.Fatalf("1 MB read through a %d-byte cache: %+v", limit, st)
	}
}

// With compression on, entries are kept compressed (so they take less
// memory) and expanded on a hit; StoreExpanded keeps them expanded.
func TestCachedCompressedEntries(t *testing.T) {
	for _, expanded := range []bool{false, true} {
		c, _, _ := cachedClient(t, ClientCache{StoreExpanded: expanded}, Options{Compression: Compression{Backend: codec.Zstd}})
		ctx := context.Background()
		c.Set(ctx, "doc", jsonDoc)
		for range 3 {
			if v, err := c.Cached(time.Minute).Get(ctx, "doc"); err != nil || !bytes.Equal(v, jsonDoc) {
				t.Fatalf("expanded %v: %d bytes %v", expanded, len(v), err)
			}
		}
		st := c.Stats().Cache
		held := st.Bytes - entryOverhead - int64(len("doc"))
		if expanded != (held == int64(len(jsonDoc))) {
			t.Fatalf("StoreExpanded %v: the entry holds %d bytes for a %d-byte value", expanded, held, len(jsonDoc))
		}
	}
}

// A hit allocates nothing.
func TestCachedHitAllocations(t *testing.T) {
	c, w, _ := cachedClient(t, ClientCache{}, Options{})
	ctx := context.Background()
	w.Set(ctx, "k", []byte("v"))
	view := c.Cached(time.Minute)
	view.Get(ctx, "k")
	if n := testing.AllocsPerRun(1000, func() { view.Get(ctx, "k") }); n != 0 {
		t.Fatalf("a cache hit allocates %v times", n)
	}
}

// On a cluster each node tracks what was read from it; a write anywhere
// invalidates, and a slot that moves drops its entries.
func TestCachedOnCluster(t *testing.T) {
	c, cl := clusterClient(t, testkit.Redis, Options{ClientCache: ClientCache{MaxBytes: 1 << 20}})
	ctx := context.Background()
	w, err := New(Options{Addrs: cl.Addrs(), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	keys := []string{"a", "b", "c", "d", "e", "f"}
	for _, k := range keys {
		w.Set(ctx, k, []byte("v1"))
	}
	vs, err := c.Cached(time.Minute).MGet(ctx, keys...)
	if err != nil || string(vs[5]) != "v1" {
		t.Fatalf("cached MGET on a cluster: %q %v", vs, err)
	}
	for _, k := range keys {
		if err := w.Set(ctx, k, []byte("v2")); err != nil {
			t.Fatal(err)
		}
	}
	waitForCached(t, c, keys, "v2")
	// Reads see v2 once the invalidations have arrived (a pending one keeps
	// an entry from being served), but the handler counts each a moment
	// later, on a goroutine of its own: the count is waited for, bounded.
	waitCacheInvalidations(t, c, uint64(len(keys)))
	// A slot moves: its entries go.
	slot := keySlot("a")
	c.s.cache.slotMoved(slot)
	before := c.Stats().Cache.Misses
	c.Cached(time.Minute).Get(ctx, "a")
	if c.Stats().Cache.Misses != before+1 {
		t.Fatal("an entry survived its slot's move")
	}
}

// BenchmarkCachedGetHit measures a hit: the target is under 100 ns with no
// allocation at one goroutine, and no global lock as goroutines grow.
func BenchmarkCachedGetHit(b *testing.B) {
	srv := testkit.NewServer(b, testkit.Config{})
	c, err := New(Options{Addr: srv.Addr, Logger: quiet, ClientCache: ClientCache{MaxBytes: 64 << 20}})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	keys := make([]string, 1024)
	for i := range keys {
		keys[i] = "key:" + strconv.Itoa(i)
		c.Set(ctx, keys[i], []byte("value-of-64-bytes-0123456789012345678901234567890123456789012"))
		c.Cached(time.Hour).Get(ctx, keys[i])
	}
	view := c.Cached(time.Hour)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			view.Get(ctx, keys[i&1023])
			i++
		}
	})
}

// Values read together may share one allocation; the cache keeps each in
// bytes of its own, so that an entry left after its neighbours' eviction
// holds only what the budget counted for it.
func TestCachedEntriesOwnTheirBytes(t *testing.T) {
	c, w, _ := cachedClient(t, ClientCache{Broadcast: true}, Options{})
	ctx := context.Background()
	v := c.Cached(time.Minute).IgnoringKeyTTL() // a miss is one GET: the replies of three keys form one run
	cc := c.s.cache
	entry := func(key string) *cacheEntry {
		sh := cc.shard(key)
		sh.mu.RLock()
		defer sh.mu.RUnlock()
		return sh.entries[key]
	}
	const attempts = 50
	key := func(attempt, i int) string { return fmt.Sprintf("own:%d:%d", attempt, i) }
	for a := range attempts {
		for i := range 3 {
			w.Set(ctx, key(a, i), []byte("five!")) // 5 B: no size class, so two allocations are never 5 B apart
		}
	}
	// Tracking is on, and the invalidations of the writes above are
	// behind, once a read of a key written after them fills its entry.
	w.Set(ctx, "own:warm", []byte("x"))
	waitFor(t, func() bool {
		_, err := v.Get(ctx, "own:warm")
		return err == nil && entry("own:warm") != nil
	})
	// Three keys never read before each attempt, until one MGet fills all
	// three from one request (a late invalidation drops a fill).
	for a := range attempts {
		keys := []string{key(a, 0), key(a, 1), key(a, 2)}
		if vals, err := v.MGet(ctx, keys...); err != nil || len(vals) != 3 || string(vals[2]) != "five!" {
			t.Fatalf("MGet: %q, %v", vals, err)
		}
		if entry(keys[0]) == nil || entry(keys[1]) == nil || entry(keys[2]) == nil {
			continue
		}
		for i := range 2 {
			a, b := entry(keys[i]).value, entry(keys[i+1]).value
			if unsafe.Add(unsafe.Pointer(&a[0]), len(a)) == unsafe.Pointer(&b[0]) {
				t.Fatalf("the entries of %s and %s share one allocation", keys[i], keys[i+1])
			}
		}
		return
	}
	t.Fatalf("no MGet of three new keys filled all three entries in %d attempts", attempts)
}

// Broadcast tracking with prefixes: keys under a prefix are cached and
// invalidated when anyone writes them, even keys this client never read
// before the write; keys outside every prefix are never cached.
func TestCachedBroadcastPrefixes(t *testing.T) {
	c, w, srv := cachedClient(t, ClientCache{Broadcast: true, Prefixes: []string{"user:"}}, Options{})
	ctx := context.Background()
	w.Set(ctx, "user:1", []byte("a"))
	w.Set(ctx, "other:1", []byte("x"))
	read := func(key, want string) {
		t.Helper()
		if v, err := c.Cached(time.Minute).Get(ctx, key); err != nil || string(v) != want {
			t.Fatalf("Get %s: %q %v, want %q", key, v, err, want)
		}
	}
	// The first fill may be cancelled: the writer's invalidation of
	// user:1 can reach this client after its read began, and a fill that
	// an invalidation overtakes is dropped (correct, if cautious). A later
	// read fills it.
	waitFor(t, func() bool {
		hits := c.Stats().Cache.Hits
		read("user:1", "a")
		return c.Stats().Cache.Hits > hits
	})
	before := getCalls(t, srv)
	for range 20 {
		read("user:1", "a")
	}
	if n := getCalls(t, srv) - before; n != 0 {
		t.Fatalf("20 reads of a cached key under the prefix made %d GETs", n)
	}
	before = getCalls(t, srv)
	for range 20 {
		read("other:1", "x")
	}
	if n := getCalls(t, srv) - before; n != 20 {
		t.Fatalf("20 reads of a key outside the prefixes made %d GETs, want 20 (never cached)", n)
	}
	// Another client's write invalidates the entry: a round trip on the
	// reader's connection orders the invalidation before the next read.
	// The new value is cached in turn, once a read of it hits: as above,
	// the first fill may be cancelled by the invalidation, when the read
	// that misses reserves its fill before the handler has run.
	w.Set(ctx, "user:1", []byte("b"))
	waitFor(t, func() bool {
		hits := c.Stats().Cache.Hits
		v, err := c.Cached(time.Minute).Get(ctx, "user:1")
		return err == nil && string(v) == "b" && c.Stats().Cache.Hits > hits
	})
	if st := c.Stats().Cache; st.Entries == 0 || st.Hits < 20 {
		t.Fatalf("stats %+v", st)
	}
}

// MaxStaleness: an entry is served without proof that its tracking
// connection is alive only for MaxStaleness. With the server hung (so no
// invalidation could arrive), a read right away is still a hit; a read
// after MaxStaleness goes to the server, here until its deadline, rather
// than return what may be stale.
func TestCachedMaxStaleness(t *testing.T) {
	const staleness = 500 * time.Millisecond
	c, w, srv := cachedClient(t, ClientCache{MaxStaleness: staleness}, Options{})
	ctx := context.Background()
	w.Set(ctx, "k", []byte("v"))
	// "Right away" is within MaxStaleness of the fill's last proof of
	// life, which a loaded machine can stretch past it (the pause and the
	// read took over 200 ms). A read that was not a hit although it ended
	// within MaxStaleness of when the fill was sent fails the test; one
	// that ended later proves nothing, and the fill is made again, up to
	// five times.
	for attempt := 1; ; attempt++ {
		sent := time.Now()
		if v, err := c.Cached(time.Minute).Get(ctx, "k"); err != nil || string(v) != "v" {
			t.Fatalf("fill: %q %v", v, err)
		}
		resume := testkit.Pause(t, srv)
		hits := c.Stats().Cache.Hits
		rctx, cancel := context.WithTimeout(ctx, staleness)
		v, err := c.Cached(time.Minute).Get(rctx, "k")
		cancel()
		took := time.Since(sent)
		if err == nil && string(v) == "v" && c.Stats().Cache.Hits == hits+1 {
			defer resume()
			break
		}
		if took < staleness || attempt == 5 {
			t.Fatalf("read %v after the fill was sent, MaxStaleness %v: %q %v (hits %d -> %d)", took, staleness, v, err, hits, c.Stats().Cache.Hits)
		}
		resume()
	}
	// Time passing is what is under test here, not a synchronisation.
	time.Sleep(staleness + 50*time.Millisecond)
	cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if v, err := c.Cached(time.Minute).Get(cctx, "k"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("read past MaxStaleness from a hung server: %q %v, want the deadline", v, err)
	}
}

// Resharding a real cluster leaves no stale entry: keys whose slots moved,
// read and cached before the move, are then rewritten on their new owner
// (which never saw this client's reads), and reads through the cache see
// the new values within a bound, not after the entries' minute-long TTL.
func TestCachedAcrossAReshard(t *testing.T) {
	c, w, cl, keys := cachedOnCluster(t, "rs:", 4000)
	ctx := context.Background()
	topo, err := cl.Settle(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var primaries []*testkit.Server
	for _, n := range topo.Nodes {
		if n.Role == testkit.Primary {
			primaries = append(primaries, n.Server)
		}
	}
	rs, err := cl.Reshard(ctx, primaries[0], primaries[1], 100)
	if err != nil {
		t.Fatal(err)
	}
	moved := map[int]bool{}
	for _, s := range rs.Slots {
		moved[s] = true
	}
	var movedKeys []string
	for _, k := range keys {
		if moved[int(keySlot(k))] {
			movedKeys = append(movedKeys, k)
		}
	}
	if len(movedKeys) == 0 {
		t.Fatalf("none of %d keys is in the %d slots moved", len(keys), len(rs.Slots))
	}
	for _, k := range movedKeys {
		if err := w.Set(ctx, k, []byte("v2")); err != nil {
			t.Fatal(err)
		}
	}
	waitForCached(t, c, movedKeys, "v2")
	t.Logf("%d cached keys in %d moved slots read their new values", len(movedKeys), len(rs.Slots))
}

// BenchmarkCachedGetHitCompressed measures what keeping entries compressed
// costs per hit, against StoreExpanded, for 2 KiB JSON values with each
// backend, and reports the bytes each entry takes (cache bytes per entry).
func BenchmarkCachedGetHitCompressed(b *testing.B) {
	value := []byte(strings.Repeat(`{"id":12345,"name":"Ada Lovelace","email":"ada@example.com","tags":["math","engines"]},`, 24))
	for _, backend := range []codec.Backend{codec.LZ4, codec.Zstd} {
		for _, expanded := range []bool{false, true} {
			name := backend.String() + "/stored"
			if expanded {
				name = backend.String() + "/expanded"
			}
			b.Run(name, func(b *testing.B) {
				srv := testkit.NewServer(b, testkit.Config{})
				c, err := New(Options{Addr: srv.Addr, Logger: quiet, Compression: Compression{Backend: backend},
					ClientCache: ClientCache{MaxBytes: 64 << 20, StoreExpanded: expanded}})
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				ctx := context.Background()
				keys := make([]string, 256)
				for i := range keys {
					keys[i] = "key:" + strconv.Itoa(i)
					c.Set(ctx, keys[i], value)
					c.Cached(time.Hour).Get(ctx, keys[i])
				}
				view := c.Cached(time.Hour)
				b.ReportAllocs()
				b.ResetTimer()
				for i := range b.N {
					if v, err := view.Get(ctx, keys[i&255]); err != nil || len(v) != len(value) {
						b.Fatalf("%d bytes, %v", len(v), err)
					}
				}
				b.StopTimer()
				if st := c.Stats().Cache; st.Entries > 0 {
					b.ReportMetric(float64(st.Bytes)/float64(st.Entries), "B/entry")
				}
			})
		}
	}
}

// A failover leaves no stale entry: keys cached from a primary that is
// killed are rewritten on the replica promoted in its place (which never
// saw this client's reads), and reads through the cache see the new values
// within a bound, not after the entries' minute-long TTL.
func TestCachedAcrossAFailover(t *testing.T) {
	c, w, cl, keys := cachedOnCluster(t, "fo:", 300)
	ctx := context.Background()
	victim, err := cl.KeyOwner(ctx, keys[0])
	if err != nil {
		t.Fatal(err)
	}
	// Every write acknowledged before the kill reaches the replica.
	if _, err := victim.Do(ctx, "WAIT", "1", "2000"); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Kill(ctx, victim); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return w.Set(ctx, keys[0], []byte("v2")) == nil })
	for _, k := range keys[1:] {
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := w.Set(wctx, k, []byte("v2"))
		cancel()
		if err != nil {
			t.Fatalf("Set %s after the failover: %v", k, err)
		}
	}
	waitForCached(t, c, keys, "v2")
}

// cachedOnCluster starts a cluster with a caching Client c and a writer w,
// writes n keys named prefix+i with "v1" through w, and reads them once
// through c's cache, so that each is cached.
func cachedOnCluster(t *testing.T, prefix string, n int) (c, w *Client, cl *testkit.Cluster, keys []string) {
	t.Helper()
	c, cl = clusterClient(t, testkit.Redis, Options{ClientCache: ClientCache{MaxBytes: 4 << 20}})
	ctx := context.Background()
	w, err := New(Options{Addrs: cl.Addrs(), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	keys = make([]string, n)
	for i := range keys {
		keys[i] = prefix + strconv.Itoa(i)
	}
	b := w.Batch()
	for _, k := range keys {
		b.Set(k, []byte("v1"))
	}
	if err := b.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Cached(time.Minute).MGet(ctx, keys...); err != nil {
		t.Fatal(err)
	}
	return c, w, cl, keys
}

// waitForCached waits, within waitFor's bound, until reads of keys through
// c's cache all return want.
func waitForCached(t *testing.T, c *Client, keys []string, want string) {
	t.Helper()
	waitFor(t, func() bool {
		vs, err := c.Cached(time.Minute).MGet(context.Background(), keys...)
		if err != nil {
			return false
		}
		for _, v := range vs {
			if string(v) != want {
				return false
			}
		}
		return true
	})
}

// Concurrent misses of one key send one GET: the replies are held at a
// proxy until every other reader has joined the first one's read.
func TestCachedCoalescesConcurrentMisses(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{})
	proxy := testkit.NewProxy(t, srv.Addr)
	c, err := New(Options{Addr: proxy.Addr(), Logger: quiet, ClientCache: ClientCache{MaxBytes: 1 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Set(ctx, "hot", []byte("v")); err != nil {
		t.Fatal(err)
	}
	before := getCalls(t, srv)
	proxy.Freeze(testkit.ToClient)
	const readers = 64
	errs := make(chan error, readers)
	for range readers {
		go func() {
			v, err := c.Cached(time.Minute).Get(ctx, "hot")
			if err == nil && string(v) != "v" {
				err = fmt.Errorf("read %q", v)
			}
			errs <- err
		}()
	}
	waitFor(t, func() bool { return c.Stats().Cache.Coalesced == readers-1 })
	proxy.Thaw(testkit.ToClient)
	for range readers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := getCalls(t, srv) - before; n != 1 {
		t.Fatalf("%d concurrent misses sent %d GETs, want 1", readers, n)
	}
}

// A key invalidated while a read of it is in flight is read again by a
// Get that begins after the invalidation: it does not join the read from
// before it. Writes through Cached drop this client's copy before they
// return, so a read that follows finds the new value, never the old one,
// whenever the server's invalidation is read.
func TestCachedReadsItsOwnWrites(t *testing.T) {
	c, _, _ := cachedClient(t, ClientCache{}, Options{})
	ctx := context.Background()
	v := c.Cached(time.Minute)
	for i := range 2000 {
		if _, err := v.Get(ctx, "k"); err != nil && !errors.Is(err, Nil) {
			t.Fatal(err)
		}
		want := strconv.Itoa(i)
		if i%2 == 0 {
			if err := v.Set(ctx, "k", []byte(want)); err != nil {
				t.Fatal(err)
			}
		} else {
			if _, err := v.Del(ctx, "k"); err != nil {
				t.Fatal(err)
			}
			want = ""
		}
		got, err := v.Get(ctx, "k")
		if errors.Is(err, Nil) {
			err = nil
		}
		if err != nil || string(got) != want {
			t.Fatalf("round %d: read %q, %v after writing %q", i, got, err, want)
		}
	}
}

// The sweep reclaims dead entries only. An entry that may not be served
// for the moment, because its connection has not been heard from within
// MaxStaleness (or an invalidation waits for its handler), is served again
// once that passes: the sweep used to take those for dead, and under a
// steady flow of invalidations dropped thousands of live entries.
func TestCacheSweepKeepsEntriesThatOnlyWait(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{})
	c, err := New(Options{Addr: srv.Addr, Logger: quiet, HealthCheckInterval: -1,
		ClientCache: ClientCache{MaxBytes: 1 << 20, MaxStaleness: 100 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	v := c.Cached(time.Minute)
	for i := range 50 {
		if _, err := v.Get(ctx, "k"+strconv.Itoa(i)); !errors.Is(err, Nil) {
			t.Fatal(err)
		}
	}
	cc := c.s.cache
	ent, ok := cc.lookup("k0")
	if !ok {
		t.Fatal("k0 not cached")
	}
	// Nothing is read on the connection from here: its entries wait for
	// proof of life, which a read brings back.
	waitFor(t, func() bool { return !cc.valid(ent, time.Now()) })
	for i := range cc.shards {
		cc.sweepShard(&cc.shards[i], time.Now())
	}
	if st := c.Stats().Cache; st.Entries != 50 || st.Expirations != 0 {
		t.Fatalf("after a sweep of waiting entries: %+v, want all 50 kept", st)
	}
	if _, err := c.Do(ctx, "PING"); err != nil { // proof of life
		t.Fatal(err)
	}
	if _, ok := cc.lookup("k0"); !ok {
		t.Fatal("k0 not served again once its connection answered")
	}
}

// A read that follows this client's own write is held: the write's
// invalidation, which the server sends right after the write's reply,
// comes before the read's reply on the same connection, and so does not
// cancel the read's fill (it used to, and every record the cache package
// wrote was read from the server twice more before it was held).
func TestCachedReadAfterOwnWriteIsHeld(t *testing.T) {
	c, _, srv := cachedClient(t, ClientCache{}, Options{})
	ctx := context.Background()
	v := c.Cached(time.Minute)
	const rounds = 200
	before := getCalls(t, srv)
	for i := range rounds {
		want := strconv.Itoa(i)
		if err := v.Set(ctx, "k", []byte(want)); err != nil {
			t.Fatal(err)
		}
		for range 3 { // the first reads from the server, the others hit
			if got, err := v.Get(ctx, "k"); err != nil || string(got) != want {
				t.Fatalf("round %d: %q, %v", i, got, err)
			}
		}
	}
	if n := getCalls(t, srv) - before; n != rounds {
		t.Fatalf("%d rounds of a write and three reads sent %d GETs, want %d (one per write)", rounds, n, rounds)
	}
}
