package fanout_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/flate"

	"github.com/ziplinekv/zipline/fanout"
	"github.com/ziplinekv/zipline/fanout/wsclient"
)

// Bad upgrade requests get a clear status and no WebSocket.
func TestHandshakeRefused(t *testing.T) {
	th := newTestHub(t, fanout.Options{
		MaxChannels: 2,
		Authorize: func(r *http.Request, channels []string) error {
			if r.Header.Get("Authorization") != "Bearer ok" {
				return errors.New("no token")
			}
			return nil
		},
	})
	good := func() http.Header {
		return http.Header{
			"Connection":            {"keep-alive, Upgrade"},
			"Upgrade":               {"websocket"},
			"Sec-Websocket-Version": {"13"},
			"Sec-Websocket-Key":     {"dGhlIHNhbXBsZSBub25jZQ=="},
			"Authorization":         {"Bearer ok"},
		}
	}
	cases := []struct {
		name   string
		method string
		query  string
		edit   func(http.Header)
		status int
		says   string
	}{
		{"post", "POST", "", nil, 400, "method POST"},
		{"no upgrade", "GET", "", func(h http.Header) { h.Del("Upgrade") }, 400, "Upgrade: websocket"},
		{"no connection", "GET", "", func(h http.Header) { h.Set("Connection", "close") }, 400, "Connection: Upgrade"},
		{"version", "GET", "", func(h http.Header) { h.Set("Sec-Websocket-Version", "8") }, 426, "version"},
		{"key", "GET", "", func(h http.Header) { h.Set("Sec-Websocket-Key", "short") }, 400, "Sec-WebSocket-Key"},
		{"origin", "GET", "", func(h http.Header) { h.Set("Origin", "https://evil.example") }, 403, "origin"},
		{"unauthorized", "GET", "?channel=a", func(h http.Header) { h.Del("Authorization") }, 403, "not authorized: no token"},
		{"too many channels", "GET", "?channel=a&channel=b&channel=c", nil, 400, "at most 2"},
		{"empty channel", "GET", "?channel=", nil, 400, "channel name"},
		{"bad extensions", "GET", "", func(h http.Header) { h.Set("Sec-Websocket-Extensions", "permessage-deflate; x=\"") }, 400, "quoted"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, th.srv.URL+"/ws"+tc.query, nil)
			req.Header = good()
			if tc.edit != nil {
				tc.edit(req.Header)
			}
			resp, err := th.srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status || !strings.Contains(string(body), tc.says) {
				t.Errorf("%d %q, want %d mentioning %q", resp.StatusCode, body, tc.status, tc.says)
			}
		})
	}
	if st := th.Stats(); st.Rejected != uint64(len(cases)) || st.Accepted != 0 {
		t.Errorf("rejected %d, accepted %d; want %d and 0", st.Rejected, st.Accepted, len(cases))
	}
	// The refused client got no data: nothing was ever subscribed.
	if n := th.Broadcast("a", []byte("secret")); n != 0 {
		t.Errorf("broadcast reached %d connections", n)
	}
}

// Offers the hub cannot honour are declined; the connection still opens.
func TestNegotiation(t *testing.T) {
	th := newTestHub(t, fanout.Options{})
	cases := []struct{ offer, want string }{
		{"permessage-deflate; client_max_window_bits", "permessage-deflate; client_no_context_takeover"},
		{"permessage-deflate; server_max_window_bits=10", ""},
		{"permessage-deflate; server_max_window_bits=10, permessage-deflate", "permessage-deflate; client_no_context_takeover"},
		{"permessage-deflate; server_max_window_bits=15", "permessage-deflate; client_no_context_takeover; server_max_window_bits=15"},
		{"permessage-deflate; server_no_context_takeover", "permessage-deflate; server_no_context_takeover; client_no_context_takeover"},
		{"permessage-deflate; unknown", ""},
		{"x-webkit-deflate-frame", ""},
	}
	for _, tc := range cases {
		req, _ := http.NewRequest("GET", th.srv.URL+"/ws", nil)
		req.Header = http.Header{"Connection": {"Upgrade"}, "Upgrade": {"websocket"}, "Sec-Websocket-Version": {"13"},
			"Sec-Websocket-Key": {"dGhlIHNhbXBsZSBub25jZQ=="}, "Sec-Websocket-Extensions": {tc.offer}}
		resp, err := th.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 101 || resp.Header.Get("Sec-Websocket-Extensions") != tc.want {
			t.Errorf("offer %q: %d %q, want 101 %q", tc.offer, resp.StatusCode, resp.Header.Get("Sec-Websocket-Extensions"), tc.want)
		}
		if resp.Header.Get("Sec-Websocket-Accept") != "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" {
			t.Errorf("accept key %q", resp.Header.Get("Sec-Websocket-Accept"))
		}
	}
}

