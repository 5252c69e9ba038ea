package pipe

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ziplinekv/zipline/internal/resp"
	"github.com/ziplinekv/zipline/internal/testkit"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func testOptions(addr string) Options {
	return Options{
		Dial: func(ctx context.Context) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "tcp", addr)
		},
		HandshakeTimeout:    2 * time.Second,
		ReconnectBackoffMin: 5 * time.Millisecond,
		ReconnectBackoffMax: 100 * time.Millisecond,
	}
}

func newPipe(t *testing.T, opts Options) *Pipe {
	t.Helper()
	p, err := New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// do sends one command and returns its reply.
func do(ctx context.Context, p *Pipe, args ...string) (resp.Value, error) {
	c := p.NewCall()
	c.Buf = resp.AppendArrayLen(c.Buf, len(args))
	for _, a := range args {
		c.Buf = resp.AppendBulkString(c.Buf, a)
	}
	c.N = 1
	if err := p.Do(ctx, c); err != nil {
		return resp.Value{}, err
	}
	v := c.Reply(0)
	c.Release()
	return v, nil
}

func TestPipeRoundTrip(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{})
	p := newPipe(t, testOptions(srv.Addr))
	ctx := context.Background()
	if p.Protocol() != 3 {
		t.Fatalf("negotiated RESP%d, want 3", p.Protocol())
	}
	if v, err := do(ctx, p, "SET", "k", "v"); err != nil || string(v.Bytes()) != "OK" {
		t.Fatalf("SET: %v %v", v, err)
	}
	if v, err := do(ctx, p, "GET", "k"); err != nil || string(v.Bytes()) != "v" {
		t.Fatalf("GET: %v %v", v, err)
	}
	if v, err := do(ctx, p, "GET", "missing"); err != nil || !v.IsNull() {
		t.Fatalf("GET missing: %v %v", v, err)
	}
	if v, err := do(ctx, p, "HINCRBY", "k", "f", "1"); err != nil || !v.IsError() {
		t.Fatalf("WRONGTYPE expected as an error reply: %v %v", v, err)
	}
}

func TestPipeMultiCommandCall(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{})
	p := newPipe(t, testOptions(srv.Addr))
	c := p.NewCall()
	for i := range 100 {
		c.Buf = resp.AppendArrayLen(c.Buf, 2)
		c.Buf = resp.AppendBulkString(c.Buf, "INCR")
		c.Buf = resp.AppendBulkString(c.Buf, "n")
		_ = i
	}
	c.N = 100
	if err := p.Do(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	for i, v := range c.Replies() {
		if v.Int() != int64(i+1) {
			t.Fatalf("reply %d = %v, want %d", i, v, i+1)
		}
	}
	c.Release()
}

// Many goroutines share one pipe; every reply must reach its own caller.
func TestPipeConcurrentCallersGetTheirOwnReplies(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{})
	p := newPipe(t, testOptions(srv.Addr))
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for g := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				key := fmt.Sprintf("k%d:%d", g, i)
				val := fmt.Sprintf("v%d:%d:%s", g, i, bytes.Repeat([]byte{'x'}, i))
				if _, err := do(ctx, p, "SET", key, val); err != nil {
					errs <- err
					return
				}
				v, err := do(ctx, p, "GET", key)
				if err != nil || string(v.Bytes()) != val {
					errs <- fmt.Errorf("GET %s = %v, %v; want %s", key, v, err, val)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if b, c := p.Stats().Batches.Load(), p.Stats().Calls.Load(); b >= c {
		t.Logf("no batching observed: %d writes for %d calls", b, c)
	}
}

