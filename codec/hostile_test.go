package codec

import (
	"bytes"
	"encoding/binary"
)

// Hostile values, built by hand so that they are tiny, deterministic and
// cheap to make: a few hundred KiB that expand to a GiB.

// zstdFullBlock is one compressed zstd block that decodes to 128 KiB of 'A'
// (the most a block holds): one raw literal 'A', then one sequence whose
// three codes are RLE-coded (so its bitstream holds only the match length's
// 16 extra bits), a match of 131071 bytes at repeat offset 1.
var zstdFullBlock = []byte{
	0x08, 'A', // literals: raw, 1 byte
	0x01,             // 1 sequence
	0x54,             // literal length, offset and match length codes all RLE
	0x01, 0x00, 0x34, // literal length 1; offset code 0 (repeat offset 1); match length code 52
	0xfc, 0xff, 0x01, // match length 65539 + 0xfffc = 131071; end marker
}

// zstdTinyBlock is a compressed block that decodes to 4 bytes of 'A' (a
// literal and a match of 3) but, like every compressed block, might decode
// to 128 KiB as far as its header tells: it makes a frame's bound overstate
// its output.
var zstdTinyBlock = []byte{0x08, 'A', 0x01, 0x54, 0x01, 0x00, 0x00, 0x01}

// zstdTestBlockMax is the most a zstd block decodes to.
const zstdTestBlockMax = 128 << 10

// zstdWindow2M, zstdWindow8M and zstdWindow128M are window descriptors.
const (
	zstdWindow2M   = 11 << 3
	zstdWindow8M   = 13 << 3
	zstdWindow128M = 17 << 3
)

// zstdHostileFrame returns a zstd frame with window descriptor wd, without
// content size if fcs < 0 and with fcs as an 8-byte content size otherwise,
// whose blocks are tiny zstdTinyBlocks followed by full zstdFullBlocks.
func zstdHostileFrame(wd byte, fcs int64, tiny, full int) []byte {
	b := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, wd}
	if fcs >= 0 {
		b[4] = 3 << 6
		b = binary.LittleEndian.AppendUint64(b, uint64(fcs))
	}
	for i := range tiny + full {
		blk := zstdFullBlock
		if i < tiny {
			blk = zstdTinyBlock
		}
		h := uint32(len(blk))<<3 | 2<<1 // compressed
		if i == tiny+full-1 {
			h |= 1 // last
		}
		b = append(b, byte(h), byte(h>>8), byte(h>>16))
		b = append(b, blk...)
	}
	return b
}

// zstdHostilePlain is what zstdHostileFrame(_, _, tiny, full) decodes to.
func zstdHostilePlain(tiny, full int) []byte {
	return bytes.Repeat([]byte("A"), 4*tiny+zstdTestBlockMax*full)
}

// envelope prefixes a payload with the header of backend b.
func envelope(b Backend, payload ...[]byte) []byte {
	out := []byte{0, 1, 2, 0, byte(b)}
	for _, p := range payload {
		out = append(out, p...)
	}
	return out
}

// lz4Expanding returns an LZ4 payload (size field and block) declaring
// declared bytes, whose block holds one literal 'A' and then matches at
// offset 1, each a few bytes long and of up to about 1 MiB, until they add
// up to expand bytes (at least 5). It ends with a match, which pierrec/lz4
// accepts. If bad, a match at offset 0 follows, which is invalid: the
// block is garbage, but only at its very end.
func lz4Expanding(declared, expand int, bad bool) []byte {
	const longest = 4 + 15 + 255*4096
	b := binary.LittleEndian.AppendUint32(nil, uint32(declared))
	for left, first := expand-1, true; left > 0; first = false {
		n := min(left, longest)
		if r := left - n; r > 0 && r < 4 {
			n = left - 4 // leave room for a whole match
		}
		tok := byte(min(n-4, 15))
		if first {
			tok |= 0x10 // one literal
		}
		b = append(b, tok)
		if first {
			b = append(b, 'A')
		}
		b = append(b, 1, 0) // offset 1
		if r := n - 4 - 15; r >= 0 {
			for ; r >= 255; r -= 255 {
				b = append(b, 0xff)
			}
			b = append(b, byte(r))
		}
		left -= n
	}
	if bad {
		b = append(b, 0x04, 0, 0) // a match of 8 at offset 0
	}
	return b
}
