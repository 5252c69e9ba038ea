//go:build clibs && cgo

package codecref

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// The C side writes what GLIDE writes: its zstd and LZ4 vectors, byte for
// byte (testdata/glide, made by valkey-glide 2.6.0 on libzstd and liblz4),
// but for zstd only the one-block 2 KB vector: GLIDE's 155 KB one spans
// several blocks, which GLIDE's own libzstd (the Rust crate's, not Debian's
// 1.5.4) splits differently; its size must be within 0.2 %.
func TestCWritesGlideVectors(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "glide")
	z, err := NewZstd(3)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	for _, n := range []string{"1", "5"} {
		plain, err := os.ReadFile(filepath.Join(dir, n+".plain"))
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []struct {
			file string
			enc  func([]byte) ([]byte, error)
			skip int // GLIDE's header, and the LZ4 length
		}{
			{"zstd_" + n + ".bin", func(p []byte) ([]byte, error) { return z.CompressGlide(nil, p) }, 5},
			{"lz4_" + n + ".bin", func(p []byte) ([]byte, error) { return LZ4Compress(nil, p) }, 9},
		} {
			stored, err := os.ReadFile(filepath.Join(dir, v.file))
			if err != nil {
				t.Fatal(err)
			}
			got, err := v.enc(plain)
			if v.file == "zstd_5.bin" {
				if d := len(got) - (len(stored) - v.skip); err != nil || d*500 > len(got) || -d*500 > len(got) {
					t.Errorf("%s: %d bytes, GLIDE stored %d (%v)", v.file, len(got), len(stored)-v.skip, err)
				}
				continue
			}
			if err != nil || !bytes.Equal(got, stored[v.skip:]) {
				t.Errorf("%s: %d bytes, GLIDE stored %d (%v)", v.file, len(got), len(stored)-v.skip, err)
			}
		}
	}
}

func TestSetupAndRun(t *testing.T) {
	docs, err := Docs()
	if err != nil {
		t.Fatal(err)
	}
	sizes, err := Setup(docs)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sizes {
		t.Logf("%+v", s)
		if !s.ZstdGlideRead {
			t.Errorf("%s: GLIDE's zstd value does not read", s.Doc)
		}
	}
	ms, err := Run(Config{Docs: docs[:1], Rounds: 1, Time: 2e6})
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2*len(Ops) {
		t.Errorf("%d measurements, want %d", len(ms), 2*len(Ops))
	}
}
