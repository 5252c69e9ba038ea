package zipline

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/internal/pipe"
	"github.com/ziplinekv/zipline/internal/testkit"
)

// Large requests, and the commands on keys whose replies were large, go
// on the bulk lane; small ones stay on the shared connection, so that no
// small request waits behind a large value in one stream. Counted by the
// server, per connection (CLIENT LIST's tot-net-in and tot-net-out).
func TestLargeValuesTravelApart(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{Kind: testkit.Valkey})
	c, err := New(Options{Addr: srv.Addr, Logger: quiet, SoloConns: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	large := bytes.Repeat([]byte("z"), 2*DefaultBulkThreshold)
	mustOK(t, c.Set(ctx, "small", []byte("v")))
	// The first large request opens the lane, in the background: it goes
	// on the shared connection itself.
	mustOK(t, c.Set(ctx, "big", large))
	for c.Stats().BulkOpen != 1 {
		if ctx.Err() != nil {
			t.Fatal("the bulk lane never opened")
		}
		time.Sleep(time.Millisecond) // polling a condition, bounded by ctx
	}
	before := netCounts(t, srv)
	// A large SET teaches the lane its key, so the GET after it goes on
	// the lane too, as does the SET after that GET's large reply.
	for range 5 {
		mustOK(t, c.Set(ctx, "big", large))
		if v := must(c.Get(ctx, "big"))(t); len(v) != len(large) {
			t.Fatalf("GET big: %d bytes", len(v))
		}
	}
	for range 100 {
		must(c.Get(ctx, "small"))(t)
	}
	after := netCounts(t, srv)
	if len(before) != 2 || len(after) != 2 {
		t.Fatalf("the client holds %d then %d connections, want 2 (shared, bulk)", len(before), len(after))
	}
	var bulkIn, bulkOut, sharedIn, sharedOut int64
	for id, a := range after {
		in, out := a[0]-before[id][0], a[1]-before[id][1]
		if in >= 5*int64(len(large)) {
			bulkIn, bulkOut = in, out
		} else {
			sharedIn, sharedOut = in, out
		}
	}
	if bulkIn < 5*int64(len(large)) || sharedIn >= int64(len(large)) {
		t.Fatalf("requests: %d bytes on the bulk lane, %d on the shared connection; want the five large SETs on the lane", bulkIn, sharedIn)
	}
	if bulkOut < 5*int64(len(large)) || sharedOut >= int64(len(large)) {
		t.Fatalf("replies: %d bytes on the bulk lane, %d on the shared connection; want the five large GETs on the lane", bulkOut, sharedOut)
	}
	// A small reply on the key sends it back to the shared connection.
	mustOK(t, c.Set(ctx, "big", []byte("now small")))
	must(c.Get(ctx, "big"))(t)
	b := c.s.top.(*direct).bulk
	if b.cost(10, "big") != 0 {
		t.Fatal("after a small reply, the key still goes on the bulk lane")
	}
}

// With the client-side cache on, or BulkThreshold negative, there is no
// bulk lane: every request shares one connection.
func TestNoBulkLane(t *testing.T) {
	for name, opts := range map[string]Options{
		"cache":    {ClientCache: ClientCache{MaxBytes: 1 << 20}},
		"disabled": {BulkThreshold: -1},
	} {
		t.Run(name, func(t *testing.T) {
			c, _ := newTestClient(t, opts)
			ctx := context.Background()
			large := bytes.Repeat([]byte("z"), 2*DefaultBulkThreshold)
			for range 3 {
				mustOK(t, c.Set(ctx, "big", large))
			}
			if c.s.top.(*direct).bulk != nil || c.Stats().BulkOpen != 0 {
				t.Fatal("a bulk lane exists")
			}
		})
	}
}

// netCounts returns, per client id other than the asking connection, the
// bytes the server read from it and wrote to it.
func netCounts(t *testing.T, srv *testkit.Server) map[string][2]int64 {
	t.Helper()
	v := must(srv.Do(context.Background(), "CLIENT", "LIST"))(t)
	out := map[string][2]int64{}
	for _, line := range strings.Split(strings.TrimSpace(string(v.Bytes())), "\n") {
		f := map[string]string{}
		for _, kv := range strings.Fields(line) {
			k, val, _ := strings.Cut(kv, "=")
			f[k] = val
		}
		if f["cmd"] == "client|list" {
			continue
		}
		in, err1 := strconv.ParseInt(f["tot-net-in"], 10, 64)
		o, err2 := strconv.ParseInt(f["tot-net-out"], 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("CLIENT LIST has no tot-net-in/out: %s", line)
		}
		out[f["id"]] = [2]int64{in, o}
	}
	return out
}

// The bulk lane lets one request through whatever its size, holds the
// next back while the bytes in flight would pass bulkWindow (an ended
// context then fails it as not sent), and lets the held ones in, in the
// order they came, as bytes come back.
func TestBulkWindow(t *testing.T) {
	b := newBulkLane(pipe.Options{}, DefaultBulkThreshold)
	defer b.close()
	ctx := context.Background()
	if err := b.admit(ctx, 700<<10); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	err := b.admit(short, 100<<10)
	cancel()
	if !errors.Is(err, ErrNotSent) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a second request while 700 KiB are in flight: %v, want held until its context ended (not sent)", err)
	}
	waiting := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; {
			b.windowMu.Lock()
			got := len(b.waiting)
			b.windowMu.Unlock()
			if got == n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d callers held back, want %d", got, n)
			}
			runtime.Gosched()
		}
	}
	first, second := make(chan error, 1), make(chan error, 1)
	go func() { first <- b.admit(ctx, 200<<10) }()
	waiting(1)
	go func() { second <- b.admit(ctx, 200<<10) }()
	waiting(2)
	b.release(700 << 10)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	waiting(1) // 200 + 200 KiB would pass the window: the second still waits
	b.release(200 << 10)
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	b.release(200 << 10)
	if b.inFlight != 0 {
		t.Fatalf("%d bytes in flight after every release", b.inFlight)
	}
}
