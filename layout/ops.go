package layout

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ziplinekv/zipline"
)

// Get returns key's value, or zipline.Nil if it does not exist.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	if s.splitting() {
		vs, err := s.splitGet(ctx, []string{key})
		if err != nil {
			return nil, err
		}
		if vs[0] == nil {
			return nil, zipline.Nil
		}
		return vs[0], nil
	}
	if s.old != nil {
		b := s.c.Batch()
		r, err := s.queueRead(b, key, false)
		if err != nil {
			return nil, err
		}
		if err := b.Exec(ctx); err != nil {
			return nil, err
		}
		v, from, err := r.resolve()
		if errors.Is(err, errNeedPlain) {
			v, err = s.getBehind(ctx, r.l, v)
		}
		if err != nil {
			return nil, err
		}
		return from.decode(v)
	}
	l, err := s.locate(key)
	if err != nil {
		return nil, err
	}
	var v []byte
	if l.bucket != "" {
		v, err = s.c.HGet(ctx, l.bucket, l.field)
		if err == nil && isMarker(v) {
			v, err = s.getBehind(ctx, l, v)
		}
	} else {
		v, err = s.c.Get(ctx, l.plain)
	}
	if err != nil {
		return nil, err
	}
	return s.decode(v)
}

// behind returns the name of the key that holds the value behind marker,
// or "" if there can be none (a legacy marker with legacy names off).
func (s *Store) behind(l location, marker []byte) string {
	if bytes.Equal(marker, oversizeMarker) {
		return s.oversizeKey(l)
	}
	return s.legacyKey(l)
}

// getBehind reads the oversize value that marker points to.
func (s *Store) getBehind(ctx context.Context, l location, marker []byte) ([]byte, error) {
	name := s.behind(l, marker)
	if name == "" {
		return nil, zipline.Nil
	}
	return s.c.Get(ctx, name)
}

// Set stores v at key, replacing any value and its TTL.
func (s *Store) Set(ctx context.Context, key string, v []byte) error {
	return s.set(ctx, key, v, 0)
}

// SetEX stores v at key with a time to live. On a bucketed namespace it
// needs hash field expiry (Redis 7.4+, Valkey 9+) or Namespace.BucketTTL,
// and fails with ErrNoFieldTTL otherwise, oversize values included: their
// key must expire with their bucket field.
func (s *Store) SetEX(ctx context.Context, key string, v []byte, ttl time.Duration) error {
	if ttl <= 0 {
		return fmt.Errorf("layout: SetEX needs a positive TTL, not %v", ttl)
	}
	return s.set(ctx, key, v, ttl)
}

// set writes a plain key with one command. A bucket field goes through the
// script, which removes the oversize key of the value it replaces, if any:
// an overwrite can never leave a value behind, and a small write pays one
// script call rather than an extra command.
func (s *Store) set(ctx context.Context, key string, v []byte, ttl time.Duration) error {
	l, err := s.locate(key)
	if err != nil {
		return err
	}
	enc := s.encode(v)
	if s.old == nil && l.bucket == "" {
		if ttl > 0 {
			_, err := s.c.Do(ctx, "SET", l.plain, enc, "PX", max(ttl.Milliseconds(), 1))
			return err
		}
		return s.c.Set(ctx, l.plain, enc)
	}
	if s.old == nil && ttl == 0 {
		if w, ok := s.smallWrite(l.bucket, []field{{l, enc}}); ok {
			return w.run(ctx, s.c)
		}
	}
	if s.splitting() {
		return s.splitSet(ctx, key, l, enc, ttl)
	}
	var o opList
	if err := s.addSet(&o, key, l, enc, ttl); err != nil {
		return err
	}
	r, err := s.runOps(ctx, &o)
	if err != nil || ttl <= 0 || l.bucket == "" {
		return err
	}
	return s.tieOlder(ctx, l.bucket, r[0])
}

// addSet appends the writing of enc at key (located at l), and, while
// migrating, the deletion of the old layout's copy.
func (s *Store) addSet(o *opList, key string, l location, enc []byte, ttl time.Duration) error {
	e, err := s.expiryIn(l, ttl, time.Time{})
	if err != nil {
		return err
	}
	s.addWrite(o, l, enc, e, false)
	return s.addDeleteOld(o, key)
}

