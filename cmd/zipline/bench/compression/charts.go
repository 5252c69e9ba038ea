package compression

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/ziplinekv/zipline/cmd/zipline/bench/chart"
)

// RatioScale colours compressed/uncompressed TPS ratios.
var RatioScale = chart.Scale{Lo: 0.4, Mid: 1.0, Hi: 1.2}

// Colours of the memory chart's series.
var seriesColors = map[string][2]string{ // client: zstd, LZ4
	ZiplineName: {"#1f77b4", "#17becf"},
	"":          {"#d62728", "#ff9896"}, // any other client
	"published": {"#555555", "#999999"},
}

// MemoryChart is the grouped bar chart of memory saved per class: each
// client's zstd and LZ4, then GLIDE's published figures.
func MemoryChart(mem []MemoryResult) chart.Bars {
	ch := chart.Bars{Title: "Memory saved per corpus class (used_memory, vs. no compression)", YLabel: "memory saved"}
	for _, res := range mem {
		ch.Groups = append(ch.Groups, res.Class.String())
	}
	for _, c := range memoryClients(mem) {
		colors, ok := seriesColors[c]
		if !ok {
			colors = seriesColors[""]
		}
		for i, b := range []Backend{Zstd, LZ4} {
			s := chart.Series{Name: c + " " + b.Label(), Color: colors[i]}
			for _, res := range mem {
				v, ok := res.Saved(c, b)
				if !ok {
					v = math.NaN()
				}
				s.Values = append(s.Values, v)
			}
			ch.Series = append(ch.Series, s)
		}
	}
	for i, b := range []Backend{Zstd, LZ4} {
		s := chart.Series{Name: "GLIDE published " + b.Label(), Color: seriesColors["published"][i], Faded: true}
		for _, res := range mem {
			v, ok := Published(res.Class.String(), b)
			if !ok {
				v = math.NaN()
			}
			s.Values = append(s.Values, v)
		}
		ch.Series = append(ch.Series, s)
	}
	return ch
}

// RatioHeatmaps returns client's compressed/uncompressed TPS ratio panels:
// SET and GET, zstd and LZ4, goroutines down and batch across, with the
// bar of each backend outlined.
func RatioHeatmaps(m *Matrix, client string) []chart.Heatmap {
	var out []chart.Heatmap
	for _, op := range Ops {
		for _, b := range []Backend{Zstd, LZ4} {
			if !containsBackend(m.Backends, b) || !containsBackend(m.Backends, None) {
				continue
			}
			h := newHeatmap(m, fmt.Sprintf("%s %s: %s / none", op, client, b.Label()), b.RatioBar())
			for r, g := range m.Goroutines {
				for c, bs := range m.Batches {
					if x, ok := m.Ratio(client, b, op, g, bs); ok {
						h.Values[r][c] = x
					}
				}
			}
			out = append(out, h)
		}
	}
	return out
}

// VersusHeatmaps returns zipline's TPS over ref's for each backend and op.
func VersusHeatmaps(m *Matrix, ref string) []chart.Heatmap {
	var out []chart.Heatmap
	for _, op := range Ops {
		for _, b := range m.Backends {
			h := newHeatmap(m, fmt.Sprintf("%s %s: zipline / %s", op, b.Label(), ref), 1)
			for r, g := range m.Goroutines {
				for c, bs := range m.Batches {
					if x, ok := m.Versus(ZiplineName, ref, b, op, g, bs); ok {
						h.Values[r][c] = x
					}
				}
			}
			out = append(out, h)
		}
	}
	return out
}

func newHeatmap(m *Matrix, title string, bar float64) chart.Heatmap {
	h := chart.Heatmap{Title: title, RowLabel: "goroutines", ColLabel: "batch", Rows: m.Goroutines, Cols: m.Batches, Bar: bar}
	h.Values = make([][]float64, len(m.Goroutines))
	for r := range h.Values {
		h.Values[r] = make([]float64, len(m.Batches))
		for c := range h.Values[r] {
			h.Values[r][c] = math.NaN()
		}
	}
	return h
}

func containsBackend(list []Backend, b Backend) bool {
	for _, x := range list {
		if x == b {
			return true
		}
	}
	return false
}

// WriteCharts writes the charts for whatever was measured into dir, named
// prefix+"-memory.svg", prefix+"-ratio-<client>.svg" and
// prefix+"-zipline-vs-<ref>.svg", and returns links relative to dir. mem
// and m may be empty; ref may be "".
func WriteCharts(dir, prefix string, mem []MemoryResult, m *Matrix, ref string) ([]ChartLink, error) {
	var links []ChartLink
	write := func(title, name string, draw func(*bytes.Buffer) error) error {
		var buf bytes.Buffer
		if err := draw(&buf); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o644); err != nil {
			return fmt.Errorf("compression: %w", err)
		}
		links = append(links, ChartLink{Title: title, File: name})
		return nil
	}
	if len(mem) > 0 {
		if err := write("Memory saved per class", prefix+"-memory.svg", func(b *bytes.Buffer) error {
			return MemoryChart(mem).WriteSVG(b)
		}); err != nil {
			return links, err
		}
	}
	if m == nil {
		return links, nil
	}
	for _, c := range m.Clients {
		panels := RatioHeatmaps(m, c)
		if len(panels) == 0 {
			continue
		}
		title := fmt.Sprintf("%s: compressed / uncompressed TPS (outlined: below 0.80 zstd, 0.95 LZ4)", c)
		if err := write(c+": TPS ratio, compressed / uncompressed", prefix+"-ratio-"+slug(c)+".svg", func(b *bytes.Buffer) error {
			return chart.WriteHeatmaps(b, title, panels, RatioScale, 2)
		}); err != nil {
			return links, err
		}
	}
	if ref != "" && contains(m.Clients, ref) && contains(m.Clients, ZiplineName) {
		title := fmt.Sprintf("zipline TPS / %s TPS (outlined: zipline slower)", ref)
		if err := write(title, prefix+"-zipline-vs-"+slug(ref)+".svg", func(b *bytes.Buffer) error {
			return chart.WriteHeatmaps(b, title, VersusHeatmaps(m, ref), chart.Scale{Lo: 0.5, Mid: 1, Hi: 2}, len(m.Backends))
		}); err != nil {
			return links, err
		}
	}
	return links, nil
}

// slug turns a client name into a file-name part: "GLIDE Go" → "glide-go".
func slug(s string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), " ", "-")
}
