package codec

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"sync"
	"unsafe"

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

// bound: the length field and the worst case of a block
// (lz4.CompressBlockBound), so that the compressors write without checking
// that the output fits; a payload is kept only if it is shorter than the
// input. liblz4 takes at most LZ4_MAX_INPUT_SIZE and GLIDE rejects inputs
// over i32::MAX; such values are stored as is.
func (c lz4Compressor) bound(n int) int {
	b := lz4SizeLen + int64(lz4.CompressBlockBound(n))
	if int64(n) > math.MaxInt32 || b > math.MaxInt {
		return -1
	}
	return int(b)
}

func (c lz4Compressor) compress(dst, src []byte, limit int) ([]byte, bool) {
	if int64(len(src)) > math.MaxInt32 || limit <= lz4SizeLen || cap(dst)-len(dst) < limit {
		return dst, false
	}
	start := len(dst)
	// With room for the worst case, the compressors skip their checks
	// that the output fits, one per literal run and match.
	end := start + limit
	if room := start + c.bound(len(src)); room <= cap(dst) {
		end = room
	}
	block := dst[start+lz4SizeLen : end]
	n, err := c.compressBlock(src, block)
	if err != nil || n <= 0 || n > limit-lz4SizeLen { // 0: does not fit, so not worth it
		return dst, false
	}
	binary.LittleEndian.PutUint32(dst[start:start+lz4SizeLen], uint32(len(src)))
	return dst[:start+lz4SizeLen+n], true
}

