package compression

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"
)

// Report is what a results file shows. Every part is optional.
type Report struct {
	Title     string
	Command   string // the command line that produced it
	Date      time.Time
	Machine   string
	Server    string
	GoVersion string
	Variants  []Variant
	// Reference is the client zipline is held against ("GLIDE Go"); empty
	// when zipline ran alone.
	Reference  string
	Notes      []string // paragraphs after the header
	Corpus     []Compressibility
	CorpusNote string
	Memory     []MemoryResult
	Matrix     *Matrix
	Charts     []ChartLink
}

// ChartLink is a chart file written beside the report.
type ChartLink struct{ Title, File string }

// NoisyCPU is the share of one CPU (in %) other processes may use during
// a phase before the report flags the point as noisy.
const NoisyCPU = 25

// Miss is one point that misses issue 3's bar.
type Miss struct {
	Kind string // "memory", "ratio", "vs reference", "failed"
	Text string
}

// Misses lists every point that misses the bar: zipline's memory saving
// below the reference client's on the same corpus, zipline's
// compressed/uncompressed TPS ratio below Backend.RatioBar, zipline's TPS
// below the reference client's, and failed points.
func (r *Report) Misses() []Miss {
	var out []Miss
	ref := r.Reference
	for _, res := range r.Memory {
		for _, b := range []Backend{Zstd, LZ4} {
			z, ok1 := res.Saved(ZiplineName, b)
			g, ok2 := res.Saved(ref, b)
			if ok1 && ok2 && z < g {
				out = append(out, Miss{"memory", fmt.Sprintf("%s %s: zipline saves %s, %s %s (%+.2f points)",
					res.Class, b.Label(), pct(z), ref, pct(g), 100*(z-g))})
			}
		}
	}
	m := r.Matrix
	if m == nil {
		return out
	}
	for _, op := range Ops {
		for _, g := range m.Goroutines {
			for _, bs := range m.Batches {
				for _, b := range []Backend{Zstd, LZ4} {
					if x, ok := m.Ratio(ZiplineName, b, op, g, bs); ok && x < b.RatioBar() {
						out = append(out, Miss{"ratio", fmt.Sprintf("%s g=%d b=%d %s: %.2f < %.2f", op, g, bs, b.Label(), x, b.RatioBar())})
					}
				}
				if ref == "" {
					continue
				}
				for _, b := range m.Backends {
					if x, ok := m.Versus(ZiplineName, ref, b, op, g, bs); ok && x < 1 {
						zp, _ := m.Point(ZiplineName, b, op, g, bs)
						rp, _ := m.Point(ref, b, op, g, bs)
						out = append(out, Miss{"vs reference", fmt.Sprintf("%s g=%d b=%d %s: zipline %s, %s %s keys/s (%.2f×)",
							op, g, bs, b.Label(), kps(zp.TPS()), ref, kps(rp.TPS()), x)})
					}
				}
			}
		}
	}
	for _, p := range m.Points {
		if p.Failed != "" {
			out = append(out, Miss{"failed", fmt.Sprintf("%s %s %s g=%d b=%d: %s", p.Client, p.Backend.Label(), p.Op, p.Goroutines, p.Batch, p.Failed)})
		}
	}
	return out
}

// errWriter remembers the first write error so the writers can print
// freely and check once.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

// WriteMarkdown writes the whole report.
func (r *Report) WriteMarkdown(w io.Writer) error {
	e := &errWriter{w: w}
	title := r.Title
	if title == "" {
		title = "Compression benchmark"
	}
	e.printf("# %s\n\n", title)
	if r.Command != "" {
		e.printf("```sh\n%s\n```\n\n", r.Command)
	}
	for _, kv := range [][2]string{{"Date", dateString(r.Date)}, {"Machine", r.Machine}, {"Server", r.Server}, {"Go", r.GoVersion}} {
		if kv[1] != "" {
			e.printf("- %s: %s\n", kv[0], kv[1])
		}
	}
	if len(r.Variants) > 0 {
		e.printf("\n| variant | how it is built and called |\n|---|---|\n")
		for _, v := range r.Variants {
			e.printf("| %s | %s |\n", v.Name(), v.Config)
		}
	}
	e.printf("\n")
	for _, n := range r.Notes {
		e.printf("%s\n\n", n)
	}
	r.writeSummary(e)
	if len(r.Corpus) > 0 {
		e.printf("## Corpus\n\n")
		if r.CorpusNote != "" {
			e.printf("%s\n\n", r.CorpusNote)
		}
		writeCorpus(e, r.Corpus)
	}
	if len(r.Memory) > 0 {
		e.printf("## Memory\n\n")
		writeMemory(e, r.Memory, r.Reference)
	}
	if r.Matrix != nil {
		e.printf("## Throughput\n\n")
		writeMatrix(e, r.Matrix, r.Reference)
	}
	if len(r.Charts) > 0 {
		e.printf("## Charts\n\n")
		for _, c := range r.Charts {
			e.printf("### %s\n\n![%s](%s)\n\n", c.Title, c.Title, c.File)
		}
	}
	return e.err
}

