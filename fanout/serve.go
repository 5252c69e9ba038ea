package fanout

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/ziplinekv/zipline/fanout/internal/wsproto"
)

// ServeHTTP upgrades a WebSocket request and returns; the connection is
// served on a goroutine of the hub's until it closes. The channels are the
// request's "channel" query parameters. A request that is not a valid
// WebSocket upgrade gets 400 (an HTTP/1.0 request too; 426 for another
// WebSocket version), one from a refused origin or that Authorize refuses
// gets 403, and any request once the hub is shut down gets 503; none of
// them gets a WebSocket.
func (h *Hub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	channels, neg, status, err := h.checkUpgrade(r)
	if err != nil {
		h.stats.rejected.Add(1)
		if status == http.StatusUpgradeRequired {
			w.Header().Set("Sec-WebSocket-Version", "13")
		}
		http.Error(w, err.Error(), status)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		h.stats.rejected.Add(1)
		http.Error(w, "fanout: the connection cannot be upgraded (no http.Hijacker)", http.StatusInternalServerError)
		return
	}
	nc, brw, err := hj.Hijack()
	if err != nil {
		h.stats.rejected.Add(1)
		h.log.Debug("fanout: hijack", "err", err)
		return
	}
	var buffered []byte
	if n := brw.Reader.Buffered(); n > 0 {
		buffered, _ = brw.Reader.Peek(n)
		buffered = append([]byte(nil), buffered...)
	}
	resp := "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " +
		wsproto.AcceptKey(r.Header.Get("Sec-WebSocket-Key")) + "\r\n"
	if neg.mode != deflateOff {
		resp += "Sec-WebSocket-Extensions: " + neg.response.String() + "\r\n"
	}
	nc.SetDeadline(time.Time{})
	c := &conn{h: h, nc: nc, deflate: neg.mode, worker: -1}
	if tw, ok := nc.(TryWriter); ok {
		c.tw = tw
	} else if tw := rawTryWriter(nc); tw != nil {
		c.tw = tw
	}
	if c.tw != nil {
		c.worker = int(h.next.Add(1) % uint32(len(h.workers)))
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		h.stats.rejected.Add(1)
		nc.Close()
		return
	}
	h.conns[c] = struct{}{}
	h.serving.Add(1)
	h.mu.Unlock()
	h.stats.accepted.Add(1)
	// The response is queued first, so every frame broadcast to c follows
	// it on the wire; but it is written only once c is subscribed, so a
	// client whose handshake completed misses nothing broadcast after it.
	// A broadcast arriving while c subscribes schedules the writer itself.
	c.mu.Lock()
	c.queue = append(c.queue, []byte(resp+"\r\n"))
	c.mu.Unlock()
	for _, name := range channels {
		h.subscribe(c, name)
	}
	c.mu.Lock()
	res := queued
	if len(c.queue) > 0 {
		res = c.scheduleLocked()
	}
	c.mu.Unlock()
	c.hand(res)
	// Serve on a goroutine of its own, so that net/http's per-request
	// state (buffers, the request) is released: an idle connection then
	// costs its small goroutine and a few hundred bytes.
	go func() {
		defer h.serving.Done()
		c.serve(readerFrom(buffered, nc), neg.mode != deflateOff)
	}()
}

// negotiation is the outcome of a permessage-deflate offer.
type negotiation struct {
	mode     deflateMode
	response wsproto.Deflate
}

// checkUpgrade validates an upgrade request and returns its channels and
// the compression to use, or the status and error to refuse it with.
func (h *Hub) checkUpgrade(r *http.Request) ([]string, negotiation, int, error) {
	var neg negotiation
	bad := func(format string, args ...any) ([]string, negotiation, int, error) {
		return nil, neg, http.StatusBadRequest, fmt.Errorf("fanout: bad WebSocket handshake: "+format, args...)
	}
	if r.Method != http.MethodGet {
		return bad("method %s, want GET", r.Method)
	}
	if !r.ProtoAtLeast(1, 1) {
		// 400, not 426: Upgrade is an HTTP/1.1 mechanism, and a server
		// must ignore an Upgrade header in an HTTP/1.0 request (RFC 9110
		// section 7.8), so this request, as the server must read it, is
		// not a WebSocket handshake at all (RFC 6455 section 4.1 asks for
		// HTTP/1.1 or later). 426 would name a protocol to upgrade to
		// through the very header this client cannot use.
		return bad("%s request, want HTTP/1.1 or later", r.Proto)
	}
	if !wsproto.HeaderHasToken(r.Header.Values("Connection"), "upgrade") {
		return bad("no \"Connection: Upgrade\" header")
	}
	if !wsproto.HeaderHasToken(r.Header.Values("Upgrade"), "websocket") {
		return bad("no \"Upgrade: websocket\" header")
	}
	if v := r.Header.Get("Sec-WebSocket-Version"); v != "13" {
		return nil, neg, http.StatusUpgradeRequired, fmt.Errorf("fanout: unsupported WebSocket version %q, want 13", v)
	}
	if !wsproto.ValidKey(r.Header.Get("Sec-WebSocket-Key")) {
		return bad("Sec-WebSocket-Key is not base64 of 16 bytes")
	}
	h.mu.Lock()
	closed := h.closed
	h.mu.Unlock()
	if closed {
		return nil, neg, http.StatusServiceUnavailable, ErrClosed
	}
	if !h.opts.CheckOrigin(r) {
		return nil, neg, http.StatusForbidden, fmt.Errorf("fanout: origin %q not allowed", r.Header.Get("Origin"))
	}
	channels, err := h.channelsOf(r)
	if err != nil {
		return nil, neg, http.StatusBadRequest, err
	}
	if h.opts.Authorize != nil {
		if err := h.opts.Authorize(r, channels); err != nil {
			return nil, neg, http.StatusForbidden, fmt.Errorf("fanout: not authorized: %w", err)
		}
	}
	neg, err = h.negotiate(r.Header.Values("Sec-WebSocket-Extensions"))
	if err != nil {
		return bad("%v", err)
	}
	return channels, neg, 0, nil
}

