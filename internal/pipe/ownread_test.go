package pipe

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/internal/resp"
	"github.com/ziplinekv/zipline/internal/testkit"
)

// Tests of the read role (see readRole): who reads the connection when a
// lone caller reads its own reply, and what happens when that caller is
// joined by others, cancelled, or finds the connection dead.

// bothParked reports whether both loops of an idle connection are parked:
// the reader goroutine has given up the read role, and the writer
// goroutine waits for a kick with nothing queued. Only then is a lone
// request written and read by its caller. (The writer goroutine parks a
// moment after it wrote the last request, which the reader may have seen
// answered already; a request queued in that moment goes through both
// loops.)
func bothParked(p *Pipe) bool {
	p.mu.Lock()
	ac := p.active
	writerIdle := p.writerParked && !p.directWriter && len(p.queue) == 0
	p.mu.Unlock()
	if ac == nil || !writerIdle {
		return false
	}
	ac.fl.mu.Lock()
	defer ac.fl.mu.Unlock()
	return ac.fl.role == roleFree
}

// One goroutine calling in a loop reads every reply itself.
func TestLoneCallerReadsItsOwnReplies(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{})
	p := newPipe(t, testOptions(srv.Addr))
	ctx := context.Background()
	before := p.Stats().OwnReads.Load()
	for i := range 200 {
		want := "v" + strconv.Itoa(i)
		v, err := do(ctx, p, "ECHO", want)
		if err != nil || string(v.Bytes()) != want {
			t.Fatalf("ECHO %s: %q, %v", want, v.Bytes(), err)
		}
	}
	// A few calls may find the reader goroutine not yet parked after the
	// previous reply; nearly all must be read by their callers.
	if n := p.Stats().OwnReads.Load() - before; n < 150 {
		t.Fatalf("%d of 200 sequential calls read their own reply, want nearly all", n)
	}
}

// A caller reading its own reply while others write theirs hands the
// connection to the reader goroutine once its reply is in: every caller
// gets its own reply.
func TestOwnReadHandsOverToTheReader(t *testing.T) {
	release := make(chan struct{})
	srv := newFakeServer(t, func(cmd []string) string {
		if out, ok := helloOK(cmd); ok {
			return out
		}
		if len(cmd) < 2 {
			return "+PONG\r\n" // the close marker
		}
		if cmd[1] == "first" {
			<-release // hold the first reply until the second is in flight
		}
		return "$" + strconv.Itoa(len(cmd[1])) + "\r\n" + cmd[1] + "\r\n"
	})
	p := newPipe(t, testOptions(srv.addr()))
	ctx := context.Background()
	waitFor(t, func() bool { return bothParked(p) })
	before := p.Stats().OwnReads.Load()
	first := make(chan error, 1)
	go func() {
		v, err := do(ctx, p, "ECHO", "first")
		if err == nil && string(v.Bytes()) != "first" {
			err = errors.New("first got " + string(v.Bytes()))
		}
		first <- err
	}()
	waitFor(t, func() bool { return p.InFlight() == 1 })
	second := make(chan error, 1)
	go func() {
		v, err := do(ctx, p, "ECHO", "second")
		if err == nil && string(v.Bytes()) != "second" {
			err = errors.New("second got " + string(v.Bytes()))
		}
		second <- err
	}()
	waitFor(t, func() bool { return p.InFlight() == 2 })
	close(release)
	for _, ch := range []chan error{first, second} {
		if err := <-ch; err != nil {
			t.Fatal(err)
		}
	}
	if n := p.Stats().OwnReads.Load() - before; n != 1 {
		t.Fatalf("%d calls read their own reply, want 1 (the first; the reader goroutine read the second)", n)
	}
	if v, err := do(ctx, p, "ECHO", "third"); err != nil || string(v.Bytes()) != "third" {
		t.Fatalf("after the hand-over: %q, %v", v.Bytes(), err)
	}
}

// A caller whose context ends while it waits for its own reply returns at
// once; the reply, when it comes, is dropped, and the stream stays
// aligned.
func TestOwnReadCancelledReturnsAtOnce(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{})
	p := newPipe(t, testOptions(srv.Addr))
	if _, err := do(context.Background(), p, "SET", "k", "old"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return bothParked(p) })
	own := p.Stats().OwnReads.Load()
	resume := testkit.Pause(t, srv)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := do(ctx, p, "GET", "k")
		done <- err
	}()
	waitFor(t, func() bool { return p.InFlight() == 1 })
	late := startLatenessProbe(t)
	start := time.Now()
	cancel()
	err := <-done
	// "At once" is 100 ms and whatever the scheduler added in that time (a
	// race-enabled suite beside CPU-bound processes delays the goroutine
	// that returns): the pipe's own wait is what the bound is on.
	if end := time.Now(); end.Sub(start) > 100*time.Millisecond+late.between(t, start, end) {
		t.Errorf("the cancelled call returned %v after its context ended (the scheduler's lateness in that time: %v)", end.Sub(start), late.between(t, start, end))
	}
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrNotSent) {
		t.Fatalf("cancelled while its reply was awaited: %v, want context.Canceled (sent)", err)
	}
	if p.Stats().OwnReads.Load() != own+1 {
		t.Fatal("the call was not reading its own reply: the test did not exercise the hand-over")
	}
	resume()
	for i := range 20 {
		want := "after" + strconv.Itoa(i)
		if v, err := do(context.Background(), p, "ECHO", want); err != nil || string(v.Bytes()) != want {
			t.Fatalf("after the cancelled read: %q, %v", v.Bytes(), err)
		}
	}
}