func (c lz4Compressor) compressBlock(src, dst []byte) (int, error) {
	switch {
	case c.level <= 0 && len(src) < lz4U16Limit && len(dst) >= lz4.CompressBlockBound(len(src)):
		t := lz4Fast16Pool.Get().(*lz4Table16)
		n := compressFast16(t, src, dst, max(-c.level, 1))
		lz4Fast16Pool.Put(t)
		return n, nil
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

// The fast compressor for blocks under 64 KiB: LZ4_compress_fast of liblz4
// with its byU16 table, as pierrec/lz4's CompressorCCompat ports it, and
// writing the same bytes, but specialised for that table: the hash is a
// constant 32-bit multiply, and the distance check (never true for such
// inputs) is gone. It needs an output of lz4.CompressBlockBound bytes, so
// that it checks nothing as it writes. Names follow lz4.c.
const (
	lz4HashLog16    = 13          // LZ4_HASHLOG + 1, for byU16
	lz4MFLimit      = 12          // MFLIMIT
	lz4MinLength    = 13          // LZ4_minLength
	lz4LastLiterals = 5           // LASTLITERALS
	lz4SkipTrigger  = 6           // LZ4_skipTrigger
	lz4U16Limit     = 64<<10 + 11 // LZ4_64Klimit: shorter inputs use the byU16 table
)

// lz4Table16 is the byU16 hash table: positions of 4-byte sequences.
type lz4Table16 [1 << lz4HashLog16]uint16

// lz4Hash4 is LZ4_hash4 for byU16.
func lz4Hash4(v uint32) uint32 { return v * 2654435761 >> (32 - lz4HashLog16) }

// lz4Fast16Pool holds the tables of compressFast16 (16 KiB each).
var lz4Fast16Pool = sync.Pool{New: func() any { return new(lz4Table16) }}

// compressFast16 compresses src, shorter than lz4U16Limit, into dst, of at
// least lz4.CompressBlockBound(len(src)) bytes, with the given acceleration
// (at least 1), and returns the block's length.
func compressFast16(t *lz4Table16, src, dst []byte, acceleration int) int {
	*t = lz4Table16{}
	var (
		n              = len(src)
		anchor, ip, di int
		mfLimitPlusOne = n - lz4MFLimit + 1
		matchLimit     = n - lz4LastLiterals
		forwardH       uint32
		match, token   int
		lastRun        int
	)
	if n < lz4MinLength {
		goto lastLiterals
	}
	_ = dst[lz4.CompressBlockBound(n)-1]

	t[lz4Hash4(le32(src, 0))] = 0
	ip = 1
	forwardH = lz4Hash4(le32(src, ip))
	for {
		// Find a match.
		{
			forwardIP := ip
			step := 1
			searchMatchNb := acceleration << lz4SkipTrigger
			for {
				h := forwardH
				cur := forwardIP
				ip = forwardIP
				forwardIP += step
				step = searchMatchNb >> lz4SkipTrigger
				searchMatchNb++
				if forwardIP > mfLimitPlusOne {
					goto lastLiterals
				}
				match = int(t[h&(1<<lz4HashLog16-1)])
				forwardH = lz4Hash4(le32(src, forwardIP))
				t[h] = uint16(cur)
				if le32(src, match) == le32(src, cur) {
					break
				}
			}
		}

		// Catch up.
		for ip > anchor && match > 0 && at(src, ip-1) == at(src, match-1) {
			ip--
			match--
		}

		// Encode literals.
		{
			litLength := ip - anchor
			token = di
			di++
			if litLength >= 0xF {
				put8(dst, token, 0xF0)
				l := litLength - 0xF
				for ; l >= 0xFF; l -= 0xFF {
					put8(dst, di, 0xFF)
					di++
				}
				put8(dst, di, byte(l))
				di++
			} else {
				put8(dst, token, byte(litLength<<4))
			}
			// LZ4_wildCopy8: up to 7 bytes past the literals, which the
			// rest of the output overwrites (the bound leaves room).
			for i := 0; i < litLength; i += 8 {
				put64(dst, di+i, le64(src, anchor+i))
			}
			di += litLength
		}

	nextMatch:
		// Encode the offset, then the match length.
		{
			offset := ip - match
			put8(dst, di, byte(offset))
			put8(dst, di+1, byte(offset>>8))
			di += 2
			matchCode := lz4Count(src, ip+lz4MinMatch, match+lz4MinMatch, matchLimit)
			ip += matchCode + lz4MinMatch
			if matchCode >= 0xF {
				put8(dst, token, at(dst, token)+0xF)
				matchCode -= 0xF
				for ; matchCode >= 0xFF; matchCode -= 0xFF {
					put8(dst, di, 0xFF)
					di++
				}
				put8(dst, di, byte(matchCode))
				di++
			} else {
				put8(dst, token, at(dst, token)+byte(matchCode))
			}
		}
		anchor = ip

		if ip >= mfLimitPlusOne {
			break
		}
		// Fill the table.
		t[lz4Hash4(le32(src, ip-2))] = uint16(ip - 2)

		// Test the next position.
		{
			v := le32(src, ip)
			h := lz4Hash4(v)
			m := int(t[h])
			t[h] = uint16(ip)
			if le32(src, m) == v {
				token = di
				put8(dst, di, 0)
				di++
				match = m
				goto nextMatch
			}
		}
		ip++
		forwardH = lz4Hash4(le32(src, ip))
	}

lastLiterals:
	lastRun = n - anchor
	if lastRun >= 0xF {
		put8(dst, di, 0xF0)
		di++
		acc := lastRun - 0xF
		for ; acc >= 0xFF; acc -= 0xFF {
			put8(dst, di, 0xFF)
			di++
		}
		put8(dst, di, byte(acc))
		di++
	} else {
		put8(dst, di, byte(lastRun<<4))
		di++
	}
	di += copy(dst[di:], src[anchor:])
	return di
}

// lz4Count is LZ4_count: the length of the common prefix of src[in:limit]
// and src[match:], match < in.
func lz4Count(src []byte, in, match, limit int) int {
	start := in
	for in+8 <= limit {
		if diff := le64(src, match) ^ le64(src, in); diff != 0 {
			return in + bits.TrailingZeros64(diff)>>3 - start
		}
		in += 8
		match += 8
	}
	if in+4 <= limit && le32(src, match) == le32(src, in) {
		in += 4
		match += 4
	}
	if in+2 <= limit && at(src, match) == at(src, in) && at(src, match+1) == at(src, in+1) {
		in += 2
		match += 2
	}
	if in < limit && at(src, match) == at(src, in) {
		in++
	}
	return in - start
}

// le32, le64 and put64 load and store little-endian words at b[i:]
// without bounds checks: compressFast16 and lz4Count stay within their
// slices, as lz4.c does (see their comments). The byte order is the
// machine's, little-endian on every platform Go's amd64 and arm64 ports
// run; lz4LittleEndian keeps others on the checked loads.
func le32(b []byte, i int) uint32 {
	if !lz4LittleEndian {
		return binary.LittleEndian.Uint32(b[i:])
	}
	return *(*uint32)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(b)), i))
}

func le64(b []byte, i int) uint64 {
	if !lz4LittleEndian {
		return binary.LittleEndian.Uint64(b[i:])
	}
	return *(*uint64)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(b)), i))
}

func put64(b []byte, i int, v uint64) {
	if !lz4LittleEndian {
		binary.LittleEndian.PutUint64(b[i:], v)
		return
	}
	*(*uint64)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(b)), i)) = v
}

func put8(b []byte, i int, v byte) {
	*(*byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(b)), i)) = v
}

func at(b []byte, i int) byte {
	return *(*byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(b)), i))
}

// lz4LittleEndian: unaligned little-endian loads are native.
const lz4LittleEndian = runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64" || runtime.GOARCH == "386" ||
	runtime.GOARCH == "riscv64" || runtime.GOARCH == "loong64" || runtime.GOARCH == "ppc64le" || runtime.GOARCH == "wasm"
