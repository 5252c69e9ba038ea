package codec

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// Backend is the compression algorithm, identified by the GLIDE header's
// backend id (byte 4 of the envelope).
//
// Ids 1 and 2 are GLIDE's. Ids 0x80 and above are zipline's extensions,
// unknown to GLIDE: GLIDE returns a value with an unknown id as stored, so a
// GLIDE client reading one gets the stored bytes (header included), never an
// error and never garbage.
type Backend uint8

// The backends, by header id.
const (
	Zstd Backend = 1 // header id 0x01: one or more zstd frames
	LZ4  Backend = 2 // header id 0x02: u32le(plaintext length) + raw LZ4 block

	// ZstdDict is zstd with a trained dictionary (see WithDictionary and
	// TrainDictionary), a zipline extension: header id 0x81, then one zstd
	// frame whose header names the dictionary by its ID. It shrinks small
	// values (a few hundred bytes) that plain zstd barely compresses.
	// Only a Codec holding that dictionary reads such a value; GLIDE and
	// every other Codec return it as stored.
	ZstdDict Backend = 0x81
)

// String returns "zstd", "lz4", "zstd-dict", or "Backend(N)" for an unknown
// id.
func (b Backend) String() string {
	switch b {
	case Zstd:
		return "zstd"
	case LZ4:
		return "lz4"
	case ZstdDict:
		return "zstd-dict"
	}
	return "Backend(" + strconv.Itoa(int(b)) + ")"
}

// numBackends is the number of known backend ids.
const numBackends = 3

// backendSlot numbers the known backend ids densely, for Codec.decs, and
// returns -1 for an unknown id.
func backendSlot(id byte) int {
	switch Backend(id) {
	case Zstd:
		return 0
	case LZ4:
		return 1
	case ZstdDict:
		return 2
	}
	return -1
}

// Defaults and limits, the same as Valkey GLIDE's.
const (
	// DefaultMinSize is the smallest value Encode compresses, inclusive.
	DefaultMinSize = 64
	// MinMinSize is the lowest size WithMinSize accepts: the header plus one byte.
	MinMinSize = headerSize + 1
	// DefaultMaxDecompressedSize is the largest plaintext Decode produces (512 MiB).
	DefaultMaxDecompressedSize = 512 << 20

	DefaultZstdLevel = 3       // libzstd's default level
	ZstdMinLevel     = -131072 // libzstd's ZSTD_minCLevel
	ZstdMaxLevel     = 22      // libzstd's ZSTD_maxCLevel

	DefaultLZ4Level = 0    // LZ4_compress_default
	LZ4MinLevel     = -128 // acceleration 128
	LZ4MaxLevel     = 12   // LZ4HC_CLEVEL_MAX
)

// The envelope header: 3 magic bytes, a version byte and the backend id.
const (
	headerSize = 5
	magic0     = 0x00
	magic1     = 0x01
	magic2     = 0x02
	version    = 0x00 // written; ignored on read, like GLIDE
)

// ErrTooLarge is returned by Decode when a value would decompress to more
// than the Codec's maximum size (see WithMaxDecompressedSize). It is the only
// error Decode returns; the returned error wraps it with the sizes involved.
var ErrTooLarge = errors.New("codec: decompressed size exceeds limit")

// A compressor writes the payload that follows the header for one backend.
type compressor interface {
	// bound returns how many bytes compress may need after the header for an
	// input of n bytes, so that Encode can reserve them up front, or -1 if
	// the backend does not take inputs that large.
	bound(n int) int
	// compress appends the payload for src to dst. It reports false if the
	// payload would be longer than limit bytes or the encoder failed; the
	// returned slice then still begins with the bytes of dst.
	compress(dst, src []byte, limit int) ([]byte, bool)
}

// A decompressor appends the plaintext of one backend's payload to dst.
// It returns errInvalid for a payload that does not decode cleanly and an
// error wrapping ErrTooLarge when the plaintext would exceed its limit.
type decompressor interface {
	decompress(dst, payload []byte) ([]byte, error)
}

// errInvalid marks a payload that does not decode; Decode then returns the
// stored bytes. It never reaches the caller.
var errInvalid = errors.New("codec: invalid payload")

