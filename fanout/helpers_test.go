package fanout_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ziplinekv/zipline/fanout"
	"github.com/ziplinekv/zipline/fanout/wsclient"
	"github.com/ziplinekv/zipline/testbed/corpus"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testHub is a hub behind an httptest server, shut down when the test ends.
type testHub struct {
	*fanout.Hub
	srv *httptest.Server
	url string // ws://host/ws
}

func newTestHub(t *testing.T, opts fanout.Options) *testHub {
	t.Helper()
	return startTestHub(t, opts, 0)
}

// startTestHub is newTestHub whose server side sets its sockets' send
// buffer to sendBuffer bytes, if positive: a write to a client that does
// not read then blocks after a few kilobytes, rather than after the
// megabytes the kernel buffers on loopback, which a test would have to
// fill first, and the client drain again later.
func startTestHub(t *testing.T, opts fanout.Options, sendBuffer int) *testHub {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	h := fanout.New(opts)
	srv := httptest.NewUnstartedServer(h)
	if sendBuffer > 0 {
		srv.Config.ConnState = func(c net.Conn, s http.ConnState) {
			if tc, ok := c.(*net.TCPConn); ok && s == http.StateNew {
				tc.SetWriteBuffer(sendBuffer)
			}
		}
	}
	srv.Start()
	th := &testHub{Hub: h, srv: srv, url: "ws" + strings.TrimPrefix(srv.URL, "http") + "/ws"}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := h.Shutdown(ctx); err != nil && !errors.Is(err, fanout.ErrClosed) {
			t.Errorf("Shutdown: %v", err)
		}
		srv.Close()
	})
	return th
}

// dial connects a client to channels, closed when the test ends.
func (th *testHub) dial(t *testing.T, opts wsclient.Options, channels ...string) *wsclient.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	u := th.url + "?"
	for _, ch := range channels {
		u += "channel=" + ch + "&"
	}
	c, err := wsclient.Dial(ctx, u, opts)
	if err != nil {
		t.Fatalf("dial %v: %v", channels, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// read reads one message within a deadline.
func read(t *testing.T, c *wsclient.Conn) []byte {
	t.Helper()
	c.NetConn().SetReadDeadline(time.Now().Add(5 * time.Second))
	_, p, err := c.ReadMessage()
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return p
}

// messages returns n real JSON messages of about 1 KiB (pairs of
// random.json records).
func messages(t testing.TB, n int) [][]byte {
	t.Helper()
	all, err := corpus.RealMessages(1024)
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]byte, n)
	for i := range out {
		// A sequence number makes each message unique and checkable.
		out[i] = fmt.Appendf(nil, `{"seq":%d,"data":%s}`, i, all[i%len(all)])
	}
	return out
}
