package codec

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/pierrec/lz4/v4"
)

// GLIDE's LZ4 payload is the plaintext length as a little-endian uint32,
// then one raw LZ4 block (not the LZ4 frame format).
const lz4SizeLen = 4

// lz4MaxRatio bounds the expansion of an LZ4 block: a byte of input yields at
// most 255 bytes of output (a match length extension byte). A declared length
// beyond it cannot be exact, so it is rejected before allocating.
const lz4MaxRatio = 255

// lz4MinMatch is the shortest LZ4 match; a token stores the length minus it.
const lz4MinMatch = 4

// lz4CheckRatio: Decode checks an LZ4 block (lz4BlockLen) before it
// allocates the block's declared length when that length is more than this
// many times the block. The check visits every sequence, one after the
// other, as decoding does, at about 1 ns per byte of block: for 1 MiB of
// JSON-like text that LZ4 shrinks 2.4 times it adds 60% to decoding into
// new memory, at 4.5 times 37%, at 16.6 times 8%, at 54 times 2%. And
// expansion is what a hostile value needs to make Decode allocate much more
// memory than it sends (510 MiB from 2.1 MiB): a block that declares less
// makes Decode allocate at most 16 times its size, as a valid block of
// that size does.
const lz4CheckRatio = 16

// lz4HCDepth is the search depth of each high-compression level: liblz4's
// maxNbAttempts for levels 1-9. liblz4's levels 10-12 switch to optimal
// parsing, which pierrec/lz4 lacks; a greedy search that deep gains little
// (under 0.2% on JSON, 4-8% on low-entropy binary) for much time (about
// 2 s per MiB at depth 4096 on the latter), so they go only up to 2048.
var lz4HCDepth = [LZ4MaxLevel + 1]lz4.CompressionLevel{0, 2, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048}

// Compressors hold 16-256 KiB of tables and are not safe for concurrent use,
// so each call borrows one.
var (
	lz4CCompatPool = sync.Pool{New: func() any { return new(lz4.CompressorCCompat) }}
	lz4HCPool      = sync.Pool{New: func() any { return new(lz4.CompressorHC) }}
)

type lz4Compressor struct {
	level int
}

func newLZ4Compressor(level int) compressor { return lz4Compressor{level: level} }

// bound: the payload is only worth keeping if it is shorter than the input,
// so the block is compressed into at most that much room. liblz4 takes at
// most LZ4_MAX_INPUT_SIZE and GLIDE rejects inputs over i32::MAX; such
// values are stored as is.
func (c lz4Compressor) bound(n int) int {
	if int64(n) > math.MaxInt32 {
		return -1
	}
	return n
}

func (c lz4Compressor) compress(dst, src []byte, limit int) ([]byte, bool) {
	if int64(len(src)) > math.MaxInt32 || limit <= lz4SizeLen || cap(dst)-len(dst) < limit {
		return dst, false
	}
	start := len(dst)
	block := dst[start+lz4SizeLen : start+limit]
	n, err := c.compressBlock(src, block)
	if err != nil || n <= 0 { // 0: does not fit, so not worth it
		return dst, false
	}
	binary.LittleEndian.PutUint32(dst[start:start+lz4SizeLen], uint32(len(src)))
	return dst[:start+lz4SizeLen+n], true
}

func (c lz4Compressor) compressBlock(src, dst []byte) (int, error) {
	switch {
	case c.level <= 0:
		z := lz4CCompatPool.Get().(*lz4.CompressorCCompat)
		z.Acceleration = max(-c.level, 1) // 0 is LZ4_compress_default: acceleration 1
		n, err := z.CompressBlock(src, dst)
		lz4CCompatPool.Put(z)
		return n, err
	default:
		z := lz4HCPool.Get().(*lz4.CompressorHC)
		z.Level = lz4HCDepth[c.level]
		n, err := z.CompressBlock(src, dst)
		lz4HCPool.Put(z)
		return n, err
	}
}

type lz4Decompressor struct {
	limit int64
}

