package pipe

import (
	"context"
	"errors"
	"net"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/internal/resp"
	"github.com/ziplinekv/zipline/internal/testkit"
)

// A hung server (SIGSTOP) under steady traffic is declared lost within the
// I/O timeout (+10 %) of its oldest unanswered request: new requests do not
// keep the connection alive.
func TestPipeHungServerUnderSteadyTrafficIsLost(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{})
	const ioTimeout = 400 * time.Millisecond
	opts := testOptions(srv.Addr)
	opts.IOTimeout = ioTimeout
	p := newPipe(t, opts)
	ctx := context.Background()
	if _, err := do(ctx, p, "PING"); err != nil {
		t.Fatal(err)
	}
	late := startLatenessProbe(t)
	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	defer srv.Resume()
	type result struct {
		sent, failed time.Time
		err          error
	}
	results := make(chan result, 64)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	// One request every 20 ms, each without a deadline of its own.
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for range 50 {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				sent := time.Now()
				_, err := do(ctx, p, "PING")
				results <- result{sent, time.Now(), err}
			}()
		}
	}()
	// The first result delivered only says that the connection was given
	// up: on a loaded machine the goroutines that carry the results are
	// scheduled in any order, so the oldest request is found among them
	// all, once every one has returned.
	first := <-results
	close(stop)
	srv.Resume()
	wg.Wait()
	close(results)
	all := []result{first}
	for r := range results {
		all = append(all, r)
	}
	// The oldest request fails when it has waited the I/O timeout, and
	// everything else in flight fails with it.
	oldest := first
	for _, r := range all {
		if r.err != nil && !errors.Is(r.err, ErrConnLost) && !errors.Is(r.err, ErrNotSent) {
			t.Errorf("request failed with %v", r.err)
		}
		if r.sent.Before(oldest.sent) {
			oldest = r
		}
	}
	if !errors.Is(oldest.err, ErrConnLost) {
		t.Fatalf("the oldest request: %v, want ErrConnLost", oldest.err)
	}
	// The timer may fire late by what the scheduler added in that time (a
	// race-enabled suite beside CPU-bound processes); the lower bound is
	// the pipe's alone.
	machine := late.between(t, oldest.sent, oldest.failed)
	if waited := oldest.failed.Sub(oldest.sent); waited < ioTimeout || waited > ioTimeout*11/10+50*time.Millisecond+machine {
		t.Fatalf("oldest request failed after %v, want %v (+10%%, and the scheduler's lateness in that time, %v)", waited, ioTimeout, machine)
	}
}

// timeoutHookConn calls onTimeout when a read reaches its deadline, before
// the reader sees the timeout: the test uses it to send a request at the
// worst moment.
type timeoutHookConn struct {
	net.Conn
	onTimeout func()
}

func (c *timeoutHookConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n == 0 && isTimeout(err) && c.onTimeout != nil {
		c.onTimeout()
	}
	return n, err
}

// The read deadline of an idle connection can expire just as a new request
// is written. That must not count as a timeout: the new request has waited
// for nothing yet.
func TestPipeIdleDeadlineRacingANewRequest(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{})
	var hook atomic.Pointer[func()]
	opts := testOptions(srv.Addr)
	// The idle deadline expires one IOTimeout after the PING's reply; the
	// racing request then has a whole IOTimeout for its own reply, which a
	// loaded machine (a race-enabled suite beside CPU-bound processes) can
	// take tens of milliseconds to give: a second, so that only the bug
	// (the idle expiry counted against the new request, which fails it at
	// once) fails the test.
	opts.IOTimeout = time.Second
	opts.Dial = func(ctx context.Context) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", srv.Addr)
		if err != nil {
			return nil, err
		}
		return &timeoutHookConn{Conn: c, onTimeout: func() {
			if f := hook.Swap(nil); f != nil {
				(*f)()
			}
		}}, nil
	}
	p := newPipe(t, opts)
	ctx := context.Background()
	raced := make(chan error, 1)
	fire := func() {
		// The idle deadline has just expired: send a request and wait until
		// it is in flight, then let the reader go on.
		before := p.Stats().Calls.Load()
		go func() {
			_, err := do(ctx, p, "ECHO", "racer")
			raced <- err
		}()
		// Bounded in time, not in yields: on a loaded machine the writer
		// may need several scheduling rounds to get a processor.
		for deadline := time.Now().Add(2 * time.Second); p.Stats().Calls.Load() == before; {
			if time.Now().After(deadline) {
				t.Error("the racing request was never written")
				return
			}
			runtime.Gosched()
		}
	}
	hook.Store(&fire)
	// A request arms the deadline; once it is answered the connection is
	// idle and the deadline expires.
	if _, err := do(ctx, p, "PING"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-raced:
		if err != nil {
			t.Fatalf("request written as the idle deadline expired: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the idle deadline never expired")
	}
	if n := p.Stats().Reconnect.Load(); n != 0 {
		t.Fatalf("a healthy connection was dropped %d times", n)
	}
}

