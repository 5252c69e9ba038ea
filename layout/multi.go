package layout

import (
	"context"
	"errors"
	"slices"
	"strings"
	"unsafe"

	"github.com/ziplinekv/zipline"
)

// This file is the fast path of MGet and MSet for a namespace that is not
// migrating: the commands a plain MGET or MSET would take, one per bucket,
// built with as little work per key as the client can do.
//
// Per key, the general path (plan.go, msetOps) makes its stored name, its
// bucket key, its oversize and legacy names (an allocation each), a map
// entry to group it by bucket, and, for a write, the interface-boxed
// arguments of the ops script, which the server then interprets in Lua at
// about 1 µs per key and command it runs. Here the names of a call are
// written into one buffer (one allocation for all of them), keys are grouped
// by sorting their bucket numbers, and commands are typed (HGET, HMGET,
// HSET, MGET, MSET, UNLINK: no boxing). A write is a MULTI/EXEC of one HSET
// per bucket, one MSET of the keys stored as plain keys and one UNLINK of
// the written fields' oversize keys: atomic, as the script was, and cheaper
// for the server than the script (see BenchmarkMulti).
//
// Why an unconditional UNLINK may replace the script's "remove the
// oversize key if the field held a marker": an oversize key exists only
// while its field holds oversizeMarker (it is written, expired and deleted
// with the marker), so when the field is overwritten with a value that
// fits, its oversize key, if any, must go, and if there is none UNLINK
// does nothing. A legacy name (the key's plain stored name, on a single
// server) is unlinked the same way, as Del always did: no application key
// of the namespace lives there, because a key that has a bucket is always
// stored in it.

// spot is one key of a fast MGet or MSet: where it lives.
type spot struct {
	bucket uint64 // bucket number, when in a bucket
	field  string
	name   span // plain stored name (keys not in a bucket), in the call's name buffer
	in     bool // in a bucket
}

// span is a name written into a names buffer: its bytes are
// buf[start:end], taken as a string once the buffer is complete.
type span struct{ start, end int }

// names collects the stored names of one call in one buffer.
type names struct{ buf []byte }

// str returns the name at sp. Call it only once every name is written:
// until then the buffer may move.
func (n *names) str(sp span) string {
	if sp.end == sp.start {
		return ""
	}
	return unsafe.String(&n.buf[sp.start], sp.end-sp.start)
}

// add appends a name written by fill and returns its span.
func (n *names) add(fill func([]byte) []byte) span {
	start := len(n.buf)
	n.buf = fill(n.buf)
	return span{start, len(n.buf)}
}

// ord is a spot's place in a call's order: bucketed keys first, by
// bucket, then keys stored as plain keys; keys keep their order within a
// bucket. It holds no pointer, so sorting it is cheap.
type ord struct {
	b uint64 // bucket; ^0 for a plain key
	i int    // key index (plus the number of keys for a plain key)
}

// spots locates keys (key(i) is the i-th of n) without building any name
// but the plain stored names of keys that are not in a bucket, and returns
// them in key order with the order to send them in.
func (s *Store) spots(n int, key func(int) string, nm *names) (sp []spot, order []ord, inBuckets int, err error) {
	sp = make([]spot, n)
	order = make([]ord, n)
	for i := range sp {
		k := key(i)
		tail, ok := strings.CutPrefix(k, s.ns.Prefix)
		if !ok {
			_, err := s.locate(k) // the error, as locate words it
			return nil, nil, 0, err
		}
		x := &sp[i]
		if s.buckets != nil {
			if b, f, ok := s.buckets.locate(tail); ok && len(f) <= s.maxValue {
				x.bucket, x.field, x.in = b, f, true
				order[i] = ord{b, i}
				inBuckets++
				continue
			}
		}
		if !s.zip {
			if _, err := s.locate(k); err != nil { // the bucket marker check
				return nil, nil, 0, err
			}
		}
		x.name = nm.add(func(b []byte) []byte {
			if s.zip {
				return appendZipTail(append(b, s.stored...), tail)
			}
			return append(b, k...)
		})
		order[i] = ord{^uint64(0), n + i}
	}
	if inBuckets > 0 && n > 1 {
		slices.SortFunc(order, func(a, b ord) int {
			switch {
			case a.b < b.b:
				return -1
			case a.b > b.b:
				return 1
			}
			return a.i - b.i
		})
	}
	for j := range order {
		order[j].i %= n
	}
	return sp, order, inBuckets, nil
}

