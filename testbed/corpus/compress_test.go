package corpus

import (
	"fmt"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// loadReal returns the embedded real samples, or fails the test.
func loadReal(t testing.TB) map[string][][]byte {
	t.Helper()
	real, err := RealJSON()
	if err != nil {
		t.Fatal(err)
	}
	return real
}

// glideHeader is the size of GLIDE's header before the backend payload;
// LZ4 payloads start with a 4-byte plaintext length on top of it.
const glideHeader = 5

// keyOverhead is a rough per-key cost of a Valkey string key besides the
// value (key name, dict entry, object header, allocator rounding), used
// only to turn ratios into memory savings comparable with GLIDE's table.
const keyOverhead = 100

// stats is what compressing a set of values one by one gives.
type stats struct {
	n               int
	meanSize        float64
	zstd, lz4       float64 // mean of stored/original per value
	zstdRaw         int     // values stored uncompressed (no gain), zstd
	lz4Raw          int     // same, LZ4
	zstdMem, lz4Mem float64 // modelled memory saved, with keyOverhead per key
}

// measure compresses each value as GLIDE would store it: zstd at the
// default level (SpeedDefault, about level 3, GLIDE's default) without a
// checksum, as GLIDE's frames have none; LZ4 as a raw block (pierrec's
// CompressBlock, the fast mode GLIDE uses at level 0) after a 4-byte
// length. Both add the 5-byte header, and a value that does not shrink is
// stored as is, as GLIDE does, so a ratio never exceeds 1.
func measure(t testing.TB, values [][]byte) stats {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderCRC(false))
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	var lc lz4.Compressor
	var st stats
	var zbuf, lbuf []byte
	var total, zTotal, lTotal int
	for _, v := range values {
		zbuf = enc.EncodeAll(v, zbuf[:0])
		z := len(zbuf) + glideHeader
		if bound := lz4.CompressBlockBound(len(v)); cap(lbuf) < bound {
			lbuf = make([]byte, bound)
		}
		n, err := lc.CompressBlock(v, lbuf[:cap(lbuf)])
		if err != nil || n == 0 {
			t.Fatalf("lz4: n=%d, err=%v", n, err)
		}
		l := n + 4 + glideHeader
		if z >= len(v) {
			z = len(v)
			st.zstdRaw++
		}
		if l >= len(v) {
			l = len(v)
			st.lz4Raw++
		}
		st.zstd += float64(z) / float64(len(v))
		st.lz4 += float64(l) / float64(len(v))
		total += len(v)
		zTotal += z
		lTotal += l
	}
	st.n = len(values)
	k := float64(st.n)
	st.meanSize = float64(total) / k
	st.zstd /= k
	st.lz4 /= k
	mem := float64(total + keyOverhead*st.n)
	st.zstdMem = float64(total-zTotal) / mem
	st.lz4Mem = float64(total-lTotal) / mem
	return st
}

// band is a range a generated class's mean ratio must fall in.
type band struct{ lo, hi float64 }

func (b band) has(x float64) bool { return b.lo <= x && x <= b.hi }

// expect holds, per class, GLIDE's published memory savings (zstd, LZ4)
// and the ratio bands the generated corpus must meet. The bands are
// GLIDE's savings turned into per-value ratios with keyOverhead, ±~0.1,
// except for small sessions: real ones are dominated by random tokens and
// barely compress, while GLIDE measured 12% saved at 198 B (see doc.go).
var expect = map[string]struct {
	glideZstd, glideLZ4 float64
	zstd, lz4           band
}{
	"json-98":     {0.008, 0.000, band{0.93, 1}, band{0.97, 1}},
	"json-461":    {0.276, 0.150, band{0.60, 0.78}, band{0.75, 0.92}},
	"json-1884":   {0.493, 0.318, band{0.42, 0.55}, band{0.58, 0.72}},
	"html-193":    {0.200, 0.105, band{0.62, 0.85}, band{0.75, 0.95}},
	"html-556":    {0.372, 0.279, band{0.45, 0.65}, band{0.58, 0.78}},
	"html-1247":   {0.490, 0.389, band{0.37, 0.55}, band{0.48, 0.68}},
	"session-198": {0.118, 0.000, band{0.90, 1}, band{0.97, 1}},
	"session-480": {0.169, 0.000, band{0.78, 0.97}, band{0.93, 1}},
	"session-951": {0.241, 0.115, band{0.65, 0.85}, band{0.85, 1}},
}