// addDeleteOld appends, while migrating, the deletion of key's copy in the
// old layout.
func (s *Store) addDeleteOld(o *opList, key string) error {
	if s.old == nil {
		return nil
	}
	ol, err := s.old.locate(key)
	if err != nil {
		return err
	}
	s.old.addDelete(o, ol)
	return nil
}

// locateMoved is locate for operations that act on the value in place
// (increments, TTLs, conditional writes): while migrating, the key is first
// moved to the new layout, atomically, so that they see its current value.
// It returns the Store whose layout then holds the key: the old one for a
// key that must stay there because the new layout cannot hold its TTL.
func (s *Store) locateMoved(ctx context.Context, key string) (*Store, location, error) {
	st := s
	if s.old != nil {
		// A move loses to a concurrent write of the key, which leaves it in
		// the new layout, or to a concurrent move: try again, a few times.
		for attempt := 0; ; attempt++ {
			res, err := s.move(ctx, []string{key})
			if err != nil {
				return nil, location{}, err
			}
			if res.Kept == 1 {
				st = s.old
			}
			if res.Changed == 0 {
				break
			}
			if attempt == maxMoveAttempts {
				return nil, location{}, fmt.Errorf("layout: %q kept changing while being moved", key)
			}
		}
	}
	l, err := st.locate(key)
	return st, l, err
}

// maxMoveAttempts bounds the retries of a move that lost to concurrent
// changes of its key.
const maxMoveAttempts = 8

// SetNX stores v at key only if key does not exist, and reports whether it
// did. In a bucket, the check and the write (of the field, and of the
// oversize key for a large value) are one script, so a value is stored if
// and only if SetNX reports true.
func (s *Store) SetNX(ctx context.Context, key string, v []byte) (bool, error) {
	if s.splitting() {
		l, err := s.locate(key)
		if err != nil {
			return false, err
		}
		return s.splitSetNX(ctx, key, l, v)
	}
	st, l, err := s.locateMoved(ctx, key)
	if err != nil {
		return false, err
	}
	enc := st.encode(v)
	if l.bucket == "" {
		return s.c.SetNX(ctx, l.plain, enc)
	}
	var o opList
	st.addWrite(&o, l, enc, expiry{}, true)
	r, err := s.runOps(ctx, &o)
	if err != nil {
		return false, err
	}
	n, err := r[0].AsInt64()
	if n == 1 {
		st.bucketWrites.Add(1)
		if !st.fits(enc) {
			st.oversize.Add(1)
		}
	}
	return n == 1, err
}

// GetSet stores v at key and returns the previous value (zipline.Nil if
// there was none), atomically.
func (s *Store) GetSet(ctx context.Context, key string, v []byte) ([]byte, error) {
	l, err := s.locate(key)
	if err != nil {
		return nil, err
	}
	if s.splitting() {
		return s.splitGetSet(ctx, key, l, v)
	}
	var o opList
	reads := []int{s.addRead(&o, l)}
	stores := []*Store{s}
	if s.old != nil {
		ol, err := s.old.locate(key)
		if err != nil {
			return nil, err
		}
		reads = append(reads, s.old.addRead(&o, ol))
		stores = append(stores, s.old)
	}
	if err := s.addSet(&o, key, l, s.encode(v), 0); err != nil {
		return nil, err
	}
	r, err := s.runOps(ctx, &o)
	if err != nil {
		return nil, err
	}
	for n, i := range reads {
		if old, err := r[i].AsBytes(); err == nil {
			return stores[n].decode(old)
		}
	}
	return nil, zipline.Nil
}

