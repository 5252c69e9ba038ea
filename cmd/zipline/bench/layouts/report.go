package layouts

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// Report is everything one "bench layouts" run measured, for WriteMarkdown.
type Report struct {
	Command string
	Date    time.Time
	Machine string // CPUs, load
	Go      string
	Server  string
	Pairs   int
	Classes []ClassStat
	Memory  []Result
	Speed   []*SpeedReport
	// Notes are extra lines for the header (e.g. a -quick run).
	Notes []string
}

// The bar.
const (
	BarCounters  = 12.0 // counters: at least 12x less memory than plain keys
	BarInts      = 7.0  // random 9-digit integers: 7x
	BarJSON      = 3.0  // JSON objects: 3x
	BarSlowdown  = 0.15 // a namespace's ops at most 15 % slower than plain commands
	articleLimit = "hash-max-ziplist-value big enough for every value"
)

// find returns the result of a cell.
func (r *Report) find(f KeyFamily, class, layout string, sparse bool, lpv int) (Result, bool) {
	for _, m := range r.Memory {
		if m.Family.Name == f.Name && m.Class == class && m.Layout == layout && m.Sparse == sparse && m.ListpackValue == lpv {
			return m, true
		}
	}
	return Result{}, false
}

// plain returns the baseline of a result: plain keys of the same family,
// class and ids, preferably measured on the same server, else on the
// default one (plain keys do not depend on the hash settings).
func (r *Report) plain(m Result) (Result, bool) {
	if p, ok := r.find(m.Family, m.Class, "plain", m.Sparse, m.ListpackValue); ok {
		return p, true
	}
	return r.find(m.Family, m.Class, "plain", m.Sparse, 0)
}

// Factor is how many times less memory m uses than plain keys.
func (r *Report) Factor(m Result) (float64, bool) {
	p, ok := r.plain(m)
	if !ok || m.PerPair() <= 0 {
		return 0, false
	}
	return p.PerPair() / m.PerPair(), true
}

func (r *Report) families() []KeyFamily {
	var out []KeyFamily
	for _, f := range Families() {
		for _, m := range r.Memory {
			if m.Family.Name == f.Name {
				out = append(out, f)
				break
			}
		}
	}
	return out
}

func (r *Report) lpvs() []int {
	var out []int
	for _, m := range r.Memory {
		if !slices.Contains(out, m.ListpackValue) {
			out = append(out, m.ListpackValue)
		}
	}
	slices.Sort(out)
	return out
}

// raisedLabel describes a server's listpack value limit.
func raisedLabel(lpv int) string {
	if lpv == 0 {
		return "default server (hash-max-listpack-value 64)"
	}
	return fmt.Sprintf("server started with --hash-max-listpack-value %d", lpv)
}

func (r *Report) cell(m Result) string {
	s := fmt.Sprintf("%.2f MB · %.1f B", m.MB(), m.PerPair())
	if m.Layout == "plain" {
		return s
	}
	if f, ok := r.Factor(m); ok {
		s += fmt.Sprintf(" · **%.1f×**", f)
	}
	return s
}

