package zipline

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/internal/testkit"
)

// A BLPOP waiting on the shared Client must not stall anyone: 100
// goroutines keep doing GET/SET meanwhile, every call finishing quickly.
func TestBlockingCommandDoesNotStallOthers(t *testing.T) {
	c, _ := newTestClient(t, Options{})
	ctx := context.Background()
	popped := make(chan KeyValue, 1)
	go func() {
		kv, err := c.BLPop(ctx, 0, "jobs") // waits until something is pushed
		if err != nil {
			t.Error(err)
		}
		popped <- kv
	}()
	var wg sync.WaitGroup
	var slowest atomic.Int64
	for g := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := "k" + strconv.Itoa(g)
			for i := range 100 {
				start := time.Now()
				cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				err := c.Set(cctx, key, []byte(strconv.Itoa(i)))
				v, gerr := c.Get(cctx, key)
				cancel()
				if err != nil || gerr != nil || string(v) != strconv.Itoa(i) {
					t.Errorf("%s: %v %v %q", key, err, gerr, v)
					return
				}
				if d := int64(time.Since(start)); d > slowest.Load() {
					slowest.Store(d)
				}
			}
		}()
	}
	wg.Wait()
	select {
	case kv := <-popped:
		t.Fatalf("BLPOP returned early: %+v", kv)
	default:
	}
	if d := time.Duration(slowest.Load()); d > 2*time.Second {
		t.Fatalf("a GET/SET pair took %v while BLPOP was blocked", d)
	}
	if _, err := c.RPush(ctx, "jobs", []byte("job-1")); err != nil {
		t.Fatal(err)
	}
	select {
	case kv := <-popped:
		if kv.Key != "jobs" || string(kv.Value) != "job-1" {
			t.Fatalf("BLPOP got %+v", kv)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("BLPOP did not return after the push")
	}
}

// Cancelling a BLPOP closes its connection, so the server stops waiting:
// an element pushed afterwards is not consumed by an orphaned BLPOP.
func TestCancelledBlockingCommandLosesNoData(t *testing.T) {
	c, _ := newTestClient(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.BLPop(ctx, 0, "q")
		done <- err
	}()
	// Wait until the server has the BLPOP blocked.
	for i := 0; ; i++ {
		info, err := c.Info(context.Background(), "clients")
		if err != nil {
			t.Fatal(err)
		}
		if info["blocked_clients"] == "1" {
			break
		}
		if i > 2000 {
			t.Fatal("BLPOP never blocked")
		}
		time.Sleep(time.Millisecond) // polling server state, bounded
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled BLPOP: %v", err)
	}
	bg := context.Background()
	for i := 0; ; i++ {
		info, _ := c.Info(bg, "clients")
		if info["blocked_clients"] == "0" {
			break
		}
		if i > 2000 {
			t.Fatal("the server still has a blocked client")
		}
		time.Sleep(time.Millisecond) // polling server state, bounded
	}
	c.RPush(bg, "q", []byte("precious"))
	if n, err := c.LLen(bg, "q"); err != nil || n != 1 {
		t.Fatalf("element consumed by an abandoned BLPOP: LLEN %d %v", n, err)
	}
}

// 10,000 concurrent GETs, a third cancelled at random moments: every
// answered call gets its own key's value, and the Client stays usable.
func TestCancellationMidFlightKeepsRepliesMatched(t *testing.T) {
	c, _ := newTestClient(t, Options{})
	ctx := context.Background()
	const n = 10_000
	b := c.Batch()
	for i := range n {
		b.Set("key:"+strconv.Itoa(i), []byte("value:"+strconv.Itoa(i)))
	}
	if err := b.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var ok, cancelled atomic.Int64
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithCancel(ctx)
			defer cancel()
			if rand.IntN(3) == 0 {
				go func() {
					time.Sleep(time.Duration(rand.IntN(200)) * time.Microsecond) // a random moment, not synchronisation
					cancel()
				}()
			}
			v, err := c.Get(cctx, "key:"+strconv.Itoa(i))
			switch {
			case errors.Is(err, context.Canceled):
				cancelled.Add(1)
			case err != nil:
				t.Errorf("key %d: %v", i, err)
			case string(v) != "value:"+strconv.Itoa(i):
				t.Errorf("key %d got %q", i, v)
			default:
				ok.Add(1)
			}
		}()
	}
	wg.Wait()
	t.Logf("%d answered, %d cancelled", ok.Load(), cancelled.Load())
	if ok.Load() == 0 || cancelled.Load() == 0 {
		t.Fatal("the test exercised only one path")
	}
	for i := range 100 {
		v, err := c.Get(ctx, "key:"+strconv.Itoa(i))
		if err != nil || string(v) != "value:"+strconv.Itoa(i) {
			t.Fatalf("after the storm: %q %v", v, err)
		}
	}
}