// A reply whose type cannot answer its command means the stream slipped
// out of step: the connection is dropped, everything in flight fails with
// ErrConnLost, and no caller gets another's value.
func TestPipeWrongReplyTypeDropsTheConnection(t *testing.T) {
	srv := newFakeServer(t, func(cmd []string) string {
		if r, ok := helloOK(cmd); ok {
			return r
		}
		switch cmd[0] {
		case "GET":
			return "+OK\r\n" // what a desynchronised stream would hand a GET
		case "SET":
			return "$3\r\nbar\r\n" // a SET answered by a bulk string
		}
		return "+PONG\r\n"
	})
	p := newPipe(t, testOptions(srv.addr()))
	ctx := context.Background()
	for _, tc := range []struct {
		cmd    []string
		expect resp.TypeSet
	}{
		{[]string{"GET", "k"}, resp.Types(resp.BulkString, resp.Null)},
		{[]string{"SET", "k", "v"}, resp.Types(resp.SimpleString, resp.Null)},
	} {
		c := p.NewCall()
		c.Buf = appendStrings(c.Buf, tc.cmd)
		c.N = 1
		c.Expect = append(c.Expect, tc.expect)
		err := p.Do(ctx, c)
		if !errors.Is(err, ErrConnLost) || !errors.Is(err, resp.ErrProtocol) {
			t.Fatalf("%s answered by the wrong type: %v, want ErrConnLost (protocol error)", tc.cmd[0], err)
		}
		waitFor(t, func() bool { _, err := do(ctx, p, "PING"); return err == nil })
	}
}

// Requests abandoned while the connection is down (WaitForReconnect) do not
// keep their memory: 20,000 SETs of 1 KiB with tiny deadlines, then the
// heap is back near where it started.
func TestPipeAbandonedRequestsDuringOutageAreFreed(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{})
	opts := testOptions(srv.Addr)
	opts.WaitForReconnect = true
	p := newPipe(t, opts)
	srv.Kill()
	// An idle connection is not being read (see readRole): the next
	// request finds the server gone.
	pctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	do(pctx, p, "PING")
	cancel()
	waitFor(t, func() bool { p.mu.Lock(); defer p.mu.Unlock(); return p.state == stateDisconnected })
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	before := heap()
	value := make([]byte, 1024)
	var wg sync.WaitGroup
	var failed atomic.Int64
	for g := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1000 {
				ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
				c := p.NewCall()
				c.Buf = resp.AppendBulkString(resp.AppendBulkString(resp.AppendArrayLen(c.Buf, 3), "SET"), strconv.Itoa(g*1000+i))
				c.Buf = resp.AppendBulk(c.Buf, value)
				c.N = 1
				err := p.Do(ctx, c)
				cancel()
				if !errors.Is(err, ErrNotSent) || !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("abandoned while queued: %v, want DeadlineExceeded matching ErrNotSent", err)
					return
				}
				failed.Add(1)
			}
		}()
	}
	wg.Wait()
	p.mu.Lock()
	queued := len(p.queue)
	p.mu.Unlock()
	grew := int64(heap()) - int64(before)
	t.Logf("%d requests abandoned; %d still queued; heap grew %d KiB", failed.Load(), queued, grew>>10)
	if queued > minCompaction*2 {
		t.Fatalf("%d abandoned requests still queued", queued)
	}
	if grew > 4<<20 {
		t.Fatalf("heap grew %d bytes after every caller returned", grew)
	}
	if used := p.pending.used(); used > int64(minCompaction*2*1100) {
		t.Fatalf("%d bytes still counted as pending", used)
	}
}

