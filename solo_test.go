package zipline

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/internal/testkit"
)

// overlap runs callers goroutines that each set and read back their own
// keys until the Client has at least want solo connections open, or each
// has made maxCalls calls. Every reply must be the caller's own value.
func overlap(t *testing.T, c *Client, callers, want, maxCalls int) {
	t.Helper()
	ctx := t.Context()
	var wg sync.WaitGroup
	for g := range callers {
		wg.Go(func() {
			for i := range maxCalls {
				if i%64 == 0 && c.Stats().SoloOpen >= want {
					return
				}
				key := fmt.Sprintf("solo:%d", g)
				val := fmt.Appendf(nil, "%d-%d", g, i)
				if err := c.Set(ctx, key, val, Expiry{}); err != nil {
					t.Error(err)
					return
				}
				got, err := c.Get(ctx, key)
				if err != nil || string(got) != string(val) {
					t.Errorf("caller %d read %q, %v; want its own %q", g, got, err, val)
					return
				}
			}
		})
	}
	wg.Wait()
}

// A lone caller opens no solo connection; overlapping callers open them,
// one by one, up to Options.SoloConns, and each reply still reaches its
// own caller.
func TestSoloConnsOpenWhenCallersOverlap(t *testing.T) {
	c, _ := newTestClient(t, Options{SoloConns: 3})
	ctx := t.Context()
	for i := range 500 {
		if err := c.Set(ctx, "alone", fmt.Append(nil, i), Expiry{}); err != nil {
			t.Fatal(err)
		}
	}
	if n := c.Stats().SoloOpen; n != 0 {
		t.Fatalf("a lone caller opened %d solo connections, want 0", n)
	}
	overlap(t, c, 8, 3, 200_000)
	st := c.Stats()
	if st.SoloOpen != 3 {
		t.Fatalf("8 overlapping callers: %d solo connections open, want Options.SoloConns = 3", st.SoloOpen)
	}
	// Each solo connection is one more client of the server.
	list, err := c.ClientList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := 1 + st.SoloOpen + st.DedicatedOpen; len(list) != want {
		t.Fatalf("the server lists %d clients, want %d (shared + solo + dedicated)", len(list), want)
	}
}

// By default (zero), and with a negative SoloConns, none opens, however
// many callers overlap.
func TestSoloConnsOff(t *testing.T) {
	for _, n := range []int{0, -1} {
		c, _ := newTestClient(t, Options{SoloConns: n})
		overlap(t, c, 8, 1, 5_000)
		if open := c.Stats().SoloOpen; open != 0 {
			t.Fatalf("SoloConns %d: %d solo connections open", n, open)
		}
	}
}

// With the client-side cache on, no solo connection opens: invalidations
// arrive on the shared connection, and only there do they precede every
// later reply (TestCachedNeverStaleUnderWrites fails with them open).
func TestSoloConnsOffWithClientCache(t *testing.T) {
	c, _, _ := cachedClient(t, ClientCache{}, Options{SoloConns: 4})
	overlap(t, c, 8, 1, 5_000)
	if n := c.Stats().SoloOpen; n != 0 {
		t.Fatalf("with the client-side cache: %d solo connections open", n)
	}
}

// A cluster's nodes open none: callers spread over the shards already
// (bench/RESULTS.md section 8 has the measurement).
func TestSoloConnsOffOnACluster(t *testing.T) {
	c, _ := clusterClient(t, testkit.Redis, Options{SoloConns: 4})
	overlap(t, c, 16, 1, 2_000)
	if n := c.Stats().SoloOpen; n != 0 {
		t.Fatalf("on a cluster: %d solo connections open", n)
	}
}

// Close while callers overlap and solo connections are being opened: every
// call ends, with its reply or ErrClosed, and Close leaves no goroutine
// behind (TestMain checks) nor a connection open.
func TestSoloConnsCloseUnderLoad(t *testing.T) {
	c, _ := newTestClient(t, Options{SoloConns: 7})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	started := make(chan struct{}, 16)
	for g := range 16 {
		wg.Go(func() {
			for i := 0; ; i++ {
				if i == 100 {
					started <- struct{}{}
				}
				err := c.Set(ctx, fmt.Sprint("close:", g), []byte("v"), Expiry{})
				if errors.Is(err, ErrClosed) {
					return
				}
				if err != nil {
					t.Errorf("caller %d: %v", g, err)
					return
				}
			}
		})
	}
	for range 16 {
		<-started
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if n := c.Stats().InFlight; n != 0 {
		t.Fatalf("%d requests in flight after Close", n)
	}
}

// Solo connections that go unused are closed, the last opened first, and
// the Client's counters keep what they wrote; callers that overlap again
// open them again.
func TestSoloConnsCloseWhenIdle(t *testing.T) {
	c, _ := newTestClient(t, Options{SoloConns: 3})
	d := c.carrier.(*direct)
	d.solo.idleAfter = 50 * time.Millisecond // before any is dialled
	overlap(t, c, 8, 3, 200_000)
	before := c.Stats()
	if before.SoloOpen != 3 {
		t.Fatalf("8 overlapping callers: %d solo connections open, want 3", before.SoloOpen)
	}
	deadline := time.Now().Add(10 * time.Second)
	for c.Stats().SoloOpen != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d solo connections still open 10 s after their callers left", c.Stats().SoloOpen)
		}
		time.Sleep(10 * time.Millisecond) // waiting for a timer-driven sweep
	}
	after := c.Stats()
	if after.Requests < before.Requests || after.Writes < before.Writes {
		t.Fatalf("counters went back when solo connections closed: requests %d -> %d, writes %d -> %d",
			before.Requests, after.Requests, before.Writes, after.Writes)
	}
	// The server sees a closed connection go when its event loop next
	// reads the socket: wait for it, bounded.
	want := 1 + after.DedicatedOpen
	for {
		list, err := c.ClientList(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if len(list) == want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server lists %d clients after the sweep, want %d", len(list), want)
		}
		time.Sleep(10 * time.Millisecond) // polling server state, bounded
	}
	overlap(t, c, 8, 3, 200_000)
	if n := c.Stats().SoloOpen; n != 3 {
		t.Fatalf("overlapping again: %d solo connections open, want 3", n)
	}
}
