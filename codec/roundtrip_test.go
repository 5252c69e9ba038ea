package codec

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
)

var roundTripLevels = map[Backend][]int{
	Zstd:     {ZstdMinLevel, -5, 0, 1, 3, 7, 12, ZstdMaxLevel},
	LZ4:      {LZ4MinLevel, -8, -1, 0, 1, 9, LZ4MaxLevel},
	ZstdDict: {ZstdMinLevel, 1, 3, 7, ZstdMaxLevel},
}

var roundTripSizes = []int{0, 1, 5, 6, 7, 63, 64, 65, 100, 1000, 4096, 65535, 65536, 65537, 200_000, 1 << 20}

// TestRoundTrip encodes random and compressible inputs at several levels,
// extremes included, and checks the stored form and that it decodes back.
func TestRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	inputs := map[string][]byte{}
	for _, n := range roundTripSizes {
		if testing.Short() && n > 65537 {
			continue
		}
		inputs[fmt.Sprint("random/", n)] = random(r, n)
		inputs[fmt.Sprint("text/", n)] = compressible(r, n)
	}
	dict := WithDictionary(testDict(t))
	readers := []*Codec{mustNew(t, Zstd, dict), mustNew(t, LZ4, dict, WithMaxDecompressedSize(2<<20))}
	for b, levels := range roundTripLevels {
		for _, level := range levels {
			c := mustNew(t, b, WithLevel(level))
			t.Run(fmt.Sprint(b, "/", level), func(t *testing.T) {
				for name, in := range inputs {
					out, ok := c.Encode(nil, in)
					switch {
					case ok && (len(out) >= len(in) || !bytes.Equal(out[:5], []byte{0, 1, 2, 0, byte(b)})):
						t.Errorf("%s: %d -> %d bytes, header % x", name, len(in), len(out), out[:5])
					case !ok && !bytes.Equal(out, in):
						t.Errorf("%s: not compressed but changed", name)
					case ok != IsCompressed(out):
						t.Errorf("%s: compressed %v but IsCompressed %v", name, ok, IsCompressed(out))
					case len(in) >= 4096 && bytes.HasPrefix([]byte(name), []byte("text")) && !ok:
						t.Errorf("%s: compressible text was not compressed", name)
					case bytes.HasPrefix([]byte(name), []byte("random")) && ok:
						t.Errorf("%s: random bytes were compressed", name)
					}
					for _, d := range append([]*Codec{c}, readers...) {
						back, err := d.Decode(nil, out)
						if err != nil || !bytes.Equal(back, in) {
							t.Errorf("%s: decode with %v codec: %d bytes, %v", name, d.Backend(), len(back), err)
						}
					}
				}
			})
		}
	}
}

// TestRoundTripEnveloped: Decode(Encode(x)) == Decode(x) also for values
// that look compressed already.
func TestRoundTripEnveloped(t *testing.T) {
	for _, v := range glideVectors(t) {
		for _, b := range []Backend{Zstd, LZ4, ZstdDict} {
			c := mustNew(t, b)
			out, ok := c.Encode(nil, v.stored)
			if ok || !bytes.Equal(out, v.stored) {
				t.Errorf("%s: %v encoded a stored value again", v.name, b)
			}
			if back, err := c.Decode(nil, out); err != nil || !bytes.Equal(back, v.want) {
				t.Errorf("%s: %v: %v", v.name, b, err)
			}
		}
	}
}

// TestConcurrent shares one Codec of each backend among goroutines; run
// with -race.
func TestConcurrent(t *testing.T) {
	doc := jsonDoc(t)
	small := records(14, 100)
	for _, b := range []Backend{Zstd, LZ4, ZstdDict} {
		c := mustNew(t, b)
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				r := rand.New(rand.NewPCG(uint64(g), 4))
				var enc, dec []byte
				for i := range 50 {
					in := doc
					switch i % 3 {
					case 1:
						in = compressible(r, 64+r.IntN(10000))
					case 2:
						in = small[r.IntN(len(small))]
					}
					enc, _ = c.Encode(enc[:0], in)
					var err error
					dec, err = c.Decode(dec[:0], enc)
					if err != nil || !bytes.Equal(dec, in) {
						t.Errorf("%v goroutine %d: round trip failed: %v", b, g, err)
						return
					}
				}
			})
		}
		wg.Wait()
		if s := c.Stats(); s.Compressed+s.Skipped != 400 || s.Decompressed != s.Compressed || s.Compressed < 260 {
			t.Errorf("%v: stats %+v", b, s)
		}
	}
}
