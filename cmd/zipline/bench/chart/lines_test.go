package chart

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestWriteLines(t *testing.T) {
	nan := math.NaN()
	ticks := []Tick{{0.3, "p50"}, {1, "p90"}, {2, "p99"}, {3, "p99.9"}}
	panel := func(title string) Lines {
		return Lines{Title: title, XLabel: "percentile", YLabel: "ms", XTicks: ticks, LogY: true, Lines: []Line{
			{Name: "zipline none", Color: "#1f77b4", X: []float64{0.3, 1, 2, 3}, Y: []float64{2, 5, 40, 90}},
			{Name: "GLIDE <Go>", Color: "#d62728", Dashed: true, X: []float64{0.3, 1, 2, 3}, Y: []float64{3, nan, 60, 120}},
		}}
	}
	var buf bytes.Buffer
	if err := WriteLines(&buf, "latency", []Lines{panel("GET 1gbit"), panel("SET 1gbit")}, 2); err != nil {
		t.Fatal(err)
	}
	text := parseSVG(t, buf.Bytes())
	for _, want := range []string{"latency", "GET 1gbit", "SET 1gbit", "p99.9", "zipline none", "GLIDE <Go>", "percentile", "200"} {
		if !strings.Contains(text, want) {
			t.Errorf("chart text lacks %q", want)
		}
	}
	// The NaN splits GLIDE's line in two pieces, of which only the second
	// has two points: one polyline per panel for it, one for zipline.
	if n := strings.Count(buf.String(), "<polyline"); n != 4 {
		t.Errorf("%d polylines, want 4", n)
	}
}

func TestYScale(t *testing.T) {
	lo, hi, ticks := yScale(Lines{LogY: true, Lines: []Line{{Y: []float64{0.13, 42}}}})
	if lo != 0.1 || hi != 50 || !slices.Equal(ticks, []float64{0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50}) {
		t.Errorf("log scale of 0.13..42: %v..%v %v", lo, hi, ticks)
	}
	lo, hi, ticks = yScale(Lines{Lines: []Line{{Y: []float64{3, 17}}}})
	if lo != 0 || hi != 20 || !slices.Equal(ticks, []float64{0, 5, 10, 15, 20}) {
		t.Errorf("linear scale of 3..17: %v..%v %v", lo, hi, ticks)
	}
}
