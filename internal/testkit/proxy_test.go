package testkit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// cmd encodes a command as RESP.
func cmd(args ...string) []byte {
	b := fmt.Appendf(nil, "*%d\r\n", len(args))
	for _, a := range args {
		b = fmt.Appendf(b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b
}

// bulk is the RESP2 reply for a bulk string.
func bulk(s string) string { return fmt.Sprintf("$%d\r\n%s\r\n", len(s), s) }

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func proxied(t *testing.T) (*Server, *Proxy) {
	t.Helper()
	srv := NewServer(t, Config{})
	return srv, NewProxy(t, srv.Addr)
}

// dial connects a raw client to addr; it is closed at test end, and no
// read or write can block it for more than 10s.
func dial(t *testing.T, addr string) *net.TCPConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	return c.(*net.TCPConn)
}

func send(t *testing.T, c net.Conn, b []byte) {
	t.Helper()
	if _, err := c.Write(b); err != nil {
		t.Fatal(err)
	}
}

// expect reads exactly len(want) bytes from c and compares them.
func expect(t *testing.T, c net.Conn, want string) {
	t.Helper()
	got := make([]byte, len(want))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatalf("reading %q: got %q, %v", want, got, err)
	}
	if string(got) != want {
		t.Fatalf("read %q, want %q", got, want)
	}
}

func waitStats(t *testing.T, p *Proxy, what string, cond func(ProxyStats) bool) ProxyStats {
	t.Helper()
	s, err := p.Wait(testCtx(t), cond)
	if err != nil {
		t.Fatalf("waiting for %s: %v (stats %+v)", what, err, s)
	}
	return s
}

func TestProxyForwardsAndCounts(t *testing.T) {
	srv, p := proxied(t)
	c := dial(t, p.Addr())
	set, get := cmd("SET", "k", "v"), cmd("GET", "k")
	send(t, c, set)
	expect(t, c, "+OK\r\n")
	send(t, c, get)
	expect(t, c, bulk("v"))

	up, down := int64(len(set)+len(get)), int64(len("+OK\r\n")+len(bulk("v")))
	s := waitStats(t, p, "the counters", func(s ProxyStats) bool { return s.ToClient == down && s.ToServer == up })
	want := ProxyStats{Accepted: 1, Open: 1, FromClient: up, ToServer: up, FromServer: down, ToClient: down}
	if s != want {
		t.Fatalf("stats %+v, want %+v", s, want)
	}

	c.Close()
	waitStats(t, p, "the connection to close", func(s ProxyStats) bool { return s.Open == 0 })

	mark := p.Stats()
	c2 := dial(t, p.Addr())
	waitStats(t, p, "a new connection", func(s ProxyStats) bool { return s.Accepted > mark.Accepted })
	send(t, c2, cmd("PING"))
	expect(t, c2, "+PONG\r\n")

	// Wait gives up with the context.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Wait(ctx, func(ProxyStats) bool { return false }); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait on a cancelled context: %v", err)
	}
	if v, err := srv.Do(testCtx(t), "GET", "k"); err != nil || string(v.Bytes()) != "v" {
		t.Fatalf("server has %v, %v", v, err)
	}
}

// A cut delivers exactly After bytes of a reply, then EOF or ECONNRESET.
func TestProxyCutMidBulk(t *testing.T) {
	for _, reset := range []bool{false, true} {
		t.Run(fmt.Sprintf("reset=%v", reset), func(t *testing.T) {
			srv, p := proxied(t)
			value := strings.Repeat("0123456789", 10)
			if _, err := srv.Do(testCtx(t), "SET", "k", value); err != nil {
				t.Fatal(err)
			}
			reply := bulk(value)

			// An existing connection: the offset counts from arming.
			c := dial(t, p.Addr())
			send(t, c, cmd("GET", "k"))
			expect(t, c, reply)
			const n = 30 // inside the bulk
			trig := p.Arm(Cut{Dir: ToClient, After: n, Reset: reset, MaxConns: 1})
			send(t, c, cmd("GET", "k"))
			got, err := io.ReadAll(c)
			if string(got) != reply[:n] {
				t.Fatalf("client read %q, want %q", got, reply[:n])
			}
			if reset && !errors.Is(err, syscall.ECONNRESET) {
				t.Fatalf("after the bytes: %v, want ECONNRESET", err)
			}
			if !reset && err != nil {
				t.Fatalf("after the bytes: %v, want EOF", err)
			}
			if !reset {
				// The proxy drains what the client still sends, so no RST.
				send(t, c, cmd("PING"))
				if b, err := io.ReadAll(c); len(b) != 0 || err != nil {
					t.Fatalf("after a FIN cut: %q, %v", b, err)
				}
			}
			<-trig.Fired()
			if trig.Count() != 1 {
				t.Fatalf("Count = %d", trig.Count())
			}
			c.Close()
			waitStats(t, p, "the cut connection to close", func(s ProxyStats) bool { return s.Open == 0 })

			// MaxConns 1: a new connection is not cut.
			c2 := dial(t, p.Addr())
			send(t, c2, cmd("GET", "k"))
			expect(t, c2, reply)
			if trig.Count() != 1 {
				t.Fatalf("Count = %d after a second connection", trig.Count())
			}
		})
	}
}

