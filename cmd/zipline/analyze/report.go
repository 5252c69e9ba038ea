package analyze

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is what an analysis found and recommends. It marshals to JSON
// (zipline analyze -json) and renders as text (WriteText) and HTML
// (WriteHTML).
type Report struct {
	Server *Server `json:"server"`
	// Profile names the costs the predictions use; ProfileNote says how
	// far this server is from the one they were measured on.
	Profile     string `json:"profile"`
	ProfileNote string `json:"profile_note,omitempty"`
	Scan        Scan   `json:"scan"`
	// Patterns are the key patterns, most memory first.
	Patterns []PatternReport `json:"patterns"`
	// Namespaces are the prefixes a layout can own, most saving first.
	Namespaces []NamespaceReport `json:"namespaces"`
	Totals     Totals            `json:"totals"`
	// PricePerGB is the price of a GiB of cache memory a month, in
	// dollars; PriceSource says where it comes from.
	PricePerGB  float64 `json:"price_per_gb_month"`
	PriceSource string  `json:"price_source"`
	// Calibration is what -calibrate measured, if it ran.
	Calibration []CalibrationReport `json:"calibration,omitempty"`
	Notes       []string            `json:"notes,omitempty"`
}

// Scan is how the keyspace was read.
type Scan struct {
	Scanned int64 `json:"scanned"`
	// Keys is DBSIZE; Scale is Keys/Scanned, by which counts and bytes are
	// extrapolated (1 when the scan saw every key).
	Keys     int64   `json:"keys"`
	Scale    float64 `json:"scale"`
	Complete bool    `json:"complete"`
	Seconds  float64 `json:"seconds"`
	Rate     float64 `json:"keys_per_second"`
	// RateLimit and MaxKeys are the limits the scan ran under.
	RateLimit int   `json:"rate_limit"`
	MaxKeys   int64 `json:"max_keys"`
	// ReadFrom lists the nodes read, with their role.
	ReadFrom []string `json:"read_from"`
	// Wrote says the analysis wrote to the server (only -calibrate does).
	Wrote   bool     `json:"wrote"`
	Refused []string `json:"refused_commands,omitempty"`
}

// PatternReport is one key pattern.
type PatternReport struct {
	Pattern string `json:"pattern"`
	// Namespace is the prefix of the namespace it belongs to, "" if none.
	Namespace string `json:"namespace"`
	// Keys is the estimated number of keys (Scanned times the scan's scale).
	Keys    int64 `json:"keys"`
	Scanned int64 `json:"scanned"`
	// Bytes is what its keys cost now (estimated), Share its part of
	// used_memory.
	Bytes     float64          `json:"bytes"`
	Share     float64          `json:"share"`
	Types     map[string]int64 `json:"types"`
	Encodings map[string]int64 `json:"encodings,omitempty"`
	// TTLShare is the part of its keys with a TTL; TTL spreads them by TTL.
	TTLShare float64          `json:"ttl_share"`
	TTL      map[string]int64 `json:"ttl"`
	// ValueSizes spreads the sampled values by length; MeanValue is their
	// mean length; Samples how many were read (Truncated of them in part).
	ValueSizes map[string]int64 `json:"value_sizes,omitempty"`
	MeanValue  float64          `json:"mean_value"`
	Samples    int              `json:"samples"`
	Truncated  int              `json:"truncated,omitempty"`
	MeanKey    float64          `json:"mean_key"`
	// Compressed counts the samples stored compressed already (a GLIDE
	// envelope, written by a compressing client): where a rollout of
	// compression stands (zipline inspect -match counts every value).
	Compressed int `json:"compressed,omitempty"`
}

// NamespaceReport is one namespace: the options priced for it and what to
// do.
type NamespaceReport struct {
	Prefix   string   `json:"prefix"`
	ZipAs    string   `json:"zip_as,omitempty"`
	Patterns []string `json:"patterns"`
	Keys     int64    `json:"keys"`
	Bytes    float64  `json:"bytes"`
	// Options are every layout priced, most saving first.
	Options []OptionReport `json:"options,omitempty"`
	// Recommended is the layout to apply now (nil: keep as is, see Skip);
	// Migrate is its zipline migrate command and GoValue its
	// layout.Namespace.
	Recommended *OptionReport `json:"recommended,omitempty"`
	Migrate     string        `json:"migrate,omitempty"`
	GoValue     string        `json:"go_value,omitempty"`
	// Dict is the best layout with codec=dict when it saves clearly more
	// than Recommended; it needs dictionaries kept in the server.
	Dict         *OptionReport `json:"dict,omitempty"`
	DictCommands []string      `json:"dict_commands,omitempty"`
	// BucketTTL is the best layout with a bucket-wide TTL, on a server
	// without field expiry, when it saves clearly more: it changes when
	// keys expire.
	BucketTTL *OptionReport `json:"bucket_ttl,omitempty"`
	// BucketTTLMigrate is its zipline migrate command, which must be told
	// -allow-ttl-change.
	BucketTTLMigrate string   `json:"bucket_ttl_migrate,omitempty"`
	Skip             string   `json:"skip,omitempty"`
	Notes            []string `json:"notes,omitempty"`
}

