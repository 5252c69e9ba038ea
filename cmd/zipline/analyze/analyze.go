package analyze

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/codec"
	"github.com/ziplinekv/zipline/layout"
)

// Defaults of Config.
const (
	DefaultRate        = 20_000
	DefaultMaxKeys     = 1_000_000
	DefaultSamples     = 1000
	DefaultSampleBytes = 4 << 20
	DefaultMaxPatterns = 1000
	// DefaultPricePerGB is the on-demand price of AWS ElastiCache's
	// cache.r7g.large node (13.07 GiB) in us-east-1, $0.219 an hour, times
	// 730 hours, per GiB: a typical cloud cache's memory price.
	DefaultPricePerGB  = 12.23
	DefaultPriceSource = "AWS ElastiCache cache.r7g.large on demand, us-east-1: $0.219/h × 730 h / 13.07 GiB; " +
		"list price of 2024, pass yours with -price-per-gb"
	DefaultCalibrateKeys = 2000
)

// Config is what to analyze and how gently.
type Config struct {
	// Options reach the server or cluster (credentials included).
	Options zipline.Options
	// Replica is ReplicaAuto (read a replica when one is reachable, the
	// default), ReplicaPrimary, or the address of a replica to read.
	Replica string
	// Rate caps the keys scanned per second (DefaultRate; negative: no
	// cap); MaxKeys the
	// keys scanned in all (DefaultMaxKeys); counts and bytes are then
	// extrapolated to DBSIZE.
	Rate    int
	MaxKeys int64
	// Samples and SampleBytes bound the values read per pattern
	// (DefaultSamples, DefaultSampleBytes); a value larger than a quarter
	// of SampleBytes is read in part. MaxPatterns bounds the patterns
	// tracked (DefaultMaxPatterns); later ones count as "(other)".
	Samples     int
	SampleBytes int
	MaxPatterns int
	// Match limits the scan to the keys a SCAN MATCH pattern selects
	// (Project's: one namespace); empty scans every key.
	Match string
	// AllowTTLChange shows, beside the recommendations, the layouts that
	// would change when keys expire (a bucket-wide TTL on a server without
	// field expiry), with how many keys' TTLs they change and by how much.
	// Without it they are neither recommended nor shown: a session that
	// outlives the TTL its application set is a security bug, not a saving.
	AllowTTLChange bool
	// Calibrate writes a bounded sample of each namespace in its current
	// and recommended layouts, under a unique prefix, measures used_memory
	// and deletes it, and corrects the predictions by what it measured.
	// Without it nothing is written.
	Calibrate     bool
	CalibrateKeys int // keys per layout written (DefaultCalibrateKeys)
	// PricePerGB prices a GiB of cache a month (DefaultPricePerGB), and
	// PriceSource says where the price comes from.
	PricePerGB  float64
	PriceSource string
	// ServerArgs are the server flags the printed zipline migrate commands
	// carry ("-addr 10.0.0.5:6379"); never a password.
	ServerArgs string
	// Progress, if set, is called as the scan goes (about ten times a
	// second), from the goroutine that runs Run.
	Progress func(Progress)
	// Logger gets what the analysis notices on the way (a replica it
	// could not reach); nil discards.
	Logger *slog.Logger
}

func (c *Config) defaults() {
	if c.Rate == 0 {
		c.Rate = DefaultRate
	}
	if c.MaxKeys <= 0 {
		c.MaxKeys = DefaultMaxKeys
	}
	if c.Samples <= 0 {
		c.Samples = DefaultSamples
	}
	if c.SampleBytes <= 0 {
		c.SampleBytes = DefaultSampleBytes
	}
	if c.MaxPatterns <= 0 {
		c.MaxPatterns = DefaultMaxPatterns
	}
	if c.CalibrateKeys <= 0 {
		c.CalibrateKeys = DefaultCalibrateKeys
	}
	if c.PricePerGB == 0 {
		c.PricePerGB = DefaultPricePerGB
	}
	if c.PriceSource == "" && c.PricePerGB == DefaultPricePerGB {
		c.PriceSource = DefaultPriceSource
	}
	if c.PriceSource == "" {
		c.PriceSource = "-price-per-gb"
	}
	if c.ServerArgs == "" {
		c.ServerArgs = "-addr HOST:PORT"
	}
	c.Logger = quietLogger(c.Logger)
}

