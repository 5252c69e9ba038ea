package codec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// zstdMaxWindow is the largest zstd window Decode accepts, libzstd's default
// limit for streaming decompression (ZSTD_WINDOWLOG_LIMIT_DEFAULT, 2^27) that
// GLIDE's reader runs with. A frame asking for more is invalid, as in GLIDE.
const zstdMaxWindow = 128 << 20

// zstdEncoders holds one encoder per klauspost level, shared by every Codec
// that writes that level and created on first use. EncodeAll is safe for
// concurrent use; each encoder keeps zstdEncoderWorkers match finders.
var zstdEncoders [zstd.SpeedBestCompression + 1]struct {
	once sync.Once
	enc  *zstd.Encoder
	err  error
}

// zstdEncoderLevel maps a libzstd level onto a klauspost one (see WithLevel).
func zstdEncoderLevel(level int) zstd.EncoderLevel {
	if level == 0 { // libzstd: 0 selects the default level, 3
		level = DefaultZstdLevel
	}
	return zstd.EncoderLevelFromZstd(level)
}

// zstdEncoderWorkers is how many values of a level can be compressed at
// once: one per P, but the encoder builds all its match finders on first
// use, and above the default level each holds 12 MiB (better) or 43 MiB
// (best), so those levels are capped.
func zstdEncoderWorkers(l zstd.EncoderLevel) int {
	n := runtime.GOMAXPROCS(0)
	switch l {
	case zstd.SpeedBetterCompression:
		n = min(n, 8)
	case zstd.SpeedBestCompression:
		n = min(n, 4)
	}
	return n
}

type zstdCompressor struct {
	enc *zstd.Encoder
}

// zstdEncoderOptions are those of every zstd encoder the package builds, for
// klauspost level l.
func zstdEncoderOptions(l zstd.EncoderLevel) []zstd.EOption {
	return []zstd.EOption{
		zstd.WithEncoderLevel(l),
		// EncodeAll waits for a free match finder.
		zstd.WithEncoderConcurrency(zstdEncoderWorkers(l)),
		// GLIDE writes no checksum either; it costs 4 bytes and a hash.
		zstd.WithEncoderCRC(false),
		// Smaller tables at the same speed and ratio on small values.
		zstd.WithLowerEncoderMem(true),
		// Entropy-code literals even in blocks with no matches, as libzstd
		// does: small values with few repeats (session blobs, short
		// records) then shrink as they do with GLIDE's libzstd (a 198-byte
		// session stores at 0.91 of its size instead of not at all).
		zstd.WithAllLitEntropyCompression(true),
	}
}

func newZstdCompressor(level int) (compressor, error) {
	l := zstdEncoderLevel(level)
	e := &zstdEncoders[l]
	e.once.Do(func() {
		e.enc, e.err = zstd.NewWriter(nil, zstdEncoderOptions(l)...)
	})
	if e.err != nil {
		return nil, fmt.Errorf("codec: zstd encoder: %w", e.err)
	}
	return zstdCompressor{enc: e.enc}, nil
}

// bound is the frame size for incompressible input: raw blocks of 128 KiB
// with 3-byte headers, plus the frame header.
func (z zstdCompressor) bound(n int) int { return n + n>>14 + 32 }

func (z zstdCompressor) compress(dst, src []byte, limit int) (out []byte, ok bool) {
	defer func() {
		// klauspost panics on internal encoder errors; GLIDE stores the
		// value as is when its encoder fails, and so does Encode.
		if recover() != nil {
			out, ok = dst, false
		}
	}()
	out = z.enc.EncodeAll(src, dst)
	return out, len(out)-len(dst) <= limit
}

// zstdPlainDecoder serves every Codec without a dictionary for small
// payloads (see zstdDecompressor), created on first use. Without a stream a
// decoder starts no goroutines, and DecodeAll is safe for concurrent use,
// with up to GOMAXPROCS calls running at once.
var zstdPlainDecoder = sync.OnceValues(func() (*zstd.Decoder, error) {
	return newZstdDecoder(zstdNoLimit, nil, 0)
})

// zstdNoLimit is the largest limit klauspost's decoder takes. A decoder
// with it never stops on size: Decode bounds such a decoder's output by the
// frames' own block bounds, or by a content size it writes into the frame.
const zstdNoLimit = 1 << 63

