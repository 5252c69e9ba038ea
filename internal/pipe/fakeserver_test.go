package pipe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/internal/resp"
)

// fakeServer is a scripted peer for what a real server never does: send
// malformed replies, refuse HELLO like Redis 5, or reply to nothing.
type fakeServer struct {
	ln      net.Listener
	wg      sync.WaitGroup
	mu      sync.Mutex
	conns   []net.Conn
	seen    []string // command names received, in order
	respond func(cmd []string) string
}

func newFakeServer(t *testing.T, respond func(cmd []string) string) *fakeServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &fakeServer{ln: ln, respond: respond}
	s.wg.Add(1)
	go s.accept()
	t.Cleanup(s.close)
	return s
}

func (s *fakeServer) addr() string { return s.ln.Addr().String() }

func (s *fakeServer) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns = append(s.conns, c)
		s.mu.Unlock()
		s.wg.Add(1)
		go s.serve(c)
	}
}

func (s *fakeServer) serve(c net.Conn) {
	defer s.wg.Done()
	rd := resp.NewReader(c, 0, resp.Limits{})
	for {
		var v resp.Value
		if err := rd.ReadValue(&v); err != nil {
			return
		}
		var cmd []string
		for _, e := range v.Elems() {
			cmd = append(cmd, string(e.Bytes()))
		}
		s.mu.Lock()
		s.seen = append(s.seen, strings.ToUpper(cmd[0]))
		s.mu.Unlock()
		if out := s.respond(cmd); out != "" {
			if _, err := c.Write([]byte(out)); err != nil {
				return
			}
		}
	}
}

func (s *fakeServer) commands() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...)
}

func (s *fakeServer) close() {
	s.ln.Close()
	s.mu.Lock()
	for _, c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// helloOK answers the handshake like a RESP3 server.
func helloOK(cmd []string) (string, bool) {
	if strings.EqualFold(cmd[0], "HELLO") {
		return "%1\r\n+proto\r\n:3\r\n", true
	}
	return "", false
}

func TestPipeMalformedReplyFailsCleanly(t *testing.T) {
	for name, bad := range map[string]string{
		"unknown type":   "?what\r\n",
		"bad integer":    ":12x\r\n",
		"no CRLF":        "+OK\n",
		"huge bulk":      "$99999999999\r\n",
		"deep nesting":   strings.Repeat("*1\r\n", 200) + ":1\r\n",
		"negative array": "*-5\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			srv := newFakeServer(t, func(cmd []string) string {
				if r, ok := helloOK(cmd); ok {
					return r
				}
				if cmd[0] == "GET" {
					return bad
				}
				return "+PONG\r\n"
			})
			opts := testOptions(srv.addr())
			opts.Limits = resp.Limits{MaxBulkLen: 1 << 20, MaxDepth: 32}
			p := newPipe(t, opts)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, err := do(ctx, p, "GET", "k")
			var le *resp.LimitError
			if !errors.Is(err, ErrConnLost) || !(errors.Is(err, resp.ErrProtocol) || errors.As(err, &le)) {
				t.Fatalf("got %v, want ErrConnLost wrapping a protocol or limit error", err)
			}
			// The pipe reconnects and serves well-formed replies again.
			deadline := time.Now().Add(5 * time.Second)
			for {
				v, err := do(ctx, p, "PING")
				if err == nil && string(v.Bytes()) == "PONG" {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("no recovery: %v", err)
				}
				time.Sleep(2 * time.Millisecond) // bounded poll for the reconnect
			}
		})
	}
}

func TestPipeUnsolicitedReplyIsAProtocolError(t *testing.T) {
	var once sync.Once
	srv := newFakeServer(t, func(cmd []string) string {
		if r, ok := helloOK(cmd); ok {
			return r
		}
		out := "+PONG\r\n"
		once.Do(func() { out += "+EXTRA\r\n" }) // two replies to one request
		return out
	})
	p := newPipe(t, testOptions(srv.addr()))
	ctx := context.Background()
	if _, err := do(ctx, p, "PING"); err != nil {
		t.Fatal(err)
	}
	// The extra reply must not be handed to the next caller as its own.
	v, err := do(ctx, p, "PING")
	if err == nil && string(v.Bytes()) == "EXTRA" {
		t.Fatal("an unsolicited reply was delivered to the next request")
	}
}

