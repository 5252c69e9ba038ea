package codec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/pierrec/lz4/v4"
)

// addSeeds adds the GLIDE vectors, stored and plain, the edge cases, and
// small records stored with the test dictionary (ZstdDict), with another
// dictionary, and damaged.
func addSeeds(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 1, 2, 0, 1})
	f.Add([]byte{0, 1, 2, 0, 2, 0, 0, 0, 0, 0})
	f.Add([]byte{0, 1, 2, 0, 0x81})
	other, err := TrainDictionary(records(3, 1000), 4<<10)
	if err != nil {
		f.Fatal(err)
	}
	zd, zo := mustNew(f, ZstdDict), mustNew(f, ZstdDict, WithDictionary(other))
	for i, r := range records(15, 8) {
		f.Add(r)
		stored, _ := zd.Encode(nil, r)
		f.Add(stored)
		if i < 2 {
			f.Add(stored[:len(stored)-3])
			stored, _ = zo.Encode(nil, r)
			f.Add(stored)
		}
	}
	bins, _ := filepath.Glob(filepath.Join(vectorDir, "*.bin"))
	plains, _ := filepath.Glob(filepath.Join(vectorDir, "*.plain"))
	for _, name := range append(bins, plains...) {
		if b, err := os.ReadFile(name); err == nil && len(b) <= 4096 {
			f.Add(b)
		}
	}
	if _, err := os.Stat(filepath.Join(vectorDir, "edge_cases.json")); err == nil {
		_, cases := edgeCases(f)
		for _, ec := range cases {
			f.Add(mustHex(f, ec.StoredHex))
		}
	}
	addHostileSeeds(f)
}

// addHostileSeeds adds small forms of the hostile values of TestPeakRSS and
// the malformed LZ4 blocks, alone and after 300 KiB of valid block (so
// that Decode checks them before allocating): declared lengths the block
// does not reach or exceeds, garbage at the end of a long expansion, zstd
// frames whose bounds exceed the limits or whose window does, and a frame
// with many small blocks and a checksum.
func addHostileSeeds(f *testing.F) {
	for i, tc := range lz4Malformed {
		f.Add(envelope(LZ4, binary.LittleEndian.AppendUint32(nil, uint32(tc.declared)), mustHex(f, tc.block)))
		f.Add(lz4MalformedLarge(f, i)) // checked before allocating
	}
	for _, n := range []int{5, 300, 70 << 10, 300 << 10} {
		f.Add(envelope(LZ4, lz4Expanding(n, n, false)))
		f.Add(envelope(LZ4, lz4Expanding(n, n, true)))
		f.Add(envelope(LZ4, lz4Expanding(n-1, n, false)))
		f.Add(envelope(LZ4, lz4Expanding(n+1, n, false)))
	}
	f.Add(envelope(LZ4, lz4Expanding(1<<30, 1<<30, true))) // over both limits
	for _, wd := range []byte{zstdWindow2M, zstdWindow128M} {
		f.Add(envelope(Zstd, zstdHostileFrame(wd, -1, 3, 1)))
		f.Add(envelope(Zstd, zstdHostileFrame(wd, -1, 0, 1), zstdHostileFrame(wd, -1, 2, 1)))
		f.Add(envelope(Zstd, zstdHostileFrame(wd, 4*2+zstdTestBlockMax, 2, 1)))
		f.Add(envelope(Zstd, zstdHostileFrame(wd, 100, 2, 1))) // declares too little
		// A frame that declares more than the small limit leaves, after one
		// whose bound overstates its output.
		f.Add(envelope(Zstd, zstdHostileFrame(wd, -1, 2, 0), zstdHostileFrame(wd, zstdTestBlockMax, 0, 1)))
	}
	chunks, _ := textChunks(5, 40, 1024)
	f.Add(envelope(Zstd, flushedFrame(f, 1<<20, chunks)))
	chunks, _ = textChunks(6, 3, 1024)
	f.Add(envelope(Zstd, flushedFrame(f, 1<<10, chunks)))
}

