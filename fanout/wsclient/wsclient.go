// Package wsclient is a small WebSocket client (RFC 6455) with
// permessage-deflate (RFC 7692), context takeover included: enough to
// consume a fanout hub from Go, to simulate many subscribers in a demo or a
// benchmark, and to test the hub byte for byte. It reads and writes whole
// messages; one goroutine may read while another writes.
package wsclient

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ziplinekv/zipline/fanout/internal/wsproto"
)

// Options configures Dial. The zero value offers permessage-deflate with
// context takeover and accepts messages up to 16 MiB.
type Options struct {
	// NoCompression sends no permessage-deflate offer.
	NoCompression bool
	// NoContextTakeover asks the server for server_no_context_takeover.
	NoContextTakeover bool
	// MaxMessageSize is the largest message accepted, wire and
	// decompressed; default 16 MiB.
	MaxMessageSize int64
	// Header is added to the upgrade request (Origin, Authorization...).
	Header http.Header
	// Dialer dials the TCP connection; default a net.Dialer.
	Dialer interface {
		DialContext(ctx context.Context, network, addr string) (net.Conn, error)
	}
}

// HandshakeError is a server's refusal of the upgrade.
type HandshakeError struct {
	StatusCode int
	Body       string // the start of the response body
}

func (e *HandshakeError) Error() string {
	return fmt.Sprintf("wsclient: handshake refused: %d %s: %s", e.StatusCode, http.StatusText(e.StatusCode), e.Body)
}

// CloseError is the server's close frame.
type CloseError = wsproto.CloseError

// Conn is a client connection.
type Conn struct {
	nc         net.Conn
	rd         wsproto.Reader
	wire       countingReader
	extensions string

	wmu    sync.Mutex
	wbuf   []byte
	closed bool
}

// Dial opens a WebSocket connection to a ws:// URL.
func Dial(ctx context.Context, rawURL string, opts Options) (*Conn, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("wsclient: %w", err)
	}
	if u.Scheme != "ws" && u.Scheme != "http" {
		return nil, fmt.Errorf("wsclient: scheme %q not supported (ws only)", u.Scheme)
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "80")
	}
	if opts.MaxMessageSize <= 0 {
		opts.MaxMessageSize = 16 << 20
	}
	var d interface {
		DialContext(ctx context.Context, network, addr string) (net.Conn, error)
	} = &net.Dialer{}
	if opts.Dialer != nil {
		d = opts.Dialer
	}
	nc, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return nil, fmt.Errorf("wsclient: %w", err)
	}
	c, err := handshake(ctx, nc, u, opts)
	if err != nil {
		nc.Close()
		return nil, err
	}
	return c, nil
}

