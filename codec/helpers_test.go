package codec

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

// vectorDir holds the GLIDE vectors, kept in the repository (see
// testdata/README.md).
const vectorDir = "../testdata/glide"

// vectors returns vectorDir, or fails the test if it is absent: the
// vectors are part of the repository, so missing ones are a bug.
func vectors(tb testing.TB) string {
	tb.Helper()
	if _, err := os.Stat(vectorDir); err != nil {
		tb.Fatalf("GLIDE vectors not found at %s (testdata/glide in the repository): %v", vectorDir, err)
	}
	return vectorDir
}

// TestVectorsPresent fails when the GLIDE vectors are incomplete. Some
// tests and fuzz seeds use them only when present (readFileIfExists), so
// this test is what keeps them from quietly going without.
func TestVectorsPresent(t *testing.T) {
	dir := vectors(t)
	for _, name := range []string{"1.plain", "2.plain", "3.plain", "4.plain", "5.plain", "edge_cases.json",
		"zstd_1.bin", "zstd_5.bin", "lz4_1.bin", "lz4_5.bin"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Error(err)
		}
	}
	if bins, _ := filepath.Glob(filepath.Join(dir, "*.bin")); len(bins) != 22 {
		t.Errorf("%d *.bin files in %s, want 22", len(bins), dir)
	}
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
	dir := vectors(tb)
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

// jsonDoc is a ~2 KB JSON document: GLIDE's vector 1.plain.
func jsonDoc(tb testing.TB) []byte {
	tb.Helper()
	return readFile(tb, filepath.Join(vectors(tb), "1.plain"))
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

// mustNew returns a Codec or fails the test. A ZstdDict Codec gets the test
// dictionary unless opts give another.
func mustNew(tb testing.TB, b Backend, opts ...Option) *Codec {
	tb.Helper()
	if b == ZstdDict {
		opts = append([]Option{WithDictionary(testDict(tb))}, opts...)
	}
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

var (
	firstNames = []string{"Ada", "Grace", "Alan", "Linus", "Barbara", "Ken", "Dennis", "Margaret",
		"Edsger", "Donald", "Frances", "John", "Radia", "Tim", "Sophie", "Guido"}
	lastNames = []string{"Lovelace", "Hopper", "Turing", "Torvalds", "Liskov", "Thompson", "Ritchie",
		"Hamilton", "Dijkstra", "Knuth", "Allen", "Backus", "Perlman", "Berners-Lee", "Wilson", "van Rossum"}
	cities   = []string{"London", "Paris", "Berlin", "Lisbon", "Madrid", "Oslo", "Vienna", "Prague", "Dublin", "Zurich"}
	tagWords = []string{"admin", "beta", "premium", "trial", "staff", "vip", "legacy", "mobile", "api", "newsletter"}
	statuses = []string{"active", "suspended", "pending", "deleted"}
)

// record returns a JSON user record of about n bytes (at least about 100):
// the kind of small value a dictionary is for. Fields are added as n allows,
// then tags and orders fill the rest.
func record(r *rand.Rand, n int) []byte {
	first, last := firstNames[r.IntN(len(firstNames))], lastNames[r.IntN(len(lastNames))]
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"id":%d,"name":"%s %s","email":"%s.%s@example.com","status":"%s"`,
		r.IntN(10_000_000), first, last, strings.ToLower(first), strings.ToLower(last), statuses[r.IntN(len(statuses))])
	if b.Len() < n-80 {
		fmt.Fprintf(&b, `,"created_at":"2025-%02d-%02dT%02d:%02d:%02dZ","score":%d.%02d`,
			1+r.IntN(12), 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60), r.IntN(100), r.IntN(100))
	}
	if b.Len() < n-120 {
		fmt.Fprintf(&b, `,"address":{"street":"%d %s Street","city":"%s","zip":"%05d","country":"EU"}`,
			1+r.IntN(200), lastNames[r.IntN(len(lastNames))], cities[r.IntN(len(cities))], r.IntN(100000))
	}
	b.WriteString(`,"tags":[`)
	for i := 0; b.Len() < n-40; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		if i%4 == 3 {
			fmt.Fprintf(&b, `{"order":%d,"sku":"SKU-%06d","qty":%d}`, r.IntN(100000), r.IntN(1000000), 1+r.IntN(9))
		} else {
			fmt.Fprintf(&b, `"%s"`, tagWords[r.IntN(len(tagWords))])
		}
	}
	b.WriteString(`],"active":` + []string{"true", "false"}[r.IntN(2)] + `}`)
	return b.Bytes()
}

// recordSizes are the size classes of the dictionary tests.
var recordSizes = []int{100, 300, 500, 1000}

// records returns count records from seed, cycling through recordSizes.
func records(seed uint64, count int) [][]byte {
	r := rand.New(rand.NewPCG(seed, 5))
	out := make([][]byte, count)
	for i := range out {
		out[i] = record(r, recordSizes[i%len(recordSizes)])
	}
	return out
}

// testDictionary is trained once on 1000 generated records (seed 1); tests
// draw their values from other seeds.
var testDictionary = sync.OnceValues(func() ([]byte, error) {
	return TrainDictionary(records(1, 1000), 0)
})

func testDict(tb testing.TB) []byte {
	tb.Helper()
	d, err := testDictionary()
	if err != nil {
		tb.Fatalf("training the test dictionary: %v", err)
	}
	return d
}

// corpusPath holds JSON user records from a public corpus. The CLI embeds
// the corpus, so it lives in the corpus package (see testdata/README.md).
const corpusPath = "../testbed/corpus/realjson/random.json"

// corpusRecords returns the compact elements of the corpus's result array,
// or fails the test if the corpus is absent: it is part of the repository.
func corpusRecords(tb testing.TB) [][]byte {
	tb.Helper()
	raw := readFile(tb, corpusPath)
	var f struct {
		Result []json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(raw, &f); err != nil || len(f.Result) < 1000 {
		tb.Fatalf("%s: %d records, %v", corpusPath, len(f.Result), err)
	}
	out := make([][]byte, len(f.Result))
	for i, r := range f.Result {
		var b bytes.Buffer
		if err := json.Compact(&b, r); err != nil {
			tb.Fatal(err)
		}
		out[i] = b.Bytes()
	}
	return out
}