// A cut towards the server delivers the first command only, then drops the
// connection; the server ran the first and never saw the second.
func TestProxyCutToServer(t *testing.T) {
	srv, p := proxied(t)
	first, second := cmd("SET", "a", "1"), cmd("SET", "b", "2")
	trig := p.Arm(Cut{Dir: ToServer, After: int64(len(first))})
	c := dial(t, p.Addr())
	send(t, c, append(first, second...))
	got, err := io.ReadAll(c)
	// The server's reply to the first may or may not beat the cut.
	if err != nil || (len(got) != 0 && string(got) != "+OK\r\n") {
		t.Fatalf("client read %q, %v; want at most +OK then EOF", got, err)
	}
	<-trig.Fired()
	ctx := testCtx(t)
	if v, err := srv.Do(ctx, "GET", "a"); err != nil || string(v.Bytes()) != "1" {
		t.Fatalf("a = %v, %v; want 1", v, err)
	}
	if v, err := srv.Do(ctx, "GET", "b"); err != nil || !v.IsNull() {
		t.Fatalf("b = %v, %v; want nil", v, err)
	}
	// Armed for every connection: the next one is cut the same way.
	c2 := dial(t, p.Addr())
	send(t, c2, append(cmd("SET", "c", "3"), second...))
	io.ReadAll(c2)
	if v, err := srv.Do(ctx, "GET", "b"); err != nil || !v.IsNull() {
		t.Fatalf("b = %v, %v; want nil", v, err)
	}
	if trig.Count() != 2 {
		t.Fatalf("Count = %d, want 2", trig.Count())
	}
}

// Corruptions change exactly the bytes at their offsets, once per
// connection, counted from the first byte of a connection opened later.
func TestProxyCorrupt(t *testing.T) {
	srv, p := proxied(t)
	ctx := testCtx(t)
	const value = "hello, world!!!" // 15 bytes: a two-digit length
	if _, err := srv.Do(ctx, "SET", "k", value); err != nil {
		t.Fatal(err)
	}
	digit := p.Arm(Corrupt{At: 1, Func: ReplaceByte('9')})      // "$15" → "$95"
	letter := p.Arm(Corrupt{At: 5, Func: FlipBits(0x20)})       // 'h' → 'H'
	inverted := p.Arm(Corrupt{At: int64(len(bulk(value)) + 1)}) // nil Func: the first byte after the reply

	c := dial(t, p.Addr())
	send(t, c, cmd("GET", "k"))
	expect(t, c, "$95\r\nHello, world!!!\r\n")
	send(t, c, cmd("GET", "k"))
	want := []byte(bulk(value))
	want[1] = ^want[1]
	expect(t, c, string(want))
	send(t, c, cmd("GET", "k"))
	expect(t, c, bulk(value)) // each fault fires once per connection
	for _, trig := range []*Trigger{digit, letter, inverted} {
		<-trig.Fired()
		if trig.Count() != 1 {
			t.Fatalf("Count = %d", trig.Count())
		}
	}

	// Towards the server: the server sees the changed key.
	p.Heal()
	set := cmd("SET", "key1", "v")
	p.Arm(Corrupt{Dir: ToServer, At: int64(bytes.Index(set, []byte("key1")) + 3), Func: ReplaceByte('2')})
	send(t, c, set)
	expect(t, c, "+OK\r\n")
	if v, err := srv.Do(ctx, "GET", "key2"); err != nil || string(v.Bytes()) != "v" {
		t.Fatalf("key2 = %v, %v; want v", v, err)
	}
	if v, err := srv.Do(ctx, "GET", "key1"); err != nil || !v.IsNull() {
		t.Fatalf("key1 = %v, %v; want nil", v, err)
	}
}

