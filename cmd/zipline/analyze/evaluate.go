package analyze

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/codec"
	"github.com/ziplinekv/zipline/layout"
)

// A group is a namespace a layout can own: the patterns whose keys start
// with its prefix.
type group struct {
	prefix   string
	patterns []*patternStats
	// zipAs is the stored prefix every option of the group uses (a
	// migration needs one that differs from the prefix).
	zipAs string
	// skip says why no layout applies, or "".
	skip string
}

// option is a candidate layout for a group.
type option struct {
	// name is how reports call it: "zip+zstd", "dense+zstd", "hashed+dict".
	name    string
	backend codec.Backend // 0: none
	// dense is the Dense bucket size, hashedFor the keys HashedFor sizes
	// Hashed buckets for; both 0: plain keys.
	dense, hashedFor int
	// bucketTTL is the bucket-wide TTL a server without field expiry
	// needs for keys with TTLs in buckets.
	bucketTTL time.Duration
	// needsDict: codec=dict, dictionaries kept in the server.
	needsDict bool
}

func (o option) bucketed() bool { return o.dense > 0 || o.hashedFor > 0 }

// applicable reports whether the option can be applied with today's
// zipline migrate and no change of behaviour: no dictionary, no
// bucket-wide TTL.
func (o option) applicable() bool { return !o.needsDict && o.bucketTTL == 0 }

// spec is the option as a namespace spec (cmd/zipline nsspec.go).
func (o option) spec(g *group) string {
	parts := []string{"prefix=" + g.prefix, "zip=" + g.zipAs}
	switch {
	case o.dense > 0:
		parts = append(parts, fmt.Sprintf("buckets=dense:%d", o.dense))
	case o.hashedFor > 0:
		parts = append(parts, fmt.Sprintf("buckets=hashedfor:%d", o.hashedFor))
	}
	switch {
	case o.needsDict:
		parts = append(parts, "codec=dict")
	case o.backend == codec.Zstd:
		parts = append(parts, "codec=zstd")
	case o.backend == codec.LZ4:
		parts = append(parts, "codec=lz4")
	}
	if o.bucketTTL > 0 {
		parts = append(parts, "bucketttl="+o.bucketTTL.String())
	}
	return strings.Join(parts, ",")
}

// goValue is the option as a layout.Namespace literal.
func (o option) goValue(g *group) string {
	var b strings.Builder
	fmt.Fprintf(&b, "layout.Namespace{Prefix: %q, ZipAs: %q", g.prefix, g.zipAs)
	switch {
	case o.dense > 0:
		fmt.Fprintf(&b, ", Buckets: layout.Dense(%d)", o.dense)
	case o.hashedFor > 0:
		fmt.Fprintf(&b, ", Buckets: layout.HashedFor(%d)", o.hashedFor)
	}
	switch {
	case o.needsDict:
		b.WriteString(", Codec: zipline.Compression{Backend: codec.ZstdDict}")
	case o.backend == codec.Zstd:
		b.WriteString(", Codec: zipline.Compression{Backend: codec.Zstd}")
	case o.backend == codec.LZ4:
		b.WriteString(", Codec: zipline.Compression{Backend: codec.LZ4}")
	}
	if o.bucketTTL > 0 {
		fmt.Fprintf(&b, ", BucketTTL: %s", goDuration(o.bucketTTL))
	}
	b.WriteString("}")
	return b.String()
}

