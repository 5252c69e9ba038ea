package wsproto

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"unicode/utf8"

	"github.com/klauspost/compress/flate"
)

// CloseError is the peer's close frame, returned by Reader.ReadMessage.
type CloseError struct {
	Code   uint16
	Reason string
}

func (e *CloseError) Error() string {
	if e.Reason == "" {
		return fmt.Sprintf("websocket: closed by peer (%d)", e.Code)
	}
	return fmt.Sprintf("websocket: closed by peer (%d %s)", e.Code, e.Reason)
}

// ErrTooBig is matched by the error for a message over Reader.MaxMessage,
// on the wire or decompressed.
var ErrTooBig = errors.New("websocket: message too big")

// WindowSize is the LZ77 window of permessage-deflate at 15 bits.
const WindowSize = 1 << 15

// deflateTail ends a compressed message for the inflater: the sync-flush
// marker the sender stripped, then an empty final stored block, so that the
// inflater reports io.EOF at the end of the message.
var deflateTail = []byte{0x00, 0x00, 0xff, 0xff, 0x01, 0x00, 0x00, 0xff, 0xff}

// A Reader reads whole messages from a connection, answering nothing
// itself: control frames go to Control, and a close frame ends the stream
// with a *CloseError. Memory is bounded by MaxMessage (the assembled
// payload, and again its decompressed form) plus, with Takeover, one
// 32 KiB window.
type Reader struct {
	R io.Reader
	// Masked is true when reading a client's frames, which must be masked.
	Masked bool
	// MaxMessage is the largest message accepted, in bytes, both as
	// received and decompressed. It must be positive.
	MaxMessage int64
	// Deflate is true when permessage-deflate was negotiated: RSV1 on a
	// message's first frame then marks it compressed.
	Deflate bool
	// Takeover keeps the inflater's window from one message to the next,
	// as the sender's context takeover requires. Without it each message
	// is inflated alone.
	Takeover bool
	// Control, if not nil, receives ping and pong payloads (valid only
	// during the call). An error from it ends ReadMessage.
	Control func(op Opcode, payload []byte) error

	hdr    [MaxHeaderLen]byte
	ctl    [MaxControlPayload]byte // a control frame's payload: no allocation per ping
	window []byte                  // with Takeover: the last WindowSize bytes inflated
}

// ReadMessage reads the next data message and returns its opcode (OpText
// or OpBinary) and payload, which the caller owns. Errors: a
// *ProtocolError (with the close code to answer), one matching ErrTooBig, a
// *CloseError when the peer closed, or the reader's own error.
func (r *Reader) ReadMessage() (Opcode, []byte, error) {
	var (
		op         Opcode
		payload    []byte
		compressed bool
		started    bool
	)
	for {
		h, err := ReadHeader(r.R, &r.hdr, r.Masked)
		if err != nil {
			if started {
				err = unexpected(err)
			}
			return 0, nil, err
		}
		if h.Opcode.IsControl() {
			if err := r.control(h); err != nil {
				return 0, nil, err
			}
			continue
		}
		if !started {
			if h.Opcode == OpContinuation {
				return 0, nil, protocolError(CloseProtocolError, "continuation frame with no message to continue")
			}
			if h.RSV1 && !r.Deflate {
				return 0, nil, protocolError(CloseProtocolError, "RSV1 set without permessage-deflate")
			}
			op, compressed, started = h.Opcode, h.RSV1, true
		} else {
			if h.Opcode != OpContinuation {
				return 0, nil, protocolError(CloseProtocolError, "%v frame inside a fragmented message", h.Opcode)
			}
			if h.RSV1 {
				return 0, nil, protocolError(CloseProtocolError, "RSV1 set on a continuation frame")
			}
		}
		if int64(len(payload))+h.Length > r.MaxMessage {
			return 0, nil, fmt.Errorf("%w: more than %d bytes", ErrTooBig, r.MaxMessage)
		}
		payload, err = r.readPayload(payload, h)
		if err != nil {
			return 0, nil, err
		}
		if h.Fin {
			break
		}
	}
	if compressed {
		var err error
		if payload, err = r.inflate(payload); err != nil {
			return 0, nil, err
		}
	}
	if op == OpText && !utf8.Valid(payload) {
		return 0, nil, protocolError(CloseInvalidPayload, "text message is not UTF-8")
	}
	if payload == nil {
		payload = []byte{}
	}
	return op, payload, nil
}

// readPayload appends h's payload to dst, unmasked. The length was checked
// against MaxMessage, so the allocation is bounded.
func (r *Reader) readPayload(dst []byte, h Header) ([]byte, error) {
	start := len(dst)
	dst = grow(dst, int(h.Length), r.MaxMessage)
	if _, err := io.ReadFull(r.R, dst[start:]); err != nil {
		return nil, unexpected(err)
	}
	if h.Masked {
		Mask(h.Mask, 0, dst[start:])
	}
	return dst, nil
}

// grow extends b by n bytes. Its capacity at least doubles, up to limit
// (which len(b)+n does not exceed), so that a message that arrives in
// many small fragments is copied a few times in all, not once per
// fragment: in 1-byte fragments, a 64 KiB message took 65,536 copies
// averaging 32 KiB.
func grow(b []byte, n int, limit int64) []byte {
	if cap(b)-len(b) >= n {
		return b[:len(b)+n]
	}
	c := max(2*cap(b), len(b)+n, 512)
	if int64(c) > limit {
		c = max(int(limit), len(b)+n)
	}
	nb := make([]byte, len(b)+n, c)
	copy(nb, b)
	return nb
}

func (r *Reader) control(h Header) error {
	p, err := r.readPayload(r.ctl[:0], h)
	if err != nil {
		return err
	}
	if h.Opcode == OpClose {
		code, reason, err := ParseClose(p)
		if err != nil {
			return err
		}
		return &CloseError{Code: code, Reason: reason}
	}
	if r.Control != nil {
		return r.Control(h.Opcode, p)
	}
	return nil
}

// inflaters holds flate readers between messages: a reader holds a 32 KiB
// window, too much to keep per idle connection.
var inflaters sync.Pool

func (r *Reader) inflate(p []byte) ([]byte, error) {
	src := io.MultiReader(bytes.NewReader(p), bytes.NewReader(deflateTail))
	var dict []byte
	if r.Takeover {
		dict = r.window
	}
	fr, _ := inflaters.Get().(io.ReadCloser)
	if fr == nil {
		fr = flate.NewReaderDict(src, dict)
	} else if err := fr.(flate.Resetter).Reset(src, dict); err != nil {
		return nil, err
	}
	defer inflaters.Put(fr)
	var out bytes.Buffer
	n, err := out.ReadFrom(io.LimitReader(fr, r.MaxMessage+1))
	if err != nil {
		return nil, protocolError(CloseInvalidPayload, "inflating a message: %v", err)
	}
	if n > r.MaxMessage {
		return nil, fmt.Errorf("%w: inflates past %d bytes", ErrTooBig, r.MaxMessage)
	}
	if r.Takeover {
		r.window = appendWindow(r.window, out.Bytes())
	}
	return out.Bytes(), nil
}

// appendWindow appends b to the window w, keeping its last WindowSize bytes.
func appendWindow(w, b []byte) []byte {
	if len(b) >= WindowSize {
		return append(w[:0], b[len(b)-WindowSize:]...)
	}
	if keep := WindowSize - len(b); len(w) > keep {
		n := copy(w, w[len(w)-keep:])
		w = w[:n]
	}
	return append(w, b...)
}

func validUTF8(b []byte) bool { return utf8.Valid(b) }