// bucketName appends bucket b's key to n.
func (s *Store) bucketName(n *names, b uint64) span {
	return n.add(func(buf []byte) []byte { return appendBase62(append(append(buf, s.stored...), bucketMarker), b) })
}

// runs calls fn for each run of the order's bucketed keys that share a
// bucket (the first inBuckets of order).
func runs(order []ord, inBuckets int, fn func(run []ord)) {
	order = order[:inBuckets]
	for len(order) > 0 {
		j := 1
		for j < len(order) && order[j].b == order[0].b {
			j++
		}
		fn(order[:j])
		order = order[j:]
	}
}

// mgetFast is MGet for a namespace that is not migrating: one HGET or
// HMGET per bucket and one MGET of the keys stored as plain keys, in one
// round trip, then one MGET of the oversize values found, if any.
func (s *Store) mgetFast(ctx context.Context, keys []string) ([][]byte, error) {
	var nm names
	nm.buf = make([]byte, 0, 16*len(keys))
	sp, order, inBuckets, err := s.spots(len(keys), func(i int) string { return keys[i] }, &nm)
	if err != nil {
		return nil, err
	}
	type group struct {
		name span
		run  []ord
		one  *zipline.Future[[]byte]   // HGET, for a bucket of one key
		many *zipline.Future[[][]byte] // HMGET
	}
	groups := make([]group, 0, inBuckets)
	runs(order, inBuckets, func(run []ord) {
		groups = append(groups, group{name: s.bucketName(&nm, run[0].b), run: run})
	})
	// Every name is written: they can be taken as strings.
	b := s.c.Batch()
	var fields []string
	if inBuckets > len(groups) {
		fields = make([]string, 0, inBuckets)
	}
	for g := range groups {
		gr := &groups[g]
		if len(gr.run) == 1 {
			gr.one = b.HGet(nm.str(gr.name), sp[gr.run[0].i].field)
			continue
		}
		from := len(fields)
		for _, o := range gr.run {
			fields = append(fields, sp[o.i].field)
		}
		gr.many = b.HMGet(nm.str(gr.name), fields[from:]...)
	}
	var plain *zipline.Future[[][]byte]
	if rest := order[inBuckets:]; len(rest) > 0 {
		ps := make([]string, len(rest))
		for j, o := range rest {
			ps[j] = nm.str(sp[o.i].name)
		}
		plain = b.MGet(ps...)
	}
	if err := execReads(ctx, b); err != nil {
		return nil, err
	}
	out := make([][]byte, len(keys))
	var follow []int // keys whose field holds an oversize marker
	for g := range groups {
		gr := &groups[g]
		if gr.one != nil {
			v, err := gr.one.Result()
			if err != nil && !errors.Is(err, zipline.Nil) {
				return nil, err
			}
			out[gr.run[0].i] = v
		} else {
			vs, err := gr.many.Result()
			if err != nil {
				return nil, err
			}
			for j, o := range gr.run {
				out[o.i] = vs[j]
			}
		}
		for _, o := range gr.run {
			if isMarker(out[o.i]) {
				follow = append(follow, o.i)
			}
		}
	}
	if plain != nil {
		vs, err := plain.Result()
		if err != nil {
			return nil, err
		}
		for j, o := range order[inBuckets:] {
			out[o.i] = vs[j]
		}
	}
	if len(follow) > 0 {
		if err := s.readBehind(ctx, keys, out, follow); err != nil {
			return nil, err
		}
	}
	return out, s.decodeAll(out)
}

