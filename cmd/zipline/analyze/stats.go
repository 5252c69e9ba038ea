package analyze

import (
	"math"
	"math/bits"
	"slices"
	"strings"
	"time"
)

// sample is one key read in detail: its stored bytes (the first ones, if
// Truncated), their full length, TTL and what the server says of it.
type sample struct {
	key       string
	value     []byte
	length    int
	truncated bool
	ttl       time.Duration // 0: none
	memUsage  int64         // MEMORY USAGE, 0 if unknown
	encoding  string
}

// TTL histogram buckets: none, then below each bound.
var ttlBounds = []time.Duration{time.Minute, 10 * time.Minute, time.Hour, 24 * time.Hour, 7 * 24 * time.Hour}

// ttlLabels names the buckets of a TTL histogram.
var ttlLabels = []string{"none", "<1m", "1-10m", "10m-1h", "1h-1d", "1-7d", ">7d"}

func ttlBucket(ttl time.Duration) int {
	if ttl <= 0 {
		return 0
	}
	for i, b := range ttlBounds {
		if ttl < b {
			return i + 1
		}
	}
	return len(ttlBounds) + 1
}

// Value-length histogram buckets (bytes stored): below each bound.
var lenBounds = []int{16, 64, 128, 256, 512, 1 << 10, 4 << 10, 16 << 10, 64 << 10, 1 << 20}

// lenLabels names the buckets of a length histogram.
var lenLabels = []string{"<16", "16-63", "64-127", "128-255", "256-511", "512-1K", "1-4K", "4-16K", "16-64K", "64K-1M", ">=1M"}

func lenBucket(n int) int {
	for i, b := range lenBounds {
		if n < b {
			return i
		}
	}
	return len(lenBounds)
}

// maxIDs bounds the ids a pattern keeps to judge how densely its integer
// ids fill Dense buckets.
const maxIDs = 16384

// Size strata: every string key's length is counted (the census, from one
// STRLEN per key in the scan's first round trip), in strata of half an
// octave, exact below 16 bytes. A pattern's samples stand for the keys of
// their stratum, so a heavy tail (a namespace of 10 KB to 700 KB
// documents) is weighted by what the census counted, not by which of its
// keys the scan happened to read first.
const (
	numStrata = 2*32 + 16
	// minPerStratum samples are read for every stratum the census finds,
	// beyond the pattern's sample budget if need be (within the scan's).
	minPerStratum = 2
)

// stratum returns the stratum of a value of n bytes.
func stratum(n int) int {
	if n < 16 {
		return n
	}
	b := bits.Len(uint(n)) - 1 // n in [2^b, 2^(b+1))
	half := 0
	if float64(n) >= math.Sqrt2*float64(uint(1)<<b) {
		half = 1
	}
	return min(16+2*(b-4)+half, numStrata-1)
}

// censusBin counts the string keys of one stratum.
type censusBin struct {
	keys  int64
	bytes int64 // their values' lengths, summed
}

// patternStats is what the scan learned of one key pattern. Every field
// is a bounded summary: counts, histograms, and at most maxSamples samples
// of at most maxSampleBytes in all.
type patternStats struct {
	pattern string
	prefix  string
	keys    int64 // keys scanned
	types   map[string]int64
	// keyLen sums the keys' lengths.
	keyLen int64
	// ttlKeys have a TTL; ttlHist spreads all keys by TTL; maxTTL is the
	// longest seen.
	ttlKeys int64
	ttlHist [7]int64
	maxTTL  time.Duration
	minTTL  time.Duration // the shortest TTL seen (0: none seen)
	// tailInts are keys that are prefix + a canonical integer; ids keeps
	// the first maxIDs of those integers.
	tailInts int64
	ids      []uint64
	// What the samples showed: encodings, MEMORY USAGE, lengths.
	encodings   map[string]int64
	memSum      int64
	memN        int64
	lenHist     [11]int64
	lenSum      int64
	lenN        int64
	samples     []sample
	sampleBytes int
	// census counts every string key scanned by its value's stratum;
	// sampled counts the samples of each stratum.
	census  [numStrata]censusBin
	sampled [numStrata]int
	// truncatedSamples counts samples read only in part (larger than a
	// sample may be).
	truncatedSamples int
}

func newPatternStats(sh shape) *patternStats {
	return &patternStats{pattern: sh.pattern, prefix: sh.prefix, types: map[string]int64{}, encodings: map[string]int64{}}
}

