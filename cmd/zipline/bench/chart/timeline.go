package chart

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Timeline is a time-series chart: panels stacked over one shared x axis,
// each with its own y axis, drawing the same series (one colour each, one
// legend), and vertical marks across every panel for events. The failover
// timeline draws latency and errors per 100 ms this way, one line per
// client.
type Timeline struct {
	Title  string
	XLabel string
	X      []float64 // ascending; Series.Values[i] is at X[i]
	Panels []TimelinePanel
	Marks  []Mark
}

// TimelinePanel is one y axis and its lines. The legend comes from the first
// panel's series.
type TimelinePanel struct {
	YLabel string
	// Log draws the y axis in decades; values ≤ 0 are then left out, as
	// NaN always is (the line has a gap there).
	Log    bool
	Series []Series
}

// Mark is a vertical line at X across every panel, labelled above the
// first: an event such as a kill.
type Mark struct {
	X      float64
	Label  string
	Color  string
	Dashed bool
}

const (
	timelineLeft, timelineRight = 70, 30
	timelinePlotW               = 820
	timelinePanelH              = 220
	timelinePanelGap            = 50
	timelineTitleH              = 30
	timelineLegendH             = 20
	timelineMarkLabelH          = 16
	timelineLegendCol           = 200
)

// WriteSVG draws the chart.
func (c Timeline) WriteSVG(w io.Writer) error {
	if len(c.X) < 2 {
		return fmt.Errorf("chart: a line chart needs at least two x values, not %d", len(c.X))
	}
	e := new(svg)
	var legend []Series
	if len(c.Panels) > 0 {
		legend = c.Panels[0].Series
	}
	perRow := max(1, timelinePlotW/timelineLegendCol)
	legendRows := (len(legend) + perRow - 1) / perRow
	markRows := max(1, len(c.Marks))
	top := timelineTitleH + legendRows*timelineLegendH + markRows*timelineMarkLabelH + 6
	width := timelineLeft + timelinePlotW + timelineRight
	height := top + len(c.Panels)*(timelinePanelH+timelinePanelGap) + 10
	e.printf(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" %s font-size="11">`+"\n",
		width, height, width, height, fontFamily)
	e.printf(`<rect width="100%%" height="100%%" fill="white"/>` + "\n")
	e.printf(`<text x="%d" y="20" font-size="15" font-weight="bold">%s</text>`+"\n", timelineLeft, esc(c.Title))
	for i, s := range legend {
		x, y := timelineLeft+(i%perRow)*timelineLegendCol, timelineTitleH+(i/perRow)*timelineLegendH
		e.printf(`<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="2.5"/>`, x, x+18, y+6, y+6, s.Color)
		e.printf(`<text x="%d" y="%d">%s</text>`+"\n", x+24, y+10, esc(s.Name))
	}

	x0, x1 := c.X[0], c.X[len(c.X)-1]
	xOf := func(x float64) float64 { return timelineLeft + timelinePlotW*(x-x0)/(x1-x0) }
	labelsY := timelineTitleH + legendRows*timelineLegendH
	for i, m := range c.Marks {
		e.printf(`<text x="%.1f" y="%d" fill="%s" text-anchor="middle">%s</text>`+"\n",
			xOf(m.X), labelsY+(i+1)*timelineMarkLabelH-4, m.Color, esc(m.Label))
	}
	for pi, p := range c.Panels {
		py := top + pi*(timelinePanelH+timelinePanelGap)
		c.writePanel(e, p, py, xOf)
	}
	e.printf("</svg>\n")
	return e.writeTo(w)
}