// newZstdDecoder returns a decoder with the given number of workers
// (0: GOMAXPROCS) whose DecodeAll stops with zstd.ErrDecoderSizeExceeded
// once a frame has decoded more than limit bytes (checked after each
// block). It also refuses frames whose window exceeds min(limit,
// zstdMaxWindow). With a dictionary (already validated) it reads frames
// that name it, and fails on frames that name another.
func newZstdDecoder(limit uint64, dict []byte, workers int) (*zstd.Decoder, error) {
	opts := []zstd.DOption{
		zstd.WithDecoderConcurrency(workers),
		zstd.WithDecoderMaxWindow(zstdMaxWindow),
		zstd.WithDecoderMaxMemory(limit),
	}
	if dict != nil {
		opts = append(opts, zstd.WithDecoderDicts(dict))
	}
	d, err := zstd.NewReader(nil, opts...)
	if err != nil {
		return nil, fmt.Errorf("codec: zstd decoder: %w", err)
	}
	return d, nil
}

// zstdDecompressor decodes GLIDE's zstd payload: one or more frames, with or
// without content size and checksum, and nothing after them. With a
// dictionary it decodes the ZstdDict payload instead, whose first frame must
// name that dictionary.
//
// Its memory for the plaintext stays within the limit plus one block (for
// small payloads, under 1 MiB, see zstdSmall). Before allocating, it
// reads every frame header and block header (scan): that rejects malformed
// structure and declared sizes over the limit, and bounds what each frame
// can decode to. Then the output goes into memory of that bound, never more
// than the limit plus one block, and the decoder cannot grow it:
//
//   - frames whose bounds add up to at most the limit plus a block decode
//     with an open decoder (one that stops on no size): they cannot
//     exceed those bounds;
//   - otherwise frame by frame, each within what the limit leaves: a frame
//     whose bound fits, as above; the first frame, when its window allows
//     (it is at most the limit), with a limited decoder, which stops just
//     past the limit; any other from a copy that declares the remaining
//     budget as its content size, so that an open decoder stops just past
//     it. That copy of the frame's compressed bytes is the one allocation
//     that follows the input's size rather than the plaintext's; only a
//     frame after another, or whose window exceeds the limit, needs it.
//
// A frame's window says nothing about its output (GLIDE's level 3 frames ask
// for 2 MiB whatever their size) and costs no memory here: DecodeAll keeps
// its history in the output. So the window is checked only against
// zstdMaxWindow, as libzstd does.
//
// A klauspost decoder worker keeps references to the last frame's input
// and output until it decodes again. So small payloads, in and out, go to
// the shared decoder, whose workers then keep at most zstdSmall bytes of
// each; larger ones go to decoders with one worker, borrowed from a pool
// and reset (by decoding an empty frame) before they go back.
type zstdDecompressor struct {
	small    *zstd.Decoder // open, GOMAXPROCS workers; shared without a dictionary
	opens    sync.Pool     // of *pooledZstd, open
	limited  sync.Pool     // of *pooledZstd that stop past decLimit
	decLimit int64         // where limited decoders stop: max(limit, zstd's 1 KiB minimum window)
	limit    int64
	dictID   uint32 // 0: plain zstd; else the dictionary the first frame must name
}

// newZstdDecompressor returns the decompressor for plain zstd frames when
// dict is nil, and otherwise for ZstdDict frames written with dict, whose
// ID is dictID.
func newZstdDecompressor(limit int64, dict []byte, dictID uint32) (*zstdDecompressor, error) {
	z := &zstdDecompressor{limit: limit, decLimit: max(limit, zstd.MinWindowSize), dictID: dictID}
	var err error
	if dict == nil {
		z.small, err = zstdPlainDecoder()
	} else {
		z.small, err = newZstdDecoder(zstdNoLimit, dict, 0)
	}
	if err != nil {
		return nil, err
	}
	// Build one decoder of each kind now, so that the options are checked
	// here; the pools build more with the same options, which cannot fail.
	for _, k := range []struct {
		pool  *sync.Pool
		limit uint64
	}{{&z.opens, zstdNoLimit}, {&z.limited, uint64(z.decLimit)}} {
		d, err := newZstdDecoder(k.limit, dict, 1)
		if err != nil {
			return nil, err
		}
		k.pool.New = func() any {
			d, _ := newZstdDecoder(k.limit, dict, 1)
			return &pooledZstd{dec: d}
		}
		k.pool.Put(&pooledZstd{dec: d})
	}
	return z, nil
}

// zstdEmptyFrame is the smallest zstd frame: single segment, content size
// 0, one empty raw block. Decoding it resets a decoder worker.
var zstdEmptyFrame = []byte{0x28, 0xb5, 0x2f, 0xfd, 0x20, 0x00, 0x01, 0x00, 0x00}

// pooledZstd is a decoder with one worker, and room to decode
// zstdEmptyFrame into without allocating.
type pooledZstd struct {
	dec     *zstd.Decoder
	scratch [16]byte
}