// Frozen bytes are held, then delivered in order on thaw.
func TestProxyFreezeThaw(t *testing.T) {
	srv, p := proxied(t)
	c := dial(t, p.Addr())
	send(t, c, cmd("PING"))
	expect(t, c, "+PONG\r\n")
	mark := waitStats(t, p, "the reply to be counted", func(s ProxyStats) bool { return s.ToClient == 7 })

	p.Freeze(ToClient)
	var want strings.Builder
	for i := 1; i <= 50; i++ {
		send(t, c, cmd("INCR", "n"))
		want.WriteString(fmt.Sprintf(":%d\r\n", i))
		// Separate chunks: wait for each reply to reach the proxy.
		n := mark.FromServer + int64(want.Len())
		waitStats(t, p, "the reply", func(s ProxyStats) bool { return s.FromServer >= n })
	}
	if s := p.Stats(); s.ToClient != mark.ToClient {
		t.Fatalf("frozen proxy forwarded %d bytes", s.ToClient-mark.ToClient)
	}
	p.Thaw(ToClient)
	expect(t, c, want.String())

	// Towards the server: the command waits at the proxy.
	p.Freeze(ToServer)
	mark = p.Stats()
	set := cmd("SET", "f", "1")
	send(t, c, set)
	waitStats(t, p, "the command", func(s ProxyStats) bool { return s.FromClient >= mark.FromClient+int64(len(set)) })
	if v, err := srv.Do(testCtx(t), "EXISTS", "f"); err != nil || v.Int() != 0 {
		t.Fatalf("EXISTS f = %v, %v while frozen", v, err)
	}
	p.Thaw(Both)
	expect(t, c, "+OK\r\n")
}

// Latency delays each chunk, in parallel and in order.
func TestProxyLatency(t *testing.T) {
	_, p := proxied(t)
	c := dial(t, p.Addr())
	const d = 200 * time.Millisecond
	p.SetLatency(ToClient, d)

	start := time.Now()
	send(t, c, cmd("PING"))
	expect(t, c, "+PONG\r\n")
	if e := time.Since(start); e < d {
		t.Fatalf("round trip %v with %v latency", e, d)
	}

	// Five replies read as five chunks arrive about d after the first,
	// not 5*d: the delay is per chunk, not cumulative.
	start = time.Now()
	var want strings.Builder
	mark := p.Stats()
	for i := range 5 {
		msg := fmt.Sprint("m", i)
		send(t, c, cmd("ECHO", msg))
		want.WriteString(bulk(msg))
		n := mark.FromServer + int64(want.Len())
		waitStats(t, p, "the reply", func(s ProxyStats) bool { return s.FromServer >= n })
	}
	expect(t, c, want.String())
	if e := time.Since(start); e < d || e > 4*d {
		t.Fatalf("five delayed chunks took %v with %v latency", e, d)
	}

	p.SetLatency(Both, 0)
	p.SetLatency(ToServer, d)
	start = time.Now()
	send(t, c, cmd("PING"))
	expect(t, c, "+PONG\r\n")
	if e := time.Since(start); e < d {
		t.Fatalf("round trip %v with %v latency towards the server", e, d)
	}
}

// A blackhole drops bytes and keeps the connection.
func TestProxyBlackhole(t *testing.T) {
	srv, p := proxied(t)
	c := dial(t, p.Addr())

	p.SetBlackhole(ToClient, true)
	mark := p.Stats()
	send(t, c, cmd("PING"))
	waitStats(t, p, "the reply to reach the proxy", func(s ProxyStats) bool { return s.FromServer >= mark.FromServer+7 })
	p.SetBlackhole(ToClient, false)
	send(t, c, cmd("ECHO", "hi"))
	expect(t, c, bulk("hi")) // not +PONG: it was dropped

	p.SetBlackhole(ToServer, true)
	mark = p.Stats()
	set := cmd("SET", "bh", "1")
	send(t, c, set)
	waitStats(t, p, "the command to reach the proxy", func(s ProxyStats) bool { return s.FromClient >= mark.FromClient+int64(len(set)) })
	p.SetBlackhole(ToServer, false)
	send(t, c, cmd("GET", "bh"))
	expect(t, c, "$-1\r\n")
	if s := p.Stats(); s.Open != 1 || s.Accepted != 1 {
		t.Fatalf("stats %+v, want the one connection still open", s)
	}
	if v, err := srv.Do(testCtx(t), "EXISTS", "bh"); err != nil || v.Int() != 0 {
		t.Fatalf("EXISTS bh = %v, %v", v, err)
	}
}