// writePanel draws one panel with its top at py.
func (c Timeline) writePanel(e *svg, p TimelinePanel, py int, xOf func(float64) float64) {
	y := newAxisScale(p)
	yOf := func(v float64) float64 { return float64(py+timelinePanelH) - timelinePanelH*y.frac(v) }
	for _, t := range y.ticks() {
		ty := yOf(t)
		e.printf(`<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#e4e4e4"/>`, timelineLeft, timelineLeft+timelinePlotW, ty, ty)
		e.printf(`<text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", timelineLeft-5, ty+4, tickLabel(t))
	}
	e.printf(`<text transform="translate(16 %d) rotate(-90)" text-anchor="middle">%s</text>`+"\n", py+timelinePanelH/2, esc(p.YLabel))
	x0, x1 := c.X[0], c.X[len(c.X)-1]
	step := niceStep((x1 - x0) / 10)
	for t := math.Ceil(x0/step) * step; t <= x1+step/1000; t += step {
		tx := xOf(t)
		e.printf(`<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#e4e4e4"/>`, tx, tx, py, py+timelinePanelH)
		e.printf(`<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", tx, py+timelinePanelH+14, tickLabel(t))
	}
	e.printf(`<text x="%d" y="%d" text-anchor="middle" fill="#555">%s</text>`+"\n",
		timelineLeft+timelinePlotW/2, py+timelinePanelH+30, esc(c.XLabel))
	e.printf(`<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#333"/>`+"\n", timelineLeft, py, timelinePlotW, timelinePanelH)
	for _, m := range c.Marks {
		dash := ""
		if m.Dashed {
			dash = ` stroke-dasharray="5 3"`
		}
		e.printf(`<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="%s"%s/>`+"\n", xOf(m.X), xOf(m.X), py, py+timelinePanelH, m.Color, dash)
	}
	for _, s := range p.Series {
		for _, seg := range segments(c.X, s.Values, p.Log) {
			var pts strings.Builder
			for _, i := range seg {
				fmt.Fprintf(&pts, "%.1f,%.1f ", xOf(c.X[i]), yOf(s.Values[i]))
			}
			e.printf(`<polyline fill="none" stroke="%s" stroke-width="1.6" stroke-linejoin="round" points="%s"><title>%s</title></polyline>`+"\n",
				s.Color, strings.TrimSpace(pts.String()), esc(s.Name))
		}
	}
}

// segments splits the drawable indices of values into runs without gaps.
// A lone point becomes a run of one, drawn as a dot-sized line.
func segments(x, values []float64, log bool) [][]int {
	var out [][]int
	var cur []int
	for i := range x {
		if i < len(values) && !math.IsNaN(values[i]) && (!log || values[i] > 0) {
			cur = append(cur, i)
			continue
		}
		if len(cur) > 0 {
			out = append(out, cur)
			cur = nil
		}
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	for i, s := range out {
		if len(s) == 1 {
			out[i] = []int{s[0], s[0]}
		}
	}
	return out
}

// axisScale maps a panel's values to [0, 1] of its height.
type axisScale struct {
	log    bool
	lo, hi float64 // linear: values; log: decades (log10)
}

func newAxisScale(p TimelinePanel) axisScale {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range p.Series {
		for _, v := range s.Values {
			if math.IsNaN(v) || p.Log && v <= 0 {
				continue
			}
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if p.Log {
		if math.IsInf(lo, 1) {
			return axisScale{log: true, lo: 0, hi: 1}
		}
		l, h := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
		if h <= l {
			h = l + 1
		}
		return axisScale{log: true, lo: l, hi: h}
	}
	if math.IsInf(hi, -1) || hi <= 0 {
		hi = 1
	}
	step := niceStep(hi / 5)
	return axisScale{lo: 0, hi: math.Ceil(hi/step-1e-9) * step}
}

func (y axisScale) frac(v float64) float64 {
	if y.log {
		return (math.Log10(v) - y.lo) / (y.hi - y.lo)
	}
	return (v - y.lo) / (y.hi - y.lo)
}

func (y axisScale) ticks() []float64 {
	var out []float64
	if y.log {
		for d := y.lo; d <= y.hi+1e-9; d++ {
			out = append(out, math.Pow(10, d))
		}
		return out
	}
	step := niceStep(y.hi / 5)
	for t := 0.0; t <= y.hi+step/1000; t += step {
		out = append(out, t)
	}
	return out
}

// niceStep rounds d up to 1, 2 or 5 times a power of ten.
func niceStep(d float64) float64 {
	if d <= 0 || math.IsNaN(d) || math.IsInf(d, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(d)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= d*(1-1e-9) {
			return m * p
		}
	}
	return 10 * p
}

// tickLabel prints a tick value without noise digits.
func tickLabel(v float64) string {
	if math.Abs(v) < 1e-9 {
		return "0"
	}
	return strconv.FormatFloat(math.Round(v*1e6)/1e6, 'g', 6, 64)
}
