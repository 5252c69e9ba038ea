package fanout

import (
	"bytes"
	"unicode/utf8"

	"github.com/klauspost/compress/flate"

	"github.com/ziplinekv/zipline/fanout/internal/wsproto"
)

// syncMarker ends every flushed deflate block; permessage-deflate strips it
// from the wire (RFC 7692 section 7.2.1).
var syncMarker = []byte{0x00, 0x00, 0xff, 0xff}

// deflater is a flate writer with its output buffer. Stateless deflaters
// are pooled by the hub; a shared one belongs to a channel.
type deflater struct {
	w   *flate.Writer
	buf bytes.Buffer
}

func newDeflater(level int) *deflater {
	d := new(deflater)
	d.w, _ = flate.NewWriter(&d.buf, level) // level is checked by Options
	return d
}

// compress returns p compressed as one permessage-deflate message body,
// continuing the deflater's stream: history is kept unless the caller
// reset it. The result is valid until the next call.
func (d *deflater) compress(p []byte) []byte {
	d.buf.Reset()
	d.w.Write(p) // writes to a bytes.Buffer cannot fail
	d.w.Flush()
	return bytes.TrimSuffix(d.buf.Bytes(), syncMarker)
}

// stream is a channel's shared compression context: every message of the
// channel at or above the threshold goes through it in order, so its
// frames can be read by any connection whose inflater window holds the
// same last 32 KiB.
type stream struct {
	d   *deflater
	seq uint64 // messages compressed so far
}

// syncState is what a connection with context takeover has received, as
// far as its inflater window is concerned: it has every message of stream
// from number seq-n+1 to seq in order, acc bytes in all. Only when acc
// covers the window can it read the stream's frames.
type syncState struct {
	stream *stream
	seq    uint64
	acc    int
}

// message is one broadcast, prepared for every connection on a channel.
// Each wire form is built at most once, when the first connection needs
// it: that is the compress-once guarantee. Only the broadcasting goroutine
// touches it.
type message struct {
	h       *Hub
	payload []byte
	op      wsproto.Opcode
	small   bool // below the threshold: uncompressed for everyone

	plain []byte // the uncompressed frame

	deflated []byte // compressed without history, built once, smaller or not
	shrinks  bool   // deflated is smaller than plain

	shared []byte  // the channel stream's frame, if the channel has a stream
	stream *stream // nil if none
	seq    uint64  // this message's number in stream

	compressions int
	sharedSends  int
}

func (h *Hub) prepare(ch *channel, payload []byte) *message {
	m := &message{h: h, payload: payload, op: wsproto.OpText}
	if !utf8.Valid(payload) {
		m.op = wsproto.OpBinary
	}
	m.small = len(payload) < h.opts.CompressionThreshold
	if !m.small && ch.stream != nil {
		m.stream = ch.stream
		m.stream.seq++
		m.seq = m.stream.seq
		m.shared = frame(m.op, true, m.stream.d.compress(payload))
		m.compressions++
	}
	return m
}

// frame builds a final server frame around body.
func frame(op wsproto.Opcode, compressed bool, body []byte) []byte {
	f := make([]byte, 0, wsproto.HeaderLen(len(body))+len(body))
	f = wsproto.AppendHeader(f, true, compressed, op, len(body), nil)
	return append(f, body...)
}

func (m *message) plainFrame() []byte {
	if m.plain == nil {
		m.plain = frame(m.op, false, m.payload)
	}
	return m.plain
}

// deflatedFrame returns the message compressed with no history, whether
// or not that made it smaller.
func (m *message) deflatedFrame() []byte {
	if m.deflated == nil {
		d, _ := m.h.deflaters.Get().(*deflater)
		if d == nil {
			d = newDeflater(m.h.opts.CompressionLevel)
		}
		d.w.Reset(&d.buf)
		body := d.compress(m.payload)
		m.compressions++
		m.deflated, m.shrinks = frame(m.op, true, body), len(body) < len(m.payload)
		m.h.deflaters.Put(d)
	}
	return m.deflated
}

// statelessFrame returns the message compressed with no history, or the
// plain frame if compressing does not make it smaller; compressed says
// which. It is for connections whose window does not follow a stream.
func (m *message) statelessFrame() (f []byte, compressed bool) {
	if f := m.deflatedFrame(); m.shrinks {
		return f, true
	}
	return m.plainFrame(), false
}

// frameFor picks the frame for connection c, given its negotiated
// compression, and updates c's sync state. The caller holds c.mu and
// delivers the frames of one stream in stream order.
func (m *message) frameFor(c *conn) []byte {
	switch {
	case c.deflate == deflateOff || m.small:
		// An uncompressed message does not enter the inflater window.
		return m.plainFrame()
	case c.deflate == deflateStateless:
		f, _ := m.statelessFrame()
		return f
	case m.stream == nil:
		// A takeover connection on a channel without a stream (it
		// subscribed while this message was prepared): its window
		// changes, so it leaves whatever stream it followed.
		f, compressed := m.statelessFrame()
		if compressed {
			c.sync = syncState{}
		}
		return f
	}
	s := &c.sync
	inStep := s.stream == m.stream && s.seq+1 == m.seq
	if inStep && s.acc >= wsproto.WindowSize {
		s.seq = m.seq
		m.sharedSends++
		return m.shared
	}
	// Until c's window holds the stream's, it gets the frame without
	// history, compressed even if that does not make the message smaller:
	// the stream took the message into its window, so c's window must take
	// it too, and only a compressed message enters an inflater's window.
	// Sent uncompressed, the message would leave c's window behind the
	// stream's, and c's catch-up would have to start again after it (with
	// one message in seven incompressible, no connection ever caught up).
	// The price is a stored block's few bytes over the plain frame.
	if inStep {
		s.seq, s.acc = m.seq, s.acc+len(m.payload)
	} else {
		*s = syncState{stream: m.stream, seq: m.seq, acc: len(m.payload)}
	}
	return m.deflatedFrame()
}
