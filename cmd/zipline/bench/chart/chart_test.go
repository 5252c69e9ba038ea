package chart

import (
	"bytes"
	"encoding/xml"
	"io"
	"math"
	"strings"
	"testing"
)

// parseSVG checks that b is well-formed XML with an svg root, and returns
// its text content.
func parseSVG(t *testing.T, b []byte) string {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(b))
	var text strings.Builder
	root := ""
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("invalid SVG: %v\n%s", err, b)
		}
		switch x := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = x.Name.Local
			}
		case xml.CharData:
			text.Write(x)
			text.WriteByte('\n')
		}
	}
	if root != "svg" {
		t.Fatalf("root element %q", root)
	}
	return text.String()
}

func TestBars(t *testing.T) {
	c := Bars{Title: "saved", YLabel: "memory saved", Groups: []string{"json-1884", "odd<&>"}, Series: []Series{
		{Name: "zipline zstd", Color: "#1f77b4", Values: []float64{0.5, -0.1}},
		{Name: "published", Color: "#555555", Values: []float64{0.49, math.NaN()}, Faded: true},
	}}
	var buf bytes.Buffer
	if err := c.WriteSVG(&buf); err != nil {
		t.Fatal(err)
	}
	text := parseSVG(t, buf.Bytes())
	for _, want := range []string{"saved", "memory saved", "json-1884", "odd<&>", "zipline zstd", "published", "50", "-10", "49"} {
		if !strings.Contains(text, want) {
			t.Errorf("chart text lacks %q", want)
		}
	}
	if n := strings.Count(buf.String(), `stroke-dasharray`); n != 2 { // legend swatch + one bar
		t.Errorf("%d faded shapes, want 2", n)
	}
}

func TestWriteHeatmaps(t *testing.T) {
	nan := math.NaN()
	panels := []Heatmap{
		{Title: "SET zstd", RowLabel: "goroutines", ColLabel: "batch", Rows: []int{10, 100}, Cols: []int{1, 10},
			Values: [][]float64{{0.5, 0.99}, {nan, 1.1}}, Bar: 0.8},
		{Title: "GET LZ4", RowLabel: "goroutines", ColLabel: "batch", Rows: []int{10, 100}, Cols: []int{1, 10},
			Values: [][]float64{{1, 1}, {1, 1}}},
	}
	var buf bytes.Buffer
	if err := WriteHeatmaps(&buf, "ratios", panels, Scale{Lo: 0.4, Mid: 1, Hi: 1.2}, 2); err != nil {
		t.Fatal(err)
	}
	text := parseSVG(t, buf.Bytes())
	for _, want := range []string{"ratios", "SET zstd", "GET LZ4", "0.50", "0.99", "–", "goroutines", "batch", "below the bar"} {
		if !strings.Contains(text, want) {
			t.Errorf("heatmap text lacks %q", want)
		}
	}
	// The cell below its panel's bar is outlined; the others are not.
	if n := strings.Count(buf.String(), `stroke="black" stroke-width="2"/>`); n != 1+1 { // legend swatch + 0.5
		t.Errorf("%d outlined shapes, want 2", n)
	}
}

func TestScaleColor(t *testing.T) {
	s := Scale{Lo: 0.4, Mid: 1.0, Hi: 1.2}
	for _, c := range []struct {
		v    float64
		want string
	}{{0, "#d73027"}, {0.4, "#d73027"}, {1.0, "#ffffbf"}, {1.2, "#1a9850"}, {9, "#1a9850"}} {
		if got := s.Color(c.v); got != c.want {
			t.Errorf("Color(%v) = %s, want %s", c.v, got, c.want)
		}
	}
}

func TestTimeline(t *testing.T) {
	x := []float64{-0.2, -0.1, 0, 0.1, 0.2, 0.3}
	c := Timeline{Title: "failover <timeline>", XLabel: "seconds from the kill", X: x,
		Panels: []TimelinePanel{
			{YLabel: "p99, ms", Log: true, Series: []Series{
				{Name: "zipline", Color: "#1f77b4", Values: []float64{0.5, 0.6, 900, math.NaN(), 2, 0.5}},
				{Name: "peer", Color: "#d62728", Values: []float64{0.4, 0, 1500, 1500, 3, 0.4}},
			}},
			{YLabel: "errors per bucket", Series: []Series{
				{Name: "zipline", Color: "#1f77b4", Values: []float64{0, 0, 12, 0, 0, 0}},
				{Name: "peer", Color: "#d62728", Values: []float64{0, 0, 40, 35, 0, 0}},
			}},
		},
		Marks: []Mark{{X: 0, Label: "kill -9", Color: "black"}, {X: 0.15, Label: "promoted", Color: "#555", Dashed: true}},
	}
	var buf bytes.Buffer
	if err := c.WriteSVG(&buf); err != nil {
		t.Fatal(err)
	}
	text := parseSVG(t, buf.Bytes())
	for _, want := range []string{"failover <timeline>", "seconds from the kill", "p99, ms", "errors per bucket",
		"zipline", "peer", "kill -9", "promoted", "1000", "0.1", "40"} {
		if !strings.Contains(text, want) {
			t.Errorf("chart text lacks %q", want)
		}
	}
	// The NaN splits zipline's latency line in two; the peer's 0 splits
	// its log line; the error lines are whole.
	if n := strings.Count(buf.String(), "<polyline"); n != 2+2+1+1 {
		t.Errorf("%d polylines, want 6", n)
	}
	if n := strings.Count(buf.String(), `stroke-dasharray="5 3"`); n != 2 { // one per panel
		t.Errorf("%d dashed marks, want 2", n)
	}
	if err := (Timeline{X: []float64{1}}).WriteSVG(io.Discard); err == nil {
		t.Error("a chart of one x value drew")
	}
}

func TestNiceStep(t *testing.T) {
	for _, c := range []struct{ in, want float64 }{{0.07, 0.1}, {0.1, 0.1}, {0.13, 0.2}, {3, 5}, {7, 10}, {42, 50}, {0, 1}} {
		if got := niceStep(c.in); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("niceStep(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}
