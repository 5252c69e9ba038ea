package codec

import (
	"errors"
	"fmt"
	"math/bits"
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

// Decoders are created on first use. Without a stream they start no
// goroutines, and DecodeAll is safe for concurrent use, with up to
// GOMAXPROCS calls running at once.
var (
	// zstdDefaultDecoder serves every Codec with the default limit.
	zstdDefaultDecoder = sync.OnceValues(func() (*zstd.Decoder, error) {
		return newZstdDecoder(DefaultMaxDecompressedSize, nil)
	})
	// zstdPlainWindows serve frames without a dictionary whose window is
	// larger than a Codec's limit (see zstdDecompressor).
	zstdPlainWindows zstdWindowDecoders
)

const zstdMaxWindowLog = 27 // zstdMaxWindow == 1<<27

// zstdWindowDecoders holds decoders sized for frame windows, built on first
// use: decs[k] stops at 2^k bytes. Those without a dictionary are shared by
// every Codec; a Codec with a dictionary has its own.
type zstdWindowDecoders struct {
	dict []byte // nil: none
	decs [zstdMaxWindowLog + 1]struct {
		once sync.Once
		dec  *zstd.Decoder
		err  error
	}
}

// get returns the decoder for windows up to w, which must be at most
// zstdMaxWindow.
func (s *zstdWindowDecoders) get(w uint64) (*zstd.Decoder, error) {
	k := max(bits.Len64(w-1), 10) // 2^k >= w, and at least zstd's 1 KiB minimum
	e := &s.decs[k]
	e.once.Do(func() { e.dec, e.err = newZstdDecoder(1<<k, s.dict) })
	return e.dec, e.err
}

// newZstdDecoder returns a decoder whose DecodeAll fails with
// zstd.ErrDecoderSizeExceeded past limit bytes. It also refuses frames whose
// window exceeds min(limit, zstdMaxWindow). With a dictionary (already
// validated) it reads frames that name it, and fails on frames that name
// another.
func newZstdDecoder(limit int64, dict []byte) (*zstd.Decoder, error) {
	opts := []zstd.DOption{
		zstd.WithDecoderConcurrency(0),
		zstd.WithDecoderMaxWindow(zstdMaxWindow),
		zstd.WithDecoderMaxMemory(uint64(limit)),
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
// Its decoder stops at the Codec's limit while decoding, so a frame with no
// content size never grows the output much past it. But klauspost's decoder
// also refuses a frame whose window exceeds that limit, and a window says
// nothing about the output: GLIDE's level 3 frames ask for 2 MiB whatever
// their size. Such a frame goes to a decoder sized for its window, and the
// limit is checked afterwards. Memory then stays within the frame's window,
// at most zstdMaxWindow, which is what libzstd's streaming decoder in GLIDE
// allocates for that frame too.
type zstdDecompressor struct {
	dec      *zstd.Decoder
	decLimit int64 // where dec stops: max(limit, zstd's 1 KiB minimum window)
	limit    int64
	dictID   uint32              // 0: plain zstd; else the dictionary the first frame must name
	windows  *zstdWindowDecoders // for frames whose window exceeds decLimit
}

// newZstdDecompressor returns the decompressor for plain zstd frames when
// dict is nil, and otherwise for ZstdDict frames written with dict, whose
// ID is dictID.
func newZstdDecompressor(limit int64, dict []byte, dictID uint32) (*zstdDecompressor, error) {
	z := &zstdDecompressor{limit: limit, decLimit: max(limit, zstd.MinWindowSize), dictID: dictID, windows: &zstdPlainWindows}
	var err error
	switch {
	case dict != nil:
		z.windows = &zstdWindowDecoders{dict: dict}
		z.dec, err = newZstdDecoder(z.decLimit, dict)
	case limit == DefaultMaxDecompressedSize:
		z.dec, err = zstdDefaultDecoder()
	default:
		z.dec, err = newZstdDecoder(z.decLimit, nil)
	}
	if err != nil {
		return nil, err
	}
	return z, nil
}

func (z *zstdDecompressor) decompress(dst, payload []byte) ([]byte, error) {
	// The header of the first frame; DecodeAll checks those of later ones.
	// An empty payload is invalid (libzstd: "incomplete frame"), although
	// DecodeAll would return nothing without error.
	var h zstd.Header
	if h.Decode(payload) != nil {
		return dst, errInvalid
	}
	// A ZstdDict value decodes only with the dictionary it names. (A plain
	// zstd frame that names one fails in DecodeAll: those decoders hold none.)
	if z.dictID != 0 && (h.Skippable || h.DictionaryID != z.dictID) {
		return dst, errInvalid
	}
	if h.HasFCS && h.FrameContentSize > uint64(z.limit) {
		return dst, fmt.Errorf("%w: zstd frame declares %d bytes, the limit is %d", ErrTooLarge, h.FrameContentSize, z.limit)
	}
	dec := z.dec
	if w := frameWindow(&h); w > uint64(z.decLimit) {
		if w > zstdMaxWindow {
			return dst, errInvalid // as libzstd: "frame requires too much memory"
		}
		var err error
		if dec, err = z.windows.get(w); err != nil {
			return dst, errInvalid
		}
	}
	out, err := dec.DecodeAll(payload, dst)
	if errors.Is(err, zstd.ErrWindowSizeExceeded) && z.decLimit < zstdMaxWindow {
		// A later frame asks for a larger window than the first.
		if wide, werr := z.windows.get(zstdMaxWindow); werr == nil {
			out, err = wide.DecodeAll(payload, dst)
		}
	}
	switch {
	case err == nil && int64(len(out)-len(dst)) <= z.limit:
		return out, nil
	case err == nil, errors.Is(err, zstd.ErrDecoderSizeExceeded):
		return dst, fmt.Errorf("%w: zstd data decodes to more than %d bytes", ErrTooLarge, z.limit)
	}
	return dst, errInvalid
}

// frameWindow returns the window a frame asks the decoder for: its window
// descriptor, or for a single-segment frame its size, at least 1 KiB.
func frameWindow(h *zstd.Header) uint64 {
	switch {
	case h.Skippable:
		return 0
	case h.SingleSegment:
		return max(h.FrameContentSize, zstd.MinWindowSize)
	}
	return h.WindowSize
}