// decodeWith runs DecodeAll with a decoder from pool, which it then resets
// and returns to the pool.
func decodeWith(pool *sync.Pool, src, dst []byte) ([]byte, error) {
	p := pool.Get().(*pooledZstd)
	if p.dec == nil {
		return dst, errInvalid // cannot happen: see newZstdDecompressor
	}
	out, err := p.dec.DecodeAll(src, dst)
	p.dec.DecodeAll(zstdEmptyFrame, p.scratch[:0])
	pool.Put(p)
	return out, err
}

// Sizes of the zstd format and of klauspost's decoder.
const (
	// zstdBlockMax is the most one block decodes to (Block_Maximum_Size,
	// for windows of 128 KiB and more).
	zstdBlockMax = 128 << 10
	// zstdOverAlloc is the room DecodeAll wants past the output to use its
	// fast copies, which write up to 16 bytes beyond (compressedBlockOverAlloc).
	zstdOverAlloc = 16
	// zstdSmall: a payload of at most this, whose bound is at most this
	// too (and within the limit plus a block), decodes with the shared
	// decoder into dst as DecodeAll grows it, as appending would: memory
	// stays under 1 MiB. A larger one decodes with a pooled decoder into
	// memory allocated up front for its bound.
	zstdSmall = 256 << 10
)

func (z *zstdDecompressor) decompress(dst, payload []byte) ([]byte, error) {
	s, err := z.scan(payload)
	if err != nil {
		return dst, err
	}
	limit := uint64(z.limit)
	if s.bound > limit+zstdBlockMax {
		return z.decompressFrames(dst, payload)
	}
	if s.bound <= zstdSmall && len(payload) <= zstdSmall {
		if !s.sized && len(payload) >= zstdScratchFrom && uint64(cap(dst)-len(dst)) < s.bound+zstdOverAlloc {
			return z.decompressUnsized(dst, payload, s.bound)
		}
		out := dst
		if s.sized && uint64(cap(dst)-len(dst)) < s.bound+zstdOverAlloc {
			// DecodeAll would allocate the content size, and then a
			// frame that overruns it fails in the middle of a block or
			// after it depending on that room; with room for the bound
			// it always fails after, so that the output it leaves, which
			// check measures, is the same whatever dst is.
			out = make([]byte, len(dst), uint64(len(dst))+s.bound+zstdOverAlloc)
			copy(out, dst)
		}
		out, err := z.small.DecodeAll(payload, out)
		if err := z.check(dst, out, err); err != nil {
			return dst, err
		}
		return out, nil
	}
	// The frames cannot decode to more than the limit plus a block, so an
	// open decoder runs with room for all of it.
	out := dst
	allocated := false
	if uint64(cap(dst)-len(dst)) < s.bound+zstdOverAlloc {
		out = make([]byte, len(dst), uint64(len(dst))+s.bound+zstdOverAlloc)
		copy(out, dst)
		allocated = true
	}
	out, err = decodeWith(&z.opens, payload, out)
	if err := z.check(dst, out, err); err != nil {
		return dst, err
	}
	if allocated {
		out = shrink(out, len(dst), s.bound, limit+zstdBlockMax)
	}
	return out, nil
}

// zstdScratch holds buffers for decompressUnsized, each of cap at least
// zstdScratchMin.
var zstdScratch = sync.Pool{New: func() any { return new([]byte) }}

// zstdScratchFrom is the smallest payload decompressUnsized takes: a
// smaller one has too few sequences for the fast path to make up for the
// copy (3 % slower on a 100-byte value).
const zstdScratchFrom = 256

// zstdScratchMin is the smallest scratch buffer: one full block and the
// decoder's slack, what a frame of GLIDE's (a 2 MiB window) needs for its
// first compressed block.
const zstdScratchMin = zstdBlockMax + zstdOverAlloc

// decompressUnsized appends the plaintext of small frames that declare no
// content size (GLIDE's: it streams) to a dst without room for their
// bound. DecodeAll decodes a block's sequences with its fast copies only
// when the output has room for a whole block of the frame's window (up to
// 128 KiB) past it; GLIDE's frames ask for a 2 MiB window, so decoding a
// 2 KB value into memory of its size takes the slow path (and, into a nil
// dst, several allocations as the output grows). So the frames decode
// into a pooled buffer with room for their bound, and the plaintext is
// copied to dst: one copy of the plaintext, and for a nil dst one
// allocation of its size.
func (z *zstdDecompressor) decompressUnsized(dst, payload []byte, bound uint64) ([]byte, error) {
	sp := zstdScratch.Get().(*[]byte)
	need := max(bound+zstdOverAlloc, zstdScratchMin)
	if uint64(cap(*sp)) < need {
		*sp = make([]byte, 0, need)
	}
	out, err := z.small.DecodeAll(payload, (*sp)[:0])
	if err := z.check((*sp)[:0], out, err); err != nil {
		zstdScratch.Put(sp)
		return dst, err
	}
	dst = append(dst, out...)
	if cap(out) > cap(*sp) { // cannot happen: the frames fit in their bound
		*sp = out[:0]
	}
	zstdScratch.Put(sp)
	return dst, nil
}