// Callers whose contexts end return at once with ctx.Err(); the replies to
// their requests are dropped and every other caller still gets its own.
func TestPipeCancellationKeepsStreamAligned(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{})
	p := newPipe(t, testOptions(srv.Addr))
	const n = 10_000
	var wg sync.WaitGroup
	var cancelled, answered atomic.Int64
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := "c:" + strconv.Itoa(i)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if rand.IntN(3) == 0 {
				go cancel()
			}
			// ECHO returns the key itself, so a misrouted reply is detected.
			v, err := do(ctx, p, "ECHO", key)
			switch {
			case errors.Is(err, context.Canceled):
				cancelled.Add(1)
			case err != nil:
				errs <- err
			case string(v.Bytes()) != key:
				errs <- fmt.Errorf("caller %s got reply %q", key, v.Bytes())
			default:
				answered.Add(1)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if cancelled.Load() == 0 || answered.Load() == 0 {
		t.Fatalf("cancelled %d, answered %d: the test exercised nothing", cancelled.Load(), answered.Load())
	}
	// The pipe still works and is aligned.
	if v, err := do(context.Background(), p, "ECHO", "after"); err != nil || string(v.Bytes()) != "after" {
		t.Fatalf("after cancellations: %v %v", v, err)
	}
}

func TestPipeAlreadyCancelledContextSendsNothing(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{})
	p := newPipe(t, testOptions(srv.Addr))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := do(ctx, p, "INCR", "n"); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if v, err := do(context.Background(), p, "GET", "n"); err != nil || !v.IsNull() {
		t.Fatalf("INCR with a cancelled context reached the server: %v %v", v, err)
	}
}

func TestPipeServerKilledAndRestarted(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{})
	p := newPipe(t, testOptions(srv.Addr))
	ctx := context.Background()
	if _, err := do(ctx, p, "PING"); err != nil {
		t.Fatal(err)
	}
	srv.Kill()
	// The next request either fails as not connected (the pipe already saw
	// the loss) or as lost in flight.
	_, err := do(ctx, p, "PING")
	if !errors.Is(err, ErrConnLost) && !errors.Is(err, ErrNotConnected) {
		t.Fatalf("after kill: %v", err)
	}
	// Fail-fast while down: a request is refused without being sent.
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err = do(ctx, p, "PING")
		if errors.Is(err, ErrNotConnected) {
			if !errors.Is(err, ErrNotSent) {
				t.Fatalf("ErrNotConnected does not match ErrNotSent: %v", err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("never reported not connected: %v", err)
		}
		time.Sleep(time.Millisecond) // bounded poll while the pipe notices
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	for {
		if _, err = do(ctx, p, "PING"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pipe did not reconnect: %v", err)
		}
		time.Sleep(2 * time.Millisecond) // bounded poll for the reconnect
	}
	if p.Stats().Reconnect.Load() == 0 {
		t.Fatal("reconnect counter not incremented")
	}
}

// waitDisconnected probes with short deadlines until the pipe has noticed
// that its server is gone.
func waitDisconnected(t *testing.T, p *Pipe) {
	t.Helper()
	for range 500 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		_, err := do(ctx, p, "PING")
		cancel()
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return // lost in flight
		}
		p.mu.Lock()
		down := p.state == stateDisconnected
		p.mu.Unlock()
		if down {
			return
		}
	}
	t.Fatal("pipe never noticed the server was gone")
}

func TestPipeWaitForReconnect(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{})
	opts := testOptions(srv.Addr)
	opts.WaitForReconnect = true
	p := newPipe(t, opts)
	ctx := context.Background()
	srv.Kill()
	waitDisconnected(t, p)
	result := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_, err := do(ctx, p, "SET", "k", "v")
		result <- err
	}()
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if err := <-result; err != nil {
		t.Fatalf("request made while disconnected: %v", err)
	}
	// And one whose context ends while waiting returns its context error.
	srv.Kill()
	waitDisconnected(t, p)
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := do(short, p, "PING"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waiting request: got %v, want deadline exceeded", err)
	}
}

