// Package wsproto is the WebSocket wire format (RFC 6455) and its
// permessage-deflate extension (RFC 7692), shared by the fanout hub and its
// client: frame headers, masking, close payloads, the opening handshake's
// key and extension headers, and a bounded message reader.
//
// It knows nothing of connections or goroutines; every function works on
// bytes or on an io.Reader, so it can be fuzzed on its own.
package wsproto

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Opcode is a frame's opcode.
type Opcode byte

// Opcodes defined by RFC 6455. The others are reserved and refused.
const (
	OpContinuation Opcode = 0x0
	OpText         Opcode = 0x1
	OpBinary       Opcode = 0x2
	OpClose        Opcode = 0x8
	OpPing         Opcode = 0x9
	OpPong         Opcode = 0xA
)

// IsControl reports whether op is a control opcode (close, ping, pong).
func (op Opcode) IsControl() bool { return op&0x8 != 0 }

func (op Opcode) String() string {
	switch op {
	case OpContinuation:
		return "continuation"
	case OpText:
		return "text"
	case OpBinary:
		return "binary"
	case OpClose:
		return "close"
	case OpPing:
		return "ping"
	case OpPong:
		return "pong"
	}
	return fmt.Sprintf("opcode(%#x)", byte(op))
}

// MaxHeaderLen is the longest frame header: 2 bytes, an 8-byte length and a
// 4-byte mask key.
const MaxHeaderLen = 14

// MaxControlPayload is the largest payload a control frame may carry.
const MaxControlPayload = 125

// Header is a decoded frame header.
type Header struct {
	Fin    bool
	RSV1   bool // "compressed" on the first frame of a message under permessage-deflate
	Opcode Opcode
	Masked bool
	Mask   [4]byte
	Length int64 // payload length
}

// ProtocolError is a violation of RFC 6455 or 7692 by the peer. Code is the
// close code to answer it with.
type ProtocolError struct {
	Code   uint16
	Reason string
}

func (e *ProtocolError) Error() string { return "websocket: " + e.Reason }

func protocolError(code uint16, format string, args ...any) error {
	return &ProtocolError{Code: code, Reason: fmt.Sprintf(format, args...)}
}

// Close codes (RFC 6455 section 7.4.1).
const (
	CloseNormal          uint16 = 1000
	CloseGoingAway       uint16 = 1001
	CloseProtocolError   uint16 = 1002
	CloseUnsupported     uint16 = 1003
	CloseNoStatus        uint16 = 1005 // never sent: no code in the close frame
	CloseAbnormal        uint16 = 1006 // never sent: the connection dropped
	CloseInvalidPayload  uint16 = 1007
	ClosePolicyViolation uint16 = 1008
	CloseTooBig          uint16 = 1009
	CloseInternalError   uint16 = 1011
)

// ReadHeader reads one frame header from r into h, using buf as scratch. It
// checks what can be checked from the header alone: no RSV2 or RSV3, no
// reserved opcode, control frames final and at most 125 bytes, a 64-bit
// length below 2^63, and masking as the receiver expects (wantMasked: a
// server reads masked frames, a client unmasked ones). RSV1 is returned for
// the caller to judge, since it depends on the negotiated extensions.
func ReadHeader(r io.Reader, buf *[MaxHeaderLen]byte, wantMasked bool) (Header, error) {
	var h Header
	if _, err := io.ReadFull(r, buf[:2]); err != nil {
		return h, err
	}
	b0, b1 := buf[0], buf[1]
	h.Fin = b0&0x80 != 0
	h.RSV1 = b0&0x40 != 0
	h.Opcode = Opcode(b0 & 0x0f)
	h.Masked = b1&0x80 != 0
	if b0&0x30 != 0 {
		return h, protocolError(CloseProtocolError, "reserved bits RSV2/RSV3 set")
	}
	switch h.Opcode {
	case OpContinuation, OpText, OpBinary, OpClose, OpPing, OpPong:
	default:
		return h, protocolError(CloseProtocolError, "reserved %v", h.Opcode)
	}
	if h.Masked != wantMasked {
		if wantMasked {
			return h, protocolError(CloseProtocolError, "unmasked frame from a client")
		}
		return h, protocolError(CloseProtocolError, "masked frame from a server")
	}
	n := int(b1 & 0x7f)
	extra := 0
	switch n {
	case 126:
		extra = 2
	case 127:
		extra = 8
	}
	if h.Masked {
		extra += 4
	}
	if extra > 0 {
		if _, err := io.ReadFull(r, buf[2:2+extra]); err != nil {
			return h, unexpected(err)
		}
	}
	p := buf[2:]
	switch n {
	case 126:
		h.Length = int64(binary.BigEndian.Uint16(p))
		p = p[2:]
	case 127:
		v := binary.BigEndian.Uint64(p)
		if v>>63 != 0 {
			return h, protocolError(CloseProtocolError, "payload length has its most significant bit set")
		}
		h.Length = int64(v)
		p = p[8:]
	default:
		h.Length = int64(n)
	}
	if h.Masked {
		copy(h.Mask[:], p[:4])
	}
	if h.Opcode.IsControl() {
		if !h.Fin {
			return h, protocolError(CloseProtocolError, "fragmented %v frame", h.Opcode)
		}
		if h.Length > MaxControlPayload {
			return h, protocolError(CloseProtocolError, "%v frame of %d bytes (at most 125)", h.Opcode, h.Length)
		}
		if h.RSV1 {
			return h, protocolError(CloseProtocolError, "RSV1 set on a %v frame", h.Opcode)
		}
	}
	return h, nil
}

