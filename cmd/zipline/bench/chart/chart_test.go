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
