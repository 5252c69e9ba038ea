package chart

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// Lines is one panel of a line chart: each Line is a polyline over its
// points, on a linear x axis with the given ticks and a linear or
// logarithmic y axis.
type Lines struct {
	Title  string
	XLabel string
	YLabel string
	// XTicks mark the x axis, which runs from the first tick to the last.
	XTicks []Tick
	// LogY draws y on a logarithmic scale, with ticks at 1, 2 and 5 times
	// each power of ten; otherwise y runs linearly from 0.
	LogY  bool
	Lines []Line
}

// Tick is a labelled position on an axis.
type Tick struct {
	At    float64
	Label string
}

// Line is one series: points (X[i], Y[i]); NaN or, on a log axis,
// non-positive values leave a gap.
type Line struct {
	Name   string
	Color  string // CSS colour
	Dashed bool
	X, Y   []float64
}

const (
	linesPlotW, linesPlotH = 420, 260
	linesLeft, linesBottom = 60, 44
	linesPanelTitle        = 22
)

// WriteLines draws the panels in a grid of cols columns under one title,
// with one legend for the lines of the first panel (the panels are
// expected to share their series).
func WriteLines(w io.Writer, title string, panels []Lines, cols int) error {
	e := new(svg)
	cols = max(1, min(cols, len(panels)))
	rows := (len(panels) + cols - 1) / cols
	var legend []Line
	if len(panels) > 0 {
		legend = panels[0].Lines
	}
	const titleH, legendRowH, legendCol, gapX, gapY = 34, 18, 170, 30, 20
	legendRows := (len(legend) + 3) / 4
	panelW := linesLeft + linesPlotW + 20
	panelH := linesPanelTitle + linesPlotH + linesBottom
	width := max(cols*panelW+(cols-1)*gapX+20, 4*legendCol+40, textWidth(title, 15)+40)
	top := titleH + legendRows*legendRowH + 10
	height := top + rows*panelH + (rows-1)*gapY + 10
	e.printf(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" %s font-size="11">`+"\n",
		width, height, width, height, fontFamily)
	e.printf(`<rect width="100%%" height="100%%" fill="white"/>` + "\n")
	e.printf(`<text x="20" y="22" font-size="15" font-weight="bold">%s</text>`+"\n", esc(title))
	for i, l := range legend {
		x, y := 20+(i%4)*legendCol, titleH+(i/4)*legendRowH
		e.printf(`<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="2.5"%s/>`, x, x+22, y+6, y+6, l.Color, dash(l))
		e.printf(`<text x="%d" y="%d">%s</text>`+"\n", x+28, y+10, esc(l.Name))
	}
	for i, p := range panels {
		writeLinesPanel(e, 10+(i%cols)*(panelW+gapX), top+(i/cols)*(panelH+gapY), p)
	}
	e.printf("</svg>\n")
	return e.writeTo(w)
}

func dash(l Line) string {
	if l.Dashed {
		return ` stroke-dasharray="6 3"`
	}
	return ""
}

