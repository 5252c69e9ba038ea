package codec

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// vectorDir holds the GLIDE vectors: shared/ sits beside the repository.
const vectorDir = "../../shared/vectors/glide"

// vectorsOrSkip returns vectorDir, or skips the test if it is absent.
func vectorsOrSkip(tb testing.TB) string {
	tb.Helper()
	if _, err := os.Stat(vectorDir); err != nil {
		tb.Skipf("GLIDE vectors not found at %s (shared/ is beside the repo in CI): %v", vectorDir, err)
	}
	return vectorDir
}

func readFile(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// vector is one stored value and the plaintext it reads as.
type vector struct {
	name         string // e.g. "zstd-l19_5"
	stored, want []byte
}

// glideVectors returns every *.bin with its n.plain, sorted by name.
func glideVectors(tb testing.TB) []vector {
	tb.Helper()
	dir := vectorsOrSkip(tb)
	bins, err := filepath.Glob(filepath.Join(dir, "*.bin"))
	if err != nil {
		tb.Fatal(err)
	}
	if len(bins) == 0 {
		tb.Fatalf("no *.bin in %s", dir)
	}
	sort.Strings(bins)
	var vs []vector
	for _, bin := range bins {
		name := filepath.Base(bin)
		name = name[:len(name)-len(".bin")]
		n := name[len(name)-1:]
		vs = append(vs, vector{
			name:   name,
			stored: readFile(tb, bin),
			want:   readFile(tb, filepath.Join(dir, n+".plain")),
		})
	}
	return vs
}

// jsonDoc is a ~2 KB JSON document, GLIDE's vector 1.plain when present.
func jsonDoc(tb testing.TB) []byte {
	tb.Helper()
	if b, err := os.ReadFile(filepath.Join(vectorDir, "1.plain")); err == nil {
		return b
	}
	return compressible(rand.New(rand.NewPCG(1, 1)), 2005)
}

var words = []string{"id", "name", "email", "created_at", "true", "false", "null",
	"user", "address", "street", "city", "country", "tags", "score", "active", "items"}

// compressible returns n bytes of JSON-like text.
func compressible(r *rand.Rand, n int) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for b.Len() < n {
		fmt.Fprintf(&b, "%q:%q,%q:%d,", words[r.IntN(len(words))], words[r.IntN(len(words))],
			words[r.IntN(len(words))], r.IntN(100000))
	}
	return b.Bytes()[:n]
}

func random(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func mustNew(tb testing.TB, b Backend, opts ...Option) *Codec {
	tb.Helper()
	c, err := New(b, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

func mustHex(tb testing.TB, s string) []byte {
	tb.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// short abbreviates b for failure messages.
func short(b []byte) string {
	if len(b) > 24 {
		return fmt.Sprintf("%x... (%d bytes)", b[:24], len(b))
	}
	return fmt.Sprintf("%x", b)
}