// MGet returns the values of keys, nil for missing ones, in one round trip
// (two if some are oversize values stored as plain keys): one HGET or HMGET
// per bucket and one MGET for keys stored as plain keys.
func (s *Store) MGet(ctx context.Context, keys ...string) ([][]byte, error) {
	if s.splitting() {
		return s.splitGet(ctx, keys)
	}
	if s.old != nil {
		return s.mgetMigrating(ctx, keys)
	}
	if fastMulti {
		return s.mgetFast(ctx, keys)
	}
	b := s.c.Batch()
	g, err := s.queueGroupedRead(b, keys, false)
	if err != nil {
		return nil, err
	}
	if err := b.Exec(ctx); err != nil {
		return nil, err
	}
	out, follow, err := g.resolve()
	if err != nil {
		return nil, err
	}
	if len(follow) > 0 {
		var names []string
		var at []int
		for _, i := range follow {
			if name := s.behind(g.locs[i], g.markers[i]); name != "" {
				names = append(names, name)
				at = append(at, i)
			}
		}
		if len(names) > 0 {
			vs, err := s.c.MGet(ctx, names...)
			if err != nil {
				return nil, err
			}
			for n, i := range at {
				out[i] = vs[n]
			}
		}
	}
	return out, s.decodeAll(out)
}

// decodeAll decodes stored values in place; nil stays nil.
func (s *Store) decodeAll(vs [][]byte) error {
	for i, v := range vs {
		if v == nil {
			continue
		}
		var err error
		if vs[i], err = s.decode(v); err != nil {
			return err
		}
	}
	return nil
}

// mgetMigrating reads each key from the new layout and the old.
func (s *Store) mgetMigrating(ctx context.Context, keys []string) ([][]byte, error) {
	b := s.c.Batch()
	reads, err := s.queueReads(b, keys)
	if err != nil {
		return nil, err
	}
	if err := b.Exec(ctx); err != nil {
		return nil, err
	}
	return readValues(reads)
}

// MSet stores several values at once, atomically on a single server. Keys
// stored as plain keys take one MSET; each bucket takes one HSET of its
// fields. When every value fits its bucket and the namespace is not
// migrating, that is a MULTI/EXEC with one UNLINK of the fields' oversize
// keys; otherwise the ops script, which also writes oversize
// values. On a cluster each bucket and each plain key is written
// atomically on its own. A key given twice takes its last value.
func (s *Store) MSet(ctx context.Context, pairs ...zipline.KeyValue) error {
	if fastMulti && s.old == nil && !s.cluster && s.buckets != nil {
		if done, err := s.msetFast(ctx, pairs); done || err != nil {
			return err
		}
	}
	g, plainOnly, small, err := s.msetOps(pairs)
	switch {
	case err != nil:
		return err
	case plainOnly != nil:
		return s.c.MSet(ctx, plainOnly...)
	case small != nil:
		return small.run(ctx, s.c)
	}
	if _, err := g.run(ctx, s); err != nil || !s.splitting() {
		return err
	}
	keys := make([]string, len(pairs))
	for i, p := range pairs {
		keys[i] = p.Key
	}
	return s.deleteOldOf(ctx, keys...)
}

// msetOps builds an MSet: for a namespace that is not migrating, the MSET
// pairs if it has no buckets, or the setSmallLua call if all the keys are
// in one bucket and fit it; otherwise the ops script's operations, grouped
// by hash slot on a cluster (one list per bucket and per plain key). While
// migrating on a single server, the same script deletes the old copies;
// on a cluster the caller does, after.
func (s *Store) msetOps(pairs []zipline.KeyValue) (*lists, []zipline.KeyValue, *smallWrite, error) {
	last := make(map[string]int, len(pairs))
	for i, p := range pairs {
		last[p.Key] = i
	}
	var plain []any
	var bucketKeys []string
	fields := map[string][]field{}
	for i, p := range pairs {
		if last[p.Key] != i {
			continue
		}
		l, err := s.locate(p.Key)
		if err != nil {
			return nil, nil, nil, err
		}
		enc := s.encode(p.Value)
		if l.bucket == "" {
			plain = append(plain, l.plain, enc)
			continue
		}
		if _, ok := fields[l.bucket]; !ok {
			bucketKeys = append(bucketKeys, l.bucket)
		}
		fields[l.bucket] = append(fields[l.bucket], field{l, enc})
	}
	if s.old == nil && len(bucketKeys) == 0 {
		kv := make([]zipline.KeyValue, 0, len(plain)/2)
		for i := 0; i < len(plain); i += 2 {
			kv = append(kv, zipline.KeyValue{Key: plain[i].(string), Value: plain[i+1].([]byte)})
		}
		return nil, kv, nil, nil
	}
	if s.old == nil && len(bucketKeys) == 1 && len(plain) == 0 {
		if w, ok := s.smallWrite(bucketKeys[0], fields[bucketKeys[0]]); ok {
			return nil, nil, &w, nil
		}
	}
	g := s.newLists()
	for len(plain) > 0 {
		n := min(len(plain)/2, maxPutFields)
		if s.cluster {
			n = 1 // each plain key in its own slot's script
		}
		o := g.of(plain[0].(string))
		args := []any{"M", n}
		for i := 0; i < 2*n; i += 2 {
			args = append(args, o.key(plain[i].(string)), plain[i+1])
		}
		o.op(args...)
		plain = plain[2*n:]
	}
	for _, b := range bucketKeys {
		fs := fields[b]
		for len(fs) > 0 {
			n := min(len(fs), maxPutFields)
			s.addPut(g.of(b), b, fs[:n], expiry{}, false)
			fs = fs[n:]
		}
	}
	if s.old != nil && !s.cluster {
		o := g.of("")
		for i, p := range pairs {
			if last[p.Key] == i {
				if err := s.addDeleteOld(o, p.Key); err != nil {
					return nil, nil, nil, err
				}
			}
		}
	}
	return g, nil, nil, nil
}

