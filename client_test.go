package zipline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ziplinekv/zipline/internal/testkit"
	"github.com/ziplinekv/zipline/testbed"
)

// TestMain starts a server for the examples, which read its address from
// ZIPLINE_EXAMPLE_ADDR (an Example has no testing.T to start one with),
// and checks that no test leaks a goroutine.
func TestMain(m *testing.M) {
	srv, err := testbed.Start(testbed.Config{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "TestMain: the examples' server:", err)
		os.Exit(1)
	}
	os.Setenv("ZIPLINE_EXAMPLE_ADDR", srv.Addr)
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) { srv.Stop() }),
		goleak.IgnoreAnyFunction("github.com/ziplinekv/zipline/testbed.(*Server).start.func1")) // the examples' server, until Cleanup
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// newTestClient starts a server and a Client connected to it.
func newTestClient(t *testing.T, opts Options) (*Client, *testkit.Server) {
	t.Helper()
	srv := testkit.NewServer(t, testkit.Config{})
	opts.Addr = srv.Addr
	if opts.Logger == nil {
		opts.Logger = quiet
	}
	c, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, srv
}

func TestZeroOptionsGetDefaults(t *testing.T) {
	o := Options{}.withDefaults()
	if o.Addr != DefaultAddr || o.Network != "tcp" || o.DialTimeout != DefaultDialTimeout ||
		o.IOTimeout != DefaultIOTimeout || o.HealthCheckInterval != DefaultHealthCheckInterval ||
		o.ReconnectBackoffMax != DefaultReconnectBackoffMax || o.MaxDedicatedConns != DefaultMaxDedicatedConns ||
		o.Logger == nil {
		t.Fatalf("defaults not applied: %+v", o)
	}
	if o := (Options{IOTimeout: -1, HealthCheckInterval: -1}).withDefaults(); o.IOTimeout != 0 || o.HealthCheckInterval != 0 {
		t.Fatalf("negative durations must disable: %+v", o)
	}
	if _, err := New(Options{Protocol: 4}); err == nil {
		t.Fatal("Protocol 4 accepted")
	}
}

// Options with only Addr set work: every other zero field has a default.
func TestNewWithOnlyAddr(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{})
	c, err := New(Options{Addr: srv.Addr})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	if c.Protocol() != 3 {
		t.Fatalf("protocol %d, want 3", c.Protocol())
	}
}

func TestNewFailsOnUnreachableServer(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{})
	addr := srv.Addr
	srv.Stop()
	_, err := New(Options{Addr: addr, DialTimeout: time.Second, Logger: quiet})
	if err == nil || !strings.Contains(err.Error(), addr) {
		t.Fatalf("got %v, want a connect error naming %s", err, addr)
	}
}

func TestGetSetAndNil(t *testing.T) {
	c, _ := newTestClient(t, Options{})
	ctx := context.Background()
	if err := c.Set(ctx, "user:1", []byte("payload"), EX(10*time.Minute)); err != nil {
		t.Fatal(err)
	}
	v, err := c.Get(ctx, "user:1")
	if err != nil || string(v) != "payload" {
		t.Fatalf("Get = %q, %v", v, err)
	}
	if _, err := c.Get(ctx, "missing"); !errors.Is(err, Nil) {
		t.Fatalf("missing key: %v, want Nil", err)
	}
	ttl, err := c.TTL(ctx, "user:1")
	if err != nil || ttl <= 9*time.Minute || ttl > 10*time.Minute {
		t.Fatalf("TTL = %v, %v", ttl, err)
	}
}

func TestDo(t *testing.T) {
	c, _ := newTestClient(t, Options{})
	ctx := context.Background()
	r, err := c.Do(ctx, "HSET", "h", "f", 1)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := r.AsInt64(); err != nil || n != 1 {
		t.Fatalf("HSET reply %v %v", n, err)
	}
	r, err = c.Do(ctx, "hgetall", "h")
	if err != nil {
		t.Fatal(err)
	}
	m, err := r.AsMap()
	if err != nil || len(m) != 1 {
		t.Fatalf("HGETALL %v %v", r, err)
	}
	if n, err := m["f"].AsInt64(); err != nil || n != 1 {
		t.Fatalf("field f = %v %v", m["f"], err)
	}
	r, err = c.Do(ctx, "GET", "nope")
	if err != nil || !r.IsNil() {
		t.Fatalf("GET nope = %v, %v", r, err)
	}
	if _, err := r.AsBytes(); !errors.Is(err, Nil) {
		t.Fatalf("AsBytes of nil: %v", err)
	}
	// Server errors carry their prefix.
	_, err = c.Do(ctx, "LPUSH", "h", "x")
	var se *ServerError
	if !errors.As(err, &se) || se.Prefix != "WRONGTYPE" {
		t.Fatalf("got %v, want WRONGTYPE ServerError", err)
	}
	if _, err := c.Do(ctx, "SET", "k", struct{}{}); err == nil || !strings.Contains(err.Error(), "unsupported type") {
		t.Fatalf("bad argument: %v", err)
	}
}