func (d lz4Decompressor) decompress(dst, payload []byte) ([]byte, error) {
	// GLIDE requires the size field; liblz4 rejects an empty block.
	if len(payload) <= lz4SizeLen {
		return dst, errInvalid
	}
	n := int64(binary.LittleEndian.Uint32(payload))
	block := payload[lz4SizeLen:]
	if n > d.limit {
		return dst, fmt.Errorf("%w: lz4 block declares %d bytes, the limit is %d", ErrTooLarge, n, d.limit)
	}
	if n > lz4MaxRatio*int64(len(block)) {
		return dst, errInvalid
	}
	if n == 0 {
		// liblz4 decodes to nothing only the lone token 0x00. This also
		// keeps a nil dst from pierrec/lz4's amd64 decoder, which (v4.1.33)
		// faults on a nil dst shorter than 32 bytes.
		if len(block) == 1 && block[0] == 0 {
			return dst, nil
		}
		return dst, errInvalid
	}
	size := int(n)
	// A block that does not decode to exactly the declared length is
	// invalid. When the plaintext needs new memory and the block declares
	// more than lz4CheckRatio times its size, the block's structure is
	// checked first, so that a hostile value never makes Decode allocate
	// (and pierrec/lz4 fill) up to the limit only to find garbage. Into
	// dst's own spare capacity, or for a block that declares less, the
	// decoder writes directly, and finds the same faults.
	if cap(dst)-len(dst) < size && n > lz4CheckRatio*int64(len(block)) && lz4BlockLen(block, size) != size {
		return dst, errInvalid
	}
	out := slices.Grow(dst, size)
	// Exactly the declared length, as GLIDE 2.6.0 requires: a block that
	// needs more room fails, one that fills less is caught by the count.
	got, err := lz4.UncompressBlock(block, out[len(dst):len(dst)+size])
	if err != nil || got != size {
		return dst, errInvalid
	}
	return out[:len(dst)+size], nil
}

// lz4BlockLen returns the length that the raw LZ4 block decodes to, or -1
// if the block is malformed or decodes to more than max bytes. It walks the
// sequences (token, literal length, literals, offset, match length) without
// writing anything, and rejects, as pierrec/lz4's decoder does:
//
//   - a length field, literal run or offset that runs past the block;
//   - a token with a match length after the last literals;
//   - an offset of 0, or one that reaches before the start of the output
//     (the block has no dictionary);
//   - output beyond max, which also keeps the sums from overflowing.
//
// Like pierrec/lz4 (and unlike liblz4) it accepts a block that ends with a
// match. Every block pierrec/lz4 decodes to n <= max bytes yields n here,
// so checking first changes no result (TestLZ4BlockLenAgreesWithPierrec,
// FuzzDecode). Should pierrec/lz4 refuse a block that this accepts, Decode
// finds it while decoding, as before.
func lz4BlockLen(block []byte, max int) int {
	si, di := 0, 0
	for si < len(block) {
		token := block[si]
		si++
		if lit := int(token >> 4); lit > 0 {
			if lit == 0xF {
				for {
					if si >= len(block) {
						return -1
					}
					x := block[si]
					si++
					if lit += int(x); lit > max {
						return -1
					}
					if x != 0xFF {
						break
					}
				}
			}
			if lit > len(block)-si || lit > max-di {
				return -1
			}
			si += lit
			di += lit
		}
		match := int(token & 0xF)
		if si == len(block) && match == 0 {
			break // the last literals
		}
		if len(block)-si < 2 {
			return -1
		}
		offset := int(block[si]) | int(block[si+1])<<8
		si += 2
		if offset == 0 || offset > di {
			return -1
		}
		match += lz4MinMatch
		if match == 0xF+lz4MinMatch {
			for {
				if si >= len(block) {
					return -1
				}
				x := block[si]
				si++
				if match += int(x); match > max {
					return -1
				}
				if x != 0xFF {
					break
				}
			}
		}
		if match > max-di {
			return -1
		}
		di += match
	}
	return di
}