// A deadline that ends mid-wait behaves the same, and a later caller reads
// its own reply again.
func TestOwnReadDeadline(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{})
	p := newPipe(t, testOptions(srv.Addr))
	waitFor(t, func() bool { return bothParked(p) })
	resume := testkit.Pause(t, srv)
	late := startLatenessProbe(t)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := do(ctx, p, "ECHO", "late")
	// The deadline's timer may fire late by what the scheduler added in
	// that time (a race-enabled suite beside CPU-bound processes), which
	// the bound allows for; the pipe's own slack is the 100 ms.
	if end := time.Now(); end.Sub(start) > 150*time.Millisecond+late.between(t, start, end) {
		t.Errorf("a 50ms deadline returned after %v (the scheduler's lateness in that time: %v)", end.Sub(start), late.between(t, start, end))
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want DeadlineExceeded", err)
	}
	resume()
	// The late reply is read by the reader goroutine and dropped, and the
	// reader then gives the read role up, which it does only with nothing
	// in flight. Waiting for nothing in flight alone is not enough: the
	// reader settles that count before it gives the role up, and a call
	// made in between is read by the reader.
	waitFor(t, func() bool { return bothParked(p) })
	before := p.Stats().OwnReads.Load()
	if v, err := do(context.Background(), p, "ECHO", "next"); err != nil || string(v.Bytes()) != "next" {
		t.Fatalf("after the deadline: %q, %v", v.Bytes(), err)
	}
	if p.Stats().OwnReads.Load() == before {
		t.Error("the next lone call did not read its own reply")
	}
}

// A hung server fails a lone call after the I/O timeout, like any other.
func TestOwnReadIOTimeout(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{})
	opts := testOptions(srv.Addr)
	const timeout = 200 * time.Millisecond
	opts.IOTimeout = timeout
	p := newPipe(t, opts)
	waitFor(t, func() bool { return bothParked(p) })
	own := p.Stats().OwnReads.Load()
	resume := testkit.Pause(t, srv)
	late := startLatenessProbe(t)
	start := time.Now()
	_, err := do(context.Background(), p, "PING")
	end := time.Now()
	took := end.Sub(start)
	resume()
	if p.Stats().OwnReads.Load() != own+1 {
		t.Error("the call did not read its own reply")
	}
	if !errors.Is(err, ErrConnLost) {
		t.Fatalf("lone call on a hung server: %v, want ErrConnLost", err)
	}
	// The upper bound allows for the scheduler's lateness in that time (a
	// race-enabled suite beside CPU-bound processes fires the I/O timer
	// late); the lower bound is the pipe's alone.
	if machine := late.between(t, start, end); took < timeout || took > timeout*11/10+50*time.Millisecond+machine {
		t.Errorf("failed after %v, want the I/O timeout %v (+10%%, and the scheduler's lateness in that time, %v)", took, timeout, machine)
	}
	waitFor(t, func() bool { _, err := do(context.Background(), p, "PING"); return err == nil })
}

// While nothing is in flight nobody reads the connection, so a server that
// drops it goes unnoticed until the next call. That call must not be
// written to the dead connection and fail: it finds the connection gone
// first and goes out on a new one.
func TestIdleConnectionDroppedByTheServer(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{})
	p := newPipe(t, testOptions(srv.Addr))
	ctx := context.Background()
	killer := newPipe(t, testOptions(srv.Addr))
	for i := range 5 {
		if _, err := do(ctx, p, "SET", "k", strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
		if v, err := do(ctx, killer, "CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"); err != nil || v.Int() < 1 {
			t.Fatalf("CLIENT KILL: %v %v", v, err)
		}
		before := p.Stats().Reconnect.Load()
		// The kill takes the server a moment; the call peeks only after
		// the connection has been idle for idleCheckAfter.
		time.Sleep(2 * idleCheckAfter)
		v, err := do(ctx, p, "GET", "k")
		if err != nil || string(v.Bytes()) != strconv.Itoa(i) {
			t.Fatalf("round %d: first call after the server dropped the idle connection: %q, %v", i, v.Bytes(), err)
		}
		if p.Stats().Reconnect.Load() != before+1 {
			t.Fatalf("round %d: reconnects %d, want %d", i, p.Stats().Reconnect.Load(), before+1)
		}
	}
}