// decompressFrames decodes frames whose bounds add up to more than the
// limit plus a block, frame by frame, into memory of that size.
func (z *zstdDecompressor) decompressFrames(dst, payload []byte) ([]byte, error) {
	out := dst
	if room := z.decLimit + zstdBlockMax + zstdOverAlloc; int64(cap(dst)-len(dst)) < room {
		out = make([]byte, len(dst), int64(len(dst))+room)
		copy(out, dst)
	}
	for p := payload; len(p) > 0; {
		f, _ := scanZstdFrame(p) // scanned already
		frame := p[:f.size]
		p = p[f.size:]
		if f.Skippable {
			continue
		}
		budget := uint64(z.limit) - uint64(len(out)-len(dst))
		if f.HasFCS && f.FrameContentSize > budget {
			// As DecodeAll checks it; decodeCapped takes no such frame.
			return dst, fmt.Errorf("%w: zstd frame declares %d bytes with %d left of the limit %d", ErrTooLarge, f.FrameContentSize, budget, z.limit)
		}
		var err error
		switch {
		case f.bound <= budget+zstdBlockMax:
			out, err = decodeWith(&z.opens, frame, out)
		case len(out) == len(dst) && f.window <= min(uint64(z.decLimit), zstdMaxWindow):
			out, err = decodeWith(&z.limited, frame, out)
		default:
			out, err = z.decodeCapped(out, frame, &f, budget)
		}
		if err := z.check(dst, out, err); err != nil {
			return dst, err
		}
	}
	return out, nil
}

// decodeCapped appends the plaintext of one frame, which has no content
// size (one that has, and fits the budget, has a bound that fits too), and
// stops soon after it passes budget bytes: it decodes a copy of
// the frame that declares budget as its content size. The decoder then
// stops after the block that passes it (zstd.ErrFrameSizeExceeded), or
// ends a shorter frame with zstd.ErrFrameSizeMismatch, the plaintext whole
// but its checksum unchecked; so a frame with a checksum is decoded again as
// it is, into the same memory, now that its size is known.
func (z *zstdDecompressor) decodeCapped(out, frame []byte, f *zstdFrame, budget uint64) ([]byte, error) {
	hs := f.HeaderSize
	capped := make([]byte, 0, len(frame)+8)
	capped = append(capped, frame[:hs]...)
	capped[4] |= 3 << 6 // Frame_Content_Size_Flag: an 8-byte field, after the header's others
	capped = binary.LittleEndian.AppendUint64(capped, budget)
	capped = append(capped, frame[hs:]...)
	start := len(out)
	res, err := decodeWith(&z.opens, capped, out)
	if errors.Is(err, zstd.ErrFrameSizeMismatch) && uint64(len(res)-start) < budget {
		err = nil
		if f.HasCheckSum {
			res, err = decodeWith(&z.opens, frame, out)
		}
	}
	return res, err
}

// check classifies what DecodeAll returned for dst: nil if it decoded,
// an error wrapping ErrTooLarge if the output (partial, if it stopped)
// exceeds the limit, and errInvalid otherwise.
func (z *zstdDecompressor) check(dst, out []byte, err error) error {
	if len(out) >= len(dst) && int64(len(out)-len(dst)) > z.limit || errors.Is(err, zstd.ErrDecoderSizeExceeded) {
		return fmt.Errorf("%w: zstd data decodes to more than %d bytes", ErrTooLarge, z.limit)
	}
	if err != nil {
		return errInvalid
	}
	return nil
}

// shrink returns out, which was allocated for bound bytes after the first
// n, reallocated to its length when bound was more than twice what it
// needed: a frame's bound counts each compressed block as a full one, and
// libzstd's higher levels write blocks of a quarter of that. It does so only
// when both copies together stay within most bytes.
func shrink(out []byte, n int, bound, most uint64) []byte {
	got := uint64(len(out) - n)
	if bound <= 2*got || bound+got > most {
		return out
	}
	return append(make([]byte, 0, len(out)), out...)
}

