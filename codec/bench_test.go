package codec

import (
	"path/filepath"
	"testing"
)

// Benchmarks run on a ~2 KB JSON document (GLIDE's vector 1.plain), the
// size of the documents in GLIDE's published benchmark. SetBytes is the
// plaintext size in both directions.

func BenchmarkEncode(b *testing.B) {
	doc := jsonDoc(b)
	for _, be := range []Backend{Zstd, LZ4} {
		c := mustNew(b, be)
		b.Run(be.String(), func(b *testing.B) {
			dst := make([]byte, 0, 2*len(doc))
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			for b.Loop() {
				dst, _ = c.Encode(dst[:0], doc)
			}
			b.ReportMetric(float64(len(dst))/float64(len(doc)), "ratio")
		})
		b.Run(be.String()+"-parallel", func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				dst := make([]byte, 0, 2*len(doc))
				for pb.Next() {
					dst, _ = c.Encode(dst[:0], doc)
				}
			})
		})
	}
}

func BenchmarkDecode(b *testing.B) {
	doc := jsonDoc(b)
	type input struct {
		name   string
		stored []byte
	}
	var inputs []input
	for _, be := range []Backend{Zstd, LZ4} {
		stored, _ := mustNew(b, be).Encode(nil, doc)
		inputs = append(inputs, input{be.String(), stored})
	}
	// GLIDE's own bytes: a zstd frame without content size.
	for _, f := range []string{"zstd_1", "lz4_1"} {
		if stored, err := readFileIfExists(filepath.Join(vectorDir, f+".bin")); err == nil {
			inputs = append(inputs, input{"glide-" + f, stored})
		}
	}
	c := mustNew(b, Zstd)
	for _, in := range inputs {
		b.Run(in.name, func(b *testing.B) {
			dst := make([]byte, 0, 2*len(doc))
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			for b.Loop() {
				dst, _ = c.Decode(dst[:0], in.stored)
			}
		})
		b.Run(in.name+"-parallel", func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				dst := make([]byte, 0, 2*len(doc))
				for pb.Next() {
					dst, _ = c.Decode(dst[:0], in.stored)
				}
			})
		})
	}
}

// BenchmarkDictEncode and BenchmarkDictDecode run on a ~300-byte JSON record,
// the kind of value a dictionary is for, with plain zstd at the same level
// for comparison. The ratio is stored/original, header included.
func BenchmarkDictEncode(b *testing.B) {
	rec := records(17, 2)[1]
	for _, be := range []Backend{ZstdDict, Zstd} {
		c := mustNew(b, be)
		b.Run(be.String(), func(b *testing.B) {
			dst := make([]byte, 0, 2*len(rec))
			b.SetBytes(int64(len(rec)))
			b.ReportAllocs()
			for b.Loop() {
				dst, _ = c.Encode(dst[:0], rec)
			}
			b.ReportMetric(float64(len(dst))/float64(len(rec)), "ratio")
		})
	}
}

func BenchmarkDictDecode(b *testing.B) {
	rec := records(17, 2)[1]
	for _, be := range []Backend{ZstdDict, Zstd} {
		c := mustNew(b, be)
		stored, ok := c.Encode(nil, rec)
		if !ok {
			b.Fatalf("%v: %d-byte record not compressed", be, len(rec))
		}
		b.Run(be.String(), func(b *testing.B) {
			dst := make([]byte, 0, 2*len(rec))
			b.SetBytes(int64(len(rec)))
			b.ReportAllocs()
			for b.Loop() {
				dst, _ = c.Decode(dst[:0], stored)
			}
		})
	}
}
