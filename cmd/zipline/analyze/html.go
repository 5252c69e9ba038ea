package analyze

import (
	"fmt"
	"html"
	"io"
	"math"
	"slices"
	"strings"
	"time"
)

// The HTML report: one self-contained page (no script, no external file)
// that a person would rather look at than read: what the keyspace costs
// now and after, pattern by pattern, as bars; what each layout would save
// in each namespace; then the commands and the details.

// Colours of the charts.
const (
	colorNow    = "#9aa5b1"
	colorAfter  = "#2e9d5b"
	colorDict   = "#8e6bbf"
	colorTTL    = "#d9822b"
	colorOption = "#3b7dd8"
)

// maxChartRows bounds the rows of each chart.
const maxChartRows = 16

// WriteHTML writes the report as a self-contained HTML page.
func (r *Report) WriteHTML(w io.Writer) error {
	ew := &errWriter{w: w}
	p := ew.printf
	esc := html.EscapeString
	p(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>zipline analyze: %s</title>
<style>
body{font-family:Helvetica,Arial,sans-serif;margin:24px auto;max-width:1180px;color:#1f2933;background:#fff}
h1{font-size:24px;margin:0 0 4px} h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #e4e7eb;padding-bottom:4px}
.sub{color:#616e7c;font-size:13px;margin-bottom:16px}
.cards{display:flex;gap:12px;flex-wrap:wrap;margin:16px 0}
.card{flex:1;min-width:170px;background:#f5f7fa;border-radius:8px;padding:12px 16px}
.card .v{font-size:26px;font-weight:bold} .card .l{color:#616e7c;font-size:12px}
.card.good .v{color:%s}
table{border-collapse:collapse;width:100%%;font-size:13px;margin:8px 0}
th,td{text-align:left;padding:5px 8px;border-bottom:1px solid #e4e7eb;vertical-align:top}
th{background:#f5f7fa} td.n{text-align:right;font-variant-numeric:tabular-nums}
pre{background:#1f2933;color:#e4e7eb;padding:10px 12px;border-radius:6px;overflow-x:auto;font-size:12px;white-space:pre-wrap}
.note{color:#616e7c;font-size:12px} .rec{font-weight:bold;color:%s} .warn{color:%s}
svg text{font-family:Helvetica,Arial,sans-serif}
</style></head><body>
`, esc(r.Server.Describe()), colorAfter, colorAfter, colorTTL)
	p("<h1>zipline analyze</h1>\n<div class=\"sub\">%s &middot; read from %s &middot; %s</div>\n",
		esc(r.Server.Describe()), esc(strings.Join(r.Scan.ReadFrom, ", ")), esc(scanText(r)))

	// The headline figures.
	p(`<div class="cards">`)
	card := func(class, value, label string) {
		p(`<div class="card %s"><div class="v">%s</div><div class="l">%s</div></div>`, class, esc(value), esc(label))
	}
	card("", bytesText(float64(r.Totals.UsedMemory)), "used_memory now")
	card("", formatCount(r.Scan.Keys), "keys")
	card("good", bytesText(r.Totals.Saved), fmt.Sprintf("saved by the recommendations (%.1f%% of used_memory)", r.Totals.SavedPct))
	card("good", fmt.Sprintf("$%.2f", r.Totals.Monthly), fmt.Sprintf("a month at $%.2f per GiB-month × %d cop%s",
		r.PricePerGB, r.Totals.Copies, plural(r.Totals.Copies, "y", "ies")))
	if r.Totals.DictSaved > 0 {
		card("", bytesText(r.Totals.DictSaved), "more with codec=dict (needs dictionaries kept in the server)")
	}
	p("</div>\n")

	p("<h2>Memory by pattern: now and after the recommendations</h2>\n")
	r.writePatternChart(ew)
	p("<h2>What each layout would save, by namespace</h2>\n")
	r.writeOptionsChart(ew)

	p("<h2>What to run</h2>\n")
	var applied []NamespaceReport
	for _, ns := range r.Namespaces {
		if ns.Recommended != nil {
			applied = append(applied, ns)
		}
	}
	if len(applied) == 0 {
		p("<p>No layout saves enough to be worth a migration.</p>\n")
	} else {
		p("<p class=\"note\">Deploy code that uses each new layout with <code>MigrateFrom</code> set to the old one, " +
			"then run its migration (add <code>-rate</code> to pace it and <code>-state FILE</code> to resume it); " +
			"see <code>zipline help migrate</code>.</p>\n<pre>")
		for _, ns := range applied {
			p("%s\n", esc(ns.Migrate))
		}
		p("</pre>\n<p class=\"note\">As <code>layout.Namespace</code> values:</p>\n<pre>")
		for _, ns := range applied {
			p("%s\n", esc(ns.GoValue))
		}
		p("</pre>\n")
	}
	for _, ns := range r.Namespaces {
		if ns.Dict != nil {
			p("<p><b>%s</b> with a zstd dictionary (codec=dict) would save %s (%.1f%%) instead of %s. "+
				"<span class=\"warn\">It needs dictionaries kept in the server (layout codec=dict, zipline dict).</span></p>\n<pre>%s</pre>\n",
				esc(ns.Prefix), bytesText(ns.Dict.Saved), ns.Dict.SavedPct, bytesText(recommendedSaved(&ns)),
				esc(strings.Join(ns.DictCommands, "\n")))
		}
		if ns.BucketTTL != nil {
			p("<p><b>%s</b> in buckets would save %s (%.1f%%) with <code>%s</code>, but <span class=\"warn\">%s</span>.</p>\n",
				esc(ns.Prefix), bytesText(ns.BucketTTL.Saved), ns.BucketTTL.SavedPct, esc(ns.BucketTTL.Spec), esc(ns.BucketTTL.Needs))
		}
	}

	p("<h2>Namespaces</h2>\n<table><tr><th>namespace</th><th>patterns</th><th>keys</th><th>memory</th>" +
		"<th>recommended</th><th>saves</th><th>every layout priced</th></tr>\n")
	for _, ns := range r.Namespaces {
		rec := "keep as is"
		if ns.Skip != "" {
			rec += " (" + ns.Skip + ")"
		}
		saves := ""
		if ns.Recommended != nil {
			rec = ns.Recommended.Spec
			saves = fmt.Sprintf("%s (%.1f%%)", bytesText(ns.Recommended.Saved), ns.Recommended.SavedPct)
		}
		var opts []string
		for _, o := range ns.Options {
			opts = append(opts, fmt.Sprintf("%s %.1f%%", o.Name, o.SavedPct))
		}
		p("<tr><td>%s</td><td>%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"rec\">%s</td><td class=\"n\">%s</td><td class=\"note\">%s</td></tr>\n",
			esc(ns.Prefix), esc(strings.Join(ns.Patterns, ", ")), formatCount(ns.Keys), bytesText(ns.Bytes), esc(rec),
			esc(saves), esc(strings.Join(opts, " · ")))
	}
	p("</table>\n")

	p("<h2>Key patterns</h2>\n<table><tr><th>pattern</th><th>type</th><th>keys</th><th>memory</th><th>share</th>" +
		"<th>encodings</th><th>value sizes (sampled)</th><th>TTLs</th></tr>\n")
	for _, pr := range r.Patterns {
		p("<tr><td>%s</td><td>%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%.1f%%</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
			esc(pr.Pattern), esc(mainTypeText(pr.Types)), formatCount(pr.Keys), bytesText(pr.Bytes), 100*pr.Share,
			esc(countsText(pr.Encodings, nil)), histogramSVG(pr.ValueSizes, lenLabels, colorOption),
			histogramSVG(pr.TTL, ttlLabels, colorTTL))
	}
	p("</table>\n")

	var notes []string
	for _, ns := range r.Namespaces {
		for _, n := range ns.Notes {
			notes = append(notes, ns.Prefix+": "+n)
		}
	}
	notes = append(notes, r.Notes...)
	notes = append(notes, "costs: "+r.Profile, "price: "+r.PriceSource)
	if r.ProfileNote != "" {
		notes = append(notes, r.ProfileNote)
	}
	for _, c := range r.Calibration {
		notes = append(notes, fmt.Sprintf("calibration of %s (%s): %d keys measured %s, predicted %s: factor %.3f",
			c.Namespace, c.Layout, c.Keys, bytesText(c.Measured), bytesText(c.Predicted), c.Factor))
	}
	p("<h2>Notes</h2>\n<ul class=\"note\">\n")
	for _, n := range notes {
		p("<li>%s</li>\n", esc(n))
	}
	p("</ul>\n<p class=\"note\">zipline analyze, %s</p>\n</body></html>\n", time.Now().UTC().Format(time.RFC3339))
	return ew.err
}

func scanText(r *Report) string {
	s := fmt.Sprintf("scanned %s of %s keys in %.1fs", formatCount(r.Scan.Scanned), formatCount(r.Scan.Keys), r.Scan.Seconds)
	if !r.Scan.Complete {
		s += fmt.Sprintf(", figures extrapolated ×%.2f", r.Scan.Scale)
	}
	return s + "; " + wroteText(r.Scan.Wrote)
}

// barRow is one row of a horizontal bar chart: bars drawn one under the
// other, each with its own colour and label.
type barRow struct {
	label string
	bars  []bar
}

type bar struct {
	value float64
	color string
	text  string
	bold  bool
}

// writeBars draws rows of horizontal bars scaled to the largest value.
func writeBars(ew *errWriter, rows []barRow, legend [][2]string) {
	const width, labelW, barH, gap, rowGap, textW = 1120, 230, 14, 3, 12, 120
	top := 0.0
	height := 30
	for _, r := range rows {
		for _, b := range r.bars {
			top = math.Max(top, b.value)
		}
		height += len(r.bars)*(barH+gap) + rowGap
	}
	if top <= 0 {
		top = 1
	}
	plotW := float64(width - labelW - textW)
	ew.printf(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-size="12">`+"\n",
		width, height, width, height)
	x := labelW
	for _, l := range legend {
		ew.printf(`<rect x="%d" y="6" width="12" height="12" fill="%s"/><text x="%d" y="16">%s</text>`+"\n",
			x, l[1], x+17, html.EscapeString(l[0]))
		x += 30 + 7*len(l[0])
	}
	y := 30
	for _, r := range rows {
		h := len(r.bars) * (barH + gap)
		ew.printf(`<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", labelW-8, y+h/2+4, html.EscapeString(clip(r.label, 34)))
		for _, b := range r.bars {
			w := math.Max(plotW*b.value/top, 0)
			if b.value > 0 && w < 1 {
				w = 1
			}
			ew.printf(`<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s" rx="2"/>`, labelW, y, w, barH, b.color)
			weight := ""
			if b.bold {
				weight = ` font-weight="bold"`
			}
			// The label goes after the bar, or inside its end (in white)
			// where it would run off the chart.
			if tw := 6.2 * float64(len([]rune(b.text))); float64(labelW)+w+5+tw > width && w > tw+10 {
				ew.printf(`<text x="%.1f" y="%d" text-anchor="end" fill="white"%s>%s</text>`+"\n", float64(labelW)+w-5, y+barH-3,
					weight, html.EscapeString(b.text))
			} else {
				ew.printf(`<text x="%.1f" y="%d"%s>%s</text>`+"\n", float64(labelW)+w+5, y+barH-3, weight, html.EscapeString(b.text))
			}
			y += barH + gap
		}
		y += rowGap
	}
	ew.printf("</svg>\n")
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}

// writePatternChart draws each pattern's memory now and after.
func (r *Report) writePatternChart(ew *errWriter) {
	byNS := map[string]*NamespaceReport{}
	for i := range r.Namespaces {
		byNS[r.Namespaces[i].Prefix] = &r.Namespaces[i]
	}
	var rows []barRow
	for i, pr := range r.Patterns {
		if i == maxChartRows {
			break
		}
		after := pr.Bytes
		if ns := byNS[pr.Namespace]; ns != nil && ns.Recommended != nil && ns.Bytes > 0 {
			after = pr.Bytes * ns.Recommended.Bytes / ns.Bytes
		}
		saved := ""
		if after < pr.Bytes {
			saved = fmt.Sprintf(" (−%.0f%%)", 100*(pr.Bytes-after)/pr.Bytes)
		}
		rows = append(rows, barRow{label: pr.Pattern, bars: []bar{
			{value: pr.Bytes, color: colorNow, text: bytesText(pr.Bytes)},
			{value: after, color: colorAfter, text: bytesText(after) + saved, bold: saved != ""},
		}})
	}
	if len(rows) == 0 {
		ew.printf("<p>No keys.</p>\n")
		return
	}
	writeBars(ew, rows, [][2]string{{"now", colorNow}, {"after the recommendations", colorAfter}})
}

// writeOptionsChart draws, for each namespace with options, the share of
// its memory each layout would save.
func (r *Report) writeOptionsChart(ew *errWriter) {
	var rows []barRow
	for _, ns := range r.Namespaces {
		if len(ns.Options) == 0 || len(rows) == maxChartRows/2 {
			continue
		}
		var bars []bar
		shown := 0
		for _, o := range ns.Options {
			rec := ns.Recommended != nil && o.Name == ns.Recommended.Name
			if shown >= 6 && !rec {
				continue
			}
			shown++
			color := colorOption
			switch {
			case strings.Contains(o.Name, "dict"):
				color = colorDict
			case !o.Applicable:
				color = colorTTL
			case ns.Recommended != nil && o.Name == ns.Recommended.Name:
				color = colorAfter
			}
			text := fmt.Sprintf("%s %.1f%% (%s)", o.Name, o.SavedPct, bytesText(o.Saved))
			if rec {
				text += " ← recommended"
			}
			bars = append(bars, bar{value: math.Max(o.SavedPct, 0), color: color, text: text, bold: rec})
		}
		rows = append(rows, barRow{label: ns.Prefix + " (" + bytesText(ns.Bytes) + ")", bars: bars})
	}
	if len(rows) == 0 {
		ew.printf("<p>No namespace a layout applies to.</p>\n")
		return
	}
	writeBars(ew, rows, [][2]string{{"recommended", colorAfter}, {"other layouts", colorOption},
		{"needs codec=dict", colorDict}, {"needs BucketTTL", colorTTL}})
}

// histogramSVG draws a small bar per label of counts.
func histogramSVG(counts map[string]int64, labels []string, color string) string {
	if len(counts) == 0 {
		return ""
	}
	var top int64
	for _, c := range counts {
		top = max(top, c)
	}
	var b strings.Builder
	const barW, h = 11, 28
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d">`, len(labels)*(barW+2), h)
	for i, l := range labels {
		c := counts[l]
		bh := 0.0
		if c > 0 {
			bh = math.Max(float64(h-2)*float64(c)/float64(top), 2)
		}
		fmt.Fprintf(&b, `<rect x="%d" y="%.1f" width="%d" height="%.1f" fill="%s"><title>%s: %s</title></rect>`,
			i*(barW+2), float64(h)-bh, barW, bh, color, html.EscapeString(l), formatCount(c))
	}
	b.WriteString("</svg>")
	return b.String() + `<div class="note">` + html.EscapeString(countsText(counts, labels)) + "</div>"
}

// countsText lists counts by label, in labels' order (or by name).
func countsText(counts map[string]int64, labels []string) string {
	if labels == nil {
		for l := range counts {
			labels = append(labels, l)
		}
		slices.Sort(labels)
	}
	var parts []string
	for _, l := range labels {
		if c, ok := counts[l]; ok && c > 0 {
			parts = append(parts, l+" "+formatCount(c))
		}
	}
	return strings.Join(parts, ", ")
}