// Run analyzes the keyspace cfg.Options reach: it scans it (read-only
// unless cfg.Calibrate), groups its keys into patterns and namespaces,
// prices every layout for each namespace on its samples, and recommends.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg.defaults()
	srv, cs, err := connect(ctx, cfg.Options, cfg.Replica, cfg.Calibrate, cfg.Logger)
	if err != nil {
		return nil, err
	}
	defer cs.close()
	costs := srv.costs()
	res, err := scanKeys(ctx, &cfg, srv, cs)
	if err != nil {
		return nil, err
	}
	r, groups, ev, err := build(&cfg, srv, costs, res)
	if err != nil {
		return nil, err
	}
	if cfg.Calibrate {
		r.Scan.Wrote = true
		if err := calibrate(ctx, &cfg, cs, r, groups, ev); err != nil {
			return r, fmt.Errorf("calibrating: %w", err)
		}
	}
	r.total(costs)
	return r, nil
}

// build turns what the scan saw into a report: patterns, namespaces, the
// options priced for each and the recommendations.
func build(cfg *Config, srv *Server, costs layout.Costs, res *scanResult) (*Report, []*group, *evaluator, error) {
	t := res.tracker
	t.mergeSiblings(16)
	scale := 1.0
	if !res.complete && res.scanned > 0 {
		scale = max(float64(srv.Keys)/float64(res.scanned), 1)
	}
	ev, err := newEvaluator(costs, srv, scale)
	if err != nil {
		return nil, nil, nil, err
	}
	r := &Report{Server: srv, Profile: costs.Profile, ProfileNote: costs.Note, PricePerGB: cfg.PricePerGB,
		PriceSource: cfg.PriceSource}
	r.Scan = Scan{Scanned: res.scanned, Keys: srv.Keys, Scale: scale, Complete: res.complete,
		Seconds: res.elapsed.Seconds(), RateLimit: cfg.Rate, MaxKeys: cfg.MaxKeys, Refused: res.refused}
	if res.elapsed > 0 {
		r.Scan.Rate = float64(res.scanned) / res.elapsed.Seconds()
	}
	for _, sh := range srv.Shards {
		r.Scan.ReadFrom = append(r.Scan.ReadFrom, sh.Read+" ("+sh.ReadRole+")")
	}
	slices.Sort(r.Scan.Refused)
	for _, c := range r.Scan.Refused {
		r.Notes = append(r.Notes, "the server refused "+c+": what it would have told is estimated")
	}
	if !res.complete {
		r.Notes = append(r.Notes, fmt.Sprintf("the scan stopped at -max-keys %s of %s keys: every count and byte figure "+
			"is the scanned keys' times %.2f", formatCount(cfg.MaxKeys), formatCount(srv.Keys), scale))
	}

	groups := buildGroups(t, srv)
	nsOf := map[*patternStats]string{}
	for _, g := range groups {
		for _, p := range g.patterns {
			nsOf[p] = g.prefix
		}
	}
	for _, p := range t.patterns {
		r.Patterns = append(r.Patterns, patternReport(p, nsOf[p], ev, srv))
	}
	sort.Slice(r.Patterns, func(i, j int) bool {
		a, b := r.Patterns[i], r.Patterns[j]
		return a.Bytes > b.Bytes || a.Bytes == b.Bytes && a.Pattern < b.Pattern
	})
	for _, g := range groups {
		ns, err := recommend(cfg, g, ev, srv)
		if err != nil {
			return nil, nil, nil, err
		}
		r.Namespaces = append(r.Namespaces, ns)
	}
	sort.SliceStable(r.Namespaces, func(i, j int) bool {
		return recommendedSaved(&r.Namespaces[i]) > recommendedSaved(&r.Namespaces[j])
	})
	if hasTTLGroups(groups) && !srv.FieldTTL {
		r.Notes = append(r.Notes, fmt.Sprintf("%s %s has no hash field expiry (Redis 7.4+, Valkey 9+): namespaces "+
			"with TTLs stay plain keys (buckets would need a bucket-wide BucketTTL)", srv.Kind, srv.Version))
	}
	r.Notes = append(r.Notes, fmt.Sprintf("buckets are sized for this server's listpack limits: %d entries, values of "+
		"%d bytes (%s)", srv.ListpackEntries, srv.ListpackValue, srv.ListpackSource))
	return r, groups, ev, nil
}

