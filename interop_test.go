package zipline

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/codec"
	"github.com/ziplinekv/zipline/testbed/corpus"
)

// glidePython finds the Python that has valkey-glide installed:
// ZIPLINE_GLIDE_PYTHON, or the virtualenv scripts/setup.sh makes.
func glidePython(t *testing.T) string {
	t.Helper()
	py := os.Getenv("ZIPLINE_GLIDE_PYTHON")
	if py == "" {
		py = filepath.Join(".tools", "glide-venv", "bin", "python")
	}
	if err := exec.Command(py, "-c", "import glide").Run(); err != nil {
		t.Skipf("skipping: Python valkey-glide not available at %s (run scripts/setup.sh glide): %v", py, err)
	}
	return py
}

type interopCase struct {
	Key      string `json:"key"`
	Op       string `json:"op"`
	ValueHex string `json:"value_hex"`
	value    []byte
}

// interopCases are realistic documents of several sizes, GLIDE's vectors'
// plaintexts, and the edge sizes: empty, 63 and 64 bytes, and random bytes.
func interopCases(prefix string) []interopCase {
	var vals [][]byte
	for _, cls := range corpus.Classes() {
		vals = append(vals, corpus.Generate(cls, 3, 11)...)
	}
	rnd := make([]byte, 2048)
	r := rand.New(rand.NewPCG(3, 4))
	for i := range rnd {
		rnd[i] = byte(r.Uint32())
	}
	vals = append(vals, []byte{}, bytes.Repeat([]byte("A"), 63), bytes.Repeat([]byte("A"), 64), rnd,
		bytes.Repeat([]byte(`{"k":"v"},`), 30_000))
	for n := 1; n <= 5; n++ {
		if b, err := os.ReadFile(filepath.Join(vectorsDir, strconv.Itoa(n)+".plain")); err == nil {
			vals = append(vals, b)
		}
	}
	ops := []string{"set", "mset", "setex"}
	cases := make([]interopCase, len(vals))
	for i, v := range vals {
		cases[i] = interopCase{Key: fmt.Sprintf("%s:%d", prefix, i), Op: ops[i%len(ops)], ValueHex: hex.EncodeToString(v), value: v}
	}
	return cases
}

func runGLIDE(t *testing.T, py, mode, port, backend string, cases []interopCase) {
	t.Helper()
	manifest := filepath.Join(t.TempDir(), "manifest.json")
	b, _ := json.Marshal(map[string]any{"cases": cases})
	if err := os.WriteFile(manifest, b, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, py, "testdata/glide_interop.py", mode,
		"--port", port, "--backend", backend, "--manifest", manifest).CombinedOutput()
	if err != nil {
		t.Fatalf("GLIDE %s (%s): %v\n%s", mode, backend, err, out)
	}
}

// Values written by GLIDE (zstd and LZ4) read back equal through zipline,
// and values zipline writes read back equal through GLIDE configured for
// either backend. Both directions cover SET/GET, MSET/MGET and SETEX/GETEX.
func TestGLIDEInterop(t *testing.T) {
	py := glidePython(t)
	ctx := context.Background()
	for _, backend := range []codec.Backend{codec.Zstd, codec.LZ4} {
		t.Run("GLIDE writes "+backend.String(), func(t *testing.T) {
			c, srv := newTestClient(t, Options{Compression: Compression{Backend: codec.Zstd}})
			cases := interopCases("g")
			runGLIDE(t, py, "write", strconv.Itoa(srv.Port), backend.String(), cases)
			var compressedSeen int
			for _, tc := range cases {
				raw, err := c.Raw().Get(ctx, tc.Key)
				if err != nil {
					t.Fatalf("%s: %v", tc.Key, err)
				}
				if codec.IsCompressed(raw) {
					compressedSeen++
					if raw[4] != byte(backend) {
						t.Fatalf("%s: GLIDE %s wrote backend id %d", tc.Key, backend, raw[4])
					}
				}
				var got []byte
				switch tc.Op {
				case "set":
					got, err = c.Get(ctx, tc.Key)
				case "mset":
					var vs [][]byte
					vs, err = c.MGet(ctx, tc.Key)
					if err == nil {
						got = vs[0]
					}
				case "setex":
					got, err = c.GetEx(ctx, tc.Key, EX(time.Hour))
				}
				if err != nil || !bytes.Equal(got, tc.value) {
					t.Errorf("%s (%s, %d B): zipline read %d B, %v", tc.Key, tc.Op, len(tc.value), len(got), err)
				}
			}
			if compressedSeen < len(cases)/2 {
				t.Fatalf("only %d of %d values were compressed by GLIDE", compressedSeen, len(cases))
			}
		})
		t.Run("zipline writes "+backend.String(), func(t *testing.T) {
			c, srv := newTestClient(t, Options{Compression: Compression{Backend: backend}})
			cases := interopCases("z")
			for _, tc := range cases {
				var err error
				switch tc.Op {
				case "set":
					err = c.Set(ctx, tc.Key, tc.value, EX(time.Hour))
				case "mset":
					err = c.MSet(ctx, KeyValue{tc.Key, tc.value})
				case "setex":
					_, err = c.Do(ctx, "SETEX", tc.Key, 3600, tc.value)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			if c.Stats().Compression.Compressed == 0 {
				t.Fatal("zipline compressed nothing")
			}
			// GLIDE reads them back configured for either backend.
			for _, reader := range []codec.Backend{codec.Zstd, codec.LZ4} {
				runGLIDE(t, py, "read", strconv.Itoa(srv.Port), reader.String(), cases)
			}
		})
	}
}