// Client messages over the limit, malformed frames and decompression bombs
// close the connection with the right code; pings are answered; messages
// within the limit are read and counted.
func TestInbound(t *testing.T) {
	th := newTestHub(t, fanout.Options{MaxMessageSize: 1000})
	expectClose := func(t *testing.T, c *wsclient.Conn, code uint16) {
		t.Helper()
		c.NetConn().SetReadDeadline(time.Now().Add(5 * time.Second))
		_, _, err := c.ReadMessage()
		var ce *wsclient.CloseError
		if !errors.As(err, &ce) || ce.Code != code {
			t.Fatalf("got %v, want close %d", err, code)
		}
	}
	t.Run("within limit", func(t *testing.T) {
		c := th.dial(t, wsclient.Options{}, "a")
		before := th.Stats().Inbound
		if err := c.WriteMessage(true, bytes.Repeat([]byte("x"), 1000)); err != nil {
			t.Fatal(err)
		}
		// A compressed message, inflating to exactly the limit.
		if err := c.WriteFrame(true, true, 1, deflate(bytes.Repeat([]byte("y"), 1000))); err != nil {
			t.Fatal(err)
		}
		// Fragmented, with a ping in between: the pong comes back first.
		c.WriteFrame(false, false, 2, []byte("ab"))
		c.WriteFrame(true, false, 9, []byte("ping!"))
		c.WriteFrame(true, false, 0, []byte("cd"))
		// Closing waits for the hub's answer, which comes after it read
		// everything before the close.
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if got := th.Stats().Inbound - before; got != 3 {
			t.Errorf("%d inbound messages counted, want 3", got)
		}
	})
	t.Run("too big", func(t *testing.T) {
		c := th.dial(t, wsclient.Options{}, "a")
		c.WriteMessage(false, make([]byte, 1001))
		expectClose(t, c, 1009)
	})
	t.Run("too big in fragments", func(t *testing.T) {
		c := th.dial(t, wsclient.Options{}, "a")
		c.WriteFrame(false, false, 2, make([]byte, 600))
		c.WriteFrame(true, false, 0, make([]byte, 600))
		expectClose(t, c, 1009)
	})
	t.Run("bomb", func(t *testing.T) {
		c := th.dial(t, wsclient.Options{}, "a")
		c.WriteFrame(true, true, 2, deflate(make([]byte, 1<<20))) // ~1 KiB on the wire, 1 MiB inflated
		expectClose(t, c, 1009)
	})
	t.Run("reserved opcode", func(t *testing.T) {
		c := th.dial(t, wsclient.Options{}, "a")
		c.WriteFrame(true, false, 3, nil)
		expectClose(t, c, 1002)
	})
	t.Run("bad utf8", func(t *testing.T) {
		c := th.dial(t, wsclient.Options{}, "a")
		c.WriteMessage(true, []byte{0xff, 0xfe})
		expectClose(t, c, 1007)
	})
	t.Run("rsv1 without deflate", func(t *testing.T) {
		c := th.dial(t, wsclient.Options{NoCompression: true}, "a")
		c.WriteFrame(true, true, 1, []byte("x"))
		expectClose(t, c, 1002)
	})
	t.Run("unmasked", func(t *testing.T) {
		// A raw connection: the client package always masks.
		nc := rawUpgrade(t, th)
		nc.Write([]byte{0x81, 0x01, 'x'})
		nc.SetReadDeadline(time.Now().Add(5 * time.Second))
		got, _ := io.ReadAll(nc)
		if !bytes.HasPrefix(got, []byte{0x88}) || !bytes.Contains(got, []byte("unmasked")) {
			t.Errorf("got %q, want a close frame about masking", got)
		}
	})
	t.Run("client closes", func(t *testing.T) {
		c := th.dial(t, wsclient.Options{}, "a")
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	})
}

