package layout

import (
	"bytes"
	"errors"

	"github.com/ziplinekv/zipline"
)

// read is a key's queued read: the futures of its commands, resolved after
// the batch runs.
type read struct {
	s      *Store
	l      location
	field  *zipline.Future[[]byte] // HGET of the bucket field
	plain  *zipline.Future[[]byte] // GET of the plain key, for a key stored as one
	over   *zipline.Future[[]byte] // full reads: GET of the oversize key
	legacy *zipline.Future[[]byte] // full reads: GET of the legacy oversize key, if legacy names are on
	old    *read                   // the same key in the layout being migrated from
	full   bool                    // oversize values were read with the field
}

// queueReads queues a full read (oversize values included) of each key.
func (s *Store) queueReads(b *zipline.Batch, keys []string) ([]*read, error) {
	reads := make([]*read, len(keys))
	for i, k := range keys {
		var err error
		if reads[i], err = s.queueRead(b, k, true); err != nil {
			return nil, err
		}
	}
	return reads, nil
}

// readValues resolves reads queued by queueReads, once their batch ran: a
// missing key reads as nil.
func readValues(reads []*read) ([][]byte, error) {
	out := make([][]byte, len(reads))
	for i, r := range reads {
		v, err := r.value()
		if err != nil && !errors.Is(err, zipline.Nil) {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// queueRead queues the commands that read key. With full, an oversize
// value is read in the same round trip (both of its possible keys);
// otherwise only when the bucket says so (see resolve).
func (s *Store) queueRead(b *zipline.Batch, key string, full bool) (*read, error) {
	l, err := s.locate(key)
	if err != nil {
		return nil, err
	}
	r := &read{s: s, l: l, full: full}
	if s.old != nil {
		// The old copy is read first: a move between the two reads (the
		// new copy written and the old deleted in one script) then shows
		// in the new layout's read, instead of the key reading as missing
		// in both.
		if r.old, err = s.old.queueRead(b, key, true); err != nil {
			return nil, err
		}
	}
	if l.bucket != "" {
		r.field = b.HGet(l.bucket, l.field)
		if full {
			r.over = b.Get(s.oversizeKey(l))
			if name := s.legacyKey(l); name != "" {
				r.legacy = b.Get(name)
			}
		}
	} else {
		r.plain = b.Get(l.plain)
	}
	return r, nil
}

// errNeedPlain means a bucket holds an oversize marker and its key was not
// read in the same round trip: resolve returns the marker with it.
var errNeedPlain = errors.New("layout: value stored as a plain key")

// resolve returns the stored bytes and the Store whose layout held them,
// Nil if the key is missing, or the marker and errNeedPlain.
func (r *read) resolve() ([]byte, *Store, error) {
	v, err := r.resolveHere()
	if errors.Is(err, zipline.Nil) && r.old != nil {
		v, err = r.old.resolveHere()
		return v, r.old.s, err
	}
	return v, r.s, err
}

func (r *read) resolveHere() ([]byte, error) {
	if r.field == nil {
		return r.plain.Result()
	}
	v, err := r.field.Result()
	switch {
	case err != nil || !isMarker(v):
		return v, err
	case !r.full:
		return v, errNeedPlain
	case bytes.Equal(v, oversizeMarker):
		return r.over.Result()
	case r.legacy != nil:
		return r.legacy.Result()
	}
	return nil, zipline.Nil
}

// marker returns the oversize marker the field held, or nil.
func (r *read) marker() []byte {
	if r.field == nil {
		return nil
	}
	if v, err := r.field.Result(); err == nil && isMarker(v) {
		return v
	}
	return nil
}

// value resolves and decodes, with the codec of the layout that answered.
func (r *read) value() ([]byte, error) {
	v, from, err := r.resolve()
	if err != nil {
		return nil, err
	}
	return from.decode(v)
}

// groupedRead is an MGet queued on a batch: HMGETs by bucket and one MGET.
type groupedRead struct {
	locs    []location
	markers [][]byte                    // the oversize marker of each key whose field holds one
	buckets []*zipline.Future[[][]byte] // one HMGET per bucket
	slots   [][]int                     // the key indexes each HMGET answers
	plain   *zipline.Future[[][]byte]   // MGET of the plain names
	plainOf []plainName                 // what each of its names is
	full    bool                        // oversize keys were read too
}

// plainName is one name of a groupedRead's MGET: key index i's plain key,
// or, in a full read, one of its oversize keys.
type plainName struct {
	i    int
	kind byte // 'p' plain key, 'o' oversize key, 'l' legacy oversize key
}

// queueGroupedRead queues the reads of keys. With full, the oversize keys
// of bucketed keys are read too, so that oversize values need no second
// round trip.
func (s *Store) queueGroupedRead(b *zipline.Batch, keys []string, full bool) (*groupedRead, error) {
	g := &groupedRead{locs: make([]location, len(keys)), markers: make([][]byte, len(keys)), full: full}
	at := map[string]int{}
	var fields [][]string
	var plainNames []string
	for i, k := range keys {
		l, err := s.locate(k)
		if err != nil {
			return nil, err
		}
		g.locs[i] = l
		if l.bucket == "" {
			plainNames = append(plainNames, l.plain)
			g.plainOf = append(g.plainOf, plainName{i, 'p'})
			continue
		}
		if full {
			plainNames = append(plainNames, s.oversizeKey(l))
			g.plainOf = append(g.plainOf, plainName{i, 'o'})
			if name := s.legacyKey(l); name != "" {
				plainNames = append(plainNames, name)
				g.plainOf = append(g.plainOf, plainName{i, 'l'})
			}
		}
		n, ok := at[l.bucket]
		if !ok {
			n = len(fields)
			at[l.bucket] = n
			fields = append(fields, nil)
			g.slots = append(g.slots, nil)
		}
		fields[n] = append(fields[n], l.field)
		g.slots[n] = append(g.slots[n], i)
	}
	g.buckets = make([]*zipline.Future[[][]byte], len(fields))
	for bucket, n := range at {
		g.buckets[n] = b.HMGet(bucket, fields[n]...)
	}
	if len(plainNames) > 0 {
		g.plain = b.MGet(plainNames...)
	}
	return g, nil
}

// resolve returns the stored values, nil for missing keys, and the indexes
// of keys whose bucket holds an oversize marker (in g.markers) whose key
// was not read.
func (g *groupedRead) resolve() (out [][]byte, follow []int, err error) {
	out = make([][]byte, len(g.locs))
	behind := map[plainName][]byte{}
	if g.plain != nil {
		vs, err := g.plain.Result()
		if err != nil {
			return nil, nil, err
		}
		for n, p := range g.plainOf {
			if p.kind == 'p' {
				out[p.i] = vs[n]
			} else {
				behind[p] = vs[n]
			}
		}
	}
	for n, f := range g.buckets {
		vs, err := f.Result()
		if err != nil {
			return nil, nil, err
		}
		for m, i := range g.slots[n] {
			v := vs[m]
			if isMarker(v) {
				g.markers[i] = v
				kind := byte('o')
				if bytes.Equal(v, legacyMarker) {
					kind = 'l'
				}
				if pv, ok := behind[plainName{i, kind}]; ok {
					v = pv
				} else {
					if !g.full {
						follow = append(follow, i)
					}
					v = nil
				}
			}
			out[i] = v
		}
	}
	return out, follow, nil
}

// existsCheck is one key's queued existence check in one layout.
type existsCheck struct {
	s      *Store
	l      location
	f      *zipline.Future[zipline.Value] // HGET of the field, or EXISTS of the plain key
	legacy *zipline.Future[zipline.Value] // EXISTS of the legacy oversize key, when needed
}

// queueExists queues the existence checks of keys, in each layout, the
// old one first (see queueRead). A field that holds a legacy marker exists
// only if its key does (an earlier version let such keys expire alone):
// with full, that key's EXISTS is queued too; otherwise the caller runs it
// when followLegacy says so.
func (s *Store) queueExists(b *zipline.Batch, keys []string, full bool) ([][]*existsCheck, error) {
	layouts := []*Store{s}
	if s.old != nil {
		layouts = []*Store{s.old, s}
	}
	checks := make([][]*existsCheck, len(keys))
	for i, k := range keys {
		for _, st := range layouts {
			l, err := st.locate(k)
			if err != nil {
				return nil, err
			}
			c := &existsCheck{s: st, l: l}
			if l.bucket == "" {
				c.f = b.Do("EXISTS", l.plain)
			} else {
				c.f = b.Do("HGET", l.bucket, l.field)
				if name := st.legacyKey(l); full && name != "" {
					c.legacy = b.Do("EXISTS", name)
				}
			}
			checks[i] = append(checks[i], c)
		}
	}
	return checks, nil
}

// followLegacy reports whether the check found a legacy marker whose key
// it has not checked.
func (c *existsCheck) followLegacy() bool {
	if c.l.bucket == "" || c.legacy != nil || c.s.legacyKey(c.l) == "" {
		return false
	}
	v, err := c.f.Val().AsBytes()
	return err == nil && bytes.Equal(v, legacyMarker)
}

// exists resolves the check.
func (c *existsCheck) exists() (bool, error) {
	if err := c.f.Err(); err != nil && !errors.Is(err, zipline.Nil) {
		return false, err
	}
	if c.l.bucket == "" {
		n, err := c.f.Val().AsInt64()
		return n > 0, err
	}
	v, err := c.f.Val().AsBytes()
	if err != nil || c.f.Val().IsNil() {
		return false, nil
	}
	if !bytes.Equal(v, legacyMarker) {
		return true, nil
	}
	if c.legacy == nil {
		return false, nil
	}
	n, err := c.legacy.Result()
	if err != nil {
		return false, err
	}
	m, err := n.AsInt64()
	return m > 0, err
}

// countExists counts the keys that exist in some layout.
func countExists(checks [][]*existsCheck) (int64, error) {
	var n int64
	for _, cs := range checks {
		for _, c := range cs {
			ok, err := c.exists()
			if err != nil {
				return 0, err
			}
			if ok {
				n++
				break
			}
		}
	}
	return n, nil
}