// WriteMarkdown writes the report.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }

	p("# Layout benchmark: memory per pair and namespace speed (issue 4)\n\n")
	p("Command:\n\n```\n%s\n```\n\n", r.Command)
	p("- date: %s\n", r.Date.UTC().Format("2006-01-02 15:04 UTC"))
	p("- machine: %s\n", r.Machine)
	p("- go: %s\n", r.Go)
	p("- server: %s, Debian's redis-server package, linked to the system jemalloc, whose quantum is 16 B "+
		"(size classes 16, 32, 48, 64, 80, …; no 24/40/56). Official builds (bundled jemalloc, quantum 8) "+
		"put a plain key about 8 B lower (size classes 8, 16, 24, 32, …).\n", r.Server)
	p("- server directives: `--save \"\" --appendonly no` (testbed) `%s`, plus "+
		"`--hash-max-listpack-value N` where a table says so\n", strings.Join(ServerArgs(0), " "))
	p("- pairs per memory cell: %d\n", r.Pairs)
	for _, n := range r.Notes {
		p("- %s\n", n)
	}
	p("\n")
	r.writeMethod(p)
	r.writeClasses(p)
	servers := r.servers()
	if len(servers) <= 1 {
		r.writeMemory(p)
		r.writeExtras(p)
		r.writeArticle(p)
		r.writeBar(p)
		r.writeGuard(p)
	} else {
		r.writeSideBySide(p, servers)
		for i, srv := range servers {
			sub := *r
			sub.Server, sub.Memory = srv, nil
			for _, m := range r.Memory {
				if m.Server == srv {
					sub.Memory = append(sub.Memory, m)
				}
			}
			if i > 0 {
				sub.Speed = nil
			}
			p("# On %s\n\n", srv)
			sub.writeMemory(p)
			sub.writeExtras(p)
			sub.writeArticle(p)
			sub.writeBar(p)
			sub.writeGuard(p)
		}
	}
	r.writeSpeed(p)
	if len(r.Speed) > 0 {
		r.writeSpeedAnalysis(p)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

type printer func(format string, args ...any)

// servers lists the servers the memory cells were measured on, in the
// order they were measured ("" for cells of a report that did not say).
func (r *Report) servers() []string {
	var out []string
	for _, m := range r.Memory {
		if !slices.Contains(out, m.Server) {
			out = append(out, m.Server)
		}
	}
	return out
}

// writeSideBySide sets the main layouts' figures on each server beside
// each other: bytes per pair and the factor against plain keys on the same
// server, for the default server settings and sequential ids.
func (r *Report) writeSideBySide(p printer, servers []string) {
	p("## Servers side by side\n\n")
	p("Bytes per pair and, in parentheses, plain keys' bytes divided by the layout's on the same server; default " +
		"server settings (hash-max-listpack-value 64), sequential ids. Redis is Debian's build with jemalloc (16-B quantum); " +
		"Valkey's build uses libc malloc, so each column compares with itself first. Valkey 8.1 and later keep a key, its " +
		"name and a small value in one allocation, so a plain key costs less there and buckets save less.\n\n")
	by := func(srv string, f KeyFamily, class, layout string) (Result, float64, bool) {
		for _, m := range r.Memory {
			if m.Server == srv && m.Family.Name == f.Name && m.Class == class && m.Layout == layout && !m.Sparse && m.ListpackValue == 0 {
				for _, pl := range r.Memory {
					if pl.Server == srv && pl.Family.Name == f.Name && pl.Class == class && pl.Layout == "plain" && !pl.Sparse && pl.ListpackValue == 0 {
						return m, pl.PerPair() / m.PerPair(), true
					}
				}
				return m, 0, true
			}
		}
		return Result{}, 0, false
	}
	for _, f := range r.families() {
		p("### %s keys\n\n| class | layout |", f.Name)
		for _, srv := range servers {
			p(" %s |", srv)
		}
		p("\n| --- | --- |")
		for range servers {
			p(" --: |")
		}
		p("\n")
		layouts := append(MainLayouts(), "dense100+zip", "dense126+zip", "dense512+zip")
		for _, class := range classOrder(r.Memory) {
			first := true
			for _, l := range layouts {
				var cells []string
				found := false
				for _, srv := range servers {
					m, x, ok := by(srv, f, class, l)
					switch {
					case !ok:
						cells = append(cells, "–")
					case l == "plain" || x == 0:
						cells, found = append(cells, fmt.Sprintf("%.1f", m.PerPair())), true
					default:
						cells, found = append(cells, fmt.Sprintf("%.1f (%.1f×)", m.PerPair(), x)), true
					}
				}
				if !found {
					continue
				}
				name := ""
				if first {
					name, first = class, false
				}
				p("| %s | %s | %s |\n", name, l, strings.Join(cells, " | "))
			}
		}
		p("\n")
	}
}

func (r *Report) writeMethod(p printer) {
	p("## Method\n\n")
	p("Each memory cell runs on a flushed server (FLUSHALL SYNC): read `used_memory`, write the pairs, " +
		"wait until `used_memory` stops changing (the main dictionary finishes its incremental rehash), read it again. " +
		"The figure is the difference, minus the change in `mem_clients_normal` (query and output buffers, which depend on " +
		"batch sizes, not on the data). Writes go in batches of 1,000 pairs from 4 goroutines: the baseline with one `MSET` per batch " +
		"(counters: pipelined `INCR`), a layout with `layout.Store.MSet` (counters: `Store.In(batch).IncrBy(key, 1)`, i.e. `HINCRBY` in a bucket). " +
		"Then 500 pairs spread over the id range are read back with `MGET` / `Store.MGet` and compared with what was written; " +
		"a mismatch fails the run. Bucketed cells also check the encoding of up to 50 buckets (`OBJECT ENCODING`). " +
		"The figures are deterministic to within a few dozen bytes per cell when the machine is quiet (the server counts client " +
		"memory by string lengths, so subtracting it is exact only to that grain): a cell measured three times in a row gives " +
		"the same bytes. Between an earlier run made under heavy load (load average 5-8) and this one, three of the cells whose " +
		"code and data did not change differed by up to 0.8 B a pair (0.1 %%): a server starved of CPU can let the two " +
		"readings match before its cron has settled rehashing and client accounting.\n\n")
	p("MB are 10^6 bytes. **B** is bytes per pair; **N×** is plain keys' bytes divided by the layout's. " +
		"The dictionary layout's figure includes the dictionary itself (kept by the application, not the server) spread over the pairs.\n\n")
	p("Layouts (columns), all through `layout.Store` except the baseline:\n\n| layout | namespace |\n| --- | --- |\n")
	for _, l := range Layouts() {
		p("| %s | %s |\n", l.Name, l.Desc)
	}
	p("\nKey families: **article** = `set-allBooksBelongToUser:<id>` (the article's key, 30 B for 5-digit ids; zipped `b:<base62 id>`), "+
		"**user** = `user:<id>` (zipped `u:<base62 id>`). Ids are 0..%d unless a row says sparse (%d distinct random ids below %d).\n\n",
		r.Pairs-1, r.Pairs, max(SparseSpan, 100*r.Pairs))
}

func (r *Report) writeClasses(p printer) {
	if len(r.Classes) == 0 {
		return
	}
	var dictNames []string
	for _, c := range r.Classes {
		for _, d := range c.Dicts {
			if !slices.Contains(dictNames, d.Name) {
				dictNames = append(dictNames, d.Name)
			}
		}
	}
	p("## Value classes\n\n")
	p("Mean stored sizes include zipline's 5-byte compression header (values under 64 B, or that do not shrink, are stored as they are). " +
		"\"≤ 64\" is the share of values that fit the default `hash-max-listpack-value`: with the guard, the others are stored " +
		"as plain keys. Dictionaries are trained with codec.TrainDictionary on a separate sample (another seed; random.json's other half) " +
		"from which any value equal to a stored one is removed.\n\n")
	p("| class | values | mean B | ≤ 64 | zstd B | ≤ 64 |")
	for _, n := range dictNames {
		p(" %s: B | ≤ 64 |", n)
	}
	p(" dictionary bytes; training set |\n| --- | --- | --: | --: | --: | --: |")
	for range dictNames {
		p(" --: | --: |")
	}
	p(" --- |\n")
	for _, s := range r.Classes {
		if s.Class.Counter {
			p("| %s | %s | 1 | 100 %% | – | – |", s.Class.Name, s.Class.Desc)
			for range dictNames {
				p(" – | – |")
			}
			p(" – |\n")
			continue
		}
		p("| %s | %s | %.0f | %s | %.0f | %s |", s.Class.Name, s.Class.Desc, s.Mean, pct(s.Fit), s.Zstd.Mean, pct(s.Zstd.Fit))
		var sizes []string
		for _, n := range dictNames {
			i := slices.IndexFunc(s.Dicts, func(e Encoded) bool { return e.Name == n })
			if i < 0 {
				p(" – | – |")
				continue
			}
			p(" %.0f | %s |", s.Dicts[i].Mean, pct(s.Dicts[i].Fit))
			sizes = append(sizes, fmt.Sprint(s.Dicts[i].DictBytes))
		}
		if len(sizes) == 0 {
			p(" – |\n")
			continue
		}
		dropped := ""
		if s.Dropped > 0 {
			dropped = fmt.Sprintf(" (%d more generated, left out: equal to a stored value)", s.Dropped)
		}
		p(" %s; %d values, %d KB%s |\n", strings.Join(sizes, ", "), s.Training, s.TrainingBytes/1000, dropped)
	}
	p("\n")
}

func pct(f float64) string { return fmt.Sprintf("%.0f %%", 100*f) }

// classOrder lists the classes present in results, in Classes order.
func classOrder(results []Result) []string {
	var out []string
	for _, c := range Classes() {
		for _, m := range results {
			if m.Class == c.Name {
				out = append(out, c.Name)
				break
			}
		}
	}
	return out
}

func (r *Report) writeMemory(p printer) {
	for _, lpv := range r.lpvs() {
		for _, f := range r.families() {
			var cols []string
			for _, l := range MainLayouts() {
				for _, m := range r.Memory {
					if m.Family.Name == f.Name && m.ListpackValue == lpv && !m.Sparse && m.Layout == l {
						cols = append(cols, l)
						break
					}
				}
			}
			if len(cols) == 0 {
				continue
			}
			p("## Memory: %s keys, %s\n\n", f.Name, raisedLabel(lpv))
			if lpv > 0 {
				p("A setting the user chooses (the article raised `hash-max-ziplist-value` the same way); zipline never runs CONFIG SET. " +
					"Only bucket layouts depend on it. The plain column is measured on this server too when present, " +
					"otherwise factors are against plain keys on the default server (plain keys do not depend on hash settings).\n\n")
			}
			p("| class |")
			for _, c := range cols {
				p(" %s |", c)
			}
			p("\n| --- |")
			for range cols {
				p(" --: |")
			}
			p("\n")
			var rows []Result
			for _, m := range r.Memory {
				if m.Family.Name == f.Name && m.ListpackValue == lpv && !m.Sparse {
					rows = append(rows, m)
				}
			}
			for _, class := range classOrder(rows) {
				p("| %s |", class)
				for _, c := range cols {
					if m, ok := r.find(f, class, c, false, lpv); ok {
						p(" %s%s |", r.cell(m), guardNote(m))
					} else if cl, _ := ClassByName(class); cl.Small && c == "buckets+zip+dict" {
						p(" n/a (< 64 B) |")
					} else {
						p(" – |")
					}
				}
				p("\n")
			}
			p("\n")
		}
	}
	p("A ¹ marks cells where the guard stored some values as plain keys (count in parentheses): " +
		"they were larger than hash-max-listpack-value after compression.\n\n")
}

// guardNote marks a cell whose values partly or wholly went to plain keys.
func guardNote(m Result) string {
	s := ""
	if m.Oversize > 0 {
		s = fmt.Sprintf(" ¹(%d)", m.Oversize)
	}
	if m.BucketsSampled > 0 && m.Listpack < m.BucketsSampled {
		s += fmt.Sprintf(" ⚠ %d/%d buckets hashtable", m.BucketsSampled-m.Listpack, m.BucketsSampled)
	}
	return s
}

// isMain reports whether a result belongs to a main memory table.
func isMain(m Result) bool { return !m.Sparse && slices.Contains(MainLayouts(), m.Layout) }

func (r *Report) writeExtras(p printer) {
	var extra []Result
	for _, m := range r.Memory {
		if !isMain(m) {
			extra = append(extra, m)
		}
	}
	if len(extra) == 0 {
		return
	}
	p("## Other layouts and ids\n\n")
	p("| keys | class | ids | server | layout | MB | B/pair | vs plain | oversize → plain keys | buckets listpack |\n")
	p("| --- | --- | --- | --- | --- | --: | --: | --: | --: | --: |\n")
	for _, m := range extra {
		ids := "0..n-1"
		if m.Sparse {
			ids = "sparse"
		}
		srv := "default"
		if m.ListpackValue > 0 {
			srv = fmt.Sprintf("lpv %d", m.ListpackValue)
		}
		vs := "–"
		if f, ok := r.Factor(m); ok && m.Layout != "plain" {
			vs = fmt.Sprintf("%.2f×", f)
		}
		lp := "–"
		if m.BucketsSampled > 0 {
			lp = fmt.Sprintf("%d/%d", m.Listpack, m.BucketsSampled)
		}
		p("| %s | %s | %s | %s | %s | %.2f | %.1f | %s | %d | %s |\n", m.Family.Name, m.Class, ids, srv, m.Layout,
			m.MB(), m.PerPair(), vs, m.Oversize, lp)
	}
	p("\n")
}

// The article's table (gist 07be456e, Redis 4, "Mb" for 100K values, key
// set-allBooksBelongToUser:<id>, hash-max-ziplist-value raised to fit).
var articleTable = map[string][5]float64{ // redis, gz, key zip, me_*, kz+me+gz
	"ints":     {11.57, 13.21, 8.63, 0.99, 0.95},
	"html100":  {20.81, 20.22, 17.76, 10.72, 9.38},
	"html500":  {59.55, 40.44, 56.52, 48.87, 28.91},
	"html1000": {107.78, 59.29, 104.72, 97.66, 45.77},
	"html4000": {398.3, 154.17, 395.25, 395.99, 133.29},
}

func (r *Report) writeArticle(p printer) {
	p("## Beside the article\n\n")
	p("The article's table (me-redis gist 07be456e, Redis 4, \"Mb\" for 100K values, key `set-allBooksBelongToUser:<id>`, %s) "+
		"against ours for the article key. Absolute sizes differ (Redis 4 vs 7.0, allocator, MB vs MiB), so compare the factors "+
		"(plain ÷ layout). Our bucket layouts are taken from the raised-limit table when there is one, like the article's setting. "+
		"The article's `ints` row (me_* at 9.9 B a pair, and gz making it larger) looks like random integers rather than INCR'd 1s; "+
		"it is set beside both our `counters` and our `ints`.\n\n", articleLimit)
	p("| article / ours | article plain Mb | ours plain MB | gz / zstd | key zip / zipped | me_* / buckets | kz+me+gz / buckets+zip+zstd | ours buckets+zip+dict |\n")
	p("| --- | --: | --: | --: | --: | --: | --: | --: |\n")
	rows := []struct{ article, ours string }{
		{"ints", "counters"}, {"ints", "ints"}, {"html100", "html100"}, {"html500", "html500"},
		{"html1000", "html1000"}, {"html4000", "html4000"},
	}
	for _, row := range rows {
		a, ours := articleTable[row.article], row.ours
		plain, ok := r.find(ArticleKeys, ours, "plain", false, 0)
		if !ok {
			continue
		}
		lpv := 0
		for _, v := range r.lpvs() {
			if _, ok := r.find(ArticleKeys, ours, "buckets+zip+zstd", false, v); ok && v > lpv {
				lpv = v
			}
		}
		f := func(layout string, l int) string {
			m, ok := r.find(ArticleKeys, ours, layout, false, l)
			if !ok {
				return "–"
			}
			x, _ := r.Factor(m)
			return fmt.Sprintf("%.2f×", x)
		}
		p("| %s / %s | %.2f | %.2f | %.2f× / %s | %.2f× / %s | %.2f× / %s | %.2f× / %s | %s |\n", row.article, ours, a[0], plain.MB(),
			a[0]/a[1], f("zstd", 0), a[0]/a[2], f("zipped", 0), a[0]/a[3], f("buckets", lpv), a[0]/a[4], f("buckets+zip+zstd", lpv),
			f("buckets+zip+dict", lpv))
	}
	p("\n")
}

// best returns the result with the highest factor among non-baseline cells
// matching the filter.
func (r *Report) best(keep func(Result) bool) (Result, float64, bool) {
	var best Result
	bf, found := 0.0, false
	for _, m := range r.Memory {
		if m.Layout == "plain" || !keep(m) {
			continue
		}
		if f, ok := r.Factor(m); ok && f > bf {
			best, bf, found = m, f, true
		}
	}
	return best, bf, found
}

// BarLine is one line of the bar check.
type BarLine struct {
	What   string
	Target float64
	// Main is the best factor among the main table's layouts (Dense(100)
	// buckets, the default dictionary), Best among all measured layouts.
	Main, Best           float64
	MainWhere, BestWhere string
	OK                   bool // Best reaches Target
}

// MemoryBar checks the memory bar per key family and server setting.
func (r *Report) MemoryBar() []BarLine {
	var out []BarLine
	type goal struct {
		class  string
		target float64
		what   string
	}
	goals := []goal{
		{"counters", BarCounters, "counters (INCR)"},
		{"ints", BarInts, "random 9-digit integers"},
		{"json-random", BarJSON, "JSON: random.json records"},
		{"json-461", BarJSON, "JSON: corpus json-461"},
		{"json-98", BarJSON, "JSON: corpus json-98"},
	}
	where := func(m Result, x float64) string {
		return fmt.Sprintf("%s, %.1f B/pair vs plain %.1f", m.Layout, m.PerPair(), m.PerPair()*x)
	}
	for _, g := range goals {
		for _, f := range r.families() {
			for _, lpv := range r.lpvs() {
				cell := func(m Result) bool {
					return m.Family.Name == f.Name && m.Class == g.class && !m.Sparse && m.ListpackValue == lpv
				}
				best, bx, ok := r.best(cell)
				if !ok {
					continue
				}
				l := BarLine{
					What:   fmt.Sprintf("%s, %s keys, %s", g.what, f.Name, raisedLabel(lpv)),
					Target: g.target, Best: bx, BestWhere: where(best, bx), OK: bx >= g.target,
				}
				if m, x, ok := r.best(func(m Result) bool { return cell(m) && isMain(m) }); ok {
					l.Main, l.MainWhere = x, where(m, x)
				}
				out = append(out, l)
			}
		}
	}
	return out
}

// Worse lists the cells that use more memory than plain keys.
func (r *Report) Worse() []Result {
	var out []Result
	for _, m := range r.Memory {
		if m.Layout == "plain" {
			continue
		}
		if p, ok := r.plain(m); ok && m.PerPair() > p.PerPair() {
			out = append(out, m)
		}
	}
	return out
}

func mark(ok bool) string {
	if ok {
		return "✓"
	}
	return "✗"
}

func (r *Report) writeBar(p printer) {
	p("## The bar\n\n")
	p("\"Main layouts\" are the memory tables' columns (Dense(100) buckets, the default 16 KiB dictionary); \"best\" includes the " +
		"other layouts (Dense(126), a 32 KiB dictionary at level 9, …). ✓ when the best reaches the target.\n\n")
	p("| goal | target | main layouts | best layout | |\n| --- | --: | --- | --- | --- |\n")
	for _, l := range r.MemoryBar() {
		main := "–"
		if l.Main > 0 {
			main = fmt.Sprintf("%.2f× (%s)", l.Main, l.MainWhere)
		}
		p("| %s | ≥ %.0f× | %s | %.2f× (%s) | %s |\n", l.What, l.Target, main, l.Best, l.BestWhere, mark(l.OK))
	}
	worse := r.Worse()
	var mainWorse int
	for _, m := range worse {
		if isMain(m) {
			mainWorse++
		}
	}
	p("| no layout uses more memory than plain keys | 0 cells | %d cells of the main tables | %d cells in all (see below) | %s |\n",
		mainWorse, len(worse), mark(len(worse) == 0))
	for _, s := range r.Speed {
		worst, worstOp, worstLayout := 0.0, Op{}, ""
		for _, res := range s.Results {
			if res.Layout == "plain" {
				continue
			}
			base, _ := s.Result(res.Op, "plain")
			if base.OpsPerSec == 0 {
				continue
			}
			if d := 1 - res.OpsPerSec/base.OpsPerSec; d > worst {
				worst, worstOp, worstLayout = d, res.Op, res.Layout
			}
		}
		var misses int
		for _, res := range s.Results {
			base, _ := s.Result(res.Op, "plain")
			if res.Layout != "plain" && base.OpsPerSec > 0 && 1-res.OpsPerSec/base.OpsPerSec > BarSlowdown {
				misses++
			}
		}
		p("| namespace ops ≤ 15 %% slower than plain commands (%s values, %s) | ≤ 15 %% | %d of %d cells more than 15 %% slower | worst %.0f %% slower: %s, %s | %s |\n",
			s.Config.Class, raisedLabel(s.Config.ListpackValue), misses, len(s.Results)-len(s.Config.Ops), 100*worst, worstOp, worstLayout,
			mark(worst <= BarSlowdown))
	}
	p("\n")
	r.writeMisses(p)
}

// writeMisses explains each kind of miss in the bar table.
func (r *Report) writeMisses(p printer) {
	missed := map[string]bool{}
	for _, l := range r.MemoryBar() {
		if !l.OK || l.Main < l.Target {
			missed[strings.SplitN(l.What, ",", 2)[0]] = true
		}
	}
	p("### Misses and their reasons\n\n")
	if missed["counters (INCR)"] {
		p("- **Counters on `user:<id>` keys with Dense(100)**: a plain `user:<id>` key holding a small counter costs only " +
			"58.5 B, because integers below 10,000 are shared objects (no value allocation), while a pair in a listpack " +
			"cannot go much below 5 B: a 2-byte field and a 2-byte value, plus the bucket's key, object and the jemalloc " +
			"rounding of its listpack (407 B in a 448-B class for 100 fields). That is 11.4×. Dense(126) fills the 512-B class " +
			"exactly (7 + 126 × 4 = 511 B) and gives 12.7×, but only while every counter stays below 128 (larger ones take 3 " +
			"bytes and the listpack moves to the 640-B class). On the article's 30-character keys the plain key costs 16 B more " +
			"and every bucket layout clears 12×.\n")
	}
	if missed["JSON: random.json records"] || missed["JSON: corpus json-461"] || missed["JSON: corpus json-98"] {
		p("- **JSON on the default server** (`hash-max-listpack-value` 64): a record that is still over 64 B after " +
			"compression is stored as a plain key by the guard, and a plain key costs about 80 B (dictionary entry, table slot, " +
			"key, object) plus the value's allocation and the bucket marker. A ~460-B record therefore reaches 3× only if it " +
			"compresses to about 108 B or less: random.json's user records do with a 32 KiB dictionary at level 9 (104 B on " +
			"average), not with the default 16 KiB at level 3 (124 B); the corpus's json-461 records, full of random ids, " +
			"UUIDs and tokens, stay near 150 B whatever the dictionary. Plain zstd, without a dictionary, saves only a quarter " +
			"on such records. With a raised `hash-max-listpack-value` (a user's choice, as in the article) compressed records " +
			"live in buckets at their own size plus about 4 B, and random.json and json-461 clear 3×.\n")
	}
	if missed["JSON: corpus json-98"] {
		p("- **json-98 (small JSON)**: token, flag and user-summary documents of about 98 B, mostly random UUIDs and tokens, " +
			"compress to 58-62 B with a dictionary, and about half of them stay over 64 B. Even with a raised limit, a pair " +
			"costs about 70 B (the compressed value, its listpack entry and the listpack's jemalloc rounding) against 185-201 B " +
			"for a plain key: 2.6-2.9×.\n")
	}
	if len(r.Worse()) > 0 {
		p("- **More memory than plain keys**: see the next section. Bucketing without zipped names costs 7 B a pair more " +
			"than plain keys when every value is over the listpack limit (the guard's marker), and Dense buckets with sparse " +
			"ids and oversize values pay a near-empty bucket per pair.\n")
	}
	for _, s := range r.Speed {
		for _, res := range s.Results {
			base, _ := s.Result(res.Op, "plain")
			if res.Layout != "plain" && base.OpsPerSec > 0 && 1-res.OpsPerSec/base.OpsPerSec > BarSlowdown {
				p("- **Speed**: see \"Where the time goes\" below the speed tables.\n")
				p("\n")
				return
			}
		}
	}
	p("\n")
}

func (r *Report) writeGuard(p printer) {
	p("## More memory than plain keys: where, and the guard\n\n")
	p("Bucketing cannot make a value smaller than a listpack entry, compression stores a value compressed only when that is shorter, " +
		"and zipping only shortens names, so a layout's cost per pair is at most plain's, with two exceptions:\n\n" +
		"1. **A value too large for a listpack bucket** (over `hash-max-listpack-value`, 64 B by default, after compression). " +
		"Stored in its bucket, it would convert the whole bucket to a hashtable for good, and every small value in it would then " +
		"cost 50-60 B more (the `mixed` rows: one such value per hundred). The guard (`Oversize: OversizeAsKey`, the default) " +
		"stores it as a plain key instead and leaves a 2-byte marker in the bucket, so the bucket stays a listpack. " +
		"The price is the marker: about 4-5 B per oversize value (field, marker and listpack overhead) plus the bucket's own " +
		"cost when every value in it is oversize. With zipped keys the shorter plain key usually pays for it; without zipping, " +
		"or when zipping does not cross a jemalloc size class (`user:12345` and `u:3d7` both take a 16-B allocation), " +
		"the pair costs plain + marker.\n" +
		"2. **Sparse ids in Dense buckets**: a bucket per one or two keys costs its own key, object and listpack. With small values it " +
		"still saves (the notes' c1 case); with oversize values every pair pays a plain key *and* a near-empty bucket. " +
		"Use `Hashed`/`HashedFor` for sparse ids.\n\n")
	worse := r.Worse()
	if len(worse) == 0 {
		p("No measured cell used more memory than plain keys.\n\n")
		return
	}
	p("Measured cells that use more memory than plain keys:\n\n")
	p("| cell | B/pair | plain B/pair | more by | values stored as plain keys by the guard |\n| --- | --: | --: | --: | --: |\n")
	for _, m := range worse {
		pl, _ := r.plain(m)
		d := m.PerPair() - pl.PerPair()
		p("| %s | %.1f | %.1f | %.1f B (%.1f %%) | %d of %d |\n", m.Cell, m.PerPair(), pl.PerPair(), d, 100*d/pl.PerPair(), m.Oversize, m.Pairs)
	}
	p("\n")
}

// writeSpeedAnalysis says where a namespace's time goes, from reading the
// layout package (the numbers are in the tables).
func (r *Report) writeSpeedAnalysis(p printer) {
	// The text goes through p unformatted: it has literal percent signs.
	p("%s", "### Where the time goes\n\n"+
		"Client and server share two cores, so every extra command and allocation on either side costs throughput. "+
		"From the layout package's code, CPU profiles of the speed runs (`-cpuprofile`) and the tables above:\n\n"+
		"1. **Multi-key reads cost one command per bucket.** `Store.MGet` sends one `HMGET` per bucket and one `MGET` "+
		"for keys stored as plain keys; ten random keys among 100,000 fall in ten buckets of 100, so a namespace `MGET` of "+
		"10 is ten commands where plain Redis needs one. The server's CPU per key is close to plain's (server table); "+
		"the difference is per-command work on both sides. Keys that share buckets (neighbouring ids) batch into one "+
		"command each.\n"+
		"2. **`Store.In(batch).Get` queues two commands per key**, `HGET` of the field and `GET` of the plain key, so that "+
		"a value the guard moved to a plain key comes back in the same round trip. `Store.Get` alone sends only `HGET`, "+
		"and a second `GET` only when it finds the marker.\n"+
		"3. **Multi-key writes cost one `HSET` per bucket**, wrapped in MULTI/EXEC when that is more than one command "+
		"(plain-key layouts send one `MSET`, as plain Redis does).\n"+
		"4. **Per key on the client**, a namespace builds the stored names (one allocation each for a zipped name and a "+
		"bucket key) and a result; single writes and reads go through typed commands, without interface boxing (the "+
		"queueing table).\n"+
		"5. **Listpack lookups are linear**: `HGET` and `HSET` walk the bucket's listpack. With 100 small values that is "+
		"cheap (single gets and sets are within a few per cent of plain commands); with 100 records of 460 B on a server "+
		"whose `hash-max-listpack-value` was raised, each bucket is a 46 KB listpack and the server spends 2-3 times the "+
		"CPU per operation (the json-random server CPU table), a third less with the dictionary's 13 KB listpacks. The "+
		"raised limit trades server CPU for memory.\n"+
		"6. **Compression runs on the client**: compressing a 460-B record takes about 7 us with zstd and 13 us with the "+
		"dictionary, decompressing 2.2 and 1.3 us (`codec.Encode`/`Decode`, measured alone), against well under 1 us for "+
		"the rest of a write: compressed writes are bound by the codec (the queueing table's `set` rows).\n\n")
}

func (r *Report) writeSpeed(p printer) {
	for _, s := range r.Speed {
		c := s.Config
		p("## Speed: %s values, %s keys, %s\n\n", c.Class, c.Family.Name, raisedLabel(c.ListpackValue))
		p("%s; %d keys prefilled per layout, drawn uniformly at random; %d goroutines on one zipline.Client (implicit pipelining); "+
			"each cell is the median of %d runs of %v, rounds interleaved (plain, then each layout, for each op). "+
			"An op is one key: an MGET of 10 keys counts 10. Slowdown = 1 − layout ops/s ÷ plain ops/s; ✗ above 15 %%. "+
			"Client and server share the machine's 2 cores (with other work running: see load), so ratios are rough.\n\n",
			s.Server, c.Keys, c.Goroutines, c.Rounds, c.Duration)
		header := func(plain string) {
			p("| op | %s |", plain)
			for _, l := range c.Layouts {
				p(" %s |", l)
			}
			p("\n| --- | --: |")
			for range c.Layouts {
				p(" --: |")
			}
			p("\n")
		}
		header("plain ops/s")
		for _, op := range c.Ops {
			base, _ := s.Result(op, "plain")
			p("| %s | %.0f |", op, base.OpsPerSec)
			for _, l := range c.Layouts {
				res, _ := s.Result(op, l)
				d := 0.0
				if base.OpsPerSec > 0 {
					d = 1 - res.OpsPerSec/base.OpsPerSec
				}
				p(" %.0f (%+.0f %% %s) |", res.OpsPerSec, -100*d, mark(d <= BarSlowdown))
			}
			p("\n")
		}
		p("\nServer CPU per op (µs, median; from /proc), which shows what the layout costs the server:\n\n")
		header("plain")
		for _, op := range c.Ops {
			base, _ := s.Result(op, "plain")
			p("| %s | %.2f |", op, base.ServerMicros)
			for _, l := range c.Layouts {
				res, _ := s.Result(op, l)
				p(" %.2f |", res.ServerMicros)
			}
			p("\n")
		}
		if len(s.Queue) > 0 {
			p("\nClient-side cost of queueing one key in a batch of 100 (not sent; `MeasureQueueCost`, single goroutine, " +
				"under the same load): time, heap allocations, and commands that reach the server:\n\n")
			p("| op | layout | ns/key | allocs/key | B/key | commands/key |\n| --- | --- | --: | --: | --: | --: |\n")
			for _, q := range s.Queue {
				p("| %s | %s | %.0f | %.1f | %.0f | %.0f |\n", q.Op, q.Layout, q.NsPerKey, q.AllocsPerKey, q.BytesPerKey, q.CommandsPerKey)
			}
		}
		var errs uint64
		for _, res := range s.Results {
			errs += res.Errors
		}
		if errs > 0 {
			p("\n%d calls failed during the runs (timeouts under load); they are not counted as ops.\n", errs)
		}
		p("\n")
	}
}
