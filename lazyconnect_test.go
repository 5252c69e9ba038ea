package zipline

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/internal/testkit"
)

// With LazyConnect, New returns at once with no server up, calls made
// meanwhile wait within their context, and a server started 2 s later
// serves them: the service started before its cache.
func TestLazyConnectSurvivesALateServer(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{})
	srv.Kill() // its port is known, and nothing listens there

	start := time.Now()
	c, err := New(Options{Addr: srv.Addr, LazyConnect: true, ReconnectBackoffMax: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("New with LazyConnect and no server: %v", err)
	}
	defer c.Close()
	if d := time.Since(start); d > time.Second {
		t.Fatalf("New took %v: it should not wait for the server", d)
	}

	// A call whose context ends first fails as not sent.
	short, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	err = c.Set(short, "k", []byte("v"), Expiry{})
	cancel()
	if !errors.Is(err, ErrNotSent) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Set before the server is up: %v, want ErrNotSent and the deadline", err)
	}

	// Calls waiting when the server comes up are served.
	var served atomic.Int32
	done := make(chan error, 8)
	for i := range 8 {
		go func() {
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			err := c.Set(ctx, "lazy:"+string(rune('a'+i)), []byte("v"), Expiry{})
			if err == nil {
				served.Add(1)
			}
			done <- err
		}()
	}
	time.Sleep(2 * time.Second) // the scenario: the server starts 2 s after New
	testkit.Restart(t, srv)
	for range 8 {
		if err := <-done; err != nil {
			t.Errorf("a call made while connecting: %v", err)
		}
	}
	if got, err := c.Get(t.Context(), "lazy:a"); err != nil || string(got) != "v" {
		t.Fatalf("Get after connecting: %q, %v", got, err)
	}
	// Once connected, typed commands take the single server's fast path.
	if fastDirect(c.carrier) == nil {
		t.Fatal("a lazily connected Client to one server does not take the fast path")
	}
}

// Closing a Client that is still connecting returns at once, and its
// waiting calls fail as closed, not sent.
func TestLazyConnectCloseWhileConnecting(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{})
	srv.Kill()
	c, err := New(Options{Addr: srv.Addr, LazyConnect: true})
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- c.Set(t.Context(), "k", []byte("v"), Expiry{}) }()
	start := time.Now()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("Close took %v", d)
	}
	if err := <-errc; !errors.Is(err, ErrNotSent) {
		t.Fatalf("a call waiting at Close: %v, want ErrNotSent", err)
	}
}

// Without LazyConnect, New reports an unreachable server at once, as it
// always has: the default.
func TestEagerConnectReportsAnUnreachableServer(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{})
	srv.Kill()
	if c, err := New(Options{Addr: srv.Addr}); err == nil {
		c.Close()
		t.Fatal("New connected to a server that is down")
	}
}
