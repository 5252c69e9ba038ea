package fanout

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/fanout/internal/wsproto"
)

// autobahnEnv names the loopback address TestAutobahnEchoServer listens
// on; without it the test is skipped. It is how the hub is run against the
// Autobahn|Testsuite fuzzing client, which is not part of `make test`:
//
//	FANOUT_AUTOBAHN=127.0.0.1:9001 go test -run TestAutobahnEchoServer -timeout 0 ./fanout/ &
//	wstest -m fuzzingclient -s fuzzingclient.json   # servers: ws://127.0.0.1:9001/ws
//	curl -s http://127.0.0.1:9001/stop
//
// FANOUT_AUTOBAHN_MODE picks the compression mode (shared, the default,
// stateless or off).
const autobahnEnv = "FANOUT_AUTOBAHN"

// TestAutobahnEchoServer serves a hub that echoes every message a client
// sends back to that client, through the hub's own write path (framing,
// compression per the negotiated mode, queue, writers), until GET /stop.
func TestAutobahnEchoServer(t *testing.T) {
	addr := os.Getenv(autobahnEnv)
	if addr == "" {
		t.Skip("set " + autobahnEnv + "=127.0.0.1:9001 to serve the Autobahn fuzzing client")
	}
	host, _, err := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		t.Fatalf("%s=%q: want a loopback host:port", autobahnEnv, addr)
	}
	mode := Shared
	if m := os.Getenv("FANOUT_AUTOBAHN_MODE"); m != "" {
		for _, c := range []Compression{Shared, Stateless, Off} {
			if c.String() == m {
				mode = c
			}
		}
	}
	h := New(Options{
		Compression:    mode,
		QueueSize:      1 << 20,  // an echo is never dropped
		MaxMessageSize: 64 << 20, // case 9 sends up to 16 MiB
		WriteTimeout:   time.Minute,
		Logger:         slog.New(slog.DiscardHandler),
	})
	h.onMessage = func(c *conn, op wsproto.Opcode, p []byte) {
		m := &message{h: h, payload: p, op: op, small: len(p) < h.opts.CompressionThreshold}
		_, res := c.deliver(m)
		c.hand(res)
	}
	stop := make(chan struct{})
	mux := http.NewServeMux()
	mux.Handle("/ws", h)
	mux.HandleFunc("/stop", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-stop:
		default:
			close(stop)
		}
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	t.Logf("echo hub (%v) on ws://%s/ws; GET http://%s/stop ends it", mode, addr, addr)
	<-stop
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h.Shutdown(ctx)
	srv.Shutdown(ctx)
	st := h.Stats()
	t.Logf("%+v", st)
}