func dateString(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format("2006-01-02 15:04 MST")
}

func (r *Report) writeSummary(e *errWriter) {
	e.printf("## Against the bar\n\n")
	e.printf("Issue 3's bar: memory saved ≥ GLIDE's on the same corpus for both backends; TPS ratio (compressed / uncompressed, same client) " +
		"≥ 0.95 for LZ4 and ≥ 0.80 for zstd at every point; zipline's TPS ≥ GLIDE Go's at every point.")
	if r.Reference == "" {
		e.printf(" GLIDE Go did not run here, so only the ratio bar is checked.")
	}
	e.printf("\n\n")
	misses := r.Misses()
	kinds := []string{"memory", "ratio", "vs reference", "failed"}
	names := map[string]string{"memory": "Memory saved below " + r.Reference + "'s", "ratio": "TPS ratio below the bar",
		"vs reference": "zipline slower than " + r.Reference, "failed": "Failed points"}
	if len(misses) == 0 {
		e.printf("Every measured point meets the bar.\n\n")
	}
	for _, k := range kinds {
		var list []string
		for _, m := range misses {
			if m.Kind == k {
				list = append(list, m.Text)
			}
		}
		if len(list) == 0 {
			continue
		}
		e.printf("**%s: %d**\n\n", names[k], len(list))
		for _, t := range list {
			e.printf("- %s\n", t)
		}
		e.printf("\n")
	}
	if m := r.Matrix; m != nil {
		noisy, total := 0, 0
		for _, p := range m.Points {
			total++
			if p.OtherCPU > NoisyCPU {
				noisy++
			}
		}
		e.printf("Noise: %d of %d points ran while other processes used more than %d %% of a CPU (column \"others\" in the details).\n\n",
			noisy, total, NoisyCPU)
	}
}

func writeCorpus(e *errWriter, rows []Compressibility) {
	e.printf("Stored bytes / plaintext bytes with zipline's codec at default levels, value by value, header included " +
		"(a value that would not shrink is stored as is). Lower is better.\n\n")
	e.printf("| values | count | mean B | zstd | LZ4 | zstd, mean per value | LZ4, mean per value |\n|---|--:|--:|--:|--:|--:|--:|\n")
	for _, c := range rows {
		e.printf("| %s | %d | %.0f | %.3f | %.3f | %.3f | %.3f |\n", c.Name, c.Values, c.MeanSize, c.Zstd, c.LZ4, c.ZstdMean, c.LZ4Mean)
	}
	e.printf("\n")
}

// memoryClients returns the clients of the memory runs, zipline first.
func memoryClients(mem []MemoryResult) []string {
	var out []string
	seen := map[string]bool{}
	for _, res := range mem {
		for _, r := range res.Runs {
			if !seen[r.Client] {
				seen[r.Client] = true
				out = append(out, r.Client)
			}
		}
	}
	return out
}

