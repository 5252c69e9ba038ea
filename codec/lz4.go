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
	out := slices.Grow(dst, size)
	// Exactly the declared length, as GLIDE 2.6.0 requires: a block that
	// needs more room fails, one that fills less is caught by the count.
	got, err := lz4.UncompressBlock(block, out[len(dst):len(dst)+size])
	if err != nil || got != size {
		return dst, errInvalid
	}
	return out[:len(dst)+size], nil
}