// rawUpgrade opens a TCP connection and completes the handshake by hand.
func rawUpgrade(t *testing.T, th *testHub) net.Conn {
	t.Helper()
	nc, err := net.Dial("tcp", th.srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	io.WriteString(nc, "GET /ws?channel=a HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"+
		"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n")
	nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 0, 512)
	for !bytes.Contains(buf, []byte("\r\n\r\n")) && len(buf) < cap(buf) {
		n, err := nc.Read(buf[len(buf):cap(buf)])
		if err != nil {
			t.Fatal(err)
		}
		buf = buf[:len(buf)+n]
	}
	if !bytes.HasPrefix(buf, []byte("HTTP/1.1 101")) {
		t.Fatalf("handshake: %q", buf)
	}
	return nc
}

// deflate compresses p as a permessage-deflate message body.
func deflate(p []byte) []byte {
	var b bytes.Buffer
	w, _ := flate.NewWriter(&b, 9)
	w.Write(p)
	w.Flush()
	return bytes.TrimSuffix(b.Bytes(), []byte{0, 0, 0xff, 0xff})
}

// A consumer that stops reading has messages dropped for it (counted),
// then gets the rest intact and in order once it reads again; with
// Disconnect it is closed instead. Shared-context frames stay decodable
// across the drops.
func TestSlowConsumer(t *testing.T) {
	base := messages(t, 64)
	msg := func(k int) []byte { return fmt.Appendf(nil, `{"k":%d,"m":%s}`, k, base[k%len(base)]) }
	for _, policy := range []fanout.SlowConsumerPolicy{fanout.DropMessages, fanout.Disconnect} {
		name := map[fanout.SlowConsumerPolicy]string{fanout.DropMessages: "drop", fanout.Disconnect: "disconnect"}[policy]
		t.Run(name, func(t *testing.T) {
			// Small send buffers on the hub's side: the slow client's
			// writes block after a few messages. With the kernel's default
			// (megabytes on loopback) it took 6,383 messages, 114 s under
			// -race on a busy machine, and draining them outlasted the
			// WriteTimeout, which closed the connection.
			th := startTestHub(t, fanout.Options{QueueSize: 8, SlowConsumer: policy, CloseTimeout: 200 * time.Millisecond}, 4096)
			slow := th.dial(t, wsclient.Options{}, "a")
			fast := th.dial(t, wsclient.Options{}, "a")
			// Shrink the slow client's receive buffer so that the hub's
			// writes block soon.
			slow.NetConn().(*net.TCPConn).SetReadBuffer(4096)
			// Bounded: stop at the first drop or disconnect.
			sent := 0
			for ; sent < 200_000 && th.Stats().Dropped == 0 && th.Stats().SlowClosed == 0; sent++ {
				m := msg(sent)
				th.Broadcast("a", m)
				if got := read(t, fast); !bytes.Equal(got, m) { // the fast client keeps up
					t.Fatalf("fast client: got %.40q", got)
				}
			}
			// Some more after the first drop, so that the slow client's
			// stream has gaps in the middle.
			for range 50 {
				th.Broadcast("a", msg(sent))
				read(t, fast)
				sent++
			}
			st := th.Stats()
			t.Logf("sent %d: %+v", sent, st)
			if policy == fanout.DropMessages {
				if st.Dropped == 0 {
					t.Fatalf("nothing dropped after %d messages", sent)
				}
				// What was queued arrives intact and in order; then the
				// client, caught up, gets every new message again.
				last := -1
				readSlow := func() int {
					slow.NetConn().SetReadDeadline(time.Now().Add(5 * time.Second))
					_, p, err := slow.ReadMessage()
					if err != nil {
						t.Fatalf("slow client, after message %d: %v", last, err)
					}
					var k int
					if _, err := fmt.Sscanf(string(p), `{"k":%d`, &k); err != nil || k <= last || !bytes.Equal(p, msg(k)) {
						t.Fatalf("slow client: after %d got %.40q", last, p)
					}
					last = k
					return k
				}
				for range uint64(sent) - st.Dropped {
					readSlow()
				}
				for range 100 {
					th.Broadcast("a", msg(sent))
					if k := readSlow(); k != sent {
						t.Fatalf("slow client got %d, want %d", k, sent)
					}
					sent++
				}
				return
			}
			if st.SlowClosed != 1 || st.Dropped == 0 {
				t.Fatalf("SlowClosed = %d, Dropped = %d; want 1 and > 0", st.SlowClosed, st.Dropped)
			}
			// The slow client sees its backlog, then a close or a reset.
			var err error
			for n := 0; n <= sent && err == nil; n++ {
				slow.NetConn().SetReadDeadline(time.Now().Add(5 * time.Second))
				_, _, err = slow.ReadMessage()
			}
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatalf("slow client was not disconnected")
			}
		})
	}
}
