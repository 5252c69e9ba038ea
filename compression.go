package zipline

import (
	"fmt"
	"strconv"

	"github.com/ziplinekv/zipline/codec"
)

// valueFamily is the command family a stored value belongs to, which
// decides whether compression applies to it.
type valueFamily uint8

const (
	familyNone valueFamily = iota // the command carries no stored values
	familyStrings
	familyHashes
	familyLists
	familyPubSub
)

// valueCodec is a Client's compression: the codec and the families on.
type valueCodec struct {
	c        *codec.Codec
	families Families
}

func newValueCodec(cfg Compression) (*valueCodec, error) {
	c, err := cfg.Codec()
	if err != nil {
		return nil, fmt.Errorf("zipline: Options.Compression: %w", err)
	}
	if c == nil {
		return nil, nil
	}
	return &valueCodec{c: c, families: cfg.Families}, nil
}

func (vc *valueCodec) covers(f valueFamily) bool {
	switch f {
	case familyHashes:
		return vc.families&Hashes != 0
	case familyLists:
		return vc.families&Lists != 0
	case familyPubSub:
		return vc.families&PubSub != 0
	}
	return true
}

// maxBulkHeader is the longest "$<len>\r\n" for a value up to 4 GiB.
const maxBulkHeader = len("$4294967296\r\n")

// appendValue appends val as a bulk string, compressed. It compresses
// straight into dst: the payload is written after room for the longest
// header, then slid back behind the real one, so no scratch buffer is
// needed.
func (vc *valueCodec) appendValue(dst []byte, val []byte) []byte {
	start := len(dst)
	out, _ := vc.c.Encode(append(dst, make([]byte, maxBulkHeader)...)[:start+maxBulkHeader], val)
	n := len(out) - start - maxBulkHeader
	var hdr [maxBulkHeader]byte
	h := append(strconv.AppendInt(append(hdr[:0], '$'), int64(n), 10), '\r', '\n')
	copy(out[start+len(h):], out[start+maxBulkHeader:])
	copy(out[start:], h)
	return append(out[:start+len(h)+n], '\r', '\n')
}

// decodeValue turns a stored value back into what the application wrote:
// it expands a GLIDE-compressed value and passes anything else through. It
// runs on the caller's goroutine, never in the connection's loops.
func (vc *valueCodec) decodeValue(b []byte) ([]byte, error) {
	if !codec.IsCompressed(b) {
		return b, nil
	}
	return vc.c.Decode(nil, b)
}

// DecodeValue returns what the application wrote from bytes a value was
// stored (or a message published) as: it expands a GLIDE envelope with the
// Client's codec and returns anything else unchanged. Commands expand their
// replies themselves; use it for bytes that reach the application another
// way, such as pub/sub messages received on a subscriber connection. It is
// the identity when compression is off.
func (c *Client) DecodeValue(b []byte) ([]byte, error) {
	if c.s.codec == nil {
		return b, nil
	}
	return c.s.codec.decodeValue(b)
}

// CompressionStats counts what compression did on this Client.
type CompressionStats struct {
	Compressed   uint64 // values stored compressed
	Skipped      uint64 // values stored as is: too small, already compressed, or not smaller
	BytesIn      uint64 // plaintext bytes of the compressed values
	BytesOut     uint64 // stored bytes of the compressed values, headers included
	Decompressed uint64 // values expanded on read
	Invalid      uint64 // values with a compression header that did not decode, returned as stored
}

// Ratio is BytesOut / BytesIn: the stored fraction of compressed values
// (0.4 means 60 % saved). It is 0 before anything was compressed.
func (s CompressionStats) Ratio() float64 {
	if s.BytesIn == 0 {
		return 0
	}
	return float64(s.BytesOut) / float64(s.BytesIn)
}

// CompressionStats returns the Client's compression counters, which are
// zero when compression is off.
func (c *Client) CompressionStats() CompressionStats {
	if c.s.codec == nil {
		return CompressionStats{}
	}
	st := c.s.codec.c.Stats()
	return CompressionStats{
		Compressed: st.Compressed, Skipped: st.Skipped, BytesIn: st.BytesIn, BytesOut: st.BytesOut,
		Decompressed: st.Decompressed, Invalid: st.Invalid,
	}
}

// Raw returns a Client that shares c's connection but writes and reads
// values as they are, without compression: to store one value raw, or to
// look at the stored bytes of a compressed one. It is cheap; keep it or make
// it per call.
func (c *Client) Raw() *Client {
	r := *c
	r.codec = nil
	return &r
}