// The server is killed while 200 goroutines run, then started again. No
// call hangs past its timeout, errors are the documented ones, and the same
// Client serves again after the restart.
func TestServerRestartUnderLoad(t *testing.T) {
	c, srv := newTestClient(t, Options{IOTimeout: time.Second, ReconnectBackoffMax: 50 * time.Millisecond})
	ctx := context.Background()
	const callTimeout = 500 * time.Millisecond
	var (
		stop                      atomic.Bool
		restarted                 atomic.Bool
		okAfter, failed, lateness atomic.Int64
		wg                        sync.WaitGroup
	)
	for g := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := "r" + strconv.Itoa(g)
			for i := 0; !stop.Load(); i++ {
				cctx, cancel := context.WithTimeout(ctx, callTimeout)
				start := time.Now()
				err := c.Set(cctx, key, []byte(strconv.Itoa(i)))
				if err == nil {
					var v []byte
					v, err = c.Get(cctx, key)
					if err == nil && string(v) != strconv.Itoa(i) {
						t.Errorf("%s: read %q after writing %d", key, v, i)
					}
				}
				cancel()
				if over := time.Since(start) - 2*callTimeout; over > 200*time.Millisecond {
					lateness.Store(int64(over))
				}
				switch {
				case err == nil:
					if restarted.Load() {
						okAfter.Add(1)
					}
				case errors.Is(err, ErrConnLost), errors.Is(err, ErrNotConnected), errors.Is(err, context.DeadlineExceeded):
					failed.Add(1)
				default:
					t.Errorf("unexpected error: %v", err)
				}
				if err != nil {
					time.Sleep(time.Millisecond) // a client's retry pause, not synchronisation
				}
			}
		}()
	}
	time.Sleep(300 * time.Millisecond) // let the load run before the crash
	srv.Kill()
	time.Sleep(300 * time.Millisecond) // the server stays down for a while
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	restarted.Store(true)
	deadline := time.Now().Add(10 * time.Second)
	for okAfter.Load() < 1000 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // waiting for the load to resume, bounded
	}
	stop.Store(true)
	wg.Wait()
	if l := time.Duration(lateness.Load()); l > 0 {
		t.Errorf("a call overran its timeout by %v", l)
	}
	if failed.Load() == 0 {
		t.Error("no call failed: the kill did not happen under load")
	}
	if okAfter.Load() < 1000 {
		t.Fatalf("only %d successful calls after the restart", okAfter.Load())
	}
	if c.Stats().Reconnects == 0 {
		t.Fatal("no reconnect recorded")
	}
	t.Logf("%d failed calls during the outage, %d succeeded after restart", failed.Load(), okAfter.Load())
}