// A server that stops answering (SIGSTOP) is detected by the I/O timeout:
// the request fails instead of hanging, and the pipe recovers on resume.
func TestPipeIOTimeoutOnHungServer(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{})
	opts := testOptions(srv.Addr)
	opts.IOTimeout = 200 * time.Millisecond
	p := newPipe(t, opts)
	ctx := context.Background()
	if _, err := do(ctx, p, "PING"); err != nil {
		t.Fatal(err)
	}
	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := do(ctx, p, "PING")
	elapsed := time.Since(start)
	srv.Resume()
	if !errors.Is(err, ErrConnLost) {
		t.Fatalf("got %v, want ErrConnLost", err)
	}
	if elapsed > 2*time.Second {
		t.Fatalf("timeout took %v", elapsed)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err = do(ctx, p, "PING"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no recovery: %v", err)
		}
		time.Sleep(2 * time.Millisecond) // bounded poll for the reconnect
	}
}

// An idle connection with an I/O timeout must not be declared dead.
func TestPipeIdleIsNotATimeout(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{})
	opts := testOptions(srv.Addr)
	// Each PING has a whole IOTimeout for its reply, which a loaded machine
	// (a race-enabled suite beside CPU-bound processes) can take tens of
	// milliseconds to give: at 20 ms a slow reply, not an idle connection,
	// was timed out. Half a second, and idle periods longer still, so that
	// only the bug (idle time counted as a timeout) fails the test.
	opts.IOTimeout = 500 * time.Millisecond
	p := newPipe(t, opts)
	ctx := context.Background()
	for range 5 {
		if _, err := do(ctx, p, "PING"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(opts.IOTimeout * 3 / 2) // idle for longer than the timeout, on purpose
	}
	if n := p.Stats().Reconnect.Load(); n != 0 {
		t.Fatalf("idle connection was dropped %d times", n)
	}
}

func TestPipeHealthCheckPings(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{})
	opts := testOptions(srv.Addr)
	opts.HealthCheckInterval = 10 * time.Millisecond
	p := newPipe(t, opts)
	deadline := time.Now().Add(5 * time.Second)
	for p.Stats().Batches.Load() < 3 {
		if time.Now().After(deadline) {
			t.Fatal("no health-check PINGs written while idle")
		}
		time.Sleep(5 * time.Millisecond) // waiting for a timer-driven event
	}
	if _, err := do(context.Background(), p, "ECHO", "x"); err != nil {
		t.Fatalf("stream misaligned by health checks: %v", err)
	}
}

// Close lets queued and in-flight requests finish, then leaves no goroutine
// behind (TestMain checks leaks).
func TestPipeCloseDrains(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{})
	p, err := New(context.Background(), testOptions(srv.Addr))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var ok, closed atomic.Int64
	for range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := do(context.Background(), p, "INCR", "n")
			switch {
			case err == nil:
				ok.Add(1)
			case errors.Is(err, ErrClosed) && errors.Is(err, ErrNotSent):
				closed.Add(1)
			default:
				t.Errorf("unexpected error: %v", err)
			}
		}()
	}
	p.Close()
	wg.Wait()
	v, err := srv.Do(context.Background(), "GET", "n")
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(string(v.Bytes()))
	if int64(n) != ok.Load() {
		t.Fatalf("server counted %d INCRs, callers saw %d succeed (%d refused)", n, ok.Load(), closed.Load())
	}
	if _, err := do(context.Background(), p, "PING"); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}

func TestPipeWrongPassword(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{Args: []string{"--requirepass", "secret"}})
	opts := testOptions(srv.Addr)
	opts.Password = "wrong"
	_, err := New(context.Background(), opts)
	var he *HandshakeError
	if !errors.As(err, &he) || !bytes.HasPrefix(he.Reply.Bytes(), []byte("WRONGPASS")) {
		t.Fatalf("got %v, want a WRONGPASS handshake error", err)
	}
	opts.Password = "secret"
	opts.DB = 3
	opts.ClientName = "zipline-test"
	p := newPipe(t, opts)
	v, err := do(context.Background(), p, "CLIENT", "INFO")
	if err != nil || !bytes.Contains(v.Bytes(), []byte("name=zipline-test")) || !bytes.Contains(v.Bytes(), []byte("db=3")) {
		t.Fatalf("CLIENT INFO = %v, %v", v, err)
	}
}

