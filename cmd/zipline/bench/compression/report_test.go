package compression

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/testbed/corpus"
)

const ref = "GLIDE Go"

// sampleMemory: zipline saves more than GLIDE Go with zstd on json-1884,
// less with LZ4.
func sampleMemory() []MemoryResult {
	return []MemoryResult{{
		Class: corpus.JSON1884, Keys: 10000, Plain: 18_840_000,
		Runs: []MemoryRun{
			{Client: ZiplineName, Backend: None, Bytes: 21_000_000, Stored: 18_840_000},
			{Client: ZiplineName, Backend: Zstd, Bytes: 10_500_000, Stored: 8_800_000},
			{Client: ZiplineName, Backend: LZ4, Bytes: 15_000_000, Stored: 12_400_000},
			{Client: ref, Backend: None, Bytes: 21_000_000, Stored: 18_840_000},
			{Client: ref, Backend: Zstd, Bytes: 10_900_000, Stored: 9_000_000},
			{Client: ref, Backend: LZ4, Bytes: 14_700_000, Stored: 12_000_000},
		},
	}}
}

// sampleMatrix: one cell; zipline's zstd SET ratio is 0.5 (a miss), and
// zipline's LZ4 GET is slower than GLIDE Go's.
func sampleMatrix() *Matrix {
	m := &Matrix{Goroutines: []int{10}, Batches: []int{10}, Clients: []string{ZiplineName, ref},
		Backends: Backends, Duration: time.Second, Warmup: time.Second, Keys: 10000, ValueClass: "json-1884", MeanSize: 1884}
	tps := map[string]map[Backend][2]uint64{ // SET, GET keys in 1 s
		ZiplineName: {None: {200000, 300000}, Zstd: {100000, 290000}, LZ4: {199000, 250000}},
		ref:         {None: {150000, 200000}, Zstd: {90000, 190000}, LZ4: {150000, 260000}},
	}
	for _, c := range m.Clients {
		for _, b := range Backends {
			for i, op := range Ops {
				m.Points = append(m.Points, Point{Client: c, Backend: b, Op: op, Goroutines: 10, Batch: 10,
					Ops: tps[c][b][i], Elapsed: time.Second, P50: 300 * time.Microsecond, ServerUS: 1, OtherCPU: 3})
			}
		}
	}
	return m
}

