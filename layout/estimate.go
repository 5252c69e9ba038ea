package layout

import (
	"context"
	"errors"
	"strconv"
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

// Per-key overheads the server does not report in MEMORY USAGE (its main
// dictionary's slot and allocator rounding), measured on Redis 7.0 (see the
// notes in bench/RESULTS.md), and the fixed cost of a small hash.
const (
	unreportedPerKey = 18
	listpackEntry    = 4  // encoding bytes around a field and a value
	bucketFixed      = 96 // a bucket key, its object and listpack header
)

// Estimate measures a sample of the keys still in the old layout (MEMORY
// USAGE of their stored keys) and projects their size in the new layout
// from their encoded values. It is an approximation; bench/RESULTS.md has
// measured figures per value class.
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

// projectedSize estimates the bytes one key takes in this Store's layout.
func (s *Store) projectedSize(key string, plain []byte) float64 {
	l, err := s.locate(key)
	if err != nil {
		return 0
	}
	enc := s.encode(plain)
	if l.bucket != "" && s.fits(enc) {
		fill := float64(s.maxEntries) / 2
		if n := s.buckets.maxFields(); n > 0 {
			fill = float64(min(n, s.maxEntries))
		}
		return float64(len(l.field)+len(enc)+listpackEntry) + bucketFixed/fill
	}
	if l.bucket != "" {
		return plainKeyCost(len(s.oversizeKey(l)), enc)
	}
	return plainKeyCost(len(l.plain), enc)
}

// plainKeyCost models a plain string key on Redis 7 with Debian's jemalloc
// (16-byte quantum): a dictionary entry (24 bytes in a 32-byte class), its
// table slot, the key string, and the value: an integer inside its object,
// a short string embedded with it (up to 44 bytes), or a separate string.
// It reproduces the notes' measurements: 74.5 bytes for an integer under a
// 10-character key, 90.5 for a 12-byte string, 154.5 for 64 bytes.
func plainKeyCost(keyLen int, val []byte) float64 {
	cost := 32 + 10.5 + roundAlloc(keyLen+2)
	switch {
	case isLong(val):
		cost += 16
	case len(val) <= 44:
		cost += roundAlloc(16 + 3 + len(val) + 1)
	default:
		cost += 16 + roundAlloc(len(val)+9)
	}
	return cost
}

func isLong(v []byte) bool {
	if len(v) == 0 || len(v) > 20 {
		return false
	}
	_, err := strconv.ParseInt(string(v), 10, 64)
	return err == nil && (v[0] != '0' || len(v) == 1)
}

// roundAlloc rounds to jemalloc's size classes: a 16-byte quantum up to 128,
// then four classes per doubling.
func roundAlloc(n int) float64 {
	if n <= 128 {
		return float64((n + 15) / 16 * 16)
	}
	step := 16
	for step*8 < n {
		step *= 2
	}
	return float64((n + step - 1) / step * step)
}
