package cache

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/codec"
	"github.com/ziplinekv/zipline/internal/testkit"
)

func TestFetchMissThenHit(t *testing.T) {
	s := newServer(t)
	users := New[user](newClient(t, s.Addr), Options{TTL: 10 * time.Minute})
	ctx := testCtx(t, 10*time.Second)
	var l loader

	u, err := users.Fetch(ctx, "user:1", l.load(1))
	if err != nil || u != (user{ID: 1, Name: "name-1"}) {
		t.Fatalf("first Fetch = %+v, %v", u, err)
	}
	u, err = users.Fetch(ctx, "user:1", l.load(1))
	if err != nil || u.Name != "name-1" {
		t.Fatalf("second Fetch = %+v, %v; want the cached value", u, err)
	}
	if got := l.count(); got != 1 {
		t.Fatalf("loader ran %d times, want 1", got)
	}
	if st := users.Stats(); st.Hits != 1 || st.Misses != 1 || st.Loads != 1 || st.LockWaits != 0 {
		t.Fatalf("stats = %+v", st)
	}
	ttl, err := s.Do(ctx, "PTTL", "user:1")
	if err != nil || ttl.Int() <= 9*60*1000 || ttl.Int() > 10*60*1000 {
		t.Fatalf("PTTL = %d, %v; want about 10 minutes", ttl.Int(), err)
	}
	if exists(t, s, "user:1"+lockSuffix) {
		t.Fatal("the lock was left behind")
	}

	// Set writes through; Delete makes the next Fetch load.
	if err := users.Set(ctx, "user:1", user{ID: 1, Name: "set"}); err != nil {
		t.Fatal(err)
	}
	if u, err := users.Fetch(ctx, "user:1", l.load(1)); err != nil || u.Name != "set" {
		t.Fatalf("Fetch after Set = %+v, %v", u, err)
	}
	if err := users.Delete(ctx, "user:1"); err != nil {
		t.Fatal(err)
	}
	if u, err := users.Fetch(ctx, "user:1", l.load(1)); err != nil || u.Name != "name-2" {
		t.Fatalf("Fetch after Delete = %+v, %v; want a new load", u, err)
	}
}