func TestProxyInject(t *testing.T) {
	t.Run("after", func(t *testing.T) {
		_, p := proxied(t)
		trig := p.Arm(Inject{After: 7, Data: []byte("+EXTRA\r\n")})
		c := dial(t, p.Addr())
		send(t, c, append(cmd("PING"), cmd("PING")...))
		expect(t, c, "+PONG\r\n+EXTRA\r\n+PONG\r\n")
		<-trig.Fired()
	})
	t.Run("now", func(t *testing.T) {
		_, p := proxied(t)
		c := dial(t, p.Addr())
		send(t, c, cmd("PING"))
		expect(t, c, "+PONG\r\n")
		push := ">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n"
		trig := p.Inject([]byte(push))
		expect(t, c, push)
		<-trig.Fired()
		// Not for later connections.
		c2 := dial(t, p.Addr())
		send(t, c2, cmd("PING"))
		expect(t, c2, "+PONG\r\n")
		if trig.Count() != 1 {
			t.Fatalf("Count = %d", trig.Count())
		}
	})
	t.Run("on connect, once", func(t *testing.T) {
		_, p := proxied(t)
		trig := p.Arm(Inject{Data: []byte("-ERR greeting\r\n"), MaxConns: 1})
		c := dial(t, p.Addr())
		expect(t, c, "-ERR greeting\r\n")
		<-trig.Fired()
		c2 := dial(t, p.Addr())
		send(t, c2, cmd("PING"))
		expect(t, c2, "+PONG\r\n")
	})
	t.Run("disarmed", func(t *testing.T) {
		_, p := proxied(t)
		trig := p.Arm(Inject{After: 7, Data: []byte("+EXTRA\r\n")})
		trig.Disarm()
		c := dial(t, p.Addr())
		send(t, c, append(cmd("PING"), cmd("PING")...))
		expect(t, c, "+PONG\r\n+PONG\r\n")
		if trig.Count() != 0 {
			t.Fatalf("Count = %d", trig.Count())
		}
	})
}

func TestProxyResetAll(t *testing.T) {
	_, p := proxied(t)
	c1, c2 := dial(t, p.Addr()), dial(t, p.Addr())
	waitStats(t, p, "two connections", func(s ProxyStats) bool { return s.Accepted == 2 })
	p.ResetAll()
	for _, c := range []net.Conn{c1, c2} {
		if _, err := c.Read(make([]byte, 1)); !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("read after ResetAll: %v, want ECONNRESET", err)
		}
	}
	waitStats(t, p, "no open connections", func(s ProxyStats) bool { return s.Open == 0 })
	c3 := dial(t, p.Addr())
	send(t, c3, cmd("PING"))
	expect(t, c3, "+PONG\r\n")
}

// When the server dies the client sees EOF; while it is down, connections
// are refused with a reset; after a restart they work again.
func TestProxyServerKilled(t *testing.T) {
	srv, p := proxied(t)
	c := dial(t, p.Addr())
	send(t, c, cmd("PING"))
	expect(t, c, "+PONG\r\n")
	srv.Kill()
	if b, err := io.ReadAll(c); len(b) != 0 || err != nil {
		t.Fatalf("after Kill the client read %q, %v; want EOF", b, err)
	}
	c.Close()
	waitStats(t, p, "the connection to close", func(s ProxyStats) bool { return s.Open == 0 })

	if err := firstError(p.Addr()); !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("connecting to a dead server: %v, want ECONNRESET", err)
	}
	if s := p.Stats(); s.Refused != 1 {
		t.Fatalf("Refused = %d", s.Refused)
	}
	Restart(t, srv)
	c3 := dial(t, p.Addr())
	send(t, c3, cmd("PING"))
	expect(t, c3, "+PONG\r\n")
}

// firstError connects to addr and reads, and returns the first error: a
// reset can come before or after the client's connect completes.
func firstError(addr string) error {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	_, err = c.Read(make([]byte, 1))
	return err
}

