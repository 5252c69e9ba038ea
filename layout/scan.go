package layout

import (
	"context"
	"iter"
	"strings"

	"github.com/ziplinekv/zipline"
)

// globEscape escapes a literal for a SCAN MATCH pattern.
func globEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '*', '?', '[', ']', '\\':
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// appKeys turns a page of this layout's stored names into application
// keys: a bucket stands for its fields (HSCAN), an oversize value's key
// and a tombstone set for nothing (they are listed through their bucket, or
// are not keys).
func (s *Store) appKeys(ctx context.Context, stored []string) ([]string, error) {
	var keys []string
	for _, sk := range stored {
		rest := sk[len(s.stored):]
		if isTouchedName(rest) {
			continue
		}
		if s.buckets != nil && strings.HasPrefix(rest, string(bucketMarker)) {
			bucket, ok := parseBase62(rest[1:])
			if !ok {
				continue // an oversize value's key: listed through its bucket's marker
			}
			for fv, err := range s.c.HScan(ctx, sk, zipline.ScanOptions{Count: 512}) {
				if err != nil {
					return nil, err
				}
				keys = append(keys, s.ns.Prefix+s.buckets.tail(bucket, fv.Field))
			}
			continue
		}
		tail := rest
		if s.zip {
			var err error
			if tail, err = unzipTail(rest); err != nil {
				continue // not a key of this namespace
			}
		}
		if s.buckets != nil {
			if _, f, ok := s.buckets.locate(tail); ok && len(f) <= s.maxValue {
				// An oversize value under its legacy name: listed through
				// its bucket's marker.
				continue
			}
		}
		keys = append(keys, s.ns.Prefix+tail)
	}
	return keys, nil
}

// Scan iterates over the namespace's application key names, in no
// particular order. While migrating it lists the keys of both layouts, each
// once. As with SCAN, a key present throughout is listed at least once.
func (s *Store) Scan(ctx context.Context) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		if !s.scanLayout(ctx, s, nil, yield) || s.old == nil {
			return
		}
		// Keys already moved were listed with the new layout.
		s.scanLayout(ctx, s.old, s.onlyInOld, yield)
	}
}

// scanLayout yields the application keys of one layout, passing each page
// through filter if set. It reports whether the caller wants more.
func (s *Store) scanLayout(ctx context.Context, layout *Store, filter func(context.Context, []string) ([]string, error),
	yield func(string, error) bool) bool {
	more := true
	err := layout.scanStored(ctx, "0", 500, func(names []string, _ string) (bool, error) {
		keys, err := layout.appKeys(ctx, names)
		if err == nil && filter != nil {
			keys, err = filter(ctx, keys)
		}
		if err != nil {
			return false, err
		}
		for _, k := range keys {
			if !yield(k, nil) {
				more = false
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		yield("", err)
		return false
	}
	return more
}

// onlyInOld returns the keys that the new layout does not hold.
func (s *Store) onlyInOld(ctx context.Context, keys []string) ([]string, error) {
	if s.cluster {
		return s.splitOnlyInOld(ctx, keys)
	}
	b := s.c.Batch()
	fs := make([]*zipline.Future[zipline.Value], len(keys))
	for i, k := range keys {
		l, err := s.locate(k)
		if err != nil {
			return nil, err
		}
		if l.bucket != "" {
			fs[i] = b.Do("HEXISTS", l.bucket, l.field)
		} else {
			fs[i] = b.Do("EXISTS", l.plain)
		}
	}
	if err := b.Exec(ctx); err != nil {
		return nil, err
	}
	var out []string
	for i, f := range fs {
		if n, _ := f.Val().AsInt64(); n == 0 {
			out = append(out, keys[i])
		}
	}
	return out, nil
}