// writeLinesPanel draws one panel with its top-left corner at (x0, y0).
func writeLinesPanel(e *svg, x0, y0 int, p Lines) {
	e.printf(`<text x="%d" y="%d" font-size="12" font-weight="bold">%s</text>`+"\n", x0+linesLeft, y0+14, esc(p.Title))
	px, py := x0+linesLeft, y0+linesPanelTitle // plot origin (top left)
	xlo, xhi := 0.0, 1.0
	if len(p.XTicks) >= 2 {
		xlo, xhi = p.XTicks[0].At, p.XTicks[len(p.XTicks)-1].At
	}
	ylo, yhi, yticks := yScale(p)
	xOf := func(x float64) float64 { return float64(px) + linesPlotW*(x-xlo)/(xhi-xlo) }
	yOf := func(y float64) float64 {
		if p.LogY {
			return float64(py+linesPlotH) - linesPlotH*(math.Log10(y)-math.Log10(ylo))/(math.Log10(yhi)-math.Log10(ylo))
		}
		return float64(py+linesPlotH) - linesPlotH*(y-ylo)/(yhi-ylo)
	}
	for _, t := range yticks {
		y := yOf(t)
		e.printf(`<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#e4e4e4"/>`, px, px+linesPlotW, y, y)
		e.printf(`<text x="%d" y="%.1f" text-anchor="end" font-size="10">%s</text>`+"\n", px-4, y+3, trimFloat(t))
	}
	for _, t := range p.XTicks {
		x := xOf(t.At)
		e.printf(`<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#e4e4e4"/>`, x, x, py, py+linesPlotH)
		e.printf(`<text x="%.1f" y="%d" text-anchor="middle" font-size="10">%s</text>`+"\n", x, py+linesPlotH+14, esc(t.Label))
	}
	e.printf(`<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#333"/>`+"\n", px, py, linesPlotW, linesPlotH)
	e.printf(`<text x="%d" y="%d" text-anchor="middle" fill="#555">%s</text>`+"\n", px+linesPlotW/2, py+linesPlotH+32, esc(p.XLabel))
	e.printf(`<text transform="translate(%d %d) rotate(-90)" text-anchor="middle" fill="#555">%s</text>`+"\n",
		x0+14, py+linesPlotH/2, esc(p.YLabel))
	for _, l := range p.Lines {
		var pts []string
		flush := func() {
			if len(pts) > 1 {
				e.printf(`<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"><title>%s</title></polyline>`+"\n",
					l.Color, dash(l), strings.Join(pts, " "), esc(l.Name))
			}
			pts = pts[:0]
		}
		for i := range min(len(l.X), len(l.Y)) {
			x, y := l.X[i], l.Y[i]
			if math.IsNaN(x) || math.IsNaN(y) || (p.LogY && y <= 0) {
				flush()
				continue
			}
			y = min(max(y, ylo), yhi)
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", xOf(x), yOf(y)))
		}
		flush()
	}
}

// yScale returns the y axis range and ticks for the panel's data: on a
// log axis, from the power of ten below the smallest value to the 1-2-5
// step above the largest; on a linear one, from 0 to the largest value
// rounded up to a 1-2-5 step, in five ticks or so.
func yScale(p Lines) (lo, hi float64, ticks []float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, l := range p.Lines {
		for _, y := range l.Y {
			if math.IsNaN(y) || (p.LogY && y <= 0) {
				continue
			}
			lo, hi = min(lo, y), max(hi, y)
		}
	}
	if math.IsInf(lo, 1) {
		lo, hi = 1, 10
	}
	if p.LogY {
		lo = math.Pow(10, math.Floor(math.Log10(lo)))
		top := lo
		for top < hi {
			for _, m := range []float64{1, 2, 5} {
				if t := top * m; t >= hi {
					return lo, t, logTicks(lo, t)
				}
			}
			top *= 10
		}
		return lo, max(top, lo*10), logTicks(lo, max(top, lo*10))
	}
	step := niceStep(hi / 5)
	hi = math.Ceil(hi/step) * step
	for t := 0.0; t <= hi+step/2; t += step {
		ticks = append(ticks, t)
	}
	return 0, hi, ticks
}

// logTicks returns 1, 2 and 5 times each power of ten from lo to hi.
func logTicks(lo, hi float64) []float64 {
	var ticks []float64
	for k := math.Round(math.Log10(lo)); math.Pow(10, k) <= hi*1.0001; k++ {
		for _, m := range []float64{1, 2, 5} {
			// Powers of ten computed afresh, not multiplied up, so a
			// label reads 0.2 rather than 0.20000000000000004.
			if t := m * math.Pow(10, k); t <= hi*1.0001 {
				ticks = append(ticks, t)
			}
		}
	}
	return ticks
}

// niceStep rounds x up to 1, 2 or 5 times a power of ten.