// Del deletes keys and returns how many existed, atomically on a single
// server; on a cluster each key is deleted atomically on its own.
func (s *Store) Del(ctx context.Context, keys ...string) (int64, error) {
	if s.old == nil && s.buckets == nil {
		names, err := s.plainNames(keys)
		if err != nil {
			return 0, err
		}
		return s.c.Unlink(ctx, names...)
	}
	if s.splitting() {
		return s.splitDel(ctx, keys)
	}
	g, firsts, err := s.delOps(keys)
	if err != nil {
		return 0, err
	}
	r, err := g.run(ctx, s)
	if err != nil {
		return 0, err
	}
	return countExisting(r, firsts), nil
}

// plainNames returns the stored names of keys, for a namespace without
// buckets.
func (s *Store) plainNames(keys []string) ([]string, error) {
	names := make([]string, len(keys))
	for i, k := range keys {
		l, err := s.locate(k)
		if err != nil {
			return nil, err
		}
		names[i] = l.plain
	}
	return names, nil
}

// delOps builds the deletion of keys, in each layout (while migrating on a
// single server) and grouped by hash slot on a cluster; firsts lists, per
// key, the replies that say whether it existed.
func (s *Store) delOps(keys []string) (*lists, [][]ref, error) {
	g := s.newLists()
	firsts := make([][]ref, len(keys))
	for i, k := range keys {
		for st := s; st != nil; st = st.old {
			l, err := st.locate(k)
			if err != nil {
				return nil, nil, err
			}
			o := g.of(l.anchor())
			firsts[i] = append(firsts[i], ref{o, st.addDelete(o, l)})
		}
	}
	return g, firsts, nil
}

// countExisting counts the keys whose deletion replies say they existed
// in some layout. A key listed twice counts once, as with DEL.
func countExisting(r replies, firsts [][]ref) int64 {
	var n int64
	for _, fs := range firsts {
		for _, i := range fs {
			if c, _ := r.of(i).AsInt64(); c > 0 {
				n++
				break
			}
		}
	}
	return n
}

// Exists returns how many of keys exist.
func (s *Store) Exists(ctx context.Context, keys ...string) (int64, error) {
	if s.splitting() {
		return s.splitExists(ctx, keys)
	}
	b := s.c.Batch()
	checks, err := s.queueExists(b, keys, false)
	if err != nil {
		return 0, err
	}
	if err := b.Exec(ctx); err != nil {
		return 0, err
	}
	var follow []*existsCheck
	for _, cs := range checks {
		for _, c := range cs {
			if c.followLegacy() {
				follow = append(follow, c)
			}
		}
	}
	if len(follow) > 0 {
		fb := s.c.Batch()
		for _, c := range follow {
			c.legacy = fb.Do("EXISTS", c.s.legacyKey(c.l))
		}
		if err := fb.Exec(ctx); err != nil {
			return 0, err
		}
	}
	return countExists(checks)
}

// Incr adds 1 to the integer at key and returns the result.
func (s *Store) Incr(ctx context.Context, key string) (int64, error) { return s.IncrBy(ctx, key, 1) }