// zstdScan is what scan learns from a payload's headers.
type zstdScan struct {
	bound uint64 // the most the frames decode to, adding their bounds
	sized bool   // some frame declares its content size
}

// scan reads the headers of every frame and block of payload, without
// decoding. It returns errInvalid for a payload DecodeAll would refuse on
// its structure alone: empty, a bad magic number or header, a block that is
// malformed, too large or cut short, a missing checksum, a window over
// zstdMaxWindow, or bytes after the last frame. For a ZstdDict payload, the
// first frame must name the Codec's dictionary. It returns an error wrapping
// ErrTooLarge when the frames' declared content sizes add up to more than
// the limit: each is checked when its header is read, before any block of
// that frame, as DecodeAll would.
func (z *zstdDecompressor) scan(payload []byte) (zstdScan, error) {
	var s zstdScan
	if len(payload) == 0 {
		return s, errInvalid // libzstd: "incomplete frame"; DecodeAll returns nothing
	}
	var declared uint64
	for p, first := payload, true; len(p) > 0; first = false {
		f, err := scanZstdFrame(p)
		if first && z.dictID != 0 && (f.Skippable || f.DictionaryID != z.dictID) {
			// A ZstdDict value decodes only with the dictionary it names.
			// (A plain zstd frame that names one fails in DecodeAll: those
			// decoders hold none.)
			return s, errInvalid
		}
		if f.HasFCS {
			if f.FrameContentSize > uint64(z.limit)-declared {
				return s, fmt.Errorf("%w: zstd frame declares %d bytes, the limit is %d", ErrTooLarge, f.FrameContentSize, z.limit)
			}
			declared += f.FrameContentSize
			s.sized = true
		}
		if err != nil {
			return s, errInvalid
		}
		s.bound += f.bound
		p = p[f.size:]
	}
	return s, nil
}

// zstdFrame is what scanZstdFrame learns from one frame's headers.
type zstdFrame struct {
	zstd.Header
	size   int    // of the frame in the payload, checksum included
	window uint64 // the window DecodeAll uses: the descriptor's, or the content size's
	bound  uint64 // the most DecodeAll writes for the frame before it stops
}

// scanZstdFrame reads the frame at the start of p: its header, then the
// header of each block, skipping their contents, then the checksum. It
// fails on what DecodeAll fails on without decoding a block. The header
// fields are set as far as the header could be read, also on error.
//
// The bound adds the sizes of raw and RLE blocks and, for compressed
// blocks, the most a block decodes to, min(window, 128 KiB). DecodeAll
// enforces those per block, and with a content size stops after the block
// that passes it.
func scanZstdFrame(p []byte) (f zstdFrame, err error) {
	rest, err := f.DecodeAndStrip(p)
	if err != nil {
		return f, err
	}
	if f.Skippable {
		if uint64(len(rest)) < uint64(f.SkippableSize) {
			return f, io.ErrUnexpectedEOF
		}
		f.size = f.HeaderSize + int(f.SkippableSize)
		return f, nil
	}
	f.window = f.WindowSize
	if f.SingleSegment {
		f.window = max(f.FrameContentSize, zstd.MinWindowSize)
	}
	if f.window > zstdMaxWindow {
		return f, zstd.ErrWindowSizeExceeded // as libzstd: "frame requires too much memory"
	}
	blockMax := min(f.window, zstdBlockMax)
	i := f.HeaderSize
	for {
		if len(p)-i < 3 {
			return f, io.ErrUnexpectedEOF
		}
		bh := uint32(p[i]) | uint32(p[i+1])<<8 | uint32(p[i+2])<<16
		i += 3
		size := uint64(bh >> 3)
		if size > blockMax {
			return f, zstd.ErrCompressedSizeTooBig
		}
		switch bh >> 1 & 3 {
		case 0: // raw
			f.bound += size
		case 1: // RLE: one byte, repeated
			f.bound += size
			size = 1
		case 2: // compressed: at least the literals and sequences headers
			if size < 2 {
				return f, zstd.ErrBlockTooSmall
			}
			f.bound += blockMax
		default:
			return f, zstd.ErrReservedBlockType
		}
		if uint64(len(p)-i) < size {
			return f, io.ErrUnexpectedEOF
		}
		i += int(size)
		if bh&1 != 0 { // the last block
			break
		}
	}
	if f.HasCheckSum {
		if len(p)-i < 4 {
			return f, io.ErrUnexpectedEOF
		}
		i += 4
	}
	if f.HasFCS && f.FrameContentSize < f.bound {
		f.bound = min(f.bound, f.FrameContentSize+blockMax)
	}
	f.size = i
	return f, nil
}
