package pipe

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/internal/resp"
	"github.com/ziplinekv/zipline/internal/testkit"
)

// CLIENT TRACKING, turned on by the connect hook, survives a reconnect: the
// hook runs again on the new connection, and invalidations keep arriving at
// the push handler.
func TestPipeTrackingThroughConnectHookAndPushHandler(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{})
	invalidated := make(chan string, 16)
	var connects, reconnects atomic.Int32
	lost := make(chan error, 4)
	opts := testOptions(srv.Addr)
	opts.OnConnect = func(s *Setup) error {
		connects.Add(1)
		if s.Reconnect {
			reconnects.Add(1)
		}
		v, err := s.Do("CLIENT", "TRACKING", "ON")
		if err == nil && v.IsError() {
			t.Errorf("CLIENT TRACKING ON: %s", v.Bytes())
		}
		return err
	}
	opts.OnDisconnect = func(err error) { lost <- err }
	opts.Push = []PushHandler{{Kinds: []string{"invalidate"}, Handle: func(v resp.Value) {
		for _, k := range v.Elems()[1].Elems() {
			invalidated <- string(k.Bytes())
		}
	}}}
	p := newPipe(t, opts)
	ctx := context.Background()

	expectInvalidation := func(key string) {
		t.Helper()
		if _, err := do(ctx, p, "GET", key); err != nil {
			t.Fatal(err)
		}
		if _, err := srv.Do(ctx, "SET", key, "x"); err != nil {
			t.Fatal(err)
		}
		select {
		case k := <-invalidated:
			if k != key {
				t.Fatalf("invalidated %q, want %q", k, key)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no invalidation for %q", key)
		}
	}
	expectInvalidation("before")
	if _, err := srv.Do(ctx, "CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-lost:
	case <-time.After(5 * time.Second):
		t.Fatal("OnDisconnect not called")
	}
	waitFor(t, func() bool { _, err := do(ctx, p, "PING"); return err == nil })
	expectInvalidation("after")
	if connects.Load() != 2 || reconnects.Load() != 1 {
		t.Fatalf("connect hook ran %d times (%d reconnects), want 2 (1)", connects.Load(), reconnects.Load())
	}
}

// In RESP3 a SUBSCRIBE call completes with its confirmation pushes, and
// messages go to the handler, on the same connection as ordinary requests.
func TestPipeSubscribeRESP3(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{})
	msgs := make(chan string, 16)
	opts := testOptions(srv.Addr)
	opts.Protocol = 3
	opts.Push = []PushHandler{{Kinds: []string{"message"}, Handle: func(v resp.Value) {
		msgs <- string(v.Elems()[2].Bytes())
	}}}
	p := newPipe(t, opts)
	ctx := context.Background()
	c := p.NewCall()
	c.Buf = appendStrings(c.Buf, []string{"SUBSCRIBE", "a", "b"})
	c.N, c.PushKind = 2, "subscribe"
	if err := p.Do(ctx, c); err != nil {
		t.Fatal(err)
	}
	for i, ch := range []string{"a", "b"} {
		if e := c.Reply(i).Elems(); len(e) != 3 || string(e[1].Bytes()) != ch || e[2].Int() != int64(i+1) {
			t.Fatalf("confirmation %d: %v", i, c.Reply(i))
		}
	}
	c.Release()
	if _, err := srv.Do(ctx, "PUBLISH", "b", "hello"); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-msgs:
		if m != "hello" {
			t.Fatalf("message %q", m)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no message")
	}
	if v, err := do(ctx, p, "ECHO", "aligned"); err != nil || string(v.Bytes()) != "aligned" {
		t.Fatalf("after pushes: %v %v", v, err)
	}
}

// A RESP2 connection marked as a subscriber takes message arrays as
// pushes; subscriptions made in the connect hook are re-made on reconnect.
func TestPipeSubscribeRESP2(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{})
	msgs := make(chan string, 16)
	opts := testOptions(srv.Addr)
	opts.Protocol = 2
	opts.RESP2Subscriber = true
	opts.OnConnect = func(s *Setup) error {
		vs, err := s.Send(1, "subscribe", "SUBSCRIBE", "news")
		if err == nil && len(vs[0].Elems()) != 3 {
			t.Errorf("confirmation %v", vs[0])
		}
		return err
	}
	opts.Push = []PushHandler{{Kinds: []string{"message"}, Handle: func(v resp.Value) {
		msgs <- string(v.Elems()[2].Bytes())
	}}}
	p := newPipe(t, opts)
	ctx := context.Background()
	publish := func(m string) {
		t.Helper()
		if _, err := srv.Do(ctx, "PUBLISH", "news", m); err != nil {
			t.Fatal(err)
		}
		select {
		case got := <-msgs:
			if got != m {
				t.Fatalf("message %q, want %q", got, m)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no message %q", m)
		}
	}
	publish("one")
	if _, err := srv.Do(ctx, "CLIENT", "KILL", "TYPE", "pubsub"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return p.Stats().Reconnect.Load() == 1 })
	waitFor(t, func() bool {
		v, err := srv.Do(ctx, "PUBSUB", "NUMSUB", "news")
		return err == nil && v.Elems()[1].Int() == 1
	})
	publish("two")
}