// add counts one scanned key; length is a string's value length (-1:
// unknown, or not a string).
func (p *patternStats) add(key string, sh shape, typ string, ttl time.Duration, length int) {
	p.keys++
	if typ == "string" && length >= 0 {
		b := &p.census[stratum(length)]
		b.keys++
		b.bytes += int64(length)
	}
	p.types[typ]++
	p.keyLen += int64(len(key))
	if ttl > 0 {
		p.ttlKeys++
		p.maxTTL = max(p.maxTTL, ttl)
		if p.minTTL == 0 || ttl < p.minTTL {
			p.minTTL = ttl
		}
	}
	p.ttlHist[ttlBucket(ttl)]++
	if sh.tailInt {
		p.tailInts++
		if len(p.ids) < maxIDs {
			p.ids = append(p.ids, sh.id)
		}
	}
}

// addSample records a key read in detail.
func (p *patternStats) addSample(s sample, isString bool) {
	if s.encoding != "" {
		p.encodings[s.encoding]++
	}
	if s.memUsage > 0 {
		p.memSum += s.memUsage
		p.memN++
	}
	if !isString {
		return
	}
	p.lenHist[lenBucket(s.length)]++
	p.lenSum += int64(s.length)
	p.lenN++
	p.sampled[stratum(s.length)]++
	if s.truncated {
		p.truncatedSamples++
	}
	p.samples = append(p.samples, s)
	p.sampleBytes += len(s.value)
}

// mainType is the type most of the pattern's keys have.
func (p *patternStats) mainType() string {
	best, n := "", int64(-1)
	for t, c := range p.types {
		if c > n || c == n && t < best {
			best, n = t, c
		}
	}
	return best
}

// onlyStrings reports whether every key scanned is a string.
func (p *patternStats) onlyStrings() bool { return p.types["string"] == p.keys }

// merge adds o's counts and samples to p's, keeping the bounds.
func (p *patternStats) merge(o *patternStats, maxSamples, maxBytes int) {
	p.keys += o.keys
	for t, c := range o.types {
		p.types[t] += c
	}
	p.keyLen += o.keyLen
	p.ttlKeys += o.ttlKeys
	for i := range p.ttlHist {
		p.ttlHist[i] += o.ttlHist[i]
	}
	p.maxTTL = max(p.maxTTL, o.maxTTL)
	if o.minTTL > 0 && (p.minTTL == 0 || o.minTTL < p.minTTL) {
		p.minTTL = o.minTTL
	}
	p.tailInts += o.tailInts
	p.ids = append(p.ids, o.ids[:min(len(o.ids), maxIDs-len(p.ids))]...)
	for e, c := range o.encodings {
		p.encodings[e] += c
	}
	p.memSum += o.memSum
	p.memN += o.memN
	for i := range p.lenHist {
		p.lenHist[i] += o.lenHist[i]
	}
	p.lenSum += o.lenSum
	p.lenN += o.lenN
	p.truncatedSamples += o.truncatedSamples
	for i := range p.census {
		p.census[i].keys += o.census[i].keys
		p.census[i].bytes += o.census[i].bytes
	}
	for _, s := range o.samples {
		if (len(p.samples) >= maxSamples || p.sampleBytes+len(s.value) > maxBytes) && p.sampled[stratum(s.length)] >= minPerStratum {
			continue
		}
		p.samples = append(p.samples, s)
		p.sampleBytes += len(s.value)
		p.sampled[stratum(s.length)]++
	}
}

// tracker groups scanned keys into patterns, within bounds.
type tracker struct {
	patterns map[string]*patternStats
	// firstSegments counts keys by their first segment (up to and with
	// the first ':'), for choosing stored prefixes no key already has.
	firstSegments map[string]int64
	maxSamples    int
	maxBytes      int
	maxPatterns   int
	// sampled is the bytes of every sample kept; at most maxTotal.
	sampled, maxTotal int
}

// totalSampleFactor bounds all the samples to this many patterns' worth.
const totalSampleFactor = 32

// otherPattern collects keys once the tracker holds maxPatterns patterns.
const otherPattern = "(other)"

// maxFirstSegments bounds tracker.firstSegments.
const maxFirstSegments = 100_000

func newTracker(maxSamples, maxBytes, maxPatterns int) *tracker {
	return &tracker{patterns: map[string]*patternStats{}, firstSegments: map[string]int64{},
		maxSamples: maxSamples, maxBytes: maxBytes, maxPatterns: maxPatterns, maxTotal: totalSampleFactor * maxBytes}
}