func handshake(ctx context.Context, nc net.Conn, u *url.URL, opts Options) (*Conn, error) {
	if dl, ok := ctx.Deadline(); ok {
		nc.SetDeadline(dl)
		defer nc.SetDeadline(time.Time{})
	}
	stop := context.AfterFunc(ctx, func() { nc.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	var keyBytes [16]byte
	rand.Read(keyBytes[:])
	key := base64.StdEncoding.EncodeToString(keyBytes[:])
	var b strings.Builder
	fmt.Fprintf(&b, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n", u.RequestURI(), u.Host)
	fmt.Fprintf(&b, "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n", key)
	if !opts.NoCompression {
		offer := wsproto.Deflate{ClientMaxWindowBits: -1, ServerNoContextTakeover: opts.NoContextTakeover}
		fmt.Fprintf(&b, "Sec-WebSocket-Extensions: %s\r\n", offer)
	}
	for k, vs := range opts.Header {
		for _, v := range vs {
			fmt.Fprintf(&b, "%s: %s\r\n", k, v)
		}
	}
	b.WriteString("\r\n")
	if _, err := io.WriteString(nc, b.String()); err != nil {
		return nil, fmt.Errorf("wsclient: %w", err)
	}
	c := &Conn{nc: nc}
	c.wire.r = nc
	br := bufio.NewReaderSize(&c.wire, 4096)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodGet})
	if err != nil {
		return nil, fmt.Errorf("wsclient: reading the handshake response: %w", err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, &HandshakeError{StatusCode: resp.StatusCode, Body: strings.TrimSpace(string(body))}
	}
	if !wsproto.HeaderHasToken(resp.Header.Values("Upgrade"), "websocket") ||
		!wsproto.HeaderHasToken(resp.Header.Values("Connection"), "upgrade") {
		return nil, errors.New("wsclient: handshake response lacks Upgrade: websocket / Connection: Upgrade")
	}
	if got := resp.Header.Get("Sec-WebSocket-Accept"); got != wsproto.AcceptKey(key) {
		return nil, fmt.Errorf("wsclient: Sec-WebSocket-Accept %q does not match the key", got)
	}
	c.rd = wsproto.Reader{R: br, MaxMessage: opts.MaxMessageSize, Control: c.control}
	c.extensions = resp.Header.Get("Sec-WebSocket-Extensions")
	if c.extensions != "" {
		exts, err := wsproto.ParseExtensions(resp.Header.Values("Sec-WebSocket-Extensions"))
		if err != nil {
			return nil, err
		}
		if opts.NoCompression || len(exts) != 1 || exts[0].Name != wsproto.DeflateName {
			return nil, fmt.Errorf("wsclient: server accepted extensions that were not offered: %q", c.extensions)
		}
		d, err := wsproto.ParseDeflate(exts[0])
		if err != nil {
			return nil, err
		}
		if opts.NoContextTakeover && !d.ServerNoContextTakeover {
			return nil, errors.New("wsclient: server ignored server_no_context_takeover")
		}
		c.rd.Deflate, c.rd.Takeover = true, !d.ServerNoContextTakeover
	}
	return c, nil
}

// Extensions returns the Sec-WebSocket-Extensions the server answered,
// empty when it declined compression.
func (c *Conn) Extensions() string { return c.extensions }

// WireBytes returns the bytes read from the socket so far, handshake
// response included.
func (c *Conn) WireBytes() int64 { return c.wire.n.Load() }

// NetConn returns the underlying connection (for deadlines).
func (c *Conn) NetConn() net.Conn { return c.nc }

// ReadMessage returns the next message, inflated, and whether it is text.
// Pings are answered. A close frame from the server is answered and
// returned as a *CloseError.
func (c *Conn) ReadMessage() (text bool, payload []byte, err error) {
	op, p, err := c.rd.ReadMessage()
	if err != nil {
		var ce *CloseError
		if errors.As(err, &ce) {
			code := ce.Code
			if code == wsproto.CloseNoStatus {
				code = 0
			}
			c.writeClose(code)
		}
		return false, nil, err
	}
	return op == wsproto.OpText, p, nil
}

func (c *Conn) control(op wsproto.Opcode, p []byte) error {
	if op == wsproto.OpPing {
		return c.writeFrame(wsproto.OpPong, p)
	}
	return nil
}

// WriteMessage sends a text or binary message, uncompressed.
func (c *Conn) WriteMessage(text bool, p []byte) error {
	op := wsproto.OpBinary
	if text {
		op = wsproto.OpText
	}
	return c.writeFrame(op, p)
}

// WriteFrame sends one raw frame with the given first header byte's fields:
// for tests that need a malformed or fragmented message.
func (c *Conn) WriteFrame(fin, rsv1 bool, op byte, p []byte) error {
	return c.write(fin, rsv1, wsproto.Opcode(op), p)
}

func (c *Conn) writeFrame(op wsproto.Opcode, p []byte) error { return c.write(true, false, op, p) }

func (c *Conn) write(fin, rsv1 bool, op wsproto.Opcode, p []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.closed {
		return net.ErrClosed
	}
	var mask [4]byte
	rand.Read(mask[:])
	c.wbuf = wsproto.AppendHeader(c.wbuf[:0], fin, rsv1, op, len(p), &mask)
	start := len(c.wbuf)
	c.wbuf = append(c.wbuf, p...)
	wsproto.Mask(mask, 0, c.wbuf[start:])
	_, err := c.nc.Write(c.wbuf)
	return err
}

func (c *Conn) writeClose(code uint16) error {
	err := c.writeFrame(wsproto.OpClose, wsproto.AppendClose(nil, code, ""))
	c.wmu.Lock()
	c.closed = true
	c.wmu.Unlock()
	return err
}

// Close sends a close frame (1000), waits up to a second for the server's
// answer while discarding messages, and closes the connection.
func (c *Conn) Close() error {
	c.wmu.Lock()
	closed := c.closed
	c.wmu.Unlock()
	if !closed {
		c.writeClose(wsproto.CloseNormal)
		c.nc.SetReadDeadline(time.Now().Add(time.Second))
		for i := 0; i < 1<<16; i++ {
			if _, _, err := c.rd.ReadMessage(); err != nil {
				break
			}
		}
	}
	return c.nc.Close()
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (r *countingReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.n.Add(int64(n))
	return n, err
}