// MaxPendingBytes bounds what waits on a hung server: past it, callers wait
// up to their deadline (not sent), or fail at once with ErrPendingLimit.
func TestPipePendingBytesBound(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{})
	for _, failFast := range []bool{false, true} {
		opts := testOptions(srv.Addr)
		opts.MaxPendingBytes = 64 << 10
		opts.FailWhenPendingFull = failFast
		p := newPipe(t, opts)
		ctx := context.Background()
		if _, err := do(ctx, p, "PING"); err != nil {
			t.Fatal(err)
		}
		if err := srv.Pause(); err != nil {
			t.Fatal(err)
		}
		// Fill the bound with requests the paused server will not answer.
		value := make([]byte, 16<<10)
		var inflight sync.WaitGroup
		hold, cancelHold := context.WithCancel(ctx)
		for i := range 4 {
			c := p.NewCall()
			c.Buf = resp.AppendBulk(resp.AppendBulkString(resp.AppendBulkString(resp.AppendArrayLen(c.Buf, 3), "SET"), "k"+strconv.Itoa(i)), value)
			c.N = 1
			inflight.Add(1)
			go func() { defer inflight.Done(); p.Do(hold, c) }()
		}
		waitFor(t, func() bool { return p.pending.used() >= opts.MaxPendingBytes })
		start := time.Now()
		tctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		_, err := do(tctx, p, "GET", "k")
		cancel()
		switch {
		case failFast && !errors.Is(err, ErrPendingLimit):
			t.Errorf("fail fast: %v, want ErrPendingLimit", err)
		case failFast && time.Since(start) > 50*time.Millisecond:
			t.Errorf("fail fast took %v", time.Since(start))
		case !failFast && !errors.Is(err, context.DeadlineExceeded):
			t.Errorf("waiting: %v, want its deadline", err)
		}
		if !errors.Is(err, ErrNotSent) || errors.Is(err, ErrConnLost) {
			t.Errorf("%v must match ErrNotSent, and only it", err)
		}
		cancelHold()
		srv.Resume()
		inflight.Wait()
		// Room again once the server has answered them.
		waitFor(t, func() bool { return p.pending.used() < opts.MaxPendingBytes })
		if _, err := do(ctx, p, "GET", "k0"); err != nil {
			t.Fatalf("after the server resumed: %v", err)
		}
		p.Close()
	}
}

// Requests queued when a connection is lost for good (NoReconnect) never
// reached the server: they match ErrNotSent, and not ErrConnLost.
func TestPipeErrorClassesAtFinalLoss(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{})
	opts := testOptions(srv.Addr)
	opts.NoReconnect = true
	// Long enough that all 16 big writes are queued or in flight before
	// the oldest has waited it out, even on a loaded machine.
	opts.IOTimeout = time.Second
	var writing atomic.Int32 // writes to the connection that have not returned
	dial := opts.Dial
	opts.Dial = func(ctx context.Context) (net.Conn, error) {
		nc, err := dial(ctx)
		if err != nil {
			return nil, err
		}
		return writeWatch{nc, &writing}, nil
	}
	p := newPipe(t, opts)
	ctx := context.Background()
	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	defer srv.Resume()
	// Big writes fill the socket buffers of the paused server, so the
	// writer blocks and later requests stay queued until the connection is
	// declared dead.
	errs := make(chan error, 116)
	var wg sync.WaitGroup
	send := func(args ...string) {
		wg.Add(1)
		go func() { defer wg.Done(); _, err := do(ctx, p, args...); errs <- err }()
	}
	big := string(make([]byte, 2<<20))
	for range 16 {
		send("SET", "big", big)
	}
	// The PINGs must queue behind a blocked write, not join a batch the
	// writer is about to take: wait until it is inside a write that does
	// not return, with every SET either in that write or queued.
	waitFor(t, func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.active == nil {
			return false
		}
		out := p.active.fl.outstanding.Load()
		return int(out)+len(p.queue) == 16 && writing.Load() > 0
	})
	for range 100 {
		send("PING")
	}
	wg.Wait()
	close(errs)
	var lost, notSent int
	for err := range errs {
		sent, unsent := errors.Is(err, ErrConnLost), errors.Is(err, ErrNotSent)
		switch {
		case sent && unsent:
			t.Fatalf("%v matches both ErrConnLost and ErrNotSent", err)
		case sent:
			lost++
		case unsent:
			notSent++
		default:
			t.Fatalf("unexpected error %v", err)
		}
	}
	if lost == 0 || notSent == 0 {
		t.Fatalf("%d lost in flight, %d not sent: the test needs both", lost, notSent)
	}
	t.Logf("%d lost in flight, %d not sent", lost, notSent)
}

// writeWatch counts the writes to a connection that have not returned.
type writeWatch struct {
	net.Conn
	writing *atomic.Int32
}

func (w writeWatch) Write(b []byte) (int, error) {
	w.writing.Add(1)
	defer w.writing.Add(-1)
	return w.Conn.Write(b)
}