func goDuration(d time.Duration) string {
	switch {
	case d%time.Hour == 0:
		return fmt.Sprintf("%d * time.Hour", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%d * time.Minute", d/time.Minute)
	}
	return fmt.Sprintf("%d * time.Second", d/time.Second)
}

// estimate is what an option would cost for a group's keys.
type estimate struct {
	bytes     float64 // the group's keys in the option's layout
	keysAfter float64 // keys in the keyspace they take: plain, oversize, buckets
	// bucketed is the share of keys in buckets, oversize the share of
	// those kept under keys of their own (too large for the listpack).
	bucketed, oversize float64
	buckets, fill      float64
	// volatile is the share of buckets a field TTL turns into hashtables.
	volatile float64
	// stored is stored bytes over application bytes, values only.
	stored float64
	// dictBytes is the trained dictionary's size (codec=dict).
	dictBytes int
	// samples measured (for a dictionary: those it was not trained on).
	samples int
	// spread is the samples' spread, for the interval of the saving.
	spread spread
}

// evaluator prices a group's options on its samples.
type evaluator struct {
	costs  layout.Costs
	srv    *Server
	scale  float64 // keys in the keyspace per key scanned
	codecs map[codec.Backend]*codec.Codec
	// encoded caches what a backend makes of each sample.
	encoded map[encKey]encoded
}

type encKey struct {
	s       *sample
	backend codec.Backend
	dict    uint32
}

type encoded struct {
	value layout.StoredValue
	entry int // its listpack entry, back length included
	in    int // application bytes
}

func newEvaluator(costs layout.Costs, srv *Server, scale float64) (*evaluator, error) {
	e := &evaluator{costs: costs, srv: srv, scale: scale, codecs: map[codec.Backend]*codec.Codec{},
		encoded: map[encKey]encoded{}}
	for _, b := range []codec.Backend{codec.Zstd, codec.LZ4} {
		// Exactly what a client or namespace with this backend writes:
		// GLIDE's header, its default level and minimum size.
		c, err := zipline.Compression{Backend: b}.Codec()
		if err != nil {
			return nil, err
		}
		e.codecs[b] = c
	}
	return e, nil
}

// encode returns the stored form of s under c (nil: as it is). A sample
// read only in part is priced by the ratio of its part.
func (e *evaluator) encode(s *sample, c *codec.Codec, backend codec.Backend) encoded {
	k := encKey{s: s, backend: backend}
	if c != nil {
		k.dict = c.DictionaryID()
	}
	if v, ok := e.encoded[k]; ok {
		return v
	}
	plain := s.value
	if codec.IsCompressed(plain) {
		// Stored compressed already: what the application reads is the
		// expansion; the migration keeps the stored bytes as they are.
		if d, err := e.codecs[codec.Zstd].Decode(nil, plain); err == nil {
			plain = d
		}
	}
	in := len(plain)
	if s.truncated && len(s.value) > 0 {
		in = int(float64(len(plain)) * float64(s.length) / float64(len(s.value)))
	}
	out := layout.StoredValue{Len: s.length}
	if !s.truncated {
		out = layout.StoredValueOf(s.value)
	}
	if c != nil && !codec.IsCompressed(s.value) {
		enc, compressed := c.Encode(nil, s.value)
		switch {
		case compressed && s.truncated:
			out = layout.StoredValue{Len: 5 + int(float64(len(enc)-5)*float64(s.length)/float64(len(s.value)))}
		case compressed:
			out = layout.StoredValue{Len: len(enc)}
		}
	}
	v := encoded{value: out, in: in, entry: valueEntry(out)}
	if !s.truncated && out.Len == len(s.value) {
		v.entry = layout.ListpackEntry(s.value)
	}
	e.encoded[k] = v
	return v
}

// nowBytes is what a pattern's keys cost as they are.
func (e *evaluator) nowBytes(p *patternStats) float64 {
	keys := float64(p.keys) * e.scale
	if len(p.samples) > 0 && p.onlyStrings() {
		ss := make([]*sample, len(p.samples))
		for i := range p.samples {
			ss[i] = &p.samples[i]
		}
		var sum float64
		for _, x := range e.pricedSamples(p, ss) {
			sum += x.w * e.costs.StringKey(len(x.s.key), x.nowValue(), x.s.ttl > 0)
		}
		return sum
	}
	// Other types: what MEMORY USAGE says (key, value and entry), plus
	// the expires entry of keys with a TTL; without it, a string model
	// of the keys alone.
	per := e.costs.StringKey(int(p.keyLen/max(p.keys, 1)), layout.StoredValue{Len: 8}, false)
	if p.memN > 0 {
		per = float64(p.memSum) / float64(p.memN)
	}
	if p.keys > 0 {
		per += e.costs.ExpiresEntry() * float64(p.ttlKeys) / float64(p.keys)
	}
	return per * keys
}

// evaluate prices option o for group g. With dict, the codec is zstd
// with that dictionary and only the samples it was not trained on (test)
// count.
func (e *evaluator) evaluate(g *group, o option, dict []byte, test map[*sample]bool) (estimate, error) {
	var est estimate
	var c *codec.Codec
	switch {
	case o.needsDict:
		var err error
		if c, err = codec.New(codec.ZstdDict, codec.WithDictionary(dict)); err != nil {
			return est, err
		}
		est.dictBytes = len(dict)
	case o.backend != 0:
		c = e.codecs[o.backend]
	}
	ns := layout.Namespace{Prefix: g.prefix, ZipAs: g.zipAs}
	if o.dense > 0 {
		ns.Buckets = layout.Dense(o.dense)
	}
	if o.hashedFor > 0 {
		ns.Buckets = layout.HashedFor(o.hashedFor)
	}
	names := layout.NamesFor(ns, e.srv.ListpackEntries, e.srv.ListpackValue)
	var keysTotal float64
	for _, p := range g.patterns {
		keysTotal += float64(p.keys) * e.scale
	}
	var plainBytes, bucketedKeys, oversizeKeys, entrySum, volatileSum, ttlBucketed float64
	var inSum, outSum float64
	var maxBucket uint64
	bucketKeyLen := 0 // the longest bucket name: the last bucket's
	denseFill := 0.0
	for _, p := range g.patterns {
		keys := float64(p.keys) * e.scale
		var ss []*sample
		for i := range p.samples {
			if test == nil || test[&p.samples[i]] {
				ss = append(ss, &p.samples[i])
			}
		}
		if len(ss) == 0 || !p.onlyStrings() {
			// Nothing to measure (or not strings): priced as it is.
			plainBytes += e.nowBytes(p)
			est.keysAfter += keys
			continue
		}
		est.samples += len(ss)
		for _, x := range e.pricedSamples(p, ss) {
			s, w := x.s, x.w
			enc := e.encodeScaled(x, c, o.backend)
			inSum += w * float64(enc.in)
			outSum += w * float64(enc.value.Len)
			l, err := names.Place(s.key)
			if err != nil {
				return est, err
			}
			ttl := s.ttl > 0
			now := e.costs.StringKey(len(s.key), x.nowValue(), ttl)
			if l.Bucket == "" {
				cost := e.costs.StringKey(len(l.Key), enc.value, ttl)
				plainBytes += w * cost
				est.keysAfter += w
				est.spread.add(x, now-cost)
				continue
			}
			if l.BucketNumber >= maxBucket {
				maxBucket, bucketKeyLen = l.BucketNumber, len(l.Bucket)
			}
			bucketedKeys += w
			if ttl {
				ttlBucketed += w
			}
			field := []byte(l.Field)
			if enc.value.Len <= e.srv.ListpackValue {
				entry := float64(layout.ListpackEntry(field) + enc.entry)
				entrySum += w * entry
				volatileSum += w * e.volatileField(len(field), enc.value.Len)
				est.spread.add(x, now-entry)
				continue
			}
			// Oversize: a marker in the bucket, the value under a key of
			// its own.
			oversizeKeys += w
			entrySum += w * float64(layout.ListpackEntry(field)+oversizeMarkerEntry)
			volatileSum += w * e.volatileField(len(field), 2)
			cost := e.costs.StringKey(len(names.OversizeKey(l)), enc.value, ttl)
			plainBytes += w * cost
			est.keysAfter += w
			est.spread.add(x, now-cost-float64(layout.ListpackEntry(field)+oversizeMarkerEntry))
		}
		if o.dense > 0 && p.prefix == g.prefix && p.tailInts > 0 {
			denseFill = e.denseFill(p, o.dense)
		}
	}
	if inSum > 0 {
		est.stored = outSum / inSum
	}
	est.bytes = plainBytes + float64(est.dictBytes)
	if bucketedKeys == 0 {
		return est, nil
	}
	est.bucketed = bucketedKeys / keysTotal
	est.oversize = oversizeKeys / bucketedKeys
	meanEntry := entrySum / bucketedKeys
	meanVolatile := volatileSum / bucketedKeys
	pTTL := ttlBucketed / bucketedKeys
	if e.costs.CompactVolatileFields() {
		meanEntry += pTTL * 10 // an 8-byte expiry entry per field with a TTL (estimated)
	}
	bucketCost := func(fill float64) float64 {
		// A bucket whose fields have TTLs is a hashtable on Valkey 9.
		q := 0.0
		if e.costs.VolatileHashtable() && pTTL > 0 {
			q = 1 - math.Pow(1-pTTL, fill)
		}
		lp := e.costs.HashKey(bucketKeyLen, layout.ListpackBytes(0, 0)+int(math.Round(fill*meanEntry)))
		return (1-q)*lp + q*fill*meanVolatile
	}
	if o.dense > 0 {
		est.fill = max(min(denseFill, float64(o.dense)), 1)
		est.buckets = bucketedKeys / est.fill
		est.bytes += est.buckets * bucketCost(est.fill)
	} else {
		n := float64(names.HashedBuckets())
		lambda := bucketedKeys / n
		var sum, occupied float64
		poisson(lambda, func(k int, pk float64) {
			sum += pk * bucketCost(float64(k))
			occupied += pk
		})
		est.buckets = n * occupied
		est.fill = bucketedKeys / max(est.buckets, 1)
		est.bytes += n * sum
	}
	if e.costs.VolatileHashtable() && pTTL > 0 {
		est.volatile = 1 - math.Pow(1-pTTL, est.fill)
	}
	est.keysAfter += est.buckets
	return est, nil
}

// oversizeMarkerEntry is the listpack entry of the 2-byte marker a bucket
// keeps in the field of a value stored as a key of its own (layout's
// oversizeMarker, "\x00{").
var oversizeMarkerEntry = layout.ListpackEntry([]byte("\x00{"))

// valueEntry is the listpack entry of a stored value of v.Len bytes (an
// integer if v.Int).
func valueEntry(v layout.StoredValue) int {
	if v.Int {
		return layout.ListpackEntry([]byte("1000000")) // an integer of 3 bytes: the usual counter
	}
	return layout.ListpackStringEntry(v.Len)
}

// volatileField prices a bucket field with a TTL on a server that keeps
// such buckets as hashtables (0 where it does not).
func (e *evaluator) volatileField(field, value int) float64 {
	b, _ := e.costs.VolatileField(field, value)
	return b
}

// poisson calls f with each k >= 1 and its probability under a Poisson
// distribution of mean lambda, over the range that matters.
func poisson(lambda float64, f func(k int, p float64)) {
	if lambda <= 0 {
		return
	}
	sd := math.Sqrt(lambda)
	lo := max(1, int(lambda-8*sd))
	hi := int(lambda+8*sd) + 2
	for k := lo; k <= hi; k++ {
		lg, _ := math.Lgamma(float64(k) + 1)
		f(k, math.Exp(float64(k)*math.Log(lambda)-lambda-lg))
	}
}

// denseFill estimates how many keys a Dense(per) bucket of p's ids holds
// on average (weighted by keys): from how often the sampled ids share a
// bucket, scaled by the share of keys sampled; if no two share one, from
// the density of the ids over their range.
func (e *evaluator) denseFill(p *patternStats, per int) float64 {
	if len(p.ids) == 0 {
		return 1
	}
	// The share of all this pattern's keys whose ids were kept.
	f := float64(len(p.ids)) / (float64(p.tailInts) * e.scale)
	f = min(max(f, 1e-9), 1)
	counts := map[uint64]int{}
	for _, id := range p.ids {
		counts[id/uint64(per)]++
	}
	var others float64
	for _, id := range p.ids {
		others += float64(counts[id/uint64(per)] - 1)
	}
	if others > 0 || f == 1 {
		return min(1+others/float64(len(p.ids))/f, float64(per))
	}
	ids := slices.Clone(p.ids)
	slices.Sort(ids)
	span := float64(ids[len(ids)-1]-ids[0]) + 1
	density := min(float64(len(ids))/f/span, 1)
	return min(max(float64(per)*density, 1), float64(per))
}

// options lists the layouts worth pricing for g on this server.
func (e *evaluator) options(g *group, dictOK bool) []option {
	var keys float64
	var ints, all, ttl int64
	var maxTTL time.Duration
	for _, p := range g.patterns {
		keys += float64(p.keys) * e.scale
		all += p.keys
		if p.prefix == g.prefix {
			ints += p.tailInts
		}
		ttl += p.ttlKeys
		maxTTL = max(maxTTL, p.maxTTL)
	}
	backends := []codec.Backend{0, codec.LZ4, codec.Zstd}
	var out []option
	for _, b := range backends {
		out = append(out, option{name: "zip" + backendSuffix(b), backend: b})
	}
	var bucketKinds []option
	if ints*2 >= all {
		bucketKinds = append(bucketKinds, option{name: "dense", dense: min(100, e.srv.ListpackEntries)})
	}
	bucketKinds = append(bucketKinds, option{name: "hashed", hashedFor: niceUp(keys * 1.25)})
	bucketTTL := time.Duration(0)
	if ttl > 0 && !e.srv.FieldTTL {
		// No field expiry: buckets of keys with TTLs need a bucket-wide
		// TTL, which changes when keys expire (priced, never recommended).
		bucketTTL = roundTTL(maxTTL)
	}
	for _, k := range bucketKinds {
		for _, b := range backends {
			o := k
			o.name += backendSuffix(b)
			o.backend = b
			o.bucketTTL = bucketTTL
			out = append(out, o)
		}
	}
	if dictOK {
		out = append(out, option{name: "zip+dict", backend: codec.ZstdDict, needsDict: true})
		for _, k := range bucketKinds {
			o := k
			o.name += "+dict"
			o.backend, o.needsDict, o.bucketTTL = codec.ZstdDict, true, bucketTTL
			out = append(out, o)
		}
	}
	return out
}

func backendSuffix(b codec.Backend) string {
	switch b {
	case codec.Zstd:
		return "+zstd"
	case codec.LZ4:
		return "+lz4"
	}
	return ""
}

// niceUp rounds n up to two significant digits (123456 -> 130000).
func niceUp(n float64) int {
	if n < 100 {
		return max(int(math.Ceil(n)), 1)
	}
	p := math.Pow(10, math.Floor(math.Log10(n))-1)
	return int(math.Ceil(n/p) * p)
}

// roundTTL rounds a TTL up to a whole minute, hour or day.
func roundTTL(d time.Duration) time.Duration {
	for _, unit := range []time.Duration{24 * time.Hour, time.Hour, time.Minute} {
		if d >= unit {
			return (d + unit - 1) / unit * unit
		}
	}
	return time.Minute
}

// trainDictionary trains a dictionary on half of g's samples (every other
// sample of each pattern) and returns it with the other half, on which it
// is measured. ok is false when there are too few samples to train on.
func trainDictionary(g *group) (dict []byte, test map[*sample]bool, ok bool) {
	var train [][]byte
	test = map[*sample]bool{}
	var testN int
	for _, p := range g.patterns {
		if !p.onlyStrings() {
			return nil, nil, false
		}
		for i := range p.samples {
			s := &p.samples[i]
			if s.truncated || len(s.value) < 8 {
				continue
			}
			if i%2 == 0 {
				train = append(train, s.value)
			} else {
				test[s] = true
				testN++
			}
		}
	}
	// codec.TrainDictionary wants hundreds of samples; fewer than 50 on
	// each side tell little.
	if len(train) < 50 || testN < 50 {
		return nil, nil, false
	}
	d, err := codec.TrainDictionary(train, 0)
	if err != nil {
		return nil, nil, false
	}
	return d, test, true
}

// sortedPatterns returns g's patterns by pattern, for stable output.
func sortedPatterns(ps []*patternStats) []*patternStats {
	out := slices.Clone(ps)
	sort.Slice(out, func(i, j int) bool { return out[i].pattern < out[j].pattern })
	return out
}