func hasTTLGroups(gs []*group) bool {
	for _, g := range gs {
		for _, p := range g.patterns {
			if p.ttlKeys > 0 {
				return true
			}
		}
	}
	return false
}

// patternReport summarises a pattern.
func patternReport(p *patternStats, ns string, ev *evaluator, srv *Server) PatternReport {
	pr := PatternReport{Pattern: p.pattern, Namespace: ns, Keys: int64(math.Round(float64(p.keys) * ev.scale)),
		Scanned: p.keys, Types: p.types, Encodings: p.encodings, TTL: map[string]int64{}, Samples: len(p.samples),
		Truncated: p.truncatedSamples}
	pr.Bytes = ev.nowBytes(p)
	if srv.UsedMemory > 0 {
		pr.Share = pr.Bytes / float64(srv.UsedMemory)
	}
	if p.keys > 0 {
		pr.TTLShare = float64(p.ttlKeys) / float64(p.keys)
		pr.MeanKey = float64(p.keyLen) / float64(p.keys)
	}
	for i, n := range p.ttlHist {
		if n > 0 {
			pr.TTL[ttlLabels[i]] = int64(math.Round(float64(n) * ev.scale))
		}
	}
	for i := range p.samples {
		if codec.IsCompressed(p.samples[i].value) {
			pr.Compressed++
		}
	}
	if p.lenN > 0 {
		pr.ValueSizes = map[string]int64{}
		for i, n := range p.lenHist {
			if n > 0 {
				pr.ValueSizes[lenLabels[i]] = n
			}
		}
		pr.MeanValue = float64(p.lenSum) / float64(p.lenN)
	}
	return pr
}

// buildGroups forms the namespaces: each literal prefix, merged into a
// shorter one that starts it (a namespace owns every key that starts with
// its prefix), and picks each a stored prefix (ZipAs) no key has.
func buildGroups(t *tracker, srv *Server) []*group {
	var prefixes []string
	seen := map[string]bool{}
	for _, p := range t.patterns {
		if p.prefix != "" && p.pattern != otherPattern && !seen[p.prefix] {
			seen[p.prefix] = true
			prefixes = append(prefixes, p.prefix)
		}
	}
	sort.Slice(prefixes, func(i, j int) bool {
		return len(prefixes[i]) < len(prefixes[j]) || len(prefixes[i]) == len(prefixes[j]) && prefixes[i] < prefixes[j]
	})
	var groups []*group
	owner := map[string]*group{}
	for _, pre := range prefixes {
		var g *group
		for _, o := range groups {
			if strings.HasPrefix(pre, o.prefix) {
				g = o
				break
			}
		}
		if g == nil {
			g = &group{prefix: pre}
			groups = append(groups, g)
		}
		owner[pre] = g
	}
	for _, p := range t.patterns {
		if g := owner[p.prefix]; g != nil && p.pattern != otherPattern {
			g.patterns = append(g.patterns, p)
		}
	}
	used := map[string]bool{}
	for _, g := range groups {
		g.patterns = sortedPatterns(g.patterns)
		var other []string
		for _, p := range g.patterns {
			for typ := range p.types {
				if typ != "string" && !slices.Contains(other, typ) {
					other = append(other, typ)
				}
			}
		}
		slices.Sort(other)
		switch {
		case len(other) > 0:
			g.skip = "holds " + strings.Join(other, ", ") + " keys; layouts hold strings"
		case strings.ContainsAny(g.prefix, "{}"):
			g.skip = "a hash tag in the prefix"
		}
		g.zipAs = chooseZipAs(g.prefix, func(z string) bool {
			if used[z] || t.firstSegments[z] > 0 {
				return true
			}
			for _, o := range groups {
				if strings.HasPrefix(o.prefix, z) || strings.HasPrefix(z, o.prefix) {
					return true
				}
			}
			return false
		})
		used[g.zipAs] = true
	}
	return groups
}