// maxChannelName bounds a channel name from a query.
const maxChannelName = 1024

// channelsOf returns the request's channels, without duplicates.
func (h *Hub) channelsOf(r *http.Request) ([]string, error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, fmt.Errorf("fanout: bad query: %w", err)
	}
	var out []string
	seen := make(map[string]bool)
	for _, name := range q["channel"] {
		if name == "" || len(name) > maxChannelName {
			return nil, fmt.Errorf("fanout: channel name of %d bytes (1 to %d)", len(name), maxChannelName)
		}
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	if len(out) > h.opts.MaxChannels {
		return nil, fmt.Errorf("fanout: %d channels asked, at most %d", len(out), h.opts.MaxChannels)
	}
	return out, nil
}

// negotiate picks the first acceptable permessage-deflate offer. Offers
// with invalid parameters are declined, as RFC 7692 requires, and so is
// everything when compression is Off. The response always asks for
// client_no_context_takeover, so the hub inflates each client message on
// its own and keeps no window per connection. Context takeover on the
// server side (Shared) is used only with the full 15-bit window: a client
// that asks for a smaller one, or for server_no_context_takeover, gets
// stateless frames, compressed with a window no larger than it allows.
func (h *Hub) negotiate(values []string) (negotiation, error) {
	var neg negotiation
	if h.opts.Compression == Off || len(values) == 0 {
		return neg, nil
	}
	exts, err := wsproto.ParseExtensions(values)
	if err != nil {
		return neg, err
	}
	for _, e := range exts {
		if e.Name != wsproto.DeflateName {
			continue
		}
		offer, err := wsproto.ParseDeflate(e)
		if err != nil {
			continue
		}
		if offer.ServerMaxWindowBits > 0 && offer.ServerMaxWindowBits < 15 {
			// Our compressors use a 32 KiB window; decline, the client
			// may offer something else next.
			continue
		}
		resp := wsproto.Deflate{ClientNoContextTakeover: true, ServerMaxWindowBits: offer.ServerMaxWindowBits}
		neg.mode = deflateShared
		if h.opts.Compression == Stateless || offer.ServerNoContextTakeover {
			neg.mode = deflateStateless
			resp.ServerNoContextTakeover = true
		}
		neg.response = resp
		return neg, nil
	}
	return neg, nil
}

// sameOrigin is the default CheckOrigin: no Origin header, or one whose
// host is the request's Host.
func sameOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && strings.EqualFold(u.Host, r.Host)
}

// serve reads the client's frames until the connection ends: it answers
// pings, counts and drops data messages, and answers a close frame or a
// protocol error with a close frame. Then it unsubscribes c and closes the
// socket.
func (c *conn) serve(rd io.Reader, deflate bool) {
	h := c.h
	r := &wsproto.Reader{R: rd, Masked: true, MaxMessage: h.opts.MaxMessageSize, Deflate: deflate,
		Control: func(op wsproto.Opcode, p []byte) error {
			if op == wsproto.OpPing {
				c.queuePong(p)
			}
			return nil
		}}
	var err error
	for {
		op, p, rerr := r.ReadMessage()
		if err = rerr; err != nil {
			break
		}
		h.stats.inbound.Add(1)
		if h.onMessage != nil {
			h.onMessage(c, op, p)
		}
	}
	var (
		closeErr *wsproto.CloseError
		protoErr *wsproto.ProtocolError
	)
	switch {
	case errors.As(err, &closeErr):
		code := closeErr.Code
		if code == wsproto.CloseNoStatus {
			code = wsproto.CloseNormal
		}
		c.closeWith(code, "")
	case errors.As(err, &protoErr):
		c.closeWith(protoErr.Code, protoErr.Reason)
	case errors.Is(err, wsproto.ErrTooBig):
		c.closeWith(wsproto.CloseTooBig, "message too big")
	}
	if !isClosedConn(err) {
		h.log.Debug("fanout: connection ends", "remote", c.nc.RemoteAddr(), "err", err)
	}
	for _, s := range c.subs {
		h.unsubscribe(s.ch, s.m)
	}
	c.subs = nil
	// Let the close frame go out (bounded by CloseTimeout), then close.
	c.mu.Lock()
	flushed := c.flushed
	c.mu.Unlock()
	if flushed != nil {
		t := time.NewTimer(h.opts.CloseTimeout)
		select {
		case <-flushed:
		case <-t.C:
		}
		t.Stop()
	}
	c.mu.Lock()
	c.dead = true
	c.mu.Unlock()
	c.nc.Close()
	h.mu.Lock()
	delete(h.conns, c)
	h.mu.Unlock()
}

func isClosedConn(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || errors.Is(err, syscall.ECONNRESET)
}