func TestPipeRESP2(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{Args: []string{"--requirepass", "pw"}})
	opts := testOptions(srv.Addr)
	opts.Protocol = 2
	opts.Password = "pw"
	p := newPipe(t, opts)
	if p.Protocol() != 2 {
		t.Fatalf("protocol %d", p.Protocol())
	}
	v, err := do(context.Background(), p, "HGETALL", "nothing")
	if err != nil || v.Type() != resp.Array {
		t.Fatalf("RESP2 HGETALL should be an array: %v %v", v, err)
	}
}

func TestPipeLargeValues(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{})
	p := newPipe(t, testOptions(srv.Addr))
	ctx := context.Background()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			size := 100<<10 + g*(300<<10)
			val := bytes.Repeat([]byte{byte('a' + g)}, size)
			key := "big" + strconv.Itoa(g)
			if _, err := do(ctx, p, "SET", key, string(val)); err != nil {
				t.Error(err)
				return
			}
			// Interleave small requests with the big ones.
			if v, err := do(ctx, p, "ECHO", key); err != nil || string(v.Bytes()) != key {
				t.Errorf("ECHO: %v %v", v, err)
			}
			v, err := do(ctx, p, "GET", key)
			if err != nil || !bytes.Equal(v.Bytes(), val) {
				t.Errorf("GET %s: len %d err %v", key, len(v.Bytes()), err)
			}
		}()
	}
	wg.Wait()
}

// TestPrepareBoundsEachWrite checks that a deep queue is written in chunks:
// each chunk copies at most maxKeptWriteBuf bytes (or one command, if that
// alone is bigger), large buffers go in place, every call is written once,
// and the bytes keep the queue's order.
func TestPrepareBoundsEachWrite(t *testing.T) {
	sizes := []int{10, maxKeptWriteBuf - 5, 10, largeBuf, 300 << 10, maxKeptWriteBuf + 1, 1, 2, 3}
	for range 40 {
		sizes = append(sizes, 95<<10) // a batch of 50 values of 1.9 KB
	}
	var calls []*Call
	var want []byte
	for i, n := range sizes {
		c := &Call{Buf: bytes.Repeat([]byte{byte('a' + i%26)}, n)}
		calls = append(calls, c)
		want = append(want, c.Buf...)
	}
	var w writer
	var got []byte
	for start := 0; start < len(calls); {
		n := w.prepare(calls[start:])
		if n < 1 {
			t.Fatalf("prepare made no progress at call %d", start)
		}
		if copied := len(w.buf); copied > maxKeptWriteBuf && n > 1 {
			t.Fatalf("chunk of %d calls copies %d bytes, more than %d", n, copied, maxKeptWriteBuf)
		}
		for _, ct := range w.cuts {
			if len(ct.b) < largeBuf {
				t.Fatalf("a %d-byte command was written in place", len(ct.b))
			}
		}
		prev := 0
		for _, ct := range w.cuts {
			got = append(got, w.buf[prev:ct.off]...)
			got = append(got, ct.b...)
			prev = ct.off
		}
		got = append(got, w.buf[prev:]...)
		w.reset()
		start += n
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("chunks reassemble to %d bytes, want the queue's %d in order", len(got), len(want))
	}
}

// TestWriteBufferIsKeptAcrossFullBatches checks that batches that fill the
// write buffer to its bound reuse it: at 512 callers of 2 KiB SETs every
// batch came close to the bound, and a buffer that grew past it was thrown
// away and rebuilt, 4.5 KB of garbage per request.
func TestWriteBufferIsKeptAcrossFullBatches(t *testing.T) {
	calls := make([]*Call, 600) // 1.2 MiB of 2 KiB commands: more than one write holds
	for i := range calls {
		calls[i] = &Call{Buf: bytes.Repeat([]byte{'x'}, 2<<10)}
	}
	var w writer
	writeAll := func() {
		for start := 0; start < len(calls); {
			start += w.prepare(calls[start:])
			if cap(w.buf) > maxKeptWriteBuf {
				t.Fatalf("write buffer grew to %d bytes, past its bound of %d", cap(w.buf), maxKeptWriteBuf)
			}
			w.reset()
		}
	}
	writeAll() // grows the buffer once
	if allocs := testing.AllocsPerRun(20, writeAll); allocs != 0 {
		t.Fatalf("writing full batches again allocated %.1f times per queue, want 0", allocs)
	}
}