// OptionReport is one layout priced for a namespace.
type OptionReport struct {
	Name string `json:"name"`
	Spec string `json:"spec"`
	// Bytes is what the namespace's keys would cost; Saved and SavedPct
	// what that saves.
	Bytes    float64 `json:"bytes"`
	Saved    float64 `json:"saved"`
	SavedPct float64 `json:"saved_pct"`
	// Applicable says zipline migrate can apply it today without changing
	// the application's behaviour; Needs says what it needs otherwise.
	Applicable bool   `json:"applicable"`
	Needs      string `json:"needs,omitempty"`
	// KeysAfter is the keys it takes in the keyspace; Bucketed the share
	// of keys in buckets; Oversize the share of those too large for the
	// listpack; Fill the fields per bucket; Volatile the share of buckets
	// that field TTLs turn into hashtables; Stored stored over application
	// bytes of the values.
	KeysAfter int64   `json:"keys_after"`
	Bucketed  float64 `json:"bucketed,omitempty"`
	Oversize  float64 `json:"oversize,omitempty"`
	Fill      float64 `json:"fill,omitempty"`
	Volatile  float64 `json:"volatile,omitempty"`
	Stored    float64 `json:"stored_ratio,omitempty"`
	DictBytes int     `json:"dict_bytes,omitempty"`
	Samples   int     `json:"samples"`
	// Calibrated says -calibrate measured this layout and corrected it.
	Calibrated bool `json:"calibrated,omitempty"`
	// SavedLow and SavedHigh bound Saved with 95 % confidence, from the
	// spread of the samples within their size strata; Variance is that
	// spread's.
	SavedLow  float64 `json:"saved_low"`
	SavedHigh float64 `json:"saved_high"`
	Variance  float64 `json:"-"`
	// TTLChange says whose TTLs the layout changes (a bucket-wide TTL), or
	// nil if it keeps every key's.
	TTLChange *TTLChange `json:"ttl_change,omitempty"`
}

// TTLChange is what a layout with a bucket-wide TTL does to keys' TTLs:
// the Keys with TTLs of MinTTL to MaxTTL would each expire with their
// bucket instead, BucketTTL after the bucket's first TTL'd write, so a key
// outlives its own TTL by up to BucketTTL-MinTTL, or expires early.
type TTLChange struct {
	Keys      int64         `json:"keys"`
	MinTTL    time.Duration `json:"min_ttl"`
	MaxTTL    time.Duration `json:"max_ttl"`
	BucketTTL time.Duration `json:"bucket_ttl"`
}

// String says what the change does, in a sentence.
func (c TTLChange) String() string {
	longer := max(c.BucketTTL-c.MinTTL, 0)
	return fmt.Sprintf("%s keys with TTLs of %s to %s would expire with their bucket instead, %s after its first "+
		"write with a TTL: a key may outlive its own TTL by up to %s, or expire before it", formatCount(c.Keys),
		roundDuration(c.MinTTL), roundDuration(c.MaxTTL), roundDuration(c.BucketTTL), roundDuration(longer))
}

func roundDuration(d time.Duration) time.Duration {
	switch {
	case d >= 10*time.Minute: // a TTL read a moment after it was set is a little short of it
		return d.Round(time.Minute)
	case d >= time.Minute:
		return d.Round(time.Second)
	}
	return d.Round(time.Millisecond)
}

// Totals sum the recommendations.
type Totals struct {
	// UsedMemory is used_memory (summed over the nodes read); Bytes what
	// the keys cost, as the model prices them.
	UsedMemory int64   `json:"used_memory"`
	Bytes      float64 `json:"bytes"`
	// Saved is what the recommendations save, keyspace tables included
	// (TableSaved of it); SavedPct of used_memory.
	Saved      float64 `json:"saved"`
	SavedPct   float64 `json:"saved_pct"`
	TableSaved float64 `json:"table_saved"`
	// SavedLow and SavedHigh bound Saved with 95 % confidence (the
	// recommendations' sampling spreads added up).
	SavedLow  float64 `json:"saved_low"`
	SavedHigh float64 `json:"saved_high"`
	// DictSaved is what codec=dict would save on top, where it was priced.
	DictSaved float64 `json:"dict_saved,omitempty"`
	// Monthly is Saved at PricePerGB, times the copies (replicas hold
	// every key too).
	Monthly float64 `json:"monthly_dollars"`
	Copies  int     `json:"copies"`
}

