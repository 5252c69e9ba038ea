package analyze

import (
	"context"
	"errors"
	"math"
	"strings"
	"time"

	"github.com/ziplinekv/zipline/codec"
	"github.com/ziplinekv/zipline/layout"
)

// Projection is what moving one namespace of plain keys to a layout would
// save, priced by the model Run prices every layout with: zipline migrate
// -dry-run's answer, which agrees with analyze's for the same layout.
type Projection struct {
	Keys    int64 // the namespace's keys
	Scanned int64 // keys scanned (all of them unless the scan stopped at MaxKeys)
	// Bytes is what they cost now, BytesAfter in the layout; Saved the
	// difference, within SavedLow and SavedHigh with 95 % confidence.
	Bytes, BytesAfter          float64
	Saved, SavedLow, SavedHigh float64
	Samples                    int
	// TTLChange says whose TTLs the layout changes (a bucket-wide TTL on a
	// server without field expiry); nil when it keeps every key's.
	TTLChange *TTLChange
	// Kept counts the keys with TTLs that the layout cannot take (buckets
	// on a server without field expiry, and no BucketTTL): migrate leaves
	// them where they are.
	Kept int64
}

// ErrNotPlain says Project was given a namespace that is already a
// layout: it prices moves from plain keys only.
var ErrNotPlain = errors.New("analyze: the namespace to project from is not plain keys (no zip, buckets or codec)")

// Layout is a layout as Project prices it: what zipline migrate -to says.
type Layout struct {
	ZipAs string
	// Dense is Dense buckets' size, HashedFor the keys Hashed buckets are
	// sized for (layout.HashedFor); both 0: plain keys.
	Dense, HashedFor int
	Backend          codec.Backend // 0: none; codec.ZstdDict: codec=dict
	BucketTTL        time.Duration
}

// Project scans the keys of the plain namespace from (at most cfg.MaxKeys,
// at cfg.Rate keys a second) and prices their move to the layout to. It
// reads only.
func Project(ctx context.Context, cfg Config, from layout.Namespace, to Layout) (*Projection, error) {
	if from.ZipAs != "" || from.Buckets != nil || from.Codec.Backend != 0 {
		return nil, ErrNotPlain
	}
	cfg.defaults()
	cfg.Match = escapeGlob(from.Prefix) + "*"
	cfg.Calibrate = false
	srv, cs, err := connect(ctx, cfg.Options, cfg.Replica, false, cfg.Logger)
	if err != nil {
		return nil, err
	}
	defer cs.close()
	res, err := scanKeys(ctx, &cfg, srv, cs)
	if err != nil {
		return nil, err
	}
	t := res.tracker
	t.mergeSiblings(16)
	ev, err := newEvaluator(srv.costs(), srv, 1)
	if err != nil {
		return nil, err
	}
	g := &group{prefix: from.Prefix, zipAs: to.ZipAs} // "": stored under the application's names
	pr := &Projection{Scanned: res.scanned}
	var ttlKeys int64
	for _, p := range t.patterns {
		if strings.HasPrefix(p.pattern, from.Prefix) || p.pattern == otherPattern {
			g.patterns = append(g.patterns, p)
			pr.Keys += p.keys
			pr.Bytes += ev.nowBytes(p)
			ttlKeys += p.ttlKeys
		}
	}
	g.patterns = sortedPatterns(g.patterns)
	o := optionOf(to)
	if o.bucketed() && ttlKeys > 0 && !srv.FieldTTL {
		if to.BucketTTL > 0 {
			o.bucketTTL = to.BucketTTL
			pr.TTLChange = ttlChangeOf(g, to.BucketTTL, 1)
		} else {
			pr.Kept = ttlKeys // they stay where they are; priced as they are
		}
	}
	var est estimate
	if o.needsDict {
		dict, test, ok := trainDictionary(g)
		if !ok {
			return nil, errors.New("analyze: too few values to train a dictionary on")
		}
		est, err = ev.evaluate(g, o, dict, test)
	} else {
		est, err = ev.evaluate(g, o, nil, nil)
	}
	if err != nil {
		return nil, err
	}
	pr.BytesAfter, pr.Samples = est.bytes, est.samples
	pr.Saved = pr.Bytes - est.bytes
	half := 1.96 * math.Sqrt(est.spread.variance())
	pr.SavedLow, pr.SavedHigh = pr.Saved-half, pr.Saved+half
	return pr, nil
}

// optionOf is the priced option a Layout describes.
func optionOf(l Layout) option {
	return option{name: "projected", backend: l.Backend, dense: l.Dense, hashedFor: l.HashedFor,
		needsDict: l.Backend == codec.ZstdDict}
}

// escapeGlob quotes the glob characters of s for SCAN MATCH.
func escapeGlob(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(`*?[]\`, s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
