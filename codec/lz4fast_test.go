package codec

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/pierrec/lz4/v4"
)

// compressFast16 must write the bytes pierrec/lz4's CompressorCCompat
// writes (liblz4's LZ4_compress_fast), for every input under 64 KiB and
// every acceleration, and they must decode back.
func checkFast16(t *testing.T, name string, src []byte, accel int) {
	t.Helper()
	bound := lz4.CompressBlockBound(len(src))
	want := make([]byte, bound)
	z := lz4.CompressorCCompat{Acceleration: accel}
	n, err := z.CompressBlock(src, want)
	if err != nil {
		t.Fatalf("%s: pierrec: %v", name, err)
	}
	want = want[:n]
	// Poison the output so that a byte left unwritten shows.
	got := bytes.Repeat([]byte{0xA5}, bound)
	var tab lz4Table16
	for i := range tab {
		tab[i] = uint16(i * 7) // a table left dirty by an earlier call
	}
	m := compressFast16(&tab, src, got, accel)
	if !bytes.Equal(got[:m], want) {
		t.Fatalf("%s (%d bytes, acceleration %d): %d bytes, pierrec/lz4 writes %d; differ from %d", name, len(src), accel,
			m, len(want), firstDiff(got[:m], want))
	}
	back := make([]byte, len(src))
	if k, err := lz4.UncompressBlock(got[:m], back); err != nil || k != len(src) || !bytes.Equal(back, src) {
		t.Fatalf("%s: does not decode back: %d, %v", name, k, err)
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func TestCompressFast16MatchesCCompat(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	sizes := []int{0, 1, 4, 12, 13, 14, 15, 16, 19, 20, 64, 255, 256, 270, 1000, 2005, 4096, 65535, 65536, lz4U16Limit - 1}
	for _, size := range sizes {
		for kind, src := range map[string][]byte{
			"random": random(r, size),
			"text":   compressible(r, size),
			"run":    bytes.Repeat([]byte("abc"), size/3+1)[:size],
			"zeros":  make([]byte, size),
			"mixed":  append(compressible(r, size/2), random(r, size-size/2)...),
		} {
			for _, accel := range []int{1, 2, 8, 128} {
				checkFast16(t, kind, src, accel)
			}
		}
	}
	for _, d := range refDocs(t) {
		if len(d.data) < lz4U16Limit {
			checkFast16(t, d.name, d.data, 1)
		}
	}
	for _, v := range glideVectors(t) {
		if len(v.want) < lz4U16Limit {
			checkFast16(t, v.name, v.want, 1)
		}
	}
}

// GLIDE's LZ4 vectors (liblz4's LZ4_compress_default) are what the codec
// writes, byte for byte.
func TestLZ4EncodeWritesGlideBytes(t *testing.T) {
	c := mustNew(t, LZ4)
	for _, v := range glideVectors(t) {
		if v.name != "lz4_1" && v.name != "lz4_2" && v.name != "lz4_5" {
			continue
		}
		got, _ := c.Encode(nil, v.want)
		if !bytes.Equal(got, v.stored) {
			t.Errorf("%s: Encode writes %d bytes, GLIDE stored %d; differ from %d", v.name, len(got), len(v.stored), firstDiff(got, v.stored))
		}
	}
}

func FuzzCompressFast16(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) >= lz4U16Limit {
			return
		}
		for _, accel := range []int{1, 3} {
			checkFast16(t, "fuzz", in, accel)
		}
	})
}
