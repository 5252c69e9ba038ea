package zipline

import (
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/ziplinekv/zipline/codec"
)

// A Client's compression at work: compressing the arguments that are
// stored values and expanding replies, in the caller's goroutine.

// valueCodec is a Client's compression: the codec, the families on, and
// which keys are compressed (Compression.Rules).
type valueCodec struct {
	c        *codec.Codec // expands every read; compresses keys no rule matches
	families Families
	rules    []scopeRule // in order; nil: every key is compressed with c
	// writePlain: nothing is compressed on write (Compression.WritePlain).
	writePlain bool
}

// scopeRule is one of Compression.Rules, compiled.
type scopeRule struct {
	glob
	c *codec.Codec // nil: never compressed (Never)
}

func newValueCodec(cfg Compression) (*valueCodec, error) {
	c, err := cfg.Codec()
	if err != nil {
		return nil, fmt.Errorf("zipline: Options.Compression: %w", err)
	}
	if c == nil {
		if len(cfg.Rules) > 0 || cfg.WritePlain {
			return nil, errors.New("zipline: Options.Compression: Rules and WritePlain need a Backend")
		}
		return nil, nil
	}
	vc := &valueCodec{c: c, families: cfg.Families, writePlain: cfg.WritePlain}
	for i, r := range cfg.Rules {
		g, err := compileGlob(r.Pattern)
		if err != nil {
			return nil, fmt.Errorf("zipline: Options.Compression.Rules[%d]: pattern %q: %w", i, r.Pattern, err)
		}
		rule := scopeRule{glob: g}
		switch {
		case r.Never && (r.Backend != 0 || r.Level != 0 || r.MinSize != 0):
			return nil, fmt.Errorf("zipline: Options.Compression.Rules[%d]: a Never rule takes no Backend, Level or MinSize", i)
		case r.Never:
		case r.Backend == 0 && r.Level == 0 && r.MinSize == 0:
			rule.c = c
		default:
			own := cfg
			own.Rules = nil
			if r.Backend != 0 {
				own.Backend, own.Level = r.Backend, 0
			}
			if r.Level != 0 {
				own.Level = r.Level
			}
			if r.MinSize != 0 {
				own.MinSize = r.MinSize
			}
			if rule.c, err = own.Codec(); err != nil {
				return nil, fmt.Errorf("zipline: Options.Compression.Rules[%d]: %w", i, err)
			}
		}
		vc.rules = append(vc.rules, rule)
	}
	return vc, nil
}

// writer returns the codec that compresses values written under key, or
// nil if they are written plain.
func (vc *valueCodec) writer(key string) *codec.Codec {
	if vc.writePlain {
		return nil
	}
	for i := range vc.rules {
		if vc.rules[i].match(key) {
			return vc.rules[i].c
		}
	}
	return vc.c
}

// compresses reports whether key is in the compressed scope: whether its
// stored value may be compressed by this Client's rules (WritePlain or
// not, since others may write what this Client reads).
func (vc *valueCodec) compresses(key string) bool {
	for i := range vc.rules {
		if vc.rules[i].match(key) {
			return vc.rules[i].c != nil
		}
	}
	return true
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

// codecs returns every codec the Client compresses with, for its stats.
func (vc *valueCodec) codecs() []*codec.Codec {
	out := []*codec.Codec{vc.c}
	for _, r := range vc.rules {
		if r.c != nil && !slices.Contains(out, r.c) {
			out = append(out, r.c)
		}
	}
	return out
}

// maxBulkHeader is the longest "$<len>\r\n" for a value up to 4 GiB.
const maxBulkHeader = len("$4294967296\r\n")

// appendValue appends val as a bulk string, compressed with c. It
// compresses straight into dst: the payload is written after room for the
// longest header, then slid back behind the real one, so no scratch buffer
// is needed.
func appendValue(c *codec.Codec, dst []byte, val []byte) []byte {
	start := len(dst)
	out, _ := c.Encode(append(dst, make([]byte, maxBulkHeader)...)[:start+maxBulkHeader], val)
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