// Codec compresses and decompresses values in the Valkey GLIDE envelope.
//
// A Codec is safe for concurrent use by multiple goroutines and should be
// created once and reused: its encoders and decoders are built once and its
// scratch memory is pooled, so Encode and Decode do not allocate once warm
// when dst has enough capacity. Create one with New; the zero Codec is not
// usable.
type Codec struct {
	backend Backend
	level   int
	minSize int
	maxSize int64
	dictID  uint32 // of the dictionary, 0 without one
	comp    compressor
	// decs is indexed by backendSlot; nil means that the Codec cannot read
	// the id (ZstdDict without a dictionary).
	decs [numBackends]decompressor

	stats counters
}

// config is what the Options set.
type config struct {
	level    int
	levelSet bool
	minSize  int
	maxSize  int64
	dict     []byte // a validated zstd dictionary, or nil
	dictID   uint32
}

// Option configures a Codec in New. An invalid value makes New fail.
type Option func(*config) error

// WithLevel sets the compression level, using GLIDE's (that is libzstd's and
// liblz4's) numbering. New fails if the level is outside the backend's range.
//
// Zstd and ZstdDict accept ZstdMinLevel..ZstdMaxLevel (-131072..22),
// default 3. The pure-Go encoder has four speeds, so levels map onto them in
// bands, as zstd.EncoderLevelFromZstd does, except that 0 means libzstd's
// default:
//
//	-131072..-1, 1, 2  SpeedFastest           (libzstd's "fast" levels, about libzstd 1)
//	0, 3..5            SpeedDefault           (about libzstd 3, the default)
//	6..9               SpeedBetterCompression (about libzstd 7-8)
//	10..22             SpeedBestCompression   (about libzstd 11 and up)
//
// The output is a standard zstd frame, with content size and without
// checksum, that any zstd decoder, GLIDE's included, reads; its bytes are not
// libzstd's. On GLIDE's 2 KB JSON vector level 3 gives 710 bytes of payload
// to libzstd's 702.
//
// LZ4 accepts LZ4MinLevel..LZ4MaxLevel (-128..12), default 0, mapped onto
// pierrec/lz4 like GLIDE's liblz4 modes:
//
//	0         LZ4_compress_default (CompressorCCompat, acceleration 1)
//	-128..-1  LZ4_compress_fast with acceleration -level (CompressorCCompat)
//
// Levels 0 and below write the same bytes as liblz4 1.10, and so as GLIDE,
// and compress 2-4 % smaller than pierrec's faster Compressor. Values under
// 64 KiB go through the package's own port of LZ4_compress_fast for
// liblz4's 16-bit table (the same bytes as CompressorCCompat, at 0.6-0.8 of
// its time, about liblz4's own speed); larger ones through
// CompressorCCompat.
//
//	1..12     high compression (CompressorHC) with liblz4 HC's search depth,
//	          2, 2, 4, 8, 16, 32, 64, 128, 256 for levels 1..9; then 512, 1024
//	          and 2048 for 10..12, where liblz4 switches to optimal parsing
//	          (which pierrec/lz4 lacks). Levels above 9 gain little and can
//	          take about 1 s per MiB of low-entropy binary data.
func WithLevel(level int) Option {
	return func(c *config) error {
		c.level, c.levelSet = level, true
		return nil
	}
}

// WithMinSize sets the smallest value Encode compresses, inclusive. The
// default is DefaultMinSize (64); the minimum is MinMinSize (6).
func WithMinSize(n int) Option {
	return func(c *config) error {
		if n < MinMinSize {
			return fmt.Errorf("codec: min size %d is below %d", n, MinMinSize)
		}
		c.minSize = n
		return nil
	}
}

// WithMaxDecompressedSize sets the largest plaintext Decode produces; a value
// that would decompress to more makes Decode fail with ErrTooLarge, checked
// before the plaintext is allocated when the size is declared up front.
// It also bounds memory: whatever the value, one Decode holds at most n
// bytes plus 128 KiB (one zstd block) for its plaintext, or 1 MiB if that
// is more.
// The default is DefaultMaxDecompressedSize (512 MiB); n must be positive.
func WithMaxDecompressedSize(n int64) Option {
	return func(c *config) error {
		if n <= 0 {
			return fmt.Errorf("codec: max decompressed size %d is not positive", n)
		}
		c.maxSize = n
		return nil
	}
}