func writeMemory(e *errWriter, mem []MemoryResult, ref string) {
	clients := memoryClients(mem)
	e.printf("used_memory growth for %d values per class (MB = 10^6 B), FLUSHALL before each run; \"saved\" is 1 − compressed/uncompressed "+
		"for the same client. GLIDE's published savings (Valkey 8, its own unpublished corpus) are for comparison: the corpora differ, so "+
		"the bar compares against %s on this corpus.\n\n", mem[0].Keys, orDash(ref))
	e.printf("| class | B/value |")
	for _, c := range clients {
		e.printf(" %s none MB | zstd MB | LZ4 MB | zstd saved | LZ4 saved |", c)
	}
	e.printf(" GLIDE published zstd | LZ4 |\n|---|--:|")
	for range clients {
		e.printf("--:|--:|--:|--:|--:|")
	}
	e.printf("--:|--:|\n")
	for _, res := range mem {
		e.printf("| %s | %.0f |", res.Class, res.MeanSize())
		for _, c := range clients {
			for _, b := range Backends {
				if run, ok := res.Run(c, b); ok {
					e.printf(" %.2f |", float64(run.Bytes)/1e6)
				} else {
					e.printf(" – |")
				}
			}
			for _, b := range []Backend{Zstd, LZ4} {
				s, ok := res.Saved(c, b)
				mark := ""
				if g, ok2 := res.Saved(ref, b); c == ZiplineName && ok && ok2 && s < g {
					mark = " ✗"
				}
				e.printf(" %s%s |", pctOrDash(s, ok), mark)
			}
		}
		for _, b := range []Backend{Zstd, LZ4} {
			p, ok := Published(res.Class.String(), b)
			e.printf(" %s |", pctOrDash(p, ok))
		}
		e.printf("\n")
	}
	e.printf("\nStored bytes per value (mean STRLEN), the payload behind those numbers:\n\n| class | plaintext |")
	for _, c := range clients {
		e.printf(" %s zstd | LZ4 |", c)
	}
	e.printf("\n|---|--:|")
	for range clients {
		e.printf("--:|--:|")
	}
	e.printf("\n")
	for _, res := range mem {
		e.printf("| %s | %.1f |", res.Class, res.MeanSize())
		for _, c := range clients {
			for _, b := range []Backend{Zstd, LZ4} {
				if run, ok := res.Run(c, b); ok {
					e.printf(" %.1f |", float64(run.Stored)/float64(max(res.Keys, 1)))
				} else {
					e.printf(" – |")
				}
			}
		}
		e.printf("\n")
	}
	e.printf("\n")
}

func writeMatrix(e *errWriter, m *Matrix, ref string) {
	e.printf("%d keys of %s (mean %.0f B), each phase %v after %v of warm-up; one client shared by the cell's goroutines; "+
		"TPS counts keys (a batch of 10 is 10), in thousands per second. A ✗ marks a zipline point that misses the bar.\n\n",
		m.Keys, m.ValueClass, m.MeanSize, m.Duration, m.Warmup)
	for _, op := range Ops {
		e.printf("### %s: thousand keys/s\n\n| goroutines | batch |", op)
		for _, c := range m.Clients {
			for _, b := range m.Backends {
				e.printf(" %s %s |", c, b.Label())
			}
		}
		e.printf("\n|--:|--:|%s\n", strings.Repeat("--:|", len(m.Clients)*len(m.Backends)))
		for _, g := range m.Goroutines {
			for _, bs := range m.Batches {
				e.printf("| %d | %d |", g, bs)
				for _, c := range m.Clients {
					for _, b := range m.Backends {
						if p, ok := m.Point(c, b, op, g, bs); ok {
							e.printf(" %s |", kps(p.TPS()))
						} else {
							e.printf(" – |")
						}
					}
				}
				e.printf("\n")
			}
		}
		e.printf("\n### %s: ratios\n\n| goroutines | batch |", op)
		var comp []Backend
		for _, b := range m.Backends {
			if b != None {
				comp = append(comp, b)
			}
		}
		for _, c := range m.Clients {
			for _, b := range comp {
				e.printf(" %s %s/none |", c, b.Label())
			}
		}
		hasRef := ref != "" && contains(m.Clients, ref) && contains(m.Clients, ZiplineName)
		if hasRef {
			for _, b := range m.Backends {
				e.printf(" zipline/%s %s |", ref, b.Label())
			}
		}
		cols := len(m.Clients) * len(comp)
		if hasRef {
			cols += len(m.Backends)
		}
		e.printf("\n|--:|--:|%s\n", strings.Repeat("--:|", cols))
		for _, g := range m.Goroutines {
			for _, bs := range m.Batches {
				e.printf("| %d | %d |", g, bs)
				for _, c := range m.Clients {
					for _, b := range comp {
						x, ok := m.Ratio(c, b, op, g, bs)
						e.printf(" %s |", ratioCell(x, ok, c == ZiplineName && x < b.RatioBar()))
					}
				}
				if hasRef {
					for _, b := range m.Backends {
						x, ok := m.Versus(ZiplineName, ref, b, op, g, bs)
						e.printf(" %s |", ratioCell(x, ok, x < 1))
					}
				}
				e.printf("\n")
			}
		}
		e.printf("\n")
	}
	writePublishedTPS(e, m, ref)
	writeDetails(e, m)
}

