// Package fanout compares broadcasting over WebSocket with zipline's fanout
// hub and with its peers: gorilla/websocket (compressing per connection,
// and with PreparedMessage), lxzan/gws (Broadcaster) and the centrifuge
// library (its WebSocket handler with the prepared-message cache). Each
// server is driven through its public API over fake connections that
// discard what is written, the way gorilla's BenchmarkBroadcast measures:
// framing, compression and scheduling, no system calls.
package fanout

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"time"
)

// counter counts writes across connections and signals when a target is
// reached.
type counter struct {
	n      atomic.Int64
	target atomic.Int64
	reach  chan struct{}
}

func newCounter() *counter {
	c := &counter{reach: make(chan struct{}, 1)}
	c.target.Store(-1)
	return c
}

func (c *counter) add() {
	if c.n.Add(1) == c.target.Load() {
		c.reach <- struct{}{}
	}
}

// wait blocks until the count reaches n (or 10 s pass, which returns false).
func (c *counter) wait(n int64) bool {
	c.target.Store(n)
	if c.n.Load() >= n {
		select { // drain a signal from a racing add
		case <-c.reach:
		default:
		}
		return true
	}
	select {
	case <-c.reach:
		return true
	case <-time.After(10 * time.Second):
		return false
	}
}

// fakeConn is a net.Conn whose reads return a preloaded client stream and
// then block until Close, and whose writes are counted and discarded.
type fakeConn struct {
	in     *bytes.Reader
	writes *counter
	bytes  atomic.Int64
	closed chan struct{}
	once   sync.Once
	try    bool // offer TryWrite (the fanout hub writes without a goroutine)
}

func newFakeConn(in []byte, w *counter) *fakeConn {
	return &fakeConn{in: bytes.NewReader(in), writes: w, closed: make(chan struct{})}
}

func (c *fakeConn) Read(p []byte) (int, error) {
	if c.in.Len() > 0 {
		return c.in.Read(p)
	}
	<-c.closed
	return 0, io.EOF
}

func (c *fakeConn) Write(p []byte) (int, error) {
	c.bytes.Add(int64(len(p)))
	c.writes.add()
	return len(p), nil
}

func (c *fakeConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return nil
}

func (c *fakeConn) LocalAddr() net.Addr                { return fakeAddr{} }
func (c *fakeConn) RemoteAddr() net.Addr               { return fakeAddr{} }
func (c *fakeConn) SetDeadline(t time.Time) error      { return nil }
func (c *fakeConn) SetReadDeadline(t time.Time) error  { return nil }
func (c *fakeConn) SetWriteDeadline(t time.Time) error { return nil }

// tryConn is a fakeConn that also offers fanout.TryWriter.
type tryConn struct{ *fakeConn }

func (c tryConn) TryWrite(p []byte) (int, error) { return c.Write(p) }

type fakeAddr struct{}

func (fakeAddr) Network() string { return "tcp" }
func (fakeAddr) String() string  { return "127.0.0.1:1" }

// hijacker is an http.ResponseWriter that hands over a fake connection.
type hijacker struct {
	*httptest.ResponseRecorder
	conn net.Conn
}

func (h hijacker) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return h.conn, bufio.NewReadWriter(bufio.NewReader(h.conn), bufio.NewWriter(h.conn)), nil
}

// upgradeRequest is a browser-like upgrade request offering
// permessage-deflate, for path (with its query).
func upgradeRequest(path string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "http://example.com"+path, nil)
	r.Header.Set("Connection", "Upgrade")
	r.Header.Set("Upgrade", "websocket")
	r.Header.Set("Sec-WebSocket-Version", "13")
	r.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	r.Header.Set("Sec-WebSocket-Extensions", "permessage-deflate; client_max_window_bits")
	return r
}

// clientFrame is a masked text frame, as a client sends it.
func clientFrame(p []byte) []byte {
	mask := [4]byte{1, 2, 3, 4}
	f := []byte{0x81}
	switch {
	case len(p) < 126:
		f = append(f, 0x80|byte(len(p)))
	default:
		f = append(f, 0x80|126, byte(len(p)>>8), byte(len(p)))
	}
	f = append(f, mask[:]...)
	for i, b := range p {
		f = append(f, b^mask[i%4])
	}
	return f
}