// FuzzDecode feeds Decode any input. It must not panic, must return the
// input unchanged unless the input IsCompressed, must honour its limit, and
// must agree between limits: the small limit sends many zstd frames down
// the paths for frames whose bound exceeds the limit, the large one takes
// most in one go. Decoding into a dst with room must give what decoding
// into new memory gives: with room, LZ4 blocks are not checked before
// decoding and zstd frames decode in place. And the LZ4 block check must
// accept every block that pierrec/lz4 decodes to the declared length.
func FuzzDecode(f *testing.F) {
	addSeeds(f)
	const smallLimit = 64 << 10
	dict := WithDictionary(testDict(f))
	small := mustNew(f, Zstd, dict, WithMaxDecompressedSize(smallLimit))
	large := mustNew(f, LZ4, dict, WithMaxDecompressedSize(zstdMaxWindow))
	// Reused by every call: a fuzzing process runs them one at a time.
	const roomySize = 2 << 20
	roomy := make([]byte, 0, roomySize)
	f.Fuzz(func(t *testing.T, in []byte) {
		a, errA := small.Decode(nil, in)
		if r, err := small.Decode(roomy, in); (err == nil) != (errA == nil) || !bytes.Equal(r, a) && len(a) < roomySize/2 {
			t.Fatalf("limit %d: into room %s, %v; into nil %s, %v", smallLimit, short(r), err, short(a), errA)
		}
		if len(in) > 9 && IsCompressed(in) && Backend(in[4]) == LZ4 {
			checkLZ4BlockLen(t, in[9:], int(binary.LittleEndian.Uint32(in[5:])), roomy)
		}
		b, errB := large.Decode([]byte("x"), in)
		if errB != nil {
			if !errors.Is(errB, ErrTooLarge) || !errors.Is(errA, ErrTooLarge) || string(b) != "x" {
				t.Fatalf("limit %d: %v; limit %d: %v", int64(zstdMaxWindow), errB, smallLimit, errA)
			}
			return
		}
		b = b[1:]
		if !IsCompressed(in) && !bytes.Equal(b, in) {
			t.Fatalf("plain input changed: %x -> %x", in, b)
		}
		switch {
		case errA != nil:
			// Too large for the small limit: the plaintext is larger, or
			// the size was declared and the data turned out invalid.
			if !errors.Is(errA, ErrTooLarge) || a != nil || (len(b) <= smallLimit && !bytes.Equal(b, in)) {
				t.Fatalf("limit %d: %v with %d bytes of plaintext", smallLimit, errA, len(b))
			}
		case !bytes.Equal(a, b):
			t.Fatalf("limits disagree: %s vs %s", short(a), short(b))
		}
		// Decoding is deterministic, and a decoded value encodes back.
		if c, err := large.Decode(nil, in); err != nil || !bytes.Equal(c, b) {
			t.Fatalf("second Decode differs: %v", err)
		}
		if !bytes.Equal(b, in) && !IsCompressed(b) {
			enc, _ := large.Encode(nil, b)
			reader := small
			if len(b) > smallLimit {
				reader = large
			}
			if back, err := reader.Decode(nil, enc); err != nil || !bytes.Equal(back, b) {
				t.Fatalf("re-encoded plaintext does not decode: %v", err)
			}
		}
	})
}

// checkLZ4BlockLen: if pierrec/lz4 decodes block to exactly n bytes (n at
// most cap(buf)), lz4BlockLen measures n.
func checkLZ4BlockLen(t *testing.T, block []byte, n int, buf []byte) {
	if n == 0 || n > cap(buf) {
		return
	}
	if got, err := lz4.UncompressBlock(block, buf[:n]); err == nil && got == n {
		if walked := lz4BlockLen(block, n); walked != n {
			t.Fatalf("pierrec/lz4 decodes the block to %d bytes; lz4BlockLen = %d", n, walked)
		}
	}
}

// FuzzRoundTrip encodes any input with every backend at several levels and
// decodes it back: Decode(Encode(x)) == x unless x already IsCompressed,
// when it equals Decode(x).
func FuzzRoundTrip(f *testing.F) {
	addSeeds(f)
	var codecs []*Codec
	for b, levels := range roundTripLevels {
		for _, level := range levels {
			codecs = append(codecs, mustNew(f, b, WithLevel(level), WithMinSize(MinMinSize)))
		}
	}
	reader := mustNew(f, Zstd, WithDictionary(testDict(f)))
	f.Fuzz(func(t *testing.T, in []byte) {
		want := in
		if IsCompressed(in) {
			var err error
			if want, err = reader.Decode(nil, in); err != nil {
				return
			}
		}
		for _, c := range codecs {
			out, ok := c.Encode(nil, in)
			if ok && (len(out) >= len(in) || !bytes.Equal(out[:5], []byte{0, 1, 2, 0, byte(c.Backend())})) {
				t.Fatalf("%v/%d: %d -> %d bytes", c.Backend(), c.Level(), len(in), len(out))
			}
			back, err := reader.Decode(nil, out)
			if err != nil || !bytes.Equal(back, want) {
				t.Fatalf("%v/%d: round trip of %s gave %s, %v", c.Backend(), c.Level(), short(in), short(back), err)
			}
		}
	})
}