// The same after a restart of the server: the first call succeeds.
func TestIdleConnectionAcrossARestart(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{})
	p := newPipe(t, testOptions(srv.Addr))
	ctx := context.Background()
	if _, err := do(ctx, p, "PING"); err != nil {
		t.Fatal(err)
	}
	srv.Kill()
	testkit.Restart(t, srv)
	if v, err := do(ctx, p, "ECHO", "back"); err != nil || string(v.Bytes()) != "back" {
		t.Fatalf("first call after a restart: %q, %v", v.Bytes(), err)
	}
}

// Connections that receive pushes are read at all times: a push arriving
// while nothing is in flight reaches its handler without waiting for a
// call.
func TestPushConnectionsAreAlwaysRead(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{})
	got := make(chan resp.Value, 1)
	opts := testOptions(srv.Addr)
	opts.Protocol = 3
	opts.Push = []PushHandler{{Kinds: []string{"message"}, Handle: func(v resp.Value) { got <- v }}}
	p := newPipe(t, opts)
	ctx := context.Background()
	call := p.NewCall()
	call.Buf = appendStrings(call.Buf, []string{"SUBSCRIBE", "ch"})
	call.N = 1
	call.PushKind = "subscribe"
	if err := p.Do(ctx, call); err != nil {
		t.Fatal(err)
	}
	call.Release()
	pub := newPipe(t, testOptions(srv.Addr))
	if _, err := do(ctx, pub, "PUBLISH", "ch", "hello"); err != nil {
		t.Fatal(err)
	}
	select {
	case v := <-got:
		if e := v.Elems(); len(e) != 3 || string(e[2].Bytes()) != "hello" {
			t.Fatalf("push %v", v.Describe())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a push to an idle connection was not delivered")
	}
	if n := p.Stats().OwnReads.Load(); n != 0 {
		t.Fatalf("%d calls read their own reply on a push connection", n)
	}
}

// readerOut reports whether the reader goroutine of p's connection has
// ended while the connection idles (see park).
func readerOut(p *Pipe) bool {
	p.mu.Lock()
	ac := p.active
	p.mu.Unlock()
	if ac == nil {
		return false
	}
	ac.fl.mu.Lock()
	defer ac.fl.mu.Unlock()
	return ac.fl.out
}

// A connection idle for a health-check interval ends its reader goroutine;
// whatever comes next starts another: a lone call, overlapping callers
// (each gets its own replies), a server that dropped the connection
// meanwhile, and Close (TestMain finds no goroutine left).
func TestReaderGoroutineEndsWhileIdle(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{})
	opts := testOptions(srv.Addr)
	opts.HealthCheckInterval = 10 * time.Millisecond
	p := newPipe(t, opts)
	killer := newPipe(t, testOptions(srv.Addr))
	ctx := context.Background()
	waitOut := func(what string) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for !readerOut(p) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the reader goroutine did not end while the connection idled", what)
			}
			time.Sleep(2 * time.Millisecond) // waiting for the health-check timer
		}
	}
	for round := range 3 {
		waitOut("before a lone call")
		val := strconv.Itoa(round)
		if v, err := do(ctx, p, "SET", "k", val); err != nil || string(v.Bytes()) != "OK" {
			t.Fatalf("round %d: lone SET: %q, %v", round, v.Bytes(), err)
		}
		waitOut("before overlapping callers")
		errs := make(chan error, 16)
		for g := range 16 {
			go func() {
				for i := range 50 {
					want := strconv.Itoa(g*1000 + i)
					v, err := do(ctx, p, "ECHO", want)
					if err == nil && string(v.Bytes()) != want {
						err = errors.New("caller " + strconv.Itoa(g) + " got " + string(v.Bytes()) + ", want " + want)
					}
					if err != nil {
						errs <- err
						return
					}
				}
				errs <- nil
			}()
		}
		for range 16 {
			if err := <-errs; err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
		waitOut("before the server drops the connection")
		if v, err := do(ctx, killer, "CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"); err != nil || v.Int() < 1 {
			t.Fatalf("CLIENT KILL: %v %v", v, err)
		}
		before := p.Stats().Reconnect.Load()
		time.Sleep(2 * idleCheckAfter) // as in TestIdleConnectionDroppedByTheServer: the kill takes the server a moment
		if v, err := do(ctx, p, "GET", "k"); err != nil || string(v.Bytes()) != val {
			t.Fatalf("round %d: first call after the server dropped the idle connection: %q, %v", round, v.Bytes(), err)
		}
		if got := p.Stats().Reconnect.Load(); got != before+1 {
			t.Fatalf("round %d: reconnects %d, want %d", round, got, before+1)
		}
	}
}