// TestCompressibility compresses every generated class and the real JSON
// samples value by value, prints the table, and checks that the generated
// documents compress like real data.
func TestCompressibility(t *testing.T) {
	n := 2000
	if testing.Short() {
		n = 500
	}
	t.Logf("ratio = stored/original per value, mean over values; raw = values left uncompressed;")
	t.Logf("saved = modelled memory saving with %d B per key, beside GLIDE's published saving", keyOverhead)
	t.Logf("%-22s %6s %7s %6s %6s %5s %5s  %-13s %-13s", "class", "values", "mean B", "zstd", "lz4", "zraw%", "lraw%", "saved z/lz4", "GLIDE z/lz4")
	row := func(name string, st stats, glide string) {
		t.Logf("%-22s %6d %7.0f %6.3f %6.3f %5.1f %5.1f  %5.1f%%/%5.1f%% %s", name, st.n, st.meanSize, st.zstd, st.lz4,
			100*float64(st.zstdRaw)/float64(st.n), 100*float64(st.lz4Raw)/float64(st.n), 100*st.zstdMem, 100*st.lz4Mem, glide)
	}
	gen := map[string]stats{}
	for _, c := range Classes() {
		st := measure(t, Generate(c, n, 1))
		gen[c.Name] = st
		e := expect[c.Name]
		row(c.Name, st, fmt.Sprintf("%5.1f%%/%5.1f%%", 100*e.glideZstd, 100*e.glideLZ4))
		if !e.zstd.has(st.zstd) {
			t.Errorf("%s: zstd ratio %.3f outside [%.2f, %.2f]", c, st.zstd, e.zstd.lo, e.zstd.hi)
		}
		if !e.lz4.has(st.lz4) {
			t.Errorf("%s: LZ4 ratio %.3f outside [%.2f, %.2f]", c, st.lz4, e.lz4.lo, e.lz4.hi)
		}
	}
	// Within a kind, larger documents compress better, with both backends.
	for _, set := range [][3]Class{{JSON98, JSON461, JSON1884}, {HTML193, HTML556, HTML1247}, {Session198, Session480, Session951}} {
		for i := 1; i < 3; i++ {
			a, b := gen[set[i-1].Name], gen[set[i].Name]
			if b.zstd >= a.zstd || b.lz4 > a.lz4 {
				t.Errorf("%s (zstd %.3f, lz4 %.3f) does not compress better than %s (zstd %.3f, lz4 %.3f)",
					set[i], b.zstd, b.lz4, set[i-1], a.zstd, a.lz4)
			}
		}
	}

	real := loadReal(t)
	lo, hi := 1.0, 0.0
	for _, name := range RealJSONFiles {
		st := measure(t, real[name])
		row("real "+name, st, "")
		lo, hi = min(lo, st.zstd), max(hi, st.zstd)
	}
	// json-1884 must compress like real JSON: within the spread of the
	// three real files' mean zstd ratios (0.42 for 4.1 KB tweets to 0.72
	// for 0.5 KB user records), with 0.02 of slack.
	const slack = 0.02
	if r := gen["json-1884"].zstd; r < lo-slack || r > hi+slack {
		t.Errorf("json-1884 zstd ratio %.3f outside the real samples' range [%.3f, %.3f] ± %.2f", r, lo, hi, slack)
	}
}

// BenchmarkGenerator measures making one document of each class into a
// reused buffer.
func BenchmarkGenerator(b *testing.B) {
	for _, c := range Classes() {
		b.Run(c.Name, func(b *testing.B) {
			g := NewGenerator(c, 1)
			var buf []byte
			b.SetBytes(int64(c.Target))
			b.ReportAllocs()
			for b.Loop() {
				buf = g.AppendNext(buf[:0])
			}
		})
	}
}

// BenchmarkGenerate makes GLIDE's headline corpus: 10,000 json-1884
// values.
func BenchmarkGenerate(b *testing.B) {
	b.SetBytes(10000 * int64(JSON1884.Target))
	b.ReportAllocs()
	for b.Loop() {
		Generate(JSON1884, 10000, 1)
	}
}