func TestMisses(t *testing.T) {
	r := &Report{Reference: ref, Memory: sampleMemory(), Matrix: sampleMatrix()}
	var got []string
	for _, m := range r.Misses() {
		got = append(got, m.Kind+": "+m.Text)
	}
	want := []string{
		"memory: json-1884 LZ4: zipline saves 28.6 %, GLIDE Go 30.0 % (-1.43 points)",
		"ratio: SET g=10 b=10 zstd: 0.50 < 0.80",
		"ratio: GET g=10 b=10 LZ4: 0.83 < 0.95",
		"vs reference: GET g=10 b=10 LZ4: zipline 250.0, GLIDE Go 260.0 keys/s (0.96×)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("misses:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestWriteMarkdown(t *testing.T) {
	r := &Report{Title: "T", Command: "go run ./cmd/compbench -quick", Reference: ref, Variants: ZiplineVariants(),
		Corpus: []Compressibility{{Name: "json-1884", Values: 10, MeanSize: 1884, Zstd: 0.47, LZ4: 0.66}},
		Memory: sampleMemory(), Matrix: sampleMatrix(), Charts: []ChartLink{{"Memory", "x-memory.svg"}}}
	var buf bytes.Buffer
	if err := r.WriteMarkdown(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"```sh\ngo run ./cmd/compbench -quick\n```",
		"| zipline/zstd | zipline.New(Options{Addr, Compression: Compression{Backend: codec.Zstd}})",
		"| json-1884 | 10 | 1884 | 0.470 | 0.660 |",
		// class, B/value, zipline MB none/zstd/LZ4 and savings, GLIDE Go's, published.
		"| json-1884 | 1884 | 21.00 | 10.50 | 15.00 | 50.0 % | 28.6 % ✗ | 21.00 | 10.90 | 14.70 | 48.1 % | 30.0 % | 49.3 % | 31.8 % |",
		"| json-1884 | 1884.0 | 880.0 | 1240.0 | 900.0 | 1200.0 |",
		// SET TPS in thousands, then ratios.
		"| 10 | 10 | 200.0 | 100.0 | 199.0 | 150.0 | 90.0 | 150.0 |",
		"| 10 | 10 | 0.50 ✗ | 0.99 | 0.60 | 1.00 | 1.33 | 1.11 | 1.33 |",
		"| 10 | 10 | 0.97 | 0.83 ✗ | 0.95 | 1.30 | 1.50 | 1.53 | 0.96 ✗ |",
		// The published slice at g=10 b=10, with our ratios beside it.
		"| 10 | 10 | 152649 | 117218 | 152778 | 0.77 | 1.00 | 0.50 | 0.99 | 0.60 | 1.00 |",
		"| 10 | 5 | 82951 | 74472 | 83842 | 0.90 | 1.01 | – | – | – | – |",
		"**TPS ratio below the bar: 2**",
		"![Memory](x-memory.svg)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(out)
	}
}

func TestMemoryChart(t *testing.T) {
	mem := sampleMemory()
	mem = append(mem, MemoryResult{Class: corpus.Class{Kind: corpus.JSON, Target: 5, Name: "odd<&>"}, Keys: 1,
		Runs: []MemoryRun{{Client: ZiplineName, Backend: None, Bytes: 100}, {Client: ZiplineName, Backend: Zstd, Bytes: 110}}})
	ch := MemoryChart(mem)
	if len(ch.Series) != 6 {
		t.Fatalf("%d series, want 6 (2 clients × 2 backends + published)", len(ch.Series))
	}
	var names []string
	for _, s := range ch.Series {
		names = append(names, s.Name)
	}
	if got, want := strings.Join(names, ", "), "zipline zstd, zipline LZ4, GLIDE Go zstd, GLIDE Go LZ4, GLIDE published zstd, GLIDE published LZ4"; got != want {
		t.Errorf("series %q, want %q", got, want)
	}
	if got := strings.Join(ch.Groups, " "); got != "json-1884 odd<&>" {
		t.Errorf("groups %q", got)
	}
	if zstd := ch.Series[0].Values; zstd[0] != 0.5 || math.Abs(zstd[1]+0.1) > 1e-9 {
		t.Errorf("zipline zstd saved %v, want [0.5 -0.1]", zstd)
	}
	if v := ch.Series[2].Values[1]; !math.IsNaN(v) {
		t.Errorf("GLIDE Go's unmeasured class has %v", v)
	}
}

func TestHeatmaps(t *testing.T) {
	m := sampleMatrix()
	m.Goroutines = []int{10, 100} // a row never measured
	panels := RatioHeatmaps(m, ZiplineName)
	if len(panels) != 4 {
		t.Fatalf("%d panels, want 4", len(panels))
	}
	if v := panels[0].Values[0][0]; v != 0.5 {
		t.Errorf("SET zstd at g=10 b=10 = %v, want 0.5", v)
	}
	if !math.IsNaN(panels[0].Values[1][0]) {
		t.Error("an unmeasured cell has a value")
	}
	if p := panels[0]; p.Title != "SET zipline: zstd / none" || p.Bar != Zstd.RatioBar() || p.RowLabel != "goroutines" || p.ColLabel != "batch" {
		t.Errorf("first panel %+v", p)
	}
}

func TestWriteCharts(t *testing.T) {
	dir := t.TempDir()
	links, err := WriteCharts(dir, "c", sampleMemory(), sampleMatrix(), ref)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range links {
		names = append(names, l.File)
		b, err := os.ReadFile(filepath.Join(dir, l.File))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(b, []byte("<svg ")) || !bytes.HasSuffix(b, []byte("</svg>\n")) {
			t.Errorf("%s is not an SVG drawing", l.File)
		}
	}
	if got, want := strings.Join(names, " "), "c-memory.svg c-ratio-zipline.svg c-ratio-glide-go.svg c-zipline-vs-glide-go.svg"; got != want {
		t.Errorf("charts %q, want %q", got, want)
	}
}

func TestParse(t *testing.T) {
	if got, err := ParseInts("1, 10,100"); err != nil || len(got) != 3 || got[2] != 100 {
		t.Errorf("ParseInts = %v, %v", got, err)
	}
	for _, bad := range []string{"", "0", "1,x", "-3"} {
		if _, err := ParseInts(bad); err == nil {
			t.Errorf("ParseInts(%q): no error", bad)
		}
	}
	if got, err := ParseClasses("all"); err != nil || len(got) != 9 {
		t.Errorf("ParseClasses(all) = %v, %v", got, err)
	}
	if got, err := ParseClasses("json-1884,html-1247"); err != nil || len(got) != 2 || got[1] != corpus.HTML1247 {
		t.Errorf("ParseClasses = %v, %v", got, err)
	}
	if _, err := ParseClasses("json-1000"); err == nil {
		t.Error("unknown class: no error")
	}
	if b, err := ParseBackend("LZ4"); err != nil || b != LZ4 {
		t.Errorf("ParseBackend(LZ4) = %v, %v", b, err)
	}
}

func TestCorpusCheck(t *testing.T) {
	t.Parallel()
	rows, note, err := CorpusCheck([]corpus.Class{corpus.JSON1884}, 200, 1)
	if err != nil {
		t.Fatal(err)
	}
	g := rows[0]
	if g.Name != "json-1884" || g.Zstd < 0.35 || g.Zstd > 0.6 || g.LZ4 <= g.Zstd || g.LZ4 > 0.8 {
		t.Errorf("json-1884: %+v", g)
	}
	if len(rows) != 1+len(corpus.RealJSONFiles) || !strings.Contains(note, "real JSON samples") {
		t.Fatalf("%d rows, note %q: want the generated class and every real sample", len(rows), note)
	}
	lo, hi := 1.0, 0.0
	for _, r := range rows[1:] {
		lo, hi = min(lo, r.Zstd), max(hi, r.Zstd)
	}
	if g.Zstd < lo-0.02 || g.Zstd > hi+0.02 {
		t.Errorf("json-1884 zstd %.3f outside the real samples' [%.3f, %.3f]", g.Zstd, lo, hi)
	}
}
