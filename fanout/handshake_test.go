package fanout_test

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/fanout"
	"github.com/ziplinekv/zipline/fanout/wsclient"
)

// A window-bits value that is not canonical (RFC 7692 section 7.1: the
// decimal digits of 8 to 15, no sign, no leading zero, quoted or not)
// makes the offer invalid, and the hub declines it rather than reading
// "+15" as 15; a valid offer after it is still taken.
func TestNegotiationDeclinesNonCanonicalWindowBits(t *testing.T) {
	th := newTestHub(t, fanout.Options{})
	const takeover = "permessage-deflate; client_no_context_takeover"
	cases := []struct{ offer, want string }{
		{"permessage-deflate; server_max_window_bits=+15", ""},
		{`permessage-deflate; server_max_window_bits="+15"`, ""},
		{"permessage-deflate; server_max_window_bits=015", ""},
		{"permessage-deflate; server_max_window_bits=-15", ""},
		{"permessage-deflate; server_max_window_bits=15.0", ""},
		{"permessage-deflate; server_max_window_bits=0x0f", ""},
		{"permessage-deflate; server_max_window_bits=16", ""},
		{"permessage-deflate; client_max_window_bits=+10", ""},
		{"permessage-deflate; client_max_window_bits=09", ""},
		{"permessage-deflate; server_max_window_bits=+15, permessage-deflate", takeover},
		{`permessage-deflate; server_max_window_bits="15"`, takeover + "; server_max_window_bits=15"},
		{"permessage-deflate; client_max_window_bits=8", takeover},
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
		if got := resp.Header.Get("Sec-Websocket-Extensions"); resp.StatusCode != 101 || got != tc.want {
			t.Errorf("offer %q: %d %q, want 101 %q", tc.offer, resp.StatusCode, got, tc.want)
		}
	}
}

// An upgrade request in HTTP/1.0 gets 400 and no WebSocket: the Upgrade
// mechanism is HTTP/1.1's, a server must ignore Upgrade in a 1.0 request,
// and RFC 6455 section 4.1 asks for HTTP/1.1 or later.
func TestHandshakeHTTP10Refused(t *testing.T) {
	th := newTestHub(t, fanout.Options{})
	nc, err := net.Dial("tcp", th.srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	io.WriteString(nc, "GET /ws?channel=a HTTP/1.0\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"+
		"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n")
	nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "HTTP/1.1") {
		t.Errorf("HTTP/1.0 upgrade: %d %q, want 400 asking for HTTP/1.1", resp.StatusCode, body)
	}
	if st := th.Stats(); st.Accepted != 0 || st.Rejected != 1 {
		t.Errorf("accepted %d, rejected %d; want 0 and 1", st.Accepted, st.Rejected)
	}
	if n := th.Broadcast("a", []byte("secret")); n != 0 {
		t.Errorf("broadcast reached %d connections", n)
	}
}

// Close codes 1012 (service restart), 1013 (try again later) and 1014
// (bad gateway), registered with IANA under RFC 6455, are valid from a
// client: the hub answers with the same code. Unregistered codes in the
// protocol's range are still protocol errors.
func TestCloseCodesFromTheRegistry(t *testing.T) {
	th := newTestHub(t, fanout.Options{})
	for _, tc := range []struct{ sent, answer uint16 }{
		{1000, 1000}, {1011, 1011}, {1012, 1012}, {1013, 1013}, {1014, 1014}, {3000, 3000}, {4999, 4999},
		{1004, 1002}, {1005, 1002}, {1006, 1002}, {1015, 1002}, {1016, 1002}, {2999, 1002},
	} {
		c := th.dial(t, wsclient.Options{}, "a")
		if err := c.WriteFrame(true, false, 0x8, binary.BigEndian.AppendUint16(nil, tc.sent)); err != nil {
			t.Fatal(err)
		}
		c.NetConn().SetReadDeadline(time.Now().Add(5 * time.Second))
		_, _, err := c.ReadMessage()
		var ce *wsclient.CloseError
		if !errors.As(err, &ce) || ce.Code != tc.answer {
			t.Errorf("client closed with %d: hub answered %v, want close %d", tc.sent, err, tc.answer)
		}
	}
}