// chooseZipAs picks a short stored prefix for a namespace: its words'
// initials ("cache:user:" -> "cu:"), or the first letters of its first
// word ("u:", "us:"...), or those with a digit, that taken does not
// refuse.
func chooseZipAs(prefix string, taken func(string) bool) string {
	words := strings.FieldsFunc(prefix, func(r rune) bool {
		return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9')
	})
	var cands []string
	if len(words) > 1 {
		var ini strings.Builder
		for _, w := range words {
			ini.WriteByte(w[0])
		}
		cands = append(cands, ini.String())
	}
	first := "z"
	if len(words) > 0 {
		first = words[0]
	}
	for n := 1; n <= len(first) && n <= 4; n++ {
		cands = append(cands, first[:n])
	}
	for d := 1; d <= 99; d++ {
		cands = append(cands, first[:1]+fmt.Sprint(d))
	}
	for _, c := range cands {
		z := strings.ToLower(c) + ":"
		if z != prefix && !taken(z) {
			return z
		}
	}
	return "zz" + fmt.Sprint(time.Now().UnixNano()%1e6) + ":"
}

// Recommendation rules.
const (
	// minSavedShare: below this share of a namespace's bytes, keep it as
	// it is; a migration is not free.
	minSavedShare = 0.10
	// simplerShare: a simpler layout (no buckets, LZ4 rather than zstd,
	// no codec) that saves at least this share of the best one's saving
	// is preferred: buckets cost a script per write, zstd CPU.
	simplerShare = 0.95
	// clearlyMore: a layout that needs what is not there yet (codec=dict)
	// or changes behaviour (BucketTTL) is shown when it saves this much
	// more than the recommendation.
	clearlyMore = 1.10
)

// recommend prices g's options and picks one.
func recommend(cfg *Config, g *group, ev *evaluator, srv *Server) (NamespaceReport, error) {
	ns := NamespaceReport{Prefix: g.prefix, ZipAs: g.zipAs, Skip: g.skip}
	var now, keys float64
	for _, p := range g.patterns {
		ns.Patterns = append(ns.Patterns, p.pattern)
		now += ev.nowBytes(p)
		keys += float64(p.keys) * ev.scale
	}
	ns.Bytes, ns.Keys = now, int64(math.Round(keys))
	if g.skip != "" {
		return ns, nil
	}
	dict, test, dictOK := trainDictionary(g)
	for _, o := range ev.options(g, dictOK) {
		var est estimate
		var err error
		if o.needsDict {
			est, err = ev.evaluate(g, o, dict, test)
		} else {
			est, err = ev.evaluate(g, o, nil, nil)
		}
		if err != nil {
			return ns, err
		}
		ns.Options = append(ns.Options, optionReport(g, o, est, now, ev.scale))
	}
	sort.SliceStable(ns.Options, func(i, j int) bool { return ns.Options[i].Saved > ns.Options[j].Saved })
	pick(&ns, now, cfg.AllowTTLChange)
	if ns.Recommended != nil {
		ns.Migrate = fmt.Sprintf("zipline migrate %s -from %s -to %s", cfg.ServerArgs, shellQuote("prefix="+g.prefix),
			shellQuote(ns.Recommended.Spec))
		ns.GoValue = goValueOf(g, ev, ns.Recommended.Name)
		if ns.Recommended.Volatile > 0 {
			ns.Notes = append(ns.Notes, fmt.Sprintf("%.0f%% of its buckets hold keys with TTLs, which makes them "+
				"hashtables on %s %s: priced as such", 100*ns.Recommended.Volatile, srv.Kind, srv.Version))
		}
		if ns.Recommended.Oversize > 0.01 {
			ns.Notes = append(ns.Notes, fmt.Sprintf("%.0f%% of its bucketed values are larger than %d bytes and stay "+
				"keys of their own (oversize)", 100*ns.Recommended.Oversize, srv.ListpackValue))
		}
	}
	if ns.BucketTTL != nil {
		ns.BucketTTLMigrate = fmt.Sprintf("zipline migrate %s -from %s -to %s -allow-ttl-change", cfg.ServerArgs,
			shellQuote("prefix="+g.prefix), shellQuote(ns.BucketTTL.Spec))
	}
	if ns.Dict != nil {
		spec := ns.Dict.Spec
		// Trained on the values where they are, the dictionary is active
		// before the migration, which writes each value with it once.
		from := shellQuote("prefix=" + g.prefix)
		ns.DictCommands = []string{
			fmt.Sprintf("zipline dict train %s -namespace %s -from %s", cfg.ServerArgs, shellQuote(spec), from),
			fmt.Sprintf("zipline migrate %s -from %s -to %s", cfg.ServerArgs, from, shellQuote(spec)),
		}
	}
	return ns, nil
}