func writePublishedTPS(e *errWriter, m *Matrix, ref string) {
	e.printf("### Beside GLIDE's published SET figures\n\nGLIDE's SET TPS (8 Graviton3 vCPUs, server on another host) and its ratios, "+
		"with the ratios measured here at the same points (– where the point was not run). The first five rows are the blog's "+
		"10-goroutine slice; the rest its scaling table, which the blog labels batch 1 but whose 10-goroutine row repeats the batch-10 "+
		"figures, so it is shown at batch 10. GLIDE's range over its whole matrix: zstd %.2f–%.2f, LZ4 %.2f–%.2f.\n\n",
		PublishedRatioRange[Zstd][0], PublishedRatioRange[Zstd][1], PublishedRatioRange[LZ4][0], PublishedRatioRange[LZ4][1])
	clients := []string{ZiplineName}
	if ref != "" && contains(m.Clients, ref) {
		clients = append(clients, ref)
	}
	e.printf("| goroutines | batch | published none | zstd | LZ4 | published zstd/none | LZ4/none |")
	for _, c := range clients {
		e.printf(" %s zstd/none | LZ4/none |", c)
	}
	e.printf("\n|--:|--:|--:|--:|--:|--:|--:|%s\n", strings.Repeat("--:|--:|", len(clients)))
	for _, row := range append(append([]PublishedSETRow(nil), PublishedBatchSlice...), PublishedScaling...) {
		e.printf("| %d | %d | %.0f | %.0f | %.0f | %.2f | %.2f |", row.Goroutines, row.Batch, row.None, row.Zstd, row.LZ4,
			row.Zstd/row.None, row.LZ4/row.None)
		for _, c := range clients {
			for _, b := range []Backend{Zstd, LZ4} {
				x, ok := m.Ratio(c, b, Set, row.Goroutines, row.Batch)
				e.printf(" %s |", ratioCell(x, ok, false))
			}
		}
		e.printf("\n")
	}
	e.printf("\n")
}

func writeDetails(e *errWriter, m *Matrix) {
	e.printf("<details><summary>Every point: latency per call, CPU per key, noise, errors</summary>\n\n")
	e.printf("p50/p99 are per call (one SET/GET, or one batch). Client CPU is the whole benchmark process (GLIDE's Rust threads " +
		"included) per key; server CPU is redis-server's per key (10 ms resolution); \"others\" is the CPU other processes used " +
		"during the window, in %% of one CPU.\n\n")
	e.printf("| client | backend | op | goroutines | batch | k keys/s | p50 | p99 | client µs/key | server µs/key | others | errors |\n")
	e.printf("|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, p := range m.Points {
		tps := kps(p.TPS())
		if p.Failed != "" {
			tps = "FAIL"
		}
		others := "?"
		if p.OtherCPU >= 0 {
			others = fmt.Sprintf("%.0f %%", p.OtherCPU)
			if p.OtherCPU > NoisyCPU {
				others += " ⚠"
			}
		}
		srv := "?"
		if p.ServerUS >= 0 {
			srv = fmt.Sprintf("%.2f", p.ServerUS)
		}
		errs := fmt.Sprint(p.Errors)
		if p.FirstErr != "" {
			errs += " (" + strings.ReplaceAll(p.FirstErr, "|", "/") + ")"
		}
		e.printf("| %s | %s | %s | %d | %d | %s | %s | %s | %.2f | %s | %s | %s |\n", p.Client, p.Backend.Label(), p.Op,
			p.Goroutines, p.Batch, tps, durString(p.P50), durString(p.P99), p.ClientUS, srv, others, errs)
	}
	e.printf("\n</details>\n\n")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func ratioCell(x float64, ok, miss bool) string {
	if !ok || math.IsNaN(x) || math.IsInf(x, 0) {
		return "–"
	}
	if miss {
		return fmt.Sprintf("%.2f ✗", x)
	}
	return fmt.Sprintf("%.2f", x)
}

// kps formats keys/s in thousands.
func kps(tps float64) string { return fmt.Sprintf("%.1f", tps/1000) }

func pct(f float64) string { return fmt.Sprintf("%.1f %%", 100*f) }

func pctOrDash(f float64, ok bool) string {
	if !ok {
		return "–"
	}
	return pct(f)
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

func durString(d time.Duration) string {
	switch {
	case d <= 0:
		return "–"
	case d >= time.Millisecond:
		return fmt.Sprintf("%.2f ms", float64(d)/1e6)
	}
	return fmt.Sprintf("%.0f µs", float64(d)/1e3)
}