// New returns a Codec that writes backend b. It reads Zstd and LZ4 values
// whatever b is, and ZstdDict values written with its dictionary if it has
// one (see WithDictionary). It fails on an unknown backend, a level outside
// the backend's range, ZstdDict without a dictionary, or an invalid option
// (an invalid dictionary included); it never panics on bad input.
func New(b Backend, opts ...Option) (*Codec, error) {
	cfg := config{minSize: DefaultMinSize, maxSize: DefaultMaxDecompressedSize}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	// Sizes are ints in memory; a larger limit means no limit beyond that.
	cfg.maxSize = min(cfg.maxSize, math.MaxInt)

	c := &Codec{backend: b, minSize: cfg.minSize, maxSize: cfg.maxSize, dictID: cfg.dictID}
	var err error
	switch b {
	case Zstd, ZstdDict:
		c.level = DefaultZstdLevel
		if cfg.levelSet {
			c.level = cfg.level
		}
		if c.level < ZstdMinLevel || c.level > ZstdMaxLevel {
			return nil, fmt.Errorf("codec: %v level %d is out of range %d..%d", b, c.level, ZstdMinLevel, ZstdMaxLevel)
		}
		if b == Zstd {
			c.comp, err = newZstdCompressor(c.level)
		} else if cfg.dict == nil {
			return nil, errors.New("codec: backend zstd-dict needs a dictionary: pass WithDictionary (see TrainDictionary)")
		} else {
			c.comp, err = newZstdDictCompressor(c.level, cfg.dict)
		}
	case LZ4:
		c.level = DefaultLZ4Level
		if cfg.levelSet {
			c.level = cfg.level
		}
		if c.level < LZ4MinLevel || c.level > LZ4MaxLevel {
			return nil, fmt.Errorf("codec: lz4 level %d is out of range %d..%d", c.level, LZ4MinLevel, LZ4MaxLevel)
		}
		c.comp = newLZ4Compressor(c.level)
	default:
		return nil, fmt.Errorf("codec: unknown backend %v", b)
	}
	if err != nil {
		return nil, err
	}
	zd, err := newZstdDecompressor(c.maxSize, nil, 0)
	if err != nil {
		return nil, err
	}
	c.decs[backendSlot(byte(Zstd))] = zd
	c.decs[backendSlot(byte(LZ4))] = lz4Decompressor{limit: c.maxSize}
	if cfg.dict != nil {
		dd, err := newZstdDecompressor(c.maxSize, cfg.dict, cfg.dictID)
		if err != nil {
			return nil, err
		}
		c.decs[backendSlot(byte(ZstdDict))] = dd
	}
	return c, nil
}

// Backend returns the backend the Codec writes.
func (c *Codec) Backend() Backend { return c.backend }

// Level returns the compression level in GLIDE's numbering.
func (c *Codec) Level() int { return c.level }

// MinSize returns the smallest value Encode compresses.
func (c *Codec) MinSize() int { return c.minSize }

// MaxDecompressedSize returns the largest plaintext Decode produces.
func (c *Codec) MaxDecompressedSize() int64 { return c.maxSize }

// DictionaryID returns the ID of the Codec's dictionary (see WithDictionary),
// or 0 if it has none.
func (c *Codec) DictionaryID() uint32 { return c.dictID }

