package layout

import (
	"context"
	"errors"
	"strings"

	"github.com/ziplinekv/zipline"
)

// Source returns the Store of the layout being migrated from, or nil.
func (s *Store) Source() *Store { return s.old }

// Count returns how many application keys this Store's own layout holds
// (not counting a MigrateFrom layout): one SCAN of its stored keys, plus an
// HLEN per bucket.
func (s *Store) Count(ctx context.Context) (int64, error) {
	var n int64
	err := s.scanStored(ctx, "0", 1000, func(names []string, _ string) (bool, error) {
		b := s.c.Batch()
		var lens []*zipline.Future[int64]
		for _, sk := range names {
			rest := sk[len(s.stored):]
			switch {
			case isTouchedName(rest):
				// a tombstone set of a migration on a cluster
			case s.buckets != nil && strings.HasPrefix(rest, string(bucketMarker)):
				// A bucket, or an oversize value's key (#{...}): only
				// buckets are counted, through their fields.
				if _, ok := parseBase62(rest[1:]); ok {
					lens = append(lens, b.HLen(sk))
				}
			case s.buckets != nil && s.isBucketable(rest):
				// an oversize value under its legacy name: counted through its bucket
			default:
				n++
			}
		}
		if b.Len() > 0 {
			if err := b.Exec(ctx); err != nil {
				return false, err
			}
			for _, l := range lens {
				n += l.Val()
			}
		}
		return true, nil
	})
	return n, err
}

// isBucketable reports whether a stored plain key's name belongs to a key
// that has a bucket (so the plain key holds an oversize value).
func (s *Store) isBucketable(rest string) bool {
	tail := rest
	if s.zip {
		var err error
		if tail, err = unzipTail(rest); err != nil {
			return false
		}
	}
	_, f, ok := s.buckets.locate(tail)
	return ok && len(f) <= s.maxValue
}

// Estimate is a projection of what a migration saves, from a sample.
type Estimate struct {
	Keys        int64   // keys in the old layout
	Sampled     int     // keys whose stored form was measured
	OldPerKey   float64 // bytes per key in the old layout
	NewPerKey   float64 // projected bytes per key in the new layout
	SavedBytes  float64 // projected saving for all Keys
	SavedFactor float64 // OldPerKey / NewPerKey
}

// unreportedPerKey is what a key costs that the server does not report
// in MEMORY USAGE (its main dictionary's slot and allocator rounding),
// measured on Redis 7.0.
const unreportedPerKey = 18

// Estimate measures a sample of the keys still in the old layout (MEMORY
// USAGE of their stored keys) and projects their size in the new layout
// from their encoded values, priced with the server's Costs. It is an
// approximation.
func (s *Store) Estimate(ctx context.Context, sample int) (Estimate, error) {
	if s.old == nil {
		return Estimate{}, errors.New("layout: the namespace has no MigrateFrom")
	}
	var e Estimate
	var err error
	if e.Keys, err = s.old.Count(ctx); err != nil {
		return e, err
	}
	var keys []string
	err = s.old.scanStored(ctx, "0", int64(max(sample, 1)), func(names []string, _ string) (bool, error) {
		var err error
		keys, err = s.old.appKeys(ctx, names)
		return false, err
	})
	if err != nil {
		return e, err
	}
	keys = keys[:min(len(keys), max(sample, 1))]
	b := s.c.Batch()
	type probe struct {
		key   string
		r     *read
		usage *zipline.Future[zipline.Value]
		hlen  *zipline.Future[int64]
	}
	probes := make([]probe, 0, len(keys))
	for _, k := range keys {
		r, err := s.old.queueRead(b, k, true)
		if err != nil {
			return e, err
		}
		p := probe{key: k, r: r}
		if r.l.bucket != "" {
			p.usage = b.Do("MEMORY", "USAGE", r.l.bucket, "SAMPLES", 0)
			p.hlen = b.HLen(r.l.bucket)
		} else {
			p.usage = b.Do("MEMORY", "USAGE", r.l.plain)
		}
		probes = append(probes, p)
	}
	if err := b.Exec(ctx); err != nil && !errors.Is(err, zipline.Nil) {
		return e, err
	}
	var oldSum, newSum float64
	for _, p := range probes {
		raw, err := p.r.resolveHere()
		if err != nil {
			continue
		}
		usage, _ := p.usage.Val().AsInt64()
		if p.hlen != nil {
			oldSum += float64(usage) / float64(max(p.hlen.Val(), 1))
		} else {
			oldSum += float64(usage + unreportedPerKey)
		}
		plain, err := s.old.decode(raw)
		if err != nil {
			continue
		}
		newSum += s.projectedSize(p.key, plain)
		e.Sampled++
	}
	if e.Sampled == 0 {
		return e, nil
	}
	e.OldPerKey = oldSum / float64(e.Sampled)
	e.NewPerKey = newSum / float64(e.Sampled)
	e.SavedBytes = (e.OldPerKey - e.NewPerKey) * float64(e.Keys)
	e.SavedFactor = e.OldPerKey / e.NewPerKey
	return e, nil
}

// projectedSize estimates the bytes one key takes in this Store's layout,
// priced for its server (Costs): in a bucket as full as the server keeps
// compact, or as a plain key (an oversize value's key plus its marker).
func (s *Store) projectedSize(key string, plain []byte) float64 {
	l, err := s.locate(key)
	if err != nil {
		return 0
	}
	costs := s.Costs()
	enc := s.encode(plain)
	if l.bucket != "" && s.fits(enc) {
		fill := max(s.maxEntries/2, 1)
		if n := s.buckets.maxFields(); n > 0 {
			fill = min(n, s.maxEntries)
		}
		return costs.Pair(fill, []byte(l.field), enc)
	}
	if l.bucket != "" {
		marker := costs.Pair(max(s.maxEntries/2, 1), []byte(l.field), oversizeMarker)
		return costs.Key(len(s.oversizeKey(l)), enc) + marker
	}
	return costs.Key(len(l.plain), enc)
}