// IncrBy adds n to the integer at key and returns the result. Integers are
// shorter than any codec's minimum size, so they are stored as they are and
// the server can add to them; in a bucket they are listpack integers.
func (s *Store) IncrBy(ctx context.Context, key string, n int64) (int64, error) {
	if s.splitting() {
		l, err := s.locate(key)
		if err != nil {
			return 0, err
		}
		return s.splitIncrBy(ctx, key, l, n)
	}
	_, l, err := s.locateMoved(ctx, key)
	if err != nil {
		return 0, err
	}
	if l.bucket == "" {
		return s.c.IncrBy(ctx, l.plain, n)
	}
	return s.c.HIncrBy(ctx, l.bucket, l.field, n)
}

// Expire sets key to expire after d and reports whether the key exists. On
// a bucketed namespace it needs hash field expiry (Redis 7.4+, Valkey 9+),
// and fails with ErrNoFieldTTL otherwise. An oversize value's key gets the
// same expiry as its field, in the same script.
func (s *Store) Expire(ctx context.Context, key string, d time.Duration) (bool, error) {
	if s.splitting() {
		l, err := s.locate(key)
		if err != nil {
			return false, err
		}
		return s.splitExpire(ctx, key, l, d)
	}
	st, l, err := s.locateMoved(ctx, key)
	if err != nil {
		return false, err
	}
	if l.bucket == "" {
		return s.c.Expire(ctx, l.plain, d)
	}
	if !st.fieldTTL.hpexpire {
		return false, ErrNoFieldTTL
	}
	var o opList
	o.op("X", o.key(l.bucket), o.key(st.oversizeKey(l)), o.key(st.legacyKey(l)), l.field, d.Milliseconds())
	r, err := s.runOps(ctx, &o)
	if err != nil {
		return false, err
	}
	code, err := r[0].AsInt64()
	return code == 1 || code == 2, err
}

// TTL returns key's remaining time to live, as Client.TTL does:
// zipline.NoExpiry if it has none, zipline.NoKey if it does not exist,
// with a nil error; an error is the server's or the connection's. On a bucketed namespace without hash field
// expiry it reports the bucket's TTL (see Namespace.BucketTTL). An oversize
// value reports its own key's TTL, which is its field's.
func (s *Store) TTL(ctx context.Context, key string) (time.Duration, error) {
	if s.splitting() {
		return s.splitTTL(ctx, key)
	}
	st, l, err := s.locateMoved(ctx, key)
	if err != nil {
		return 0, err
	}
	return st.ttlAt(ctx, l)
}

// ttlAt is TTL in this Store's layout.
func (s *Store) ttlAt(ctx context.Context, l location) (time.Duration, error) {
	if l.bucket == "" {
		return s.c.PTTL(ctx, l.plain)
	}
	b := s.c.Batch()
	val := b.HGet(l.bucket, l.field)
	over := b.PTTL(s.oversizeKey(l))
	var field *zipline.Future[zipline.Value]
	var bucket *zipline.Future[time.Duration]
	if s.fieldTTL.hpexpire {
		field = b.Do("HPTTL", l.bucket, "FIELDS", 1, l.field)
	} else {
		bucket = b.PTTL(l.bucket)
	}
	if err := b.Exec(ctx); err != nil {
		return 0, err
	}
	v, err := val.Result()
	switch {
	case errors.Is(err, zipline.Nil):
		return zipline.NoKey, nil
	case err != nil:
		return 0, err
	case bytes.Equal(v, oversizeMarker):
		return over.Result()
	case bytes.Equal(v, legacyMarker):
		name := s.legacyKey(l)
		if name == "" {
			return zipline.NoKey, nil
		}
		return s.c.PTTL(ctx, name)
	case bucket != nil:
		return bucket.Result()
	}
	codes, err := field.Val().AsSlice()
	if err != nil || len(codes) != 1 {
		return 0, fmt.Errorf("layout: HPTTL replied %v: %w", field.Val(), err)
	}
	switch ms, _ := codes[0].AsInt64(); ms {
	case -2:
		return zipline.NoKey, nil
	case -1:
		return zipline.NoExpiry, nil
	default:
		return time.Duration(ms) * time.Millisecond, nil
	}
}