// A push handler that blocks never stalls the reader: requests on the same
// connection keep being answered, the pushes past its queue are dropped,
// and Lost reports how many once the handler is free.
func TestPipeBlockedPushHandlerDoesNotStallRequests(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{})
	unblock := make(chan struct{})
	var release sync.Once
	unblockHandler := func() { release.Do(func() { close(unblock) }) }
	defer unblockHandler() // a failure below must not leave the handler blocked: Close waits for it
	var handled, lostCount atomic.Int64
	lostReported := make(chan struct{}, 1)
	entered := make(chan struct{}) // closed when the handler first blocks
	var enter sync.Once
	opts := testOptions(srv.Addr)
	opts.Protocol = 3
	opts.Push = []PushHandler{{
		Kinds:    []string{"message"},
		QueueLen: 8,
		Handle: func(resp.Value) {
			enter.Do(func() { close(entered) })
			<-unblock
			handled.Add(1)
		},
		Lost: func(n int) {
			lostCount.Add(int64(n))
			select {
			case lostReported <- struct{}{}:
			default:
			}
		},
	}}
	p := newPipe(t, opts)
	ctx := context.Background()
	sub := p.NewCall()
	sub.Buf = appendStrings(sub.Buf, []string{"SUBSCRIBE", "flood"})
	sub.N, sub.PushKind = 1, "subscribe"
	if err := p.Do(ctx, sub); err != nil {
		t.Fatal(err)
	}
	sub.Release()

	const published = 200
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range published {
			if _, err := srv.Do(ctx, "PUBLISH", "flood", strconv.Itoa(i)); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	// Meanwhile, requests on the same connection are answered promptly.
	for i := range 200 {
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		key := "k" + strconv.Itoa(i)
		if _, err := do(rctx, p, "SET", key, key); err != nil {
			cancel()
			t.Fatalf("SET while the handler is blocked: %v", err)
		}
		v, err := do(rctx, p, "GET", key)
		cancel()
		if err != nil || string(v.Bytes()) != key {
			t.Fatalf("GET while the handler is blocked: %v %v", v, err)
		}
	}
	wg.Wait()
	// Every message has reached the client once a PING issued after the last
	// PUBLISH is answered (replies and pushes share the connection, in order).
	if _, err := do(ctx, p, "PING"); err != nil {
		t.Fatal(err)
	}
	// Until the handler has run, or been told of the loss, every push
	// counts in the backlog, dropped ones included: a client-side cache
	// serves nothing while one waits. The handler's goroutine tells it of
	// the drops so far before each push it handles, so the pushes dropped
	// before it took the first one (many, when it is slow to be scheduled)
	// are reported before it blocks; from then on it can report nothing.
	select {
	case <-entered:
	case <-time.After(5 * time.Second):
		t.Fatal("the handler never received a push")
	}
	if n, lost := p.Backlog("message").Pending(), lostCount.Load(); n+uint64(lost) != published || handled.Load() != 0 {
		t.Fatalf("backlog %d with the handler blocked and %d reported lost, want the %d pushes between them", n, lost, published)
	}
	unblockHandler()
	select {
	case <-lostReported:
	case <-time.After(5 * time.Second):
		t.Fatal("Lost never reported the dropped pushes")
	}
	waitFor(t, func() bool { return handled.Load()+lostCount.Load() == published })
	waitFor(t, func() bool { return p.Backlog("message").Pending() == 0 })
	if lostCount.Load() == 0 || handled.Load() > 8+1 {
		t.Fatalf("handled %d, lost %d: the queue of 8 did not bound the backlog", handled.Load(), lostCount.Load())
	}
}

// waitFor polls cond for up to 5 seconds.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5s")
		}
		time.Sleep(2 * time.Millisecond) // bounded poll of external state
	}
}
