// Package chart draws the benchmark reports' charts as standalone SVG: a
// grouped bar chart, heatmap panels and line panels (lines.go). The SVG is written by hand, enough
// for a report and readable in any browser or on GitHub, with no
// dependency.
package chart

import (
	"fmt"
	"html"
	"io"
	"math"
	"strconv"
	"strings"
)

// Series is one colour of bars: one value per group, NaN for none.
type Series struct {
	Name   string
	Color  string // CSS colour
	Values []float64
	Faded  bool // drawn lighter with a dashed outline, e.g. published figures
}

// Bars is a grouped bar chart of fractions, drawn as percentages.
type Bars struct {
	Title  string
	YLabel string
	Groups []string
	Series []Series
}

const (
	fontFamily = "font-family=\"Helvetica, Arial, sans-serif\""
	barW       = 13
	barGap     = 14 // between groups
)

// WriteSVG draws the chart. The y axis runs from 0 to the largest value
// rounded up to 10 %; negative values are drawn as 0 with their label.
func (c Bars) WriteSVG(w io.Writer) error {
	e := new(svg)
	top := 0.1
	for _, s := range c.Series {
		for _, v := range s.Values {
			if !math.IsNaN(v) && v > top {
				top = v
			}
		}
	}
	top = math.Ceil(top*10-1e-9) / 10
	const left, right, titleH, legendH, bottom, plotH = 60, 20, 30, 22, 40, 300
	const legendCol = 200 // px per legend entry, three to a row
	groupW := len(c.Series)*barW + barGap
	plotW := max(len(c.Groups)*groupW, 3*legendCol, textWidth(c.Title, 15)-left)
	legendRows := (len(c.Series) + 2) / 3
	width := left + plotW + right
	height := titleH + legendRows*legendH + plotH + bottom
	y0 := titleH + legendRows*legendH // top of the plot
	e.printf(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" %s font-size="11">`+"\n",
		width, height, width, height, fontFamily)
	e.printf(`<rect width="100%%" height="100%%" fill="white"/>` + "\n")
	e.printf(`<text x="%d" y="20" font-size="15" font-weight="bold">%s</text>`+"\n", left, esc(c.Title))
	for i, s := range c.Series {
		x, y := left+(i%3)*legendCol, titleH+(i/3)*legendH+4
		e.printf(`<rect x="%d" y="%d" width="12" height="12" %s/>`, x, y, barStyle(s))
		e.printf(`<text x="%d" y="%d">%s</text>`+"\n", x+17, y+10, esc(s.Name))
	}
	yOf := func(v float64) float64 { return float64(y0+plotH) - float64(plotH)*v/top }
	for t := 0.0; t <= top+1e-9; t += 0.1 {
		y := yOf(t)
		e.printf(`<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>`, left, left+plotW, y, y)
		e.printf(`<text x="%d" y="%.1f" text-anchor="end">%.0f %%</text>`+"\n", left-5, y+4, 100*t)
	}
	e.printf(`<text transform="translate(14 %d) rotate(-90)" text-anchor="middle">%s</text>`+"\n", y0+plotH/2, esc(c.YLabel))
	for gi, g := range c.Groups {
		gx := left + gi*groupW + barGap/2
		for si, s := range c.Series {
			if gi >= len(s.Values) || math.IsNaN(s.Values[gi]) {
				continue
			}
			v := s.Values[gi]
			x := gx + si*barW
			y := yOf(max(v, 0))
			e.printf(`<rect x="%d" y="%.1f" width="%d" height="%.1f" %s><title>%s %s: %.1f %%</title></rect>`+"\n",
				x, y, barW-2, float64(y0+plotH)-y, barStyle(s), esc(g), esc(s.Name), 100*v)
			e.printf(`<text transform="translate(%.1f %.1f) rotate(-90)" font-size="8">%.0f</text>`+"\n",
				float64(x)+barW/2+2, y-3, 100*v)
		}
		e.printf(`<text x="%d" y="%d" text-anchor="middle">%s</text>`+"\n", gx+len(c.Series)*barW/2, y0+plotH+16, esc(g))
	}
	e.printf(`<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="#333"/>`+"\n", left, left+plotW, y0+plotH, y0+plotH)
	e.printf("</svg>\n")
	return e.writeTo(w)
}