func TestPipeFallsBackToRESP2(t *testing.T) {
	srv := newFakeServer(t, func(cmd []string) string {
		switch strings.ToUpper(cmd[0]) {
		case "HELLO":
			return "-ERR unknown command 'HELLO'\r\n"
		case "AUTH":
			if cmd[1] == "pw" {
				return "+OK\r\n"
			}
			return "-WRONGPASS invalid password\r\n"
		}
		return "+PONG\r\n"
	})
	opts := testOptions(srv.addr())
	opts.Password = "pw"
	p := newPipe(t, opts)
	if p.Protocol() != 2 {
		t.Fatalf("protocol %d, want the RESP2 fallback", p.Protocol())
	}
	got := strings.Join(srv.commands(), " ")
	if got != "HELLO AUTH" {
		t.Fatalf("handshake sent %q", got)
	}
	opts.Password = "nope"
	_, err := New(context.Background(), opts)
	var he *HandshakeError
	if !errors.As(err, &he) || he.Command != "AUTH" {
		t.Fatalf("wrong password after fallback: %v", err)
	}
	opts.Protocol = 3 // RESP3 required: no fallback
	opts.Password = "pw"
	if _, err := New(context.Background(), opts); !errors.As(err, &he) || he.Command != "HELLO" {
		t.Fatalf("Protocol 3 on a RESP2 server: %v", err)
	}
}

// A request abandoned before the writer reached it is never sent.
func TestPipeAbandonedBeforeWriteIsNotSent(t *testing.T) {
	release := make(chan struct{})
	slowRead := make(chan struct{})
	srv := newFakeServer(t, func(cmd []string) string {
		if r, ok := helloOK(cmd); ok {
			return r
		}
		if cmd[0] == "SLOW" {
			close(slowRead)
			<-release // hold the reply: the pipe keeps waiting
		}
		return "+OK\r\n"
	})
	var releaseOnce sync.Once
	unblock := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(unblock) // runs before the server's close, which waits for its handler
	p := newPipe(t, testOptions(srv.addr()))
	done := make(chan error, 1)
	go func() {
		_, err := do(context.Background(), p, "SLOW")
		done <- err
	}()
	// Wait until SLOW is on the wire and held: the writer is then idle, and
	// a call queued without a kick stays queued.
	select {
	case <-slowRead:
	case <-time.After(10 * time.Second):
		t.Fatal("SLOW never reached the server")
	}
	// Queue a call behind the writer's back (no kick) once the writer has
	// parked and no caller holds its role (whose release would kick it),
	// then abandon it as a caller whose context ended would: it is
	// still queued.
	call := p.NewCall()
	call.Buf = resp.AppendBulkString(resp.AppendArrayLen(call.Buf, 1), "NEVER")
	call.N = 1
	waitFor(t, func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		if !p.writerParked || p.directWriter { // SLOW may have gone as a lone request, from its caller
			return false
		}
		p.queue = append(p.queue, call) // in the same hold that saw the writer parked
		return true
	})
	if _, ok := call.abandon(); !ok {
		t.Fatal("could not abandon a queued call")
	}
	unblock()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := do(context.Background(), p, "AFTER"); err != nil {
		t.Fatal(err)
	}
	for _, c := range srv.commands() {
		if c == "NEVER" {
			t.Fatal("an abandoned, unwritten call was sent")
		}
	}
}

// A call in flight while the pipe drains (Close) that the server hangs up
// on was lost with the connection, like any other (ErrConnLost: it may
// have run, and a caller resends a lost read); one that Abort cuts fails
// with ErrClosed.
func TestPipeDrainCutByTheServer(t *testing.T) {
	for _, abort := range []bool{false, true} {
		t.Run(fmt.Sprintf("abort=%v", abort), func(t *testing.T) {
			got := make(chan struct{}, 1)
			srv := newFakeServer(t, func(cmd []string) string {
				if out, ok := helloOK(cmd); ok {
					return out
				}
				got <- struct{}{} // GET is never answered
				return ""
			})
			p, err := New(context.Background(), testOptions(srv.addr()))
			if err != nil {
				t.Fatal(err)
			}
			errc := make(chan error, 1)
			go func() {
				_, err := do(context.Background(), p, "GET", "k")
				errc <- err
			}()
			<-got // in flight: the server has it
			closed := make(chan struct{})
			if abort {
				go func() { p.Abort(); close(closed) }()
			} else {
				go func() { p.Close(); close(closed) }()
				waitClosing(t, p)
				srv.close() // the server hangs up while the pipe drains
			}
			err = <-errc
			<-closed
			switch {
			case abort && !errors.Is(err, ErrClosed):
				t.Fatalf("cut by Abort: %v, want ErrClosed", err)
			case !abort && (!errors.Is(err, ErrConnLost) || errors.Is(err, ErrClosed)):
				t.Fatalf("hung up on while draining: %v, want ErrConnLost", err)
			}
		})
	}
}

// waitClosing waits until p refuses new requests: Close has begun.
func waitClosing(t *testing.T, p *Pipe) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !p.Closed() {
		if time.Now().After(deadline) {
			t.Fatal("the pipe did not start closing within 5 s")
		}
		time.Sleep(time.Millisecond) // a bounded poll of the pipe's state
	}
}
