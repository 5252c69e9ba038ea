package codec

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestAllocs: Encode and Decode of a ~2 KB JSON value into a dst with room
// allocate nothing once warm, for our own frames and for GLIDE's.
func TestAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under -race")
	}
	doc := jsonDoc(t)
	type tc struct {
		name   string
		c      *Codec
		stored []byte
	}
	var cases []tc
	for _, b := range []Backend{Zstd, LZ4} {
		for _, opts := range [][]Option{nil, {WithMaxDecompressedSize(1000_000)}, {WithMaxDecompressedSize(100)}} {
			c := mustNew(t, b, opts...)
			stored, ok := c.Encode(nil, doc)
			if !ok {
				t.Fatalf("%v: JSON not compressed", b)
			}
			cases = append(cases, tc{b.String(), c, stored})
		}
	}
	if dir, err := filepath.Abs(vectorDir); err == nil {
		for _, f := range []string{"zstd_1.bin", "lz4_1.bin"} {
			if b, err := readFileIfExists(filepath.Join(dir, f)); err == nil {
				cases = append(cases, tc{"glide " + f, mustNew(t, Zstd, WithMaxDecompressedSize(1<<20)), b})
				cases = append(cases, tc{"glide " + f + " default", mustNew(t, LZ4), b})
			}
		}
	}
	dst := make([]byte, 0, 64<<10)
	for _, tc := range cases {
		limited := tc.c.MaxDecompressedSize() < int64(len(doc))
		enc := testingAllocs(func() { dst, _ = tc.c.Encode(dst[:0], doc) })
		if !bytes.Equal(dst, tc.stored) && tc.name[:5] != "glide" {
			t.Errorf("%s: Encode output changed between calls", tc.name)
		}
		var err error
		dec := testingAllocs(func() { dst, err = tc.c.Decode(dst[:0], tc.stored) })
		t.Logf("%s (limit %d): Encode %.1f allocs/op, Decode %.1f allocs/op", tc.name, tc.c.MaxDecompressedSize(), enc, dec)
		switch {
		case limited:
			// The error is the only allocation.
			if err == nil || dec > 3 {
				t.Errorf("%s limit %d: Decode %.0f allocs, %v", tc.name, tc.c.MaxDecompressedSize(), dec, err)
			}
		case err != nil || !bytes.Equal(dst, doc):
			t.Errorf("%s: Decode failed: %v", tc.name, err)
		case dec != 0:
			t.Errorf("%s: Decode allocates %.1f times per call", tc.name, dec)
		}
		if enc != 0 {
			t.Errorf("%s: Encode allocates %.1f times per call", tc.name, enc)
		}
	}
}

func testingAllocs(f func()) float64 {
	for range 10 { // warm pools and lazily built tables
		f()
	}
	return testing.AllocsPerRun(100, f)
}

func readFileIfExists(name string) ([]byte, error) {
	return os.ReadFile(name)
}