func TestACLUserAndWrongPassword(t *testing.T) {
	c, srv := newTestClient(t, Options{})
	ctx := context.Background()
	if _, err := srv.Do(ctx, "ACL", "SETUSER", "app", "on", ">s3cret", "~app:*", "+@all"); err != nil {
		t.Fatal(err)
	}
	_ = c
	app, err := New(Options{Addr: srv.Addr, Username: "app", Password: "s3cret", Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	if err := app.Set(ctx, "app:1", []byte("x")); err != nil {
		t.Fatal(err)
	}
	err = app.Set(ctx, "other:1", []byte("x"))
	var se *ServerError
	if !errors.As(err, &se) || se.Prefix != "NOPERM" {
		t.Fatalf("writing outside the ACL pattern: %v", err)
	}
	for _, proto := range []int{0, 2} {
		_, err = New(Options{Addr: srv.Addr, Username: "app", Password: "wrong", Protocol: proto, Logger: quiet})
		if !errors.As(err, &se) || se.Prefix != "WRONGPASS" || !strings.Contains(err.Error(), srv.Addr) {
			t.Fatalf("RESP%d wrong password: %v, want a WRONGPASS ServerError naming the address", proto, err)
		}
	}
	// A dedicated connection authenticates the same way.
	if _, err := app.BLPop(ctx, 10*time.Millisecond, "app:q"); !errors.Is(err, Nil) {
		t.Fatalf("BLPOP as ACL user: %v", err)
	}
}

func TestCloseFailsLaterCallsAndLeavesNoGoroutines(t *testing.T) {
	c, _ := newTestClient(t, Options{})
	ctx := context.Background()
	// Open a dedicated connection too, so Close has to shut it down.
	if _, err := c.BLPop(ctx, 10*time.Millisecond, "x"); !errors.Is(err, Nil) {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Set(ctx, fmt.Sprint(i), []byte("v"))
		}()
	}
	c.Close()
	wg.Wait()
	if err := c.Set(ctx, "k", []byte("v")); !errors.Is(err, ErrClosed) || !errors.Is(err, ErrNotSent) {
		t.Fatalf("after Close: %v", err)
	}
	if _, err := c.BLPop(ctx, time.Millisecond, "x"); !errors.Is(err, ErrClosed) {
		t.Fatalf("blocking after Close: %v", err)
	}
	// goleak in TestMain checks that the pipe and pool goroutines are gone.
}

func TestTLSAndUnixSocket(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{TLS: true, UnixSocket: true})
	ctx := context.Background()
	c, err := New(Options{Addr: srv.TLSAddr, TLSConfig: srv.TLSConfig, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Set(ctx, "over-tls", []byte("v")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.BLPop(ctx, 10*time.Millisecond, "q"); !errors.Is(err, Nil) {
		t.Fatalf("a dedicated connection over TLS: %v", err)
	}
	// A client that does not trust the server's CA is refused at New.
	if _, err := New(Options{Addr: srv.TLSAddr, TLSConfig: &tls.Config{}, DialTimeout: 2 * time.Second, Logger: quiet}); err == nil ||
		!strings.Contains(err.Error(), "certificate") {
		t.Fatalf("untrusted certificate: %v", err)
	}
	u, err := New(Options{Network: "unix", Addr: srv.Socket, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	if v, err := u.Get(ctx, "over-tls"); err != nil || string(v) != "v" {
		t.Fatalf("over the unix socket: %q %v", v, err)
	}
}

// A positive expiry under a millisecond rounds up to one millisecond: sent
// as 0 it would delete the key (PEXPIRE) or be refused (SET ... PX).
func TestSubMillisecondExpiryRoundsUp(t *testing.T) {
	c, _ := newTestClient(t, Options{})
	ctx := context.Background()
	tx := c.Tx()
	tx.Set("k", []byte("v"))
	ok := tx.Expire("k", 500*time.Microsecond)
	ttl := tx.PTTL("k")
	if err := tx.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if !ok.Val() || ttl.Val() < 0 {
		t.Fatalf("Expire(500µs): %v, then PTTL %v: the key was deleted at once", ok.Val(), ttl.Val())
	}
	if err := c.Set(ctx, "k2", []byte("v"), PX(300*time.Microsecond)); err != nil {
		t.Fatalf("SET ... PX(300µs): %v", err)
	}
}

// With Network "tcp4" (or "tcp6"), TLS still verifies the server's name
// taken from Addr.
func TestTLSServerNameWithTCP4(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{TLS: true})
	c, err := New(Options{Network: "tcp4", Addr: srv.TLSAddr, TLSConfig: srv.TLSConfig, Logger: quiet})
	if err != nil {
		t.Fatalf("TLS over tcp4: %v", err)
	}
	defer c.Close()
	if err := c.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
}
