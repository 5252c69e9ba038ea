package zipline

import (
	"fmt"
	"strconv"

	"github.com/ziplinekv/zipline/codec"
)

// A Client's compression at work: compressing the arguments that are
// stored values and expanding replies, in the caller's goroutine.

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
