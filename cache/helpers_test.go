package cache

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/internal/testkit"
	"github.com/ziplinekv/zipline/testbed"
	"go.uber.org/goleak"
)

// TestMain starts the server the example runs against, and checks that no
// test leaves a goroutine behind.
func TestMain(m *testing.M) {
	srv, err := testbed.Start(testbed.Config{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "TestMain: the example's server:", err)
		os.Exit(1)
	}
	os.Setenv("ZIPLINE_EXAMPLE_ADDR", srv.Addr)
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) { srv.Stop() }),
		goleak.IgnoreAnyFunction("github.com/ziplinekv/zipline/testbed.(*Server).start.func1")) // the example's server, until Cleanup
}

// quiet discards the clients' connection events.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// newServer starts a redis-server for the test.
func newServer(t *testing.T) *testkit.Server {
	t.Helper()
	return testkit.NewServer(t, testkit.Config{})
}

// newClient connects to addr, closing the client when the test ends.
func newClient(t testing.TB, addr string, opts ...func(*zipline.Options)) *zipline.Client {
	t.Helper()
	o := zipline.Options{Addr: addr, Logger: quiet}
	for _, f := range opts {
		f(&o)
	}
	c, err := zipline.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// viaStore hides a Client behind the Store interface, so that a Cache
// takes the path of other stores: the value read apart from the lock.
type viaStore struct{ Store }

// bothPaths runs f with the values on the Client itself (a lock and a value
// in one round trip) and behind the Store interface. newUsers returns a
// Cache on a new client of the server at addr.
func bothPaths(t *testing.T, f func(t *testing.T, newUsers func(addr string, o Options) *Cache[user])) {
	t.Run("client", func(t *testing.T) {
		f(t, func(addr string, o Options) *Cache[user] { return New[user](newClient(t, addr), o) })
	})
	t.Run("store", func(t *testing.T) {
		f(t, func(addr string, o Options) *Cache[user] {
			c := newClient(t, addr)
			o.Store = viaStore{c}
			u := New[user](c, o)
			if u.direct {
				t.Fatal("a Store other than the Client is taken for the Client")
			}
			return u
		})
	})
}

// testCtx is a context that ends well before the test binary's timeout, so
// that a hang fails the test that caused it.
func testCtx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// waitFor polls cond every millisecond until it holds, failing the test
// after limit.
func waitFor(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", limit, what)
		}
		time.Sleep(time.Millisecond)
	}
}

// exists reports whether key exists on the server.
func exists(t testing.TB, s *testkit.Server, key string) bool {
	t.Helper()
	v, err := s.Do(context.Background(), "EXISTS", key)
	if err != nil {
		t.Fatal(err)
	}
	return v.Int() == 1
}

// holdLock takes key's lock as another process would, with token, for ttl
// (0: forever).
func holdLock(t testing.TB, s *testkit.Server, key, token string, ttl time.Duration) {
	t.Helper()
	args := []any{"SET", key + lockSuffix, token}
	if ttl > 0 {
		args = append(args, "PX", ttl.Milliseconds())
	}
	if _, err := s.Do(context.Background(), args...); err != nil {
		t.Fatal(err)
	}
}

// fakeClock is a clock the test moves by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Unix(1_800_000_000, 0)} }

func (f *fakeClock) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.t
}

func (f *fakeClock) Set(t time.Time) {
	f.mu.Lock()
	f.t = t
	f.mu.Unlock()
}

func (f *fakeClock) Add(d time.Duration) { f.Set(f.Now().Add(d)) }

// user is the value type of most tests.
type user struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
}

// loader counts its calls and returns user{ID: id, Name: name-<call>}.
type loader struct {
	mu    sync.Mutex
	calls int
	// ctxErrs are the loader's context's errors when it was called.
	ctxErrs []error
}

func (l *loader) load(id int) func(context.Context) (user, error) {
	return func(ctx context.Context) (user, error) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.calls++
		l.ctxErrs = append(l.ctxErrs, ctx.Err())
		return user{ID: id, Name: fmt.Sprintf("name-%d", l.calls)}, nil
	}
}

func (l *loader) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.calls
}

// mustLoad fetches key, which must miss and be loaded once, and returns
// the loaded value.
func mustLoad(t testing.TB, ctx context.Context, c *Cache[user], key string) user {
	t.Helper()
	var l loader
	u, err := c.Fetch(ctx, key, l.load(1))
	if err != nil || l.count() != 1 || u.Name != "name-1" {
		t.Fatalf("Fetch(%q) = %+v, %v after %d loads; want one load", key, u, err, l.count())
	}
	return u
}

// failing returns a loader that always fails with err.
func failing(err error) func(context.Context) (user, error) {
	return func(context.Context) (user, error) { return user{}, err }
}

var errDB = errors.New("db down")
