package codec

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestAllocs: Encode and Decode of a ~2 KB JSON value, and for ZstdDict of
// a ~300-byte record too, into a dst with room allocate nothing once warm,
// for our own frames and for GLIDE's.
func TestAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under -race")
	}
	doc := jsonDoc(t)
	rec := records(16, 2)[1]
	type tc struct {
		name          string
		c             *Codec
		plain, stored []byte
		foreign       bool // stored was not written by c
	}
	var cases, dictCases []tc
	for _, b := range []Backend{Zstd, LZ4, ZstdDict} {
		for _, opts := range [][]Option{nil, {WithMaxDecompressedSize(1000_000)}, {WithMaxDecompressedSize(100)}} {
			c := mustNew(t, b, opts...)
			plains := [][]byte{doc}
			if b == ZstdDict {
				plains = append(plains, rec)
			}
			for _, p := range plains {
				stored, ok := c.Encode(nil, p)
				if !ok {
					t.Fatalf("%v: %d bytes of JSON not compressed", b, len(p))
				}
				cases = append(cases, tc{b.String(), c, p, stored, false})
				if b == ZstdDict && opts == nil {
					dictCases = append(dictCases, cases[len(cases)-1])
				}
			}
		}
	}
	// A Codec of another backend reading ZstdDict values with its dictionary.
	reader := mustNew(t, LZ4, WithDictionary(testDict(t)))
	for _, dc := range dictCases {
		cases = append(cases, tc{"lz4 reading zstd-dict", reader, dc.plain, dc.stored, true})
	}
	if dir, err := filepath.Abs(vectorDir); err == nil {
		for _, f := range []string{"zstd_1.bin", "lz4_1.bin"} {
			if b, err := readFileIfExists(filepath.Join(dir, f)); err == nil {
				cases = append(cases, tc{"glide " + f, mustNew(t, Zstd, WithMaxDecompressedSize(1<<20)), doc, b, true})
				cases = append(cases, tc{"glide " + f + " default", mustNew(t, LZ4), doc, b, true})
				cases = append(cases, tc{"glide " + f + " dictionary", mustNew(t, ZstdDict), doc, b, true})
			}
		}
	}
	dst := make([]byte, 0, 64<<10)
	for _, tc := range cases {
		doc := tc.plain
		limited := tc.c.MaxDecompressedSize() < int64(len(doc))
		enc := testingAllocs(func() { dst, _ = tc.c.Encode(dst[:0], doc) })
		if !bytes.Equal(dst, tc.stored) && !tc.foreign {
			t.Errorf("%s: Encode output changed between calls", tc.name)
		}
		var err error
		dec := testingAllocs(func() { dst, err = tc.c.Decode(dst[:0], tc.stored) })
		t.Logf("%s (%d bytes, limit %d): Encode %.1f allocs/op, Decode %.1f allocs/op", tc.name, len(doc), tc.c.MaxDecompressedSize(), enc, dec)
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

// bytesPerCall is the heap bytes f allocates per call, averaged over many
// calls after warming up: a stray allocation by a goroutine that outlived an
// earlier test (a GC worker, a decoder's goroutine) then adds a few bytes to
// the average rather than kilobytes to one reading.
func bytesPerCall(f func()) uint64 {
	for range 10 {
		f()
	}
	const runs = 100
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		f()
	}
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / runs
}

func readFileIfExists(name string) ([]byte, error) {
	return os.ReadFile(name)
}