// TestCallerEstimate checks the writer's estimate of the callers on a
// connection: it holds a burst's peak through the moments when most
// callers are between requests, and falls back to one once the burst ends,
// so a lone caller afterwards is never made to wait for a batch.
func TestCallerEstimate(t *testing.T) {
	load := int64(0)
	for range 10 { // 64 callers: in flight and queued swing between 8 and 64
		load = callerEstimate(load, 64)
		load = callerEstimate(load, 8)
	}
	if load < 56 || gatherYields(load) != 1 {
		t.Fatalf("at 64 callers the estimate is %d (%d yields), want about 64 and 1 yield", load, gatherYields(load))
	}
	if y := gatherYields(callerEstimate(0, 512)); y != maxGatherYields {
		t.Fatalf("512 callers gather with %d yields, want %d", y, maxGatherYields)
	}
	for range 64 {
		load = callerEstimate(load, 1)
	}
	if load != 1 {
		t.Fatalf("64 batches after the burst, one caller left, the estimate is still %d", load)
	}
}

// TestPaceWaitsForTheServerToCatchUp checks the writer's pacing: with more
// than the last batch unanswered it holds the next one back until the
// replies that bring the count down to that batch are read, and no
// longer; a connection that dies, or a Pipe that closes, lets it go. A
// settle racing the writer's wait never leaves it waiting for replies that
// already came.
func TestPaceWaitsForTheServerToCatchUp(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := &Pipe{life: ctx}

	paced := func(fl *inflight, last int64) chan bool {
		done := make(chan bool, 1)
		go func() { done <- p.pace(fl, last) }()
		return done
	}
	settle := func(fl *inflight, answered int64) {
		l := replyLoop{p: &Pipe{}, fl: fl, answered: answered}
		l.settle()
	}

	// Three batches of 10 in flight: the writer waits until only the last
	// is left.
	fl := newInflight()
	fl.outstanding.Store(30)
	done := paced(fl, 10)
	for deadline := time.Now().Add(10 * time.Second); fl.paceAt.Load() == 0; runtime.Gosched() {
		if time.Now().After(deadline) { // until the writer waits, bounded
			t.Fatal("pace never asked to hear of replies")
		}
	}
	settle(fl, 10) // 20 left: still more than the last batch
	select {
	case <-done:
		t.Fatal("pace returned with 20 unanswered after a batch of 10")
	case <-time.After(20 * time.Millisecond):
	}
	settle(fl, 10)
	if ok := <-done; !ok {
		t.Fatal("pace reported a dead connection")
	}

	// At most the last batch in flight, or nothing written yet: no wait.
	fl.outstanding.Store(10)
	if !<-paced(fl, 10) {
		t.Fatal("pace with only the last batch unanswered reported a dead connection")
	}
	fl.outstanding.Store(5)
	if !<-paced(fl, 0) {
		t.Fatal("pace before the first batch reported a dead connection")
	}

	// A dying connection ends the wait, and says so.
	fl = newInflight()
	fl.outstanding.Store(30)
	done = paced(fl, 10)
	fl.fail(errors.New("gone"))
	if <-done {
		t.Fatal("pace on a dead connection reported it alive")
	}

	// Closing the Pipe ends the wait: the writer drains the queue.
	fl = newInflight()
	fl.outstanding.Store(30)
	done = paced(fl, 10)
	cancel()
	if !<-done {
		t.Fatal("pace at Close reported a dead connection")
	}

	// Settles racing the wait: every pace returns once the count is down.
	p = &Pipe{life: context.Background()}
	for i := range 2000 {
		fl = newInflight()
		fl.outstanding.Store(20)
		done = paced(fl, 10)
		if i%2 == 0 {
			runtime.Gosched()
		}
		settle(fl, 10)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: pace still waiting with the count at the last batch", i)
		}
	}
}