// readBehind replaces the markers at out[i], for i in follow, with the
// oversize values they point to (nil where there is none).
func (s *Store) readBehind(ctx context.Context, keys []string, out [][]byte, follow []int) error {
	var names []string
	var at []int
	for _, i := range follow {
		l, err := s.locate(keys[i])
		if err != nil {
			return err
		}
		marker := out[i]
		out[i] = nil
		if name := s.behind(l, marker); name != "" {
			names = append(names, name)
			at = append(at, i)
		}
	}
	if len(names) == 0 {
		return nil
	}
	vs, err := s.c.MGet(ctx, names...)
	if err != nil {
		return err
	}
	for j, i := range at {
		out[i] = vs[j]
	}
	return nil
}

// msetFast is MSet for a namespace on a single server that is not
// migrating, when every bucketed value fits its bucket: a MULTI/EXEC of one
// HSET per bucket, one MSET of the plain keys and one UNLINK of the
// bucketed keys' oversize (and legacy) names. It reports false, having sent
// nothing, when a value does not fit: the ops script then writes it.
func (s *Store) msetFast(ctx context.Context, pairs []zipline.KeyValue) (bool, error) {
	var nm names
	nm.buf = make([]byte, 0, 48*len(pairs))
	sp, order, inBuckets, err := s.spots(len(pairs), func(i int) string { return pairs[i].Key }, &nm)
	if err != nil {
		return false, err
	}
	// The HSET and MSET arguments, in order: fvs[j] is order[j]'s.
	fvs := make([]zipline.FieldValue, inBuckets)
	kvs := make([]zipline.KeyValue, len(pairs)-inBuckets)
	for j, o := range order {
		enc := s.encode(pairs[o.i].Value)
		if j >= inBuckets {
			kvs[j-inBuckets].Value = enc
			continue
		}
		if !s.fits(enc) {
			return false, nil
		}
		fvs[j] = zipline.FieldValue{Field: sp[o.i].field, Value: enc}
	}
	per := 1
	if s.legacy {
		per = 2
	}
	buckets := make([]span, 0, inBuckets)
	doomed := make([]span, 0, per*inBuckets) // oversize (and legacy) names of the written fields
	runs(order, inBuckets, func(run []ord) {
		bucket := s.bucketName(&nm, run[0].b)
		buckets = append(buckets, bucket)
		for _, o := range run {
			field := sp[o.i].field
			doomed = append(doomed, nm.add(func(b []byte) []byte {
				b = append(append(append(b, s.stored...), bucketMarker, '{'), b[bucket.start:bucket.end]...)
				return append(append(b, '}'), field...)
			}))
			if s.legacy {
				key := pairs[o.i].Key
				doomed = append(doomed, nm.add(func(b []byte) []byte {
					if s.zip {
						return appendZipTail(append(b, s.stored...), key[len(s.ns.Prefix):])
					}
					return append(b, key...)
				}))
			}
		}
	})
	s.bucketWrites.Add(uint64(inBuckets))
	// Every name is written: they can be taken as strings.
	tx := s.c.Tx()
	at := 0
	runs(order, inBuckets, func(run []ord) {
		tx.HSet(nm.str(buckets[0]), fvs[at:at+len(run)]...)
		buckets = buckets[1:]
		at += len(run)
	})
	if len(kvs) > 0 {
		for j, o := range order[inBuckets:] {
			kvs[j].Key = nm.str(sp[o.i].name)
		}
		tx.MSet(kvs...)
	}
	if len(doomed) > 0 {
		ds := make([]string, len(doomed))
		for j, d := range doomed {
			ds[j] = nm.str(d)
		}
		tx.Unlink(ds...)
	}
	return true, tx.Exec(ctx)
}

// fastMulti turns the fast MGet and MSet paths on; tests of the general
// paths turn it off.
var fastMulti = true