func barStyle(s Series) string {
	if s.Faded {
		return fmt.Sprintf(`fill="%s" fill-opacity="0.35" stroke="%s" stroke-dasharray="2 1"`, s.Color, s.Color)
	}
	return fmt.Sprintf(`fill="%s"`, s.Color)
}

// Heatmap is one panel: a value per (row, column), NaN where not measured.
type Heatmap struct {
	Title    string
	RowLabel string // e.g. "goroutines"
	ColLabel string // e.g. "batch"
	Rows     []int
	Cols     []int
	Values   [][]float64 // [row][col]
	// Bar outlines the cells below it in black; 0 outlines none.
	Bar float64
}

// Scale maps a value to a colour: red at Lo, pale yellow at Mid, green at
// Hi, linear between and clamped outside.
type Scale struct{ Lo, Mid, Hi float64 }

// Color returns the colour of v as #rrggbb.
func (s Scale) Color(v float64) string {
	red, mid, green := [3]float64{215, 48, 39}, [3]float64{255, 255, 191}, [3]float64{26, 152, 80}
	var a, b [3]float64
	var t float64
	switch {
	case v <= s.Mid:
		a, b, t = red, mid, (v-s.Lo)/(s.Mid-s.Lo)
	default:
		a, b, t = mid, green, (v-s.Mid)/(s.Hi-s.Mid)
	}
	t = min(max(t, 0), 1)
	return fmt.Sprintf("#%02x%02x%02x", int(a[0]+(b[0]-a[0])*t+0.5), int(a[1]+(b[1]-a[1])*t+0.5), int(a[2]+(b[2]-a[2])*t+0.5))
}

const (
	cellW, cellH = 52, 26
	panelGapX    = 50
	panelGapY    = 40
)

// WriteHeatmaps draws the panels in a grid of cols columns, with a title,
// a colour legend for scale, and the number in every cell.
func WriteHeatmaps(w io.Writer, title string, panels []Heatmap, scale Scale, cols int) error {
	e := new(svg)
	cols = max(1, min(cols, len(panels)))
	maxR, maxC := 1, 1
	for _, p := range panels {
		maxR, maxC = max(maxR, len(p.Rows)), max(maxC, len(p.Cols))
	}
	const left, titleH, legendH, panelTitleH, axisW = 20, 34, 50, 22, 50
	pw := axisW + maxC*cellW // panel width
	for _, p := range panels {
		pw = max(pw, textWidth(p.Title, 12)+10)
	}
	ph := panelTitleH + maxR*cellH + 36
	rows := (len(panels) + cols - 1) / cols
	width := max(left+cols*pw+(cols-1)*panelGapX+20, left+legendW+20, left+textWidth(title, 15)+20)
	height := titleH + legendH + rows*ph + (rows-1)*panelGapY + 10
	e.printf(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" %s font-size="11">`+"\n",
		width, height, width, height, fontFamily)
	e.printf(`<rect width="100%%" height="100%%" fill="white"/>` + "\n")
	e.printf(`<text x="%d" y="22" font-size="15" font-weight="bold">%s</text>`+"\n", left, esc(title))
	writeLegend(e, left, titleH, scale)
	for i, p := range panels {
		x0 := left + (i%cols)*(pw+panelGapX)
		y0 := titleH + legendH + (i/cols)*(ph+panelGapY)
		writePanel(e, x0, y0, p, scale)
	}
	e.printf("</svg>\n")
	return e.writeTo(w)
}

// legendW is the width of a heatmap legend: gradient and swatch.
const legendW = 300 + 130

// textWidth estimates the width of s in px at a font size, for layout
// (Helvetica averages a little over half the size per character).
func textWidth(s string, size int) int { return len([]rune(s)) * size * 58 / 100 }