// CalibrationReport is one layout written and measured by -calibrate.
type CalibrationReport struct {
	Namespace string  `json:"namespace"`
	Layout    string  `json:"layout"`
	Keys      int     `json:"keys"`
	Measured  float64 `json:"measured"`
	Predicted float64 `json:"predicted"`
	// Factor is Measured/Predicted, applied to the prediction.
	Factor float64 `json:"factor"`
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText writes the report for a terminal: the server and scan, the
// table of patterns with what to do and what it saves, then the commands.
func (r *Report) WriteText(w io.Writer) error {
	ew := &errWriter{w: w}
	s := r.Server
	read := strings.Join(r.Scan.ReadFrom, ", ")
	ew.printf("zipline analyze: %s; read from %s\n", s.Describe(), read)
	how := "every key"
	if !r.Scan.Complete {
		how = fmt.Sprintf("%.1f%% of the keys: counts and bytes below are extrapolated ×%.2f", 100/r.Scan.Scale, r.Scan.Scale)
	}
	ew.printf("scanned %s of %s keys in %.1fs (%s keys/s, limit %s/s): %s; %s\n",
		formatCount(r.Scan.Scanned), formatCount(r.Scan.Keys), r.Scan.Seconds, formatCount(int64(r.Scan.Rate)),
		formatCount(int64(r.Scan.RateLimit)), how, wroteText(r.Scan.Wrote))
	ew.printf("memory: used_memory %s; keys %s as priced by %s\n", bytesText(float64(r.Totals.UsedMemory)),
		bytesText(r.Totals.Bytes), r.Profile)
	if r.ProfileNote != "" {
		ew.printf("note: %s\n", r.ProfileNote)
	}
	ew.printf("\n")

	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "PATTERN\tTYPE\tKEYS\tMEMORY\tSHARE\tTTL\t\tRECOMMENDED LAYOUT\tSAVES\t%%\t\n")
	byNS := map[string]*NamespaceReport{}
	for i := range r.Namespaces {
		byNS[r.Namespaces[i].Prefix] = &r.Namespaces[i]
	}
	shown := map[string]bool{}
	rows := 0
	for _, p := range r.Patterns {
		ns := byNS[p.Namespace]
		layoutText, saved, pct := "keep as is", "", ""
		if ns != nil && shown[ns.Prefix] {
			layoutText = "  ↑ same namespace"
		} else if ns != nil && ns.Recommended != nil {
			layoutText = strings.TrimPrefix(ns.Recommended.Spec, "prefix="+ns.Prefix+",")
			saved = savedText(*ns.Recommended)
			pct = fmt.Sprintf("%.1f%%", ns.Recommended.SavedPct)
		} else if ns != nil && ns.Skip != "" {
			layoutText = "keep as is (" + ns.Skip + ")"
		}
		if ns != nil {
			shown[ns.Prefix] = true
		}
		if rows == 25 {
			fmt.Fprintf(tw, "… %d more patterns (see -json or -html)\t\t\t\t\t\t\t\t\t\t\n", len(r.Patterns)-rows)
			break
		}
		rows++
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.1f%%\t%s\t\t%s\t%s\t%s\t\n", p.Pattern, mainTypeText(p.Types),
			formatCount(p.Keys), bytesText(p.Bytes), 100*p.Share, ttlText(p.TTLShare), layoutText, saved, pct)
	}
	fmt.Fprintf(tw, "TOTAL\t\t%s\t%s\t%.1f%%\t\t\t\t%s\t%.1f%%\t\n", formatCount(r.Scan.Keys), bytesText(r.Totals.Bytes),
		100*r.Totals.Bytes/math.Max(float64(r.Totals.UsedMemory), 1), bytesText(r.Totals.Saved), r.Totals.SavedPct)
	if err := tw.Flush(); err != nil {
		return err
	}
	ew.printf("\nsaves %s (95 %%: %s to %s) of used_memory on each of %d cop%s: $%.2f a month at $%.2f per GiB-month (%s)\n",
		bytesText(r.Totals.Saved), bytesText(r.Totals.SavedLow), bytesText(r.Totals.SavedHigh), r.Totals.Copies,
		plural(r.Totals.Copies, "y", "ies"), r.Totals.Monthly, r.PricePerGB, r.PriceSource)
	if r.Totals.TableSaved != 0 {
		ew.printf("(of which %s is the keyspace's table shrinking with fewer keys)\n", bytesText(r.Totals.TableSaved))
	}

	ew.printf("\npatterns in detail (encodings and value sizes of the keys read in detail, TTLs of every key):\n")
	tw = tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "PATTERN\tENCODINGS\tMEAN VALUE\tVALUE SIZES\tCOMPRESSED\tTTLS\n")
	for i, p := range r.Patterns {
		if i == 25 {
			break
		}
		mean := ""
		if p.Samples > 0 {
			mean = bytesText(p.MeanValue)
		}
		compressed := ""
		if p.Samples > 0 {
			compressed = fmt.Sprintf("%d of %d", p.Compressed, p.Samples)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", p.Pattern, countsText(p.Encodings, nil), mean,
			countsText(p.ValueSizes, lenLabels), compressed, countsText(p.TTL, ttlLabels))
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	var applied []*NamespaceReport
	for i := range r.Namespaces {
		if r.Namespaces[i].Recommended != nil {
			applied = append(applied, &r.Namespaces[i])
		}
	}
	if len(applied) > 0 {
		ew.printf("\nTo apply (deploy code that uses the new layout with MigrateFrom first; see zipline help migrate):\n")
		for _, ns := range applied {
			ew.printf("  %s\n", ns.Migrate)
		}
		ew.printf("\nas layout.Namespace values:\n")
		for _, ns := range applied {
			ew.printf("  %s\n", ns.GoValue)
		}
	}
	for _, ns := range r.Namespaces {
		if ns.Dict == nil {
			continue
		}
		ew.printf("\n%s with a zstd dictionary (codec=dict) would save %s (%.1f%%) instead of %s; it needs dictionaries kept "+
			"in the server (layout codec=dict and zipline dict):\n", ns.Prefix, bytesText(ns.Dict.Saved), ns.Dict.SavedPct,
			bytesText(recommendedSaved(&ns)))
		for _, c := range ns.DictCommands {
			ew.printf("  %s\n", c)
		}
	}
	for _, ns := range r.Namespaces {
		if ns.BucketTTL == nil {
			continue
		}
		ew.printf("\n%s in buckets would save %s (%.1f%%) with %s, but this server has no hash field expiry, "+
			"so it CHANGES WHEN KEYS EXPIRE: %s. Apply it only if that is acceptable, with:\n  %s\n", ns.Prefix,
			bytesText(ns.BucketTTL.Saved), ns.BucketTTL.SavedPct, ns.BucketTTL.Spec, ns.BucketTTL.TTLChange,
			ns.BucketTTLMigrate)
	}
	var notes []string
	for _, ns := range r.Namespaces {
		for _, n := range ns.Notes {
			notes = append(notes, ns.Prefix+": "+n)
		}
	}
	notes = append(notes, r.Notes...)
	if len(notes) > 0 {
		ew.printf("\nnotes:\n")
		for _, n := range notes {
			ew.printf("  - %s\n", n)
		}
	}
	return ew.err
}

