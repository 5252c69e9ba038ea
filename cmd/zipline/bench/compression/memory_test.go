package compression

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/testbed"
	"github.com/ziplinekv/zipline/testbed/corpus"
	"github.com/ziplinekv/zipline/testbed/servertest"
)

// quietServer starts a server whose used_memory moves only with the data
// (see admin.quietMemory).
func quietServer(t *testing.T, ctx context.Context) *testbed.Server {
	srv := servertest.NewServer(t, testbed.Config{})
	a, err := dialAdmin(srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if err := a.quietMemory(ctx); err != nil {
		t.Fatal(err)
	}
	return srv
}

func TestMeasureMemory(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv := quietServer(t, ctx)
	const n = 200
	res, err := MeasureMemory(ctx, MemoryConfig{Addr: srv.Addr, Classes: []corpus.Class{corpus.JSON98, corpus.JSON1884},
		Keys: n, Flush: true, Verify: 8}, ZiplineVariants())
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 {
		t.Fatalf("%d results, want 2", len(res))
	}
	for _, r := range res {
		if len(r.Runs) != 3 {
			t.Fatalf("%s: %d runs, want 3", r.Class, len(r.Runs))
		}
		base, _ := r.Run(ZiplineName, None)
		// Without compression the server holds at least the values.
		if base.Bytes < r.Plain || base.Stored != r.Plain {
			t.Errorf("%s: used_memory grew %d B and STRLEN sums to %d B for %d B of values", r.Class, base.Bytes, base.Stored, r.Plain)
		}
		for _, run := range r.Runs {
			if run.Verified != 8 {
				t.Errorf("%s %s: %d values verified, want 8", r.Class, run.Backend, run.Verified)
			}
		}
		t.Logf("%s: none %d B, zstd saved %.3f, LZ4 saved %.3f", r.Class, base.Bytes, must(r.Saved(ZiplineName, Zstd)), must(r.Saved(ZiplineName, LZ4)))
	}
	// json-1884 compresses by about half with zstd (GLIDE: 49 %), less
	// with LZ4; json-98 values are mostly too small to shrink.
	big := res[1]
	z, l := must(big.Saved(ZiplineName, Zstd)), must(big.Saved(ZiplineName, LZ4))
	if z < 0.35 || z > 0.65 || l < 0.15 || l >= z {
		t.Errorf("json-1884: zstd saved %.3f, LZ4 %.3f; want zstd in [0.35, 0.65] and 0.15 <= LZ4 < zstd", z, l)
	}
	zr, _ := big.Run(ZiplineName, Zstd)
	if zr.Stored >= big.Plain*6/10 {
		t.Errorf("json-1884 zstd: %d B stored for %d B of values", zr.Stored, big.Plain)
	}
	if s := must(res[0].Saved(ZiplineName, Zstd)); s > 0.05 || s < -0.02 {
		t.Errorf("json-98: zstd saved %.3f, want about 0", s)
	}
}

// Without Flush the runs delete their own keys and leave other keys alone.
func TestMeasureMemoryKeepsOtherKeys(t *testing.T) {
	t.Parallel()
	srv := servertest.NewServer(t, testbed.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := srv.Do(ctx, "SET", "unrelated", "x"); err != nil {
		t.Fatal(err)
	}
	res, err := MeasureMemory(ctx, MemoryConfig{Addr: srv.Addr, Classes: []corpus.Class{corpus.HTML1247}, Keys: 100,
		KeyPrefix: "test:mem:"}, []Variant{Zipline(None), Zipline(LZ4)})
	if err != nil {
		t.Fatal(err)
	}
	if s := must(res[0].Saved(ZiplineName, LZ4)); s < 0.1 {
		t.Errorf("html-1247 LZ4 saved %.3f, want > 0.1", s)
	}
	v, err := srv.Do(ctx, "DBSIZE")
	if err != nil || v.Int() != 1 {
		t.Fatalf("DBSIZE = %d (%v), want 1: the unrelated key only", v.Int(), err)
	}
}

func must(f float64, ok bool) float64 {
	if !ok {
		return -1
	}
	return f
}

// truncating stores every value one byte short, which the read-back check
// must catch.
type truncating struct{ Client }

func (c truncating) SetBatch(ctx context.Context, keys []string, vals [][]byte) error {
	short := make([][]byte, len(vals))
	for i, v := range vals {
		short[i] = v[:len(v)-1]
	}
	return c.Client.SetBatch(ctx, keys, short)
}

func TestMeasureMemoryVerifies(t *testing.T) {
	t.Parallel()
	srv := servertest.NewServer(t, testbed.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	bad := Zipline(None)
	newClient := bad.New
	bad.New = func(ctx context.Context, addr string) (Client, error) {
		c, err := newClient(ctx, addr)
		return truncating{c}, err
	}
	_, err := MeasureMemory(ctx, MemoryConfig{Addr: srv.Addr, Classes: []corpus.Class{corpus.JSON461}, Keys: 50, Flush: true},
		[]Variant{Zipline(None), bad})
	if err == nil || !strings.Contains(err.Error(), "differing from the") {
		t.Fatalf("err = %v, want a read-back mismatch", err)
	}
}