func writeLegend(e *svg, x, y int, s Scale) {
	const w, h = 300, 12
	e.printf(`<defs><linearGradient id="scale" x1="0" x2="1" y1="0" y2="0">`)
	for i := 0; i <= 10; i++ {
		v := s.Lo + (s.Hi-s.Lo)*float64(i)/10
		e.printf(`<stop offset="%d%%" stop-color="%s"/>`, 10*i, s.Color(v))
	}
	e.printf("</linearGradient></defs>\n")
	e.printf(`<rect x="%d" y="%d" width="%d" height="%d" fill="url(#scale)" stroke="#999"/>`+"\n", x, y, w, h)
	for _, v := range []float64{s.Lo, (s.Lo + s.Mid) / 2, s.Mid, s.Hi} {
		tx := float64(x) + w*(v-s.Lo)/(s.Hi-s.Lo)
		e.printf(`<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#333"/>`, tx, tx, y+h, y+h+4)
		e.printf(`<text x="%.1f" y="%d" text-anchor="middle" font-size="10">%s</text>`+"\n", tx, y+h+15, trimFloat(v))
	}
	e.printf(`<rect x="%d" y="%d" width="12" height="12" fill="white" stroke="black" stroke-width="2"/>`, x+w+20, y)
	e.printf(`<text x="%d" y="%d">below the bar</text>`+"\n", x+w+37, y+10)
}

func writePanel(e *svg, x0, y0 int, p Heatmap, s Scale) {
	const panelTitleH, axisW = 22, 50
	e.printf(`<text x="%d" y="%d" font-size="12" font-weight="bold">%s</text>`+"\n", x0, y0+14, esc(p.Title))
	gx, gy := x0+axisW, y0+panelTitleH
	for r, rv := range p.Rows {
		e.printf(`<text x="%d" y="%d" text-anchor="end">%d</text>`+"\n", gx-6, gy+r*cellH+cellH/2+4, rv)
		for c := range p.Cols {
			x, y := gx+c*cellW, gy+r*cellH
			v := math.NaN()
			if r < len(p.Values) && c < len(p.Values[r]) {
				v = p.Values[r][c]
			}
			if math.IsNaN(v) {
				e.printf(`<rect x="%d" y="%d" width="%d" height="%d" fill="#f4f4f4" stroke="white"/>`, x, y, cellW, cellH)
				e.printf(`<text x="%d" y="%d" text-anchor="middle" fill="#999">–</text>`+"\n", x+cellW/2, y+cellH/2+4)
				continue
			}
			e.printf(`<rect x="%d" y="%d" width="%d" height="%d" fill="%s" stroke="white"/>`, x, y, cellW, cellH, s.Color(v))
			if p.Bar > 0 && v < p.Bar {
				e.printf(`<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="black" stroke-width="2"/>`, x+1, y+1, cellW-2, cellH-2)
			}
			e.printf(`<text x="%d" y="%d" text-anchor="middle">%.2f</text>`+"\n", x+cellW/2, y+cellH/2+4, v)
		}
	}
	for c, cv := range p.Cols {
		e.printf(`<text x="%d" y="%d" text-anchor="middle">%d</text>`+"\n", gx+c*cellW+cellW/2, gy+len(p.Rows)*cellH+14, cv)
	}
	e.printf(`<text x="%d" y="%d" text-anchor="middle" fill="#555">%s</text>`+"\n", gx+len(p.Cols)*cellW/2, gy+len(p.Rows)*cellH+30, esc(p.ColLabel))
	e.printf(`<text transform="translate(%d %d) rotate(-90)" text-anchor="middle" fill="#555">%s</text>`+"\n",
		x0+10, gy+len(p.Rows)*cellH/2, esc(p.RowLabel))
}

func trimFloat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func esc(s string) string { return html.EscapeString(s) }

// svg collects a drawing, so that the writers can print freely and write
// once.
type svg struct{ strings.Builder }

func (s *svg) printf(format string, args ...any) { fmt.Fprintf(s, format, args...) }

func (s *svg) writeTo(w io.Writer) error {
	_, err := io.WriteString(w, s.String())
	return err
}