// goValueOf is the layout.Namespace of g's option named name.
func goValueOf(g *group, ev *evaluator, name string) string {
	for _, o := range ev.options(g, true) {
		if o.name == name {
			return o.goValue(g)
		}
	}
	return ""
}

func optionReport(g *group, o option, est estimate, now float64, scale float64) OptionReport {
	or := OptionReport{Name: o.name, Spec: o.spec(g), Bytes: est.bytes, Saved: now - est.bytes,
		Applicable: o.applicable(), KeysAfter: int64(math.Round(est.keysAfter)), Bucketed: est.bucketed,
		Oversize: est.oversize, Fill: est.fill, Volatile: est.volatile, Stored: est.stored, DictBytes: est.dictBytes,
		Samples: est.samples}
	or.Variance = est.spread.variance()
	half := 1.96 * math.Sqrt(or.Variance)
	or.SavedLow, or.SavedHigh = or.Saved-half, or.Saved+half
	if o.bucketTTL > 0 {
		or.TTLChange = ttlChangeOf(g, o.bucketTTL, scale)
	}
	if now > 0 {
		or.SavedPct = 100 * or.Saved / now
	}
	switch {
	case o.needsDict:
		or.Needs = "dictionaries kept in the server (codec=dict, zipline dict)"
	case o.bucketTTL > 0:
		or.Needs = fmt.Sprintf("keys would expire with their bucket, %s after its first TTL write, not at their own "+
			"TTLs: a key written late in a bucket's life expires early, and expired keys hold memory until their "+
			"bucket goes", o.bucketTTL)
	}
	return or
}