// add counts a scanned key, length its value's if a string (-1 if not),
// and returns its pattern's stats.
func (t *tracker) add(key, typ string, ttl time.Duration, length int) *patternStats {
	sh := shapeOf(key)
	first := key
	if i := strings.IndexByte(key, ':'); i >= 0 {
		first = key[:i+1]
	}
	if _, ok := t.firstSegments[first]; ok || len(t.firstSegments) < maxFirstSegments {
		t.firstSegments[first]++
	}
	p := t.patterns[sh.pattern]
	if p == nil {
		if len(t.patterns) >= t.maxPatterns {
			t.mergeSiblings(8)
		}
		if len(t.patterns) >= t.maxPatterns {
			sh = shape{pattern: otherPattern}
			p = t.patterns[otherPattern]
		}
		if p == nil {
			p = newPatternStats(sh)
			t.patterns[sh.pattern] = p
		}
	}
	p.add(key, sh, typ, ttl, length)
	return p
}

// record adds a sample read in detail to p.
func (t *tracker) record(p *patternStats, s sample, isString bool) {
	p.addSample(s, isString)
	if isString {
		t.sampled += len(s.value)
	}
}

// wants reports whether p should have one more key read in detail, a
// string (of length bytes) or not, pending being those already chosen and
// not yet read, in all and in the string's stratum. A string is wanted
// while the pattern's sample budget lasts, and beyond it while its stratum
// has fewer than minPerStratum samples (within the scan's budget): extra
// says it is wanted for its stratum.
func (t *tracker) wants(p *patternStats, isString bool, length, pending, pendingInStratum int) (wanted, extra bool) {
	if !isString {
		return p.memN+int64(pending) < int64(t.maxSamples), false
	}
	if t.sampled >= t.maxTotal {
		return false, false
	}
	if len(p.samples)+pending < t.maxSamples && p.sampleBytes < t.maxBytes {
		return true, false
	}
	return p.sampled[stratum(length)]+pendingInStratum < minPerStratum, true
}

// mergeSiblings merges patterns that differ only in one literal segment
// (not the first) when at least min of them do: "user:alice:cart",
// "user:bob:cart"... become "user:<str>:cart". It repeats until nothing
// merges.
func (t *tracker) mergeSiblings(min int) {
	for changed := true; changed; {
		changed = false
		groups := map[string][]string{}
		for pat := range t.patterns {
			segs := strings.Split(pat, ":")
			for i := 1; i < len(segs); i++ {
				if isClassSegment(segs[i]) {
					continue
				}
				tmpl := strings.Join(segs[:i], ":") + ":\x00" + itoa(i) + ":" + strings.Join(segs[i+1:], ":")
				groups[tmpl] = append(groups[tmpl], pat)
			}
		}
		// Merge the largest group first, deterministically.
		var bestKey string
		for k, g := range groups {
			if len(g) >= min && (len(g) > len(groups[bestKey]) || len(g) == len(groups[bestKey]) && k < bestKey) {
				bestKey = k
			}
		}
		if bestKey == "" {
			return
		}
		members := groups[bestKey]
		slices.Sort(members)
		segs := strings.Split(members[0], ":")
		pos := 0
		for i := 1; i < len(segs); i++ {
			tmpl := strings.Join(segs[:i], ":") + ":\x00" + itoa(i) + ":" + strings.Join(segs[i+1:], ":")
			if tmpl == bestKey {
				pos = i
			}
		}
		segs[pos] = "<str>"
		merged := strings.Join(segs, ":")
		into := t.patterns[merged]
		if into == nil {
			into = &patternStats{pattern: merged, types: map[string]int64{}, encodings: map[string]int64{}}
			into.prefix = patternPrefix(segs)
			t.patterns[merged] = into
		}
		for _, m := range members {
			if m == merged {
				continue
			}
			p := t.patterns[m]
			if into.prefix != p.prefix {
				// A literal of the leading run became a class: its keys
				// are no longer prefix + an integer.
				p.tailInts, p.ids = 0, nil
			}
			into.merge(p, t.maxSamples, t.maxBytes)
			delete(t.patterns, m)
		}
		changed = true
	}
}

// patternPrefix is the literal start of a pattern (its segments): up to
// and with the ':' before its first class, or "" if it has none.
func patternPrefix(segs []string) string {
	var b strings.Builder
	for _, s := range segs {
		if isClassSegment(s) {
			return b.String()
		}
		b.WriteString(s)
		b.WriteByte(':')
	}
	return ""
}

func isClassSegment(s string) bool {
	s = strings.Trim(s, "{}")
	return strings.HasPrefix(s, "<") && strings.HasSuffix(s, ">")
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return string(rune('0'+i/10)) + string(rune('0'+i%10))
}