// unexpected turns io.EOF inside a frame into io.ErrUnexpectedEOF.
func unexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// AppendHeader appends a frame header: fin, rsv1 ("compressed"), the opcode,
// the payload length and, if mask is not nil, the mask key (clients mask,
// servers do not).
func AppendHeader(dst []byte, fin, rsv1 bool, op Opcode, length int, mask *[4]byte) []byte {
	b0 := byte(op)
	if fin {
		b0 |= 0x80
	}
	if rsv1 {
		b0 |= 0x40
	}
	var m byte
	if mask != nil {
		m = 0x80
	}
	switch {
	case length <= 125:
		dst = append(dst, b0, m|byte(length))
	case length <= 0xffff:
		dst = append(dst, b0, m|126)
		dst = binary.BigEndian.AppendUint16(dst, uint16(length))
	default:
		dst = append(dst, b0, m|127)
		dst = binary.BigEndian.AppendUint64(dst, uint64(length))
	}
	if mask != nil {
		dst = append(dst, mask[:]...)
	}
	return dst
}

// HeaderLen is the length of a server (unmasked) frame header for a payload
// of n bytes.
func HeaderLen(n int) int {
	switch {
	case n <= 125:
		return 2
	case n <= 0xffff:
		return 4
	}
	return 10
}

// Mask XORs b with key, starting at offset pos of the payload, and returns
// the offset after b. Masking twice unmasks.
func Mask(key [4]byte, pos int, b []byte) int {
	k := binary.LittleEndian.Uint32(key[:])
	if r := pos & 3; r != 0 {
		k = k>>(8*r) | k<<(32-8*r)
	}
	i := 0
	if len(b) >= 8 {
		k64 := uint64(k) | uint64(k)<<32
		for ; i+8 <= len(b); i += 8 {
			binary.LittleEndian.PutUint64(b[i:], binary.LittleEndian.Uint64(b[i:])^k64)
		}
	}
	for ; i < len(b); i++ {
		b[i] ^= byte(k)
		k = k>>8 | k<<24
	}
	return pos + len(b)
}

// AppendClose appends a close frame's payload: the code and a reason cut
// to fit the 125-byte limit. Code 0 appends nothing (a close without status).
func AppendClose(dst []byte, code uint16, reason string) []byte {
	if code == 0 {
		return dst
	}
	dst = binary.BigEndian.AppendUint16(dst, code)
	if len(reason) > MaxControlPayload-2 {
		reason = reason[:MaxControlPayload-2]
	}
	return append(dst, reason...)
}

// ParseClose decodes a close frame's payload. An empty payload is
// CloseNoStatus. A one-byte payload, a code that may not be sent, or a
// reason that is not UTF-8 is a protocol error.
func ParseClose(p []byte) (code uint16, reason string, err error) {
	switch len(p) {
	case 0:
		return CloseNoStatus, "", nil
	case 1:
		return 0, "", protocolError(CloseProtocolError, "close frame with a one-byte payload")
	}
	code = binary.BigEndian.Uint16(p)
	if !validCloseCode(code) {
		return 0, "", protocolError(CloseProtocolError, "close code %d may not be sent", code)
	}
	if !validUTF8(p[2:]) {
		return 0, "", protocolError(CloseInvalidPayload, "close reason is not UTF-8")
	}
	return code, string(p[2:]), nil
}

// validCloseCode reports whether a peer may send close code c: one of
// IANA's WebSocket Close Code Number Registry under RFC 6455 (1000-1003,
// and 1007-1014: 1012 service restart, 1013 try again later, 1014 bad
// gateway), or one of the ranges for libraries and applications
// (3000-4999). 1004 is reserved, 1005, 1006 and 1015 must never be sent,
// and the rest of 1000-2999 is unassigned.
func validCloseCode(c uint16) bool {
	switch {
	case c >= 1000 && c <= 1003, c >= 1007 && c <= 1014, c >= 3000 && c <= 4999:
		return true
	}
	return false
}