// The zero Cut, with Reset, refuses every new connection until disarmed.
func TestProxyCutOnConnect(t *testing.T) {
	_, p := proxied(t)
	trig := p.Arm(Cut{Reset: true})
	for range 2 {
		if err := firstError(p.Addr()); !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("connecting: %v, want ECONNRESET", err)
		}
	}
	waitStats(t, p, "both connections to close", func(s ProxyStats) bool { return s.Accepted == 2 && s.Open == 0 })
	if trig.Count() != 2 {
		t.Fatalf("Count = %d, want 2", trig.Count())
	}
	trig.Disarm()
	c := dial(t, p.Addr())
	send(t, c, cmd("PING"))
	expect(t, c, "+PONG\r\n")
}

// Switches flipped from another goroutine while clients work never lose,
// duplicate or reorder a byte (run with -race).
func TestProxyConcurrentSwitches(t *testing.T) {
	_, p := proxied(t)
	const clients, rounds = 4, 200
	// The flipper paces itself on the traffic: each round it freezes and
	// thaws, then changes the latency and waits for some bytes to pass.
	ctx, stop := context.WithCancel(context.Background())
	var flipper sync.WaitGroup
	flipper.Add(1)
	go func() {
		defer flipper.Done()
		for ctx.Err() == nil {
			for _, d := range []time.Duration{time.Millisecond, 0} {
				p.Freeze(Both)
				p.Thaw(ToClient)
				p.Thaw(ToServer)
				p.SetLatency(Both, d)
				mark := p.Stats()
				p.Wait(ctx, func(s ProxyStats) bool { return s.ToClient > mark.ToClient })
			}
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for i := range clients {
		c := dial(t, p.Addr())
		key := fmt.Sprint("n", i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 64)
			for r := 1; r <= rounds; r++ {
				if _, err := c.Write(cmd("INCR", key)); err != nil {
					errs <- err
					return
				}
				want := fmt.Sprintf(":%d\r\n", r)
				if _, err := io.ReadFull(c, buf[:len(want)]); err != nil || string(buf[:len(want)]) != want {
					errs <- fmt.Errorf("client %d round %d: %q, %v", i, r, buf[:len(want)], err)
					return
				}
			}
		}()
	}
	wg.Wait()
	stop()
	flipper.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// Close releases every goroutine and socket, whatever state the
// connections are in.
func TestProxyCloseReleasesEverything(t *testing.T) {
	srv := NewServer(t, Config{})
	if _, err := srv.Do(testCtx(t), "SET", "k", strings.Repeat("x", 1000)); err != nil {
		t.Fatal(err)
	}
	base := Snapshot()
	p, err := newProxy(srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	var clients []net.Conn
	conn := func() net.Conn {
		c, err := net.Dial("tcp", p.Addr())
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		clients = append(clients, c)
		return c
	}
	// Idle; cut with FIN and left half open; delayed; frozen with bytes held.
	conn()
	cut := p.Arm(Cut{After: 10, MaxConns: 1})
	c := conn()
	send(t, c, cmd("GET", "k"))
	<-cut.Fired()
	get := int64(len(cmd("GET", "k")))
	p.SetLatency(ToClient, time.Hour)
	send(t, conn(), cmd("GET", "k"))
	waitStats(t, p, "the command to pass", func(s ProxyStats) bool { return s.ToServer == 2*get })
	p.Freeze(ToServer)
	send(t, conn(), cmd("GET", "k"))
	waitStats(t, p, "the command to reach the proxy", func(s ProxyStats) bool { return s.FromClient == 3*get })
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	p.Close() // idempotent
	for _, c := range clients {
		c.Close()
	}
	ExpectBaseline(t, base, Tolerance{HeapBytes: -1}, 5*time.Second)
}

func TestNewProxyRefusesNonLoopbackTargets(t *testing.T) {
	for _, target := range []string{"192.0.2.1:6379", "example.com:6379", "0.0.0.0:6379", "6379"} {
		if p, err := newProxy(target); err == nil {
			p.Close()
			t.Errorf("newProxy(%q) accepted", target)
		}
	}
	for _, target := range []string{"127.0.0.1:1", "localhost:1", "[::1]:1"} {
		p, err := newProxy(target)
		if err != nil {
			t.Errorf("newProxy(%q): %v", target, err)
			continue
		}
		p.Close()
	}
}