func recommendedSaved(ns *NamespaceReport) float64 {
	if ns.Recommended == nil {
		return 0
	}
	return ns.Recommended.Saved
}

func wroteText(wrote bool) string {
	if wrote {
		return "wrote and deleted calibration keys (-calibrate)"
	}
	return "nothing written"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func mainTypeText(types map[string]int64) string {
	best, n := "", int64(-1)
	for t, c := range types {
		if c > n || c == n && t < best {
			best, n = t, c
		}
	}
	if len(types) > 1 {
		best += "+"
	}
	return best
}

func ttlText(share float64) string {
	switch {
	case share == 0:
		return "none"
	case share >= 0.995:
		return "all"
	}
	return fmt.Sprintf("%.0f%%", 100*share)
}

// bytesText prints a byte count in B, KB, MB or GB (powers of 1000).
func bytesText(b float64) string {
	neg := b < 0
	b = math.Abs(b)
	var s string
	switch {
	case b >= 1e9:
		s = fmt.Sprintf("%.2f GB", b/1e9)
	case b >= 1e6:
		s = fmt.Sprintf("%.1f MB", b/1e6)
	case b >= 1e3:
		s = fmt.Sprintf("%.1f KB", b/1e3)
	default:
		s = fmt.Sprintf("%.0f B", b)
	}
	if neg {
		return "-" + s
	}
	return s
}

// errWriter keeps the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

func (e *errWriter) printf(format string, a ...any) { fmt.Fprintf(e, format, a...) }

// savedText is an option's saving with its 95 % interval's half-width,
// when that is at least a hundredth of it.
func savedText(o OptionReport) string {
	half := (o.SavedHigh - o.SavedLow) / 2
	if half < 0.01*math.Abs(o.Saved) {
		return bytesText(o.Saved)
	}
	return bytesText(o.Saved) + " ±" + bytesText(half)
}