func TestDoRefusesConnectionStateCommands(t *testing.T) {
	c, _ := newTestClient(t, Options{})
	ctx := context.Background()
	for _, args := range [][]any{
		{"SELECT", 1}, {"watch", "k"}, {"MULTI"}, {"client", "tracking", "on"},
		{"SUBSCRIBE", "ch"}, {"CLIENT", "REPLY", "OFF"}, {"QUIT"}, {"MONITOR"},
	} {
		_, err := c.Do(ctx, args...)
		var ce *CommandError
		if !errors.As(err, &ce) || !errors.Is(err, ErrNotAllowed) || !errors.Is(err, ErrNotSent) {
			t.Errorf("%v: got %v, want a CommandError", args, err)
		}
	}
	// The connection is untouched: still db 0.
	if err := c.Set(ctx, "db0", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if n, err := c.Exists(ctx, "db0"); err != nil || n != 1 {
		t.Fatal("shared connection state changed")
	}
}

func TestDedicatedAllowsStateCommands(t *testing.T) {
	c, _ := newTestClient(t, Options{})
	ctx := context.Background()
	d, err := c.Dedicated(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Do(ctx, "SELECT", 5); err != nil {
		t.Fatal(err)
	}
	if err := d.Set(ctx, "in-db5", []byte("x")); err != nil {
		t.Fatal(err)
	}
	d.Close()
	if _, err := d.Get(ctx, "in-db5"); !errors.Is(err, ErrClosed) {
		t.Fatalf("use after Close: %v", err)
	}
	// The shared client is still on db 0, and a dirty connection was not
	// returned to the pool for someone else to inherit db 5.
	if _, err := c.Get(ctx, "in-db5"); !errors.Is(err, Nil) {
		t.Fatalf("db 5 leaked into the shared client: %v", err)
	}
	d2, err := c.Dedicated(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	if _, err := d2.Get(ctx, "in-db5"); !errors.Is(err, Nil) {
		t.Fatalf("db 5 leaked through the pool: %v", err)
	}
}

func TestOnCommandHook(t *testing.T) {
	var mu sync.Mutex
	var events []CommandEvent
	c, _ := newTestClient(t, Options{OnCommand: func(_ context.Context, ev CommandEvent) {
		mu.Lock()
		events = append(events, ev)
		mu.Unlock()
	}})
	ctx := context.Background()
	c.Set(ctx, "k", []byte("v"))
	c.Get(ctx, "missing")
	c.Do(ctx, "incr", "k") // WRONGTYPE-free error: ERR value is not an integer
	b := c.Batch()
	b.Get("k")
	b.Get("k")
	b.Exec(ctx)
	mu.Lock()
	defer mu.Unlock()
	want := []struct {
		name string
		n    int
		err  bool
	}{{"SET", 1, false}, {"GET", 1, false}, {"INCR", 1, true}, {"BATCH", 2, false}}
	if len(events) != len(want) {
		t.Fatalf("events %+v", events)
	}
	for i, w := range want {
		ev := events[i]
		if ev.Name != w.name || ev.Commands != w.n || (ev.Err != nil) != w.err || ev.Duration <= 0 {
			t.Errorf("event %d = %+v, want %+v", i, ev, w)
		}
	}
}

// GET and SET cost at most one allocation (GET's value), measured against
// a real server.
func TestHotPathAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	c, _ := newTestClient(t, Options{})
	checkHotPathAllocations(t, c, allocCase{"SET EX", 0, func(ctx context.Context, val []byte) {
		c.Set(ctx, "k", val, EX(time.Minute))
	}})
}

// allocCase is one call and the most allocations it may make.
type allocCase struct {
	name string
	max  float64
	fn   func(ctx context.Context, val []byte)
}

// checkHotPathAllocations checks that on c SET and INCR allocate nothing,
// GET only its value and a Batch a few per batch, and so the more cases.
func checkHotPathAllocations(t *testing.T, c *Client, more ...allocCase) {
	t.Helper()
	ctx := context.Background()
	val := []byte(strings.Repeat("v", 64))
	if err := c.Set(ctx, "k", val); err != nil {
		t.Fatal(err)
	}
	cases := append([]allocCase{
		{"SET", 0, func(ctx context.Context, val []byte) { c.Set(ctx, "k", val) }},
		{"GET", 1, func(ctx context.Context, _ []byte) { c.Get(ctx, "k") }},
		{"INCR", 0, func(ctx context.Context, _ []byte) { c.Incr(ctx, "n") }},
		// The Batch, its first eight Futures and a block of sixteen more:
		// the list of Futures and the replies come back with the request
		// from its pool, and a command's argument array stays on the stack
		// (see decoderID).
		{"Batch of 20 SETs", 3, func(ctx context.Context, val []byte) {
			b := c.Batch()
			for range 20 {
				b.Set("k", val)
			}
			b.Exec(ctx)
		}},
		// And the values of twenty GETs: their replies, buffered whole,
		// share one allocation (resp.Reader.ShareNext), or two when the
		// first is read before the batch's others arrive.
		{"Batch of 20 GETs", 5, func(ctx context.Context, _ []byte) {
			b := c.Batch()
			for range 20 {
				b.Get("k")
			}
			b.Exec(ctx)
		}},
	}, more...)
	for _, tc := range cases {
		if n := testing.AllocsPerRun(200, func() { tc.fn(ctx, val) }); n > tc.max {
			t.Errorf("%s: %v allocations per call, want <= %v", tc.name, n, tc.max)
		}
	}
}