// Encode appends the stored form of src to dst and returns the extended
// slice, and whether it is compressed. The rules are GLIDE's:
//
//   - src shorter than the minimum size is stored as is (the minimum is inclusive);
//   - src the server would read as a number (an integer, or a float as
//     INCRBYFLOAT takes it) is stored as is, whatever its length, so that
//     INCR and its kin keep working on it (zipline's rule: GLIDE compresses
//     long numbers, and reads either form);
//   - src that already carries a header with a known backend id (see
//     IsCompressed) is stored as is, so nothing is compressed twice;
//   - otherwise src is compressed and the header prepended, but if that is
//     not shorter than src, or the encoder fails, src is stored as is.
//
// GLIDE skips only a header with its own backend id; Encode skips every
// known id, 0x81 (ZstdDict) included whether or not the Codec has a
// dictionary: a value that a Codec might expand is never wrapped again. So
// Decode(Encode(x)) equals Decode(x) for every x, and equals x unless
// IsCompressed(x).
//
// dst and src must not overlap. When dst has room for the header plus a
// little more than len(src), Encode does not allocate.
func (c *Codec) Encode(dst, src []byte) ([]byte, bool) {
	if len(src) < c.minSize || IsCompressed(src) || isNumber(src) {
		c.stats.skipped.Add(1)
		return append(dst, src...), false
	}
	bound := c.comp.bound(len(src))
	if bound < 0 {
		c.stats.skipped.Add(1)
		return append(dst, src...), false
	}
	start := len(dst)
	dst = slices.Grow(dst, headerSize+bound)
	dst = append(dst, magic0, magic1, magic2, version, byte(c.backend))
	// The stored value must end up shorter than src.
	out, ok := c.comp.compress(dst, src, len(src)-headerSize-1)
	if !ok {
		c.stats.skipped.Add(1)
		return append(out[:start], src...), false
	}
	c.stats.compressed.Add(1)
	c.stats.bytesIn.Add(uint64(len(src)))
	c.stats.bytesOut.Add(uint64(len(out) - start))
	return out, true
}

// Decode appends the plaintext of the stored value src to dst and returns
// the extended slice.
//
// It decompresses only a value that IsCompressed and whose payload decodes
// cleanly: for LZ4 to exactly the declared length, for zstd as one or more
// complete frames with nothing after them, for ZstdDict likewise, with a
// first frame that names the Codec's dictionary. The version byte is
// ignored, and Zstd and LZ4 are read whatever the Codec writes. Anything
// else, plain data written by any client, a corrupt payload, or a ZstdDict
// value written with another dictionary or read by a Codec without one, is
// appended unchanged, as GLIDE does for what it cannot read.
//
// The only error wraps ErrTooLarge: the plaintext would exceed the Codec's
// maximum size. It is detected before allocating when the size is declared
// (the LZ4 length field, a zstd frame content size) and otherwise while
// decoding. dst is then returned unchanged.
//
// A hostile value cannot make Decode hold more than the maximum size plus
// 128 KiB (or 1 MiB) for its plaintext. An LZ4 block that declares more
// than 16 times its own size has its structure checked, without writing
// anything, before that length is allocated: a block that does not decode
// to exactly that length is invalid. (One that declares less can cost an
// allocation of up to 16 times its size, as a valid one of that size
// does.) A zstd payload's frame and block headers are read first:
// malformed ones are invalid before anything is allocated, and the rest
// bound the plaintext, which then goes into memory of that bound (at most
// the limit plus a block) that the decoder cannot grow. Corrupt data
// inside a zstd block is found only while decoding, within that memory.
//
// dst and src must not overlap.
func (c *Codec) Decode(dst, src []byte) ([]byte, error) {
	if !IsCompressed(src) {
		return append(dst, src...), nil
	}
	d := c.decs[backendSlot(src[4])]
	if d == nil {
		c.stats.invalid.Add(1)
		return append(dst, src...), nil
	}
	out, err := d.decompress(dst, src[headerSize:])
	switch err {
	case nil:
		c.stats.decompressed.Add(1)
		c.stats.bytesDecompressed.Add(uint64(len(out) - len(dst)))
		return out, nil
	case errInvalid:
		c.stats.invalid.Add(1)
		return append(dst, src...), nil
	}
	return dst, err
}

// IsCompressed reports whether b starts with the GLIDE header with a known
// backend id: the magic 00 01 02, any version byte, and id 1 (Zstd), 2 (LZ4)
// or 0x81 (ZstdDict). Such a value is not compressed again by Encode; Decode
// expands it if its payload is valid and, for ZstdDict, the Codec holds the
// dictionary it names. GLIDE itself recognises only ids 1 and 2.
func IsCompressed(b []byte) bool {
	return len(b) >= headerSize && b[0] == magic0 && b[1] == magic1 && b[2] == magic2 &&
		backendSlot(b[4]) >= 0
}