// TestStampedeInProcess: 1,000 goroutines miss one hot key at once and the
// loader runs once. The loader returns only when all of them are waiting
// for it, so the stampede really happens.
func TestStampedeInProcess(t *testing.T) {
	bothPaths(t, func(t *testing.T, newUsers func(string, Options) *Cache[user]) {
		s := newServer(t)
		users := newUsers(s.Addr, Options{})
		ctx := testCtx(t, 20*time.Second)
		const n = 1000
		var loads atomic.Int32
		load := func(ctx context.Context) (user, error) {
			loads.Add(1)
			deadline := time.Now().Add(10 * time.Second)
			for users.flights.waiting("hot") < n && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
			return user{ID: 7, Name: "hot"}, nil
		}
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for range n {
			wg.Go(func() {
				u, err := users.Fetch(ctx, "hot", load)
				if err == nil && u.Name != "hot" {
					err = fmt.Errorf("got %+v", u)
				}
				if err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if got := loads.Load(); got != 1 {
			t.Fatalf("loader ran %d times, want 1", got)
		}
		if st := users.Stats(); st.Misses != n || st.Loads != 1 {
			t.Fatalf("stats = %+v; want %d misses sharing 1 load", st, n)
		}
	})
}

// TestFillRereads: a flight reads the key again before loading, so a
// process that missed just before another stored the value (and released
// the lock) does not load it a second time.
func TestFillRereads(t *testing.T) {
	bothPaths(t, func(t *testing.T, newUsers func(string, Options) *Cache[user]) {
		s := newServer(t)
		for _, lockTTL := range []time.Duration{0, -1} {
			users := newUsers(s.Addr, Options{LockTTL: lockTTL})
			ctx := testCtx(t, 10*time.Second)
			if err := users.Set(ctx, "user:20", user{ID: 20, Name: "stored meanwhile"}); err != nil {
				t.Fatal(err)
			}
			e, err := users.fill(ctx, "user:20", failing(errDB), &claim{})
			if err != nil || users.Stats().Loads != 0 {
				t.Fatalf("LockTTL %v: fill = %v after %d loads; want the stored value", lockTTL, err, users.Stats().Loads)
			}
			if u, err := users.decode(e); err != nil || u.Name != "stored meanwhile" {
				t.Fatalf("LockTTL %v: fill returned %+v, %v", lockTTL, u, err)
			}
			if exists(t, s, "user:20"+lockSuffix) {
				t.Fatalf("LockTTL %v: the lock taken before the read was not given back", lockTTL)
			}
		}
	})
}

// TestRoundTrips: with the values on the Client, a hit costs one round
// trip, and a miss three: the read, the lock with a second read, and the
// store with the unlock.
func TestRoundTrips(t *testing.T) {
	s := newServer(t)
	var mu sync.Mutex
	var trips []string
	c := newClient(t, s.Addr, func(o *zipline.Options) {
		o.OnCommand = func(_ context.Context, ev zipline.CommandEvent) {
			mu.Lock()
			trips = append(trips, fmt.Sprintf("%s/%d", ev.Name, ev.Commands))
			mu.Unlock()
		}
	})
	users := New[user](c, Options{})
	ctx := testCtx(t, 10*time.Second)
	count := func(f func()) string {
		mu.Lock()
		trips = nil
		mu.Unlock()
		f()
		mu.Lock()
		defer mu.Unlock()
		return strings.Join(trips, " ")
	}
	if got := count(func() { mustLoad(t, ctx, users, "user:30") }); got != "GET/1 BATCH/3 BATCH/2" {
		t.Fatalf("a miss took %q", got)
	}
	if got := count(func() { users.Fetch(ctx, "user:30", failing(errDB)) }); got != "GET/1" {
		t.Fatalf("a hit took %q", got)
	}
}

func TestNotFoundCached(t *testing.T) {
	s := newServer(t)
	users := New[user](newClient(t, s.Addr), Options{TTL: 10 * time.Minute, NotFoundTTL: 30 * time.Second})
	clock := newFakeClock()
	users.now = clock.Now
	ctx := testCtx(t, 10*time.Second)
	var calls int
	load := func(context.Context) (user, error) {
		calls++
		if calls == 1 {
			return user{}, fmt.Errorf("user 9: %w", ErrNotFound)
		}
		return user{ID: 9, Name: "created"}, nil
	}

	_, err := users.Fetch(ctx, "user:9", load)
	if !errors.Is(err, ErrNotFound) || err.Error() != "user 9: cache: not found" {
		t.Fatalf("first Fetch error = %v; want the loader's ErrNotFound", err)
	}
	ttl, err := s.Do(ctx, "PTTL", "user:9")
	if err != nil || ttl.Int() <= 0 || ttl.Int() > 30_000 {
		t.Fatalf("PTTL of the cached not-found = %d, %v; want at most NotFoundTTL", ttl.Int(), err)
	}
	for range 3 {
		if _, err := users.Fetch(ctx, "user:9", load); err != ErrNotFound {
			t.Fatalf("cached Fetch error = %v; want ErrNotFound", err)
		}
	}
	if calls != 1 {
		t.Fatalf("loader ran %d times while the not-found was cached", calls)
	}
	if st := users.Stats(); st.NegativeHits != 3 || st.Hits != 0 || st.LoadErrors != 0 {
		t.Fatalf("stats = %+v", st)
	}

	clock.Add(31 * time.Second) // past NotFoundTTL, while the server still has it
	if u, err := users.Fetch(ctx, "user:9", load); err != nil || u.Name != "created" {
		t.Fatalf("Fetch after NotFoundTTL = %+v, %v; want a new load", u, err)
	}

	// NotFoundTTL < 0: nothing is cached.
	nocache := New[user](newClient(t, s.Addr), Options{NotFoundTTL: -1})
	for range 2 {
		if _, err := nocache.Fetch(ctx, "user:10", failing(ErrNotFound)); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Fetch = %v", err)
		}
	}
	if st := nocache.Stats(); st.Loads != 2 || exists(t, s, "user:10") {
		t.Fatalf("with NotFoundTTL < 0: stats %+v, key stored %v", st, exists(t, s, "user:10"))
	}
}

func TestLoaderErrorNotCached(t *testing.T) {
	bothPaths(t, func(t *testing.T, newUsers func(string, Options) *Cache[user]) {
		s := newServer(t)
		users := newUsers(s.Addr, Options{})
		ctx := testCtx(t, 10*time.Second)

		_, err := users.Fetch(ctx, "user:2", failing(fmt.Errorf("loading user 2: %w", errDB)))
		if !errors.Is(err, errDB) {
			t.Fatalf("Fetch error = %v; want the loader's", err)
		}
		checkNotCached(t, ctx, s, users, "user:2")
	})
}

// checkNotCached checks that a failed load left nothing behind: no value, no
// lock, and the next Fetch loads again.
func checkNotCached(t *testing.T, ctx context.Context, s *testkit.Server, users *Cache[user], key string) {
	t.Helper()
	if exists(t, s, key) || exists(t, s, key+lockSuffix) {
		t.Fatal("a failed load left the key or its lock behind")
	}
	mustLoad(t, ctx, users, key)
	if st := users.Stats(); st.Loads != 2 || st.LoadErrors != 1 {
		t.Fatalf("stats = %+v; want the failed load and a new one", st)
	}
}

// TestLoaderPanic: every caller waiting for a load that panics gets a
// *PanicError, the lock is released, and the next Fetch loads again.
func TestLoaderPanic(t *testing.T) {
	s := newServer(t)
	users := New[user](newClient(t, s.Addr), Options{})
	ctx := testCtx(t, 10*time.Second)
	const n = 50
	load := func(context.Context) (user, error) {
		waitFor(t, 5*time.Second, "all callers", func() bool { return users.flights.waiting("user:3") == n })
		panic("boom")
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { _, errs[i] = users.Fetch(ctx, "user:3", load) })
	}
	wg.Wait()
	for _, err := range errs {
		var pe *PanicError
		if !errors.As(err, &pe) || pe.Value != "boom" || !bytes.Contains(pe.Stack, []byte("TestLoaderPanic")) {
			t.Fatalf("Fetch error = %v; want a *PanicError with the value and the loader's stack", err)
		}
	}
	checkNotCached(t, ctx, s, users, "user:3")
}

// TestEarlyRefresh: with the clock near a hot key's expiry, readers under
// load get the cached value at once and exactly one of them refreshes it in
// the background, across two processes (two Caches). The random source is
// fixed, so XFetch's decision is too.
func TestEarlyRefresh(t *testing.T) {
	bothPaths(t, func(t *testing.T, newUsers func(string, Options) *Cache[user]) {
		s := newServer(t)
		clock := newFakeClock()
		var r atomic.Uint64 // the random draw, in millionths
		newCache := func() *Cache[user] {
			c := newUsers(s.Addr, Options{TTL: time.Minute})
			c.now = clock.Now
			c.rand = func() float64 { return float64(r.Load()) / 1e6 }
			return c
		}
		a, b := newCache(), newCache()
		ctx := testCtx(t, 10*time.Second)
		var loads atomic.Int32
		release := make(chan struct{}) // the refresh returns only once the readers are done
		load := func(ctx context.Context) (user, error) {
			n := loads.Add(1)
			if n == 1 {
				clock.Add(100 * time.Millisecond) // the first load takes 100 ms: delta
			} else {
				select {
				case <-release:
				case <-ctx.Done():
					return user{}, ctx.Err()
				}
			}
			return user{ID: 1, Name: fmt.Sprintf("v%d", n)}, nil
		}
		if _, err := a.Fetch(ctx, "hot", load); err != nil {
			t.Fatal(err)
		}
		expiry := clock.Now().Add(time.Minute)
		clock.Set(expiry.Add(-50 * time.Millisecond))

		readAll := func(want string) {
			t.Helper()
			var wg sync.WaitGroup
			errs := make(chan error, 200)
			for i := range 200 {
				c := a
				if i%2 == 1 {
					c = b
				}
				wg.Go(func() {
					if u, err := c.Fetch(ctx, "hot", load); err != nil || u.Name != want {
						errs <- fmt.Errorf("Fetch = %+v, %v; want %s", u, err, want)
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
		}
		settle := func() {
			t.Helper()
			waitFor(t, 5*time.Second, "the refreshes to end", func() bool {
				return !a.flights.isRefreshing("hot") && !b.flights.isRefreshing("hot")
			})
		}

		// -ln(0.9) * 100 ms = 10.5 ms of head start: short of the 50 ms left.
		r.Store(900_000)
		readAll("v1")
		settle()
		if loads.Load() != 1 {
			t.Fatalf("refreshed %d times 50 ms before expiry with a 10.5 ms head start", loads.Load()-1)
		}

		// -ln(0.5) * 100 ms = 69 ms: every reader decides to refresh, and one does.
		// The readers all return the current value while the refresh is held.
		r.Store(500_000)
		readAll("v1")
		close(release)
		settle()
		if got := loads.Load(); got != 2 {
			t.Fatalf("loads = %d; want 1 and exactly 1 early refresh", got)
		}
		sa, sb := a.Stats(), b.Stats()
		if sa.EarlyRefreshes+sb.EarlyRefreshes != 1 || sa.Misses+sb.Misses != 1 {
			t.Fatalf("stats a %+v, b %+v; want 1 early refresh and no miss but the first", sa, sb)
		}
		if clock.Now().After(expiry) {
			t.Fatal("the clock passed the expiry: the refresh was not early")
		}
		// The new value is there, with a new expiry, and is not refreshed again.
		r.Store(1_000_000)
		if u, err := b.Fetch(ctx, "hot", load); err != nil || u.Name != "v2" {
			t.Fatalf("Fetch after the refresh = %+v, %v", u, err)
		}
		raw, err := s.Do(ctx, "GET", "hot")
		if err != nil {
			t.Fatal(err)
		}
		if e, ok := decodeEntry(raw.Bytes()); !ok || !e.expiry.After(expiry) {
			t.Fatalf("stored entry %+v: its expiry did not move past %v", e, expiry)
		}

		// Beta < 0: no early refresh however close the expiry.
		off := newUsers(s.Addr, Options{TTL: time.Minute, Beta: -1})
		off.now = clock.Now
		off.rand = func() float64 { return 1e-9 }
		if _, err := off.Fetch(ctx, "hot", load); err != nil {
			t.Fatal(err)
		}
		if st := off.Stats(); st.EarlyRefreshes != 0 || st.Hits != 1 {
			t.Fatalf("with Beta < 0: stats %+v", st)
		}
	})
}

// TestWaiterCanceled: a Fetch waiting for another process's lock returns
// when its context ends, without loading, and another caller of the same
// flight goes on waiting and gets the value.
func TestWaiterCanceled(t *testing.T) {
	bothPaths(t, func(t *testing.T, newUsers func(string, Options) *Cache[user]) {
		s := newServer(t)
		users := newUsers(s.Addr, Options{LockTTL: 10 * time.Second})
		ctx := testCtx(t, 10*time.Second)
		holdLock(t, s, "user:4", "another-process", 10*time.Second)
		var l loader
		short, cancel := context.WithCancel(ctx)
		shortErr := make(chan error, 1)
		go func() { _, err := users.Fetch(short, "user:4", l.load(4)); shortErr <- err }()
		long := make(chan error, 1)
		go func() {
			u, err := users.Fetch(ctx, "user:4", l.load(4))
			if err == nil && u.ID != 4 {
				err = fmt.Errorf("got %+v", u)
			}
			long <- err
		}()
		waitFor(t, 5*time.Second, "two waiters", func() bool {
			return users.flights.waiting("user:4") == 2 && users.Stats().LockWaits == 1
		})
		start := time.Now()
		cancel()
		if err := <-shortErr; !errors.Is(err, context.Canceled) {
			t.Fatalf("canceled Fetch = %v", err)
		}
		if d := time.Since(start); d > time.Second {
			t.Fatalf("canceled Fetch returned after %v", d)
		}
		if l.count() != 0 {
			t.Fatal("the loader ran while another process held the lock")
		}
		// The other process finishes without storing: the remaining waiter
		// takes the lock and loads, with a context its caller still holds.
		if _, err := s.Do(ctx, "DEL", "user:4"+lockSuffix); err != nil {
			t.Fatal(err)
		}
		if err := <-long; err != nil {
			t.Fatal(err)
		}
		if l.count() != 1 || l.ctxErrs[0] != nil {
			t.Fatalf("loads %d; want 1 with a live context", l.count())
		}

		// A lone waiter whose deadline passes gets the deadline's error.
		holdLock(t, s, "user:5", "another-process", 10*time.Second)
		dctx, dcancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer dcancel()
		if _, err := users.Fetch(dctx, "user:5", l.load(5)); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Fetch past its deadline = %v", err)
		}
		waitFor(t, time.Second, "the flight to end", func() bool { return users.flights.waiting("user:5") == 0 })
	})
}

// TestHolderCanceled: when every caller of a load gives up, the loader's
// context ends, nothing is stored, and the lock is released at once, so
// another process loads without waiting out the lock's TTL.
func TestHolderCanceled(t *testing.T) {
	bothPaths(t, func(t *testing.T, newUsers func(string, Options) *Cache[user]) {
		s := newServer(t)
		a := newUsers(s.Addr, Options{LockTTL: 10 * time.Second})
		b := newUsers(s.Addr, Options{LockTTL: 10 * time.Second})
		ctx := testCtx(t, 10*time.Second)
		started := make(chan struct{})
		loaderErr := make(chan error, 1)
		blocking := func(ctx context.Context) (user, error) {
			close(started)
			<-ctx.Done()
			loaderErr <- ctx.Err()
			return user{}, ctx.Err()
		}
		actx, cancel := context.WithCancel(ctx)
		fetchErr := make(chan error, 1)
		go func() { _, err := a.Fetch(actx, "user:6", blocking); fetchErr <- err }()
		<-started
		if !exists(t, s, "user:6"+lockSuffix) {
			t.Fatal("the loading process holds no lock")
		}
		cancel()
		if err := <-fetchErr; !errors.Is(err, context.Canceled) {
			t.Fatalf("Fetch = %v", err)
		}
		if err := <-loaderErr; !errors.Is(err, context.Canceled) {
			t.Fatalf("the loader's context ended with %v", err)
		}
		waitFor(t, 2*time.Second, "the lock's release", func() bool { return !exists(t, s, "user:6"+lockSuffix) })
		mustLoad(t, ctx, b, "user:6")
		if st := b.Stats(); st.LockWaits != 0 || st.Loads != 1 {
			t.Fatalf("other process stats = %+v; want a load without waiting", st)
		}
	})
}

// TestLockWithoutExpiry: a lock key that never expires (left by something
// else) delays a Fetch by LockTTL, not forever.
func TestLockWithoutExpiry(t *testing.T) {
	s := newServer(t)
	users := New[user](newClient(t, s.Addr), Options{LockTTL: 200 * time.Millisecond})
	ctx := testCtx(t, 10*time.Second)
	holdLock(t, s, "user:8", "stuck", 0)
	start := time.Now()
	mustLoad(t, ctx, users, "user:8")
	if d := time.Since(start); d < 200*time.Millisecond || d > 3*time.Second {
		t.Fatalf("Fetch took %v; want LockTTL (200ms) and a little", d)
	}
	if st := users.Stats(); st.LockWaits != 1 || st.Loads != 1 {
		t.Fatalf("stats = %+v", st)
	}
}

// TestUnlockOnlyOwner: releasing a lock that expired and was taken by
// another process leaves the other's lock alone.
func TestUnlockOnlyOwner(t *testing.T) {
	s := newServer(t)
	users := New[user](newClient(t, s.Addr), Options{})
	ctx := testCtx(t, 10*time.Second)
	a, err := users.try(ctx, "k", "token")
	if err != nil || a.lock == nil {
		t.Fatalf("could not take a free lock: %+v, %v", a, err)
	}
	if again, err := users.try(ctx, "k", "other"); err != nil || again.lock != nil || again.holder != "token" {
		t.Fatalf("second try = %+v, %v; want the lock held by the first", again, err)
	}
	holdLock(t, s, "k", "next-holder", 10*time.Second) // as after the first lock expired
	users.unlock(ctx, a.lock)
	v, err := s.Do(ctx, "GET", "k"+lockSuffix)
	if err != nil || string(v.Bytes()) != "next-holder" {
		t.Fatalf("lock = %q, %v; the old holder deleted the new holder's lock", v.Bytes(), err)
	}
	mine, err := users.try(ctx, "other", "token")
	if err != nil || mine.lock == nil {
		t.Fatal(err)
	}
	users.unlock(ctx, mine.lock)
	if exists(t, s, "other"+lockSuffix) {
		t.Fatal("the holder could not release its own lock")
	}
}

// gobCodec is a Codec that is not JSON, counting its calls.
type gobCodec struct{ marshals, unmarshals atomic.Int32 }

func (g *gobCodec) Marshal(v any) ([]byte, error) {
	g.marshals.Add(1)
	var b bytes.Buffer
	err := gob.NewEncoder(&b).Encode(v)
	return b.Bytes(), err
}

func (g *gobCodec) Unmarshal(data []byte, v any) error {
	g.unmarshals.Add(1)
	return gob.NewDecoder(bytes.NewReader(data)).Decode(v)
}

type record struct {
	ID     int
	Scores map[string]float64
	Parts  []user
	Tags   []string
	When   time.Time
}

func TestCodecRoundTrip(t *testing.T) {
	s := newServer(t)
	ctx := testCtx(t, 10*time.Second)
	want := record{
		ID:     42,
		Scores: map[string]float64{"a": 1.5, "b": -2},
		Parts:  []user{{ID: 1, Name: "x"}},
		Tags:   []string{"t", "u"},
		When:   time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC),
	}
	for _, tc := range []struct {
		name  string
		codec Codec
	}{{"json", nil}, {"gob", &gobCodec{}}} {
		t.Run(tc.name, func(t *testing.T) {
			records := New[record](newClient(t, s.Addr), Options{Codec: tc.codec})
			key := "record:" + tc.name
			got, err := records.Fetch(ctx, key, func(context.Context) (record, error) { return want, nil })
			if err != nil || !equalRecord(got, want) {
				t.Fatalf("loaded %+v, %v", got, err)
			}
			again := New[record](newClient(t, s.Addr), Options{Codec: tc.codec})
			got, err = again.Fetch(ctx, key, func(context.Context) (record, error) { return record{}, errDB })
			if err != nil || !equalRecord(got, want) {
				t.Fatalf("read back %+v, %v", got, err)
			}
			if g, ok := tc.codec.(*gobCodec); ok && (g.marshals.Load() != 1 || g.unmarshals.Load() != 2) {
				t.Fatalf("gob codec: %d marshals, %d unmarshals; want 1 and 2", g.marshals.Load(), g.unmarshals.Load())
			}
		})
	}
	// A value the codec cannot read is an error, not a silent zero.
	ints := New[int](newClient(t, s.Addr), Options{})
	if err := New[string](newClient(t, s.Addr), Options{}).Set(ctx, "n", "not a number"); err != nil {
		t.Fatal(err)
	}
	if _, err := ints.Fetch(ctx, "n", func(context.Context) (int, error) { return 1, nil }); err == nil ||
		!strings.HasPrefix(err.Error(), "cache: decode: ") {
		t.Fatalf("decoding a string as an int: %v", err)
	}
}

func equalRecord(a, b record) bool {
	return fmt.Sprint(a.ID, a.Scores, a.Parts, a.Tags) == fmt.Sprint(b.ID, b.Scores, b.Parts, b.Tags) && a.When.Equal(b.When)
}

// TestCompressedOnClient: values go through the client's compression:
// stored compressed, read back whole by another Cache.
func TestCompressedOnClient(t *testing.T) {
	s := newServer(t)
	ctx := testCtx(t, 10*time.Second)
	withLZ4 := func(o *zipline.Options) { o.Compression = zipline.Compression{Backend: codec.LZ4} }
	c := newClient(t, s.Addr, withLZ4)
	want := user{ID: 1, Name: strings.Repeat("a fairly compressible name ", 100)}
	users := New[user](c, Options{})
	if _, err := users.Fetch(ctx, "big", func(context.Context) (user, error) { return want, nil }); err != nil {
		t.Fatal(err)
	}
	raw, err := s.Do(ctx, "GET", "big")
	if err != nil {
		t.Fatal(err)
	}
	stored := raw.Bytes()
	if !bytes.HasPrefix(stored, []byte{0x00, 0x01, 0x02, 0x00, 0x02}) || len(stored) > len(want.Name)/4 {
		t.Fatalf("stored %d bytes starting %x; want a small LZ4 envelope", len(stored), stored[:min(8, len(stored))])
	}
	if st := c.Stats().Compression; st.Compressed != 1 {
		t.Fatalf("compression stats %+v", st)
	}
	other := New[user](newClient(t, s.Addr, withLZ4), Options{})
	got, err := other.Fetch(ctx, "big", failing(errDB))
	if err != nil || got != want {
		t.Fatalf("read back %d-byte name, %v", len(got.Name), err)
	}
	// The lock token is short and is never compressed: the unlock script
	// compares it as stored.
	if other.Stats().Hits != 1 || exists(t, s, "big"+lockSuffix) {
		t.Fatalf("stats %+v", other.Stats())
	}
}

// TestForeignValueIsMiss: a value the Cache did not write (or a future
// format) is a miss, and the load overwrites it.
func TestForeignValueIsMiss(t *testing.T) {
	s := newServer(t)
	users := New[user](newClient(t, s.Addr), Options{})
	ctx := testCtx(t, 10*time.Second)
	if _, err := s.Do(ctx, "SET", "user:11", `{"id":11,"name":"plain json"}`); err != nil {
		t.Fatal(err)
	}
	var l loader
	if u, err := users.Fetch(ctx, "user:11", l.load(11)); err != nil || u.Name != "name-1" {
		t.Fatalf("Fetch = %+v, %v", u, err)
	}
	if u, err := users.Fetch(ctx, "user:11", l.load(11)); err != nil || u.Name != "name-1" || l.count() != 1 {
		t.Fatalf("second Fetch = %+v, %v after %d loads", u, err, l.count())
	}
}

// TestServerDown: with the server gone, Fetch loads from the source
// instead of failing, and counts the store errors.
func TestServerDown(t *testing.T) {
	s := newServer(t)
	users := New[user](newClient(t, s.Addr), Options{})
	ctx := testCtx(t, 10*time.Second)
	s.Kill()
	mustLoad(t, ctx, users, "user:12")
	if st := users.Stats(); st.Loads != 1 || st.StoreErrors < 2 {
		t.Fatalf("stats = %+v; want a load and the failed read, lock and store counted", st)
	}
}

func TestEntryEncoding(t *testing.T) {
	exp := time.UnixMilli(1_800_000_000_123)
	for _, e := range []entry{
		{expiry: exp, delta: 2500 * time.Microsecond, payload: []byte(`{"id":1}`)},
		{notFound: true, expiry: exp, delta: time.Second},
		{expiry: exp},
	} {
		got, ok := decodeEntry(e.encode())
		if !ok || got.notFound != e.notFound || !got.expiry.Equal(e.expiry) || got.delta != e.delta ||
			!bytes.Equal(got.payload, e.payload) {
			t.Fatalf("round trip of %+v gave %+v, %v", e, got, ok)
		}
	}
	for _, b := range [][]byte{
		nil, {formatValue}, []byte("plain"), {0x00, 0x01, 0x02, 0x00, 0x01},
		{formatValue, 0x80}, // truncated uvarint
		append((entry{notFound: true, expiry: exp}).encode(), 'x'),
	} {
		if _, ok := decodeEntry(b); ok {
			t.Fatalf("decodeEntry(%x) accepted it", b)
		}
	}
}

func TestOptionsDefaults(t *testing.T) {
	s := newServer(t)
	c := New[user](newClient(t, s.Addr), Options{})
	if c.ttl != DefaultTTL || c.notFoundTTL != DefaultNotFoundTTL || c.lockTTL != DefaultLockTTL ||
		c.beta != DefaultBeta || c.codec != (JSON{}) {
		t.Fatalf("defaults: %+v", c)
	}
}

// A load that a Delete or Set in this process overtakes does not store
// what it loaded: it may predate the write, and would then be served
// until its TTL. Its own callers still get it (they asked before the
// write); a Fetch after the write loads again.
func TestWriteDuringLoadIsNotOverwritten(t *testing.T) {
	bothPaths(t, func(t *testing.T, newUsers func(string, Options) *Cache[user]) {
		s := newServer(t)
		for _, lockTTL := range []time.Duration{0, -1} {
			for _, write := range []string{"Delete", "Set"} {
				users := newUsers(s.Addr, Options{LockTTL: lockTTL})
				ctx := testCtx(t, 10*time.Second)
				key := fmt.Sprintf("user:%v:%s", lockTTL, write)
				started, release := make(chan struct{}), make(chan struct{})
				done := make(chan user, 1)
				go func() {
					u, _ := users.Fetch(ctx, key, func(context.Context) (user, error) {
						close(started)
						<-release
						return user{ID: 1, Name: "before the write"}, nil
					})
					done <- u
				}()
				<-started
				var err error
				if write == "Delete" {
					err = users.Delete(ctx, key)
				} else {
					err = users.Set(ctx, key, user{ID: 1, Name: "written"})
				}
				if err != nil {
					t.Fatal(err)
				}
				close(release)
				if u := <-done; u.Name != "before the write" {
					t.Fatalf("the load's caller got %+v", u)
				}
				want := "loaded after the write"
				if write == "Set" {
					want = "written"
				}
				u, err := users.Fetch(ctx, key, func(context.Context) (user, error) {
					return user{ID: 1, Name: "loaded after the write"}, nil
				})
				if err != nil || u.Name != want {
					t.Fatalf("LockTTL %v, %s during a load: the next Fetch got %+v, %v; want %q", lockTTL, write, u, err, want)
				}
				if n := users.Stats().Superseded; n != 1 {
					t.Errorf("LockTTL %v, %s: %d loads superseded, want 1", lockTTL, write, n)
				}
			}
		}
	})
}

// heldStore holds each Get that finds holdGet set, after it has read the
// value, until releaseGet; and each Del that finds holdDel set, before it
// deletes, until releaseDel: a read that reached the server before a
// write, and whose caller has not had the reply yet, and a write on its
// way.
type heldStore struct {
	Store
	holdGet, holdDel       atomic.Bool
	gotten, deleting       chan struct{}
	releaseGet, releaseDel chan struct{}
}

func (s *heldStore) Get(ctx context.Context, key string) ([]byte, error) {
	b, err := s.Store.Get(ctx, key)
	if s.holdGet.CompareAndSwap(true, false) {
		close(s.gotten)
		<-s.releaseGet
	}
	return b, err
}

func (s *heldStore) Del(ctx context.Context, keys ...string) (int64, error) {
	if s.holdDel.CompareAndSwap(true, false) {
		close(s.deleting)
		<-s.releaseDel
	}
	return s.Store.Del(ctx, keys...)
}

// A Fetch that begins after Delete has returned does not join a flight
// that began while the delete was on its way, and read the key before it
// reached the server: it would be handed the deleted value.
func TestFetchAfterDeleteDoesNotJoinAnOlderRead(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s.Addr)
	store := &heldStore{Store: c, gotten: make(chan struct{}), deleting: make(chan struct{}),
		releaseGet: make(chan struct{}), releaseDel: make(chan struct{})}
	users := New[user](c, Options{Store: store, LockTTL: -1})
	ctx := testCtx(t, 10*time.Second)
	if err := users.Set(ctx, "user:1", user{ID: 1, Name: "old"}); err != nil {
		t.Fatal(err)
	}
	store.holdDel.Store(true)
	deleted := make(chan error, 1)
	go func() { deleted <- users.Delete(ctx, "user:1") }()
	<-store.deleting
	// While the delete is on its way: a flight that reads "old" and has
	// not had the reply yet. (Entered by hand, as a miss enters it: a
	// Fetch would find "old" at its first lookup and take no flight.)
	store.holdGet.Store(true)
	first := make(chan user, 1)
	go func() {
		e, _ := users.flights.do(ctx, "user:1", func(ctx context.Context, cl *claim) (entry, error) {
			e, _ := users.lookup(ctx, "user:1")
			return e, nil
		})
		u, _ := users.decode(e)
		first <- u
	}()
	<-store.gotten
	close(store.releaseDel)
	if err := <-deleted; err != nil {
		t.Fatal(err)
	}
	if n := users.flights.waiting("user:1"); n != 0 {
		t.Fatalf("after Delete, a Fetch would join a read from before it (%d waiting on it)", n)
	}
	u, err := users.Fetch(ctx, "user:1", func(context.Context) (user, error) { return user{ID: 1, Name: "new"}, nil })
	if err != nil || u.Name != "new" {
		t.Fatalf("Fetch after Delete: %+v, %v; want the new value", u, err)
	}
	close(store.releaseGet)
	if u := <-first; u.Name != "old" {
		t.Fatalf("the read from before Delete got %+v", u)
	}
}

// A load that a write overtakes frees the lock across processes at once:
// it will not store, so the load after the write does not wait for it.
func TestRevokedLoadFreesTheLock(t *testing.T) {
	s := newServer(t)
	users := New[user](newClient(t, s.Addr), Options{})
	ctx := testCtx(t, 10*time.Second)
	started, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	go users.Fetch(ctx, "user:7", func(context.Context) (user, error) {
		close(started)
		<-release
		return user{ID: 7, Name: "before the write"}, nil
	})
	<-started // it holds user:7's lock, loading
	if err := users.Delete(ctx, "user:7"); err != nil {
		t.Fatal(err)
	}
	// Bounded by a deadline well past a lock poll's, not by the first
	// load: it waits for release, which comes only after this Fetch.
	bctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	u, err := users.Fetch(bctx, "user:7", func(context.Context) (user, error) { return user{ID: 7, Name: "after"}, nil })
	if err != nil || u.Name != "after" {
		t.Fatalf("Fetch after the write, while the overtaken load holds the lock: %+v, %v", u, err)
	}
}