// pick chooses the recommendation: the applicable option that saves the
// most, or a simpler one that saves nearly as much; the dictionary option
// worth showing (one that keeps every key's TTL); and, only when
// allowTTLChange, the bucket-wide TTL option, which changes when keys
// expire.
func pick(ns *NamespaceReport, now float64, allowTTLChange bool) {
	var best *OptionReport
	for i := range ns.Options {
		o := &ns.Options[i]
		if o.Applicable && (best == nil || o.Saved > best.Saved) {
			best = o
		}
	}
	if best == nil || best.Saved < minSavedShare*now || best.Saved <= 0 {
		if best != nil {
			ns.Skip = fmt.Sprintf("no layout saves %.0f%% or more", 100*minSavedShare)
		}
	} else {
		rec := best
		for i := range ns.Options {
			o := &ns.Options[i]
			if o.Applicable && o.Saved >= simplerShare*best.Saved && complexity(o.Name) < complexity(rec.Name) {
				rec = o
			}
		}
		cp := *rec
		ns.Recommended = &cp
	}
	base := recommendedSaved(ns)
	var hiddenTTL *OptionReport
	for i := range ns.Options {
		o := ns.Options[i]
		worth := o.Saved > clearlyMore*base && o.Saved-base >= minSavedShare*now
		switch {
		case !worth:
		case o.TTLChange != nil:
			if hiddenTTL == nil || o.Saved > hiddenTTL.Saved {
				hiddenTTL = &o
			}
		case strings.Contains(o.Name, "dict") && (ns.Dict == nil || o.Saved > ns.Dict.Saved):
			ns.Dict = &o
		}
	}
	switch {
	case hiddenTTL != nil && allowTTLChange:
		ns.BucketTTL = hiddenTTL
	case hiddenTTL != nil:
		ns.Notes = append(ns.Notes, fmt.Sprintf("a layout with a bucket-wide TTL would save %s more, but it changes when "+
			"%s keys with TTLs expire: not shown (-allow-ttl-change shows it, with what it changes)",
			bytesText(hiddenTTL.Saved-base), formatCount(hiddenTTL.TTLChange.Keys)))
	}
}

// complexity orders layouts by what they cost to run: plain keys before
// buckets, no codec before LZ4 before zstd.
func complexity(name string) int {
	c := 0
	if strings.HasPrefix(name, "dense") || strings.HasPrefix(name, "hashed") {
		c += 10
	}
	switch {
	case strings.HasSuffix(name, "+zstd"), strings.HasSuffix(name, "+dict"):
		c += 2
	case strings.HasSuffix(name, "+lz4"):
		c++
	}
	return c
}

// total sums the recommendations, with the keyspace table's change and
// the money.
func (r *Report) total(costs layout.Costs) {
	t := &r.Totals
	t.UsedMemory = r.Server.UsedMemory
	t.Copies = max(r.Server.Copies, 1)
	for _, p := range r.Patterns {
		t.Bytes += p.Bytes
	}
	var keysBefore, keysAfter, variance float64
	for _, ns := range r.Namespaces {
		if ns.Recommended != nil {
			t.Saved += ns.Recommended.Saved
			variance += ns.Recommended.Variance
			keysBefore += float64(ns.Keys)
			keysAfter += float64(ns.Recommended.KeysAfter)
		}
		if ns.Dict != nil {
			t.DictSaved += ns.Dict.Saved - recommendedSaved(&ns)
		}
	}
	// Each shard's table, for its share of the keys.
	for _, sh := range r.Server.Shards {
		share := float64(sh.Keys) / math.Max(float64(r.Server.Keys), 1)
		before, slots := costs.TableBytes(sh.Keys)
		after := costs.TableAfter(slots, sh.Keys-int64(math.Round(share*(keysBefore-keysAfter))))
		t.TableSaved += before - float64(8*after)
	}
	t.Saved += t.TableSaved
	half := 1.96 * math.Sqrt(variance)
	t.SavedLow, t.SavedHigh = t.Saved-half, t.Saved+half
	if t.UsedMemory > 0 {
		t.SavedPct = 100 * t.Saved / float64(t.UsedMemory)
	}
	t.Monthly = t.Saved / (1 << 30) * r.PricePerGB * float64(t.Copies)
}

// shellQuote quotes s for a POSIX shell, in single quotes.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// ttlChangeOf is what a bucket-wide TTL does to g's keys with TTLs.
func ttlChangeOf(g *group, bucketTTL time.Duration, scale float64) *TTLChange {
	c := &TTLChange{BucketTTL: bucketTTL}
	var keys float64
	for _, p := range g.patterns {
		keys += float64(p.ttlKeys) * scale
		c.MaxTTL = max(c.MaxTTL, p.maxTTL)
		if p.minTTL > 0 && (c.MinTTL == 0 || p.minTTL < c.MinTTL) {
			c.MinTTL = p.minTTL
		}
	}
	c.Keys = int64(math.Round(keys))
	return c
}
