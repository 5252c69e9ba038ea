package codec

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
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
}

// FuzzDecode feeds Decode any input. It must not panic, must return the
// input unchanged unless the input IsCompressed, must honour its limit, and
// must agree between limits: the large-limit Codec takes the decoder that
// enforces its limit while decoding, the small one often the window-sized
// decoder with a check afterwards.
func FuzzDecode(f *testing.F) {
	addSeeds(f)
	const smallLimit = 64 << 10
	dict := WithDictionary(testDict(f))
	small := mustNew(f, Zstd, dict, WithMaxDecompressedSize(smallLimit))
	large := mustNew(f, LZ4, dict, WithMaxDecompressedSize(zstdMaxWindow))
	f.Fuzz(func(t *testing.T, in []byte) {
		a, errA := small.Decode(nil, in)
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
			if back, err := small.Decode(nil, enc); err != nil || !bytes.Equal(back, b) {
				t.Fatalf("re-encoded plaintext does not decode: %v", err)
			}
		}
	})
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
