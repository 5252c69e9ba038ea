package layout

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ziplinekv/zipline"
)

// run sends cmds in one round trip: as a single command, a batch, or, when
// atomic, a transaction-like group (see groupScript). It returns one reply
// per command.
func (s *Store) run(ctx context.Context, cmds []command, atomic bool) ([]zipline.Value, error) {
	if len(cmds) == 1 {
		v, err := s.c.Do(ctx, cmds[0]...)
		return []zipline.Value{v}, err
	}
	if atomic {
		v, err := s.c.Do(ctx, groupArgs(cmds)...)
		if err != nil {
			return nil, err
		}
		return v.AsSlice()
	}
	b := s.c.Batch()
	fs := make([]*zipline.Future[zipline.Value], len(cmds))
	for i, c := range cmds {
		fs[i] = b.Do(c...)
	}
	err := b.Exec(ctx)
	out := make([]zipline.Value, len(cmds))
	for i, f := range fs {
		out[i] = f.Val()
	}
	return out, err
}

// Get returns key's value, or zipline.Nil if it does not exist.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
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
			v, err = s.c.Get(ctx, r.l.plain)
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
		if err == nil && bytes.Equal(v, oversizeMarker) {
			v, err = s.c.Get(ctx, l.plain)
		}
	} else {
		v, err = s.c.Get(ctx, l.plain)
	}
	if err != nil {
		return nil, err
	}
	return s.decode(v)
}

// Set stores v at key, replacing any value and its TTL.
func (s *Store) Set(ctx context.Context, key string, v []byte) error {
	return s.set(ctx, key, v, 0)
}

// SetEX stores v at key with a time to live. On a bucketed namespace it
// needs hash field expiry (Redis 7.4+, Valkey 9+) or Namespace.BucketTTL,
// and fails with ErrNoFieldTTL otherwise.
func (s *Store) SetEX(ctx context.Context, key string, v []byte, ttl time.Duration) error {
	if ttl <= 0 {
		return fmt.Errorf("layout: SetEX needs a positive TTL, not %v", ttl)
	}
	return s.set(ctx, key, v, ttl)
}

func (s *Store) set(ctx context.Context, key string, v []byte, ttl time.Duration) error {
	if s.old == nil && ttl == 0 {
		l, err := s.locate(key)
		if err != nil {
			return err
		}
		enc := s.encode(v)
		switch {
		case l.bucket == "":
			return s.c.Set(ctx, l.plain, enc)
		case s.fits(enc):
			_, err := s.c.HSet(ctx, l.bucket, zipline.FieldValue{Field: l.field, Value: enc})
			return err
		}
	}
	cmds, err := s.setCommands(key, v, ttl)
	if err != nil {
		return err
	}
	_, err = s.run(ctx, cmds, s.old != nil)
	return err
}

// setCommands returns the commands that store v at key, including, while
// migrating, the deletion of the old layout's copy.
func (s *Store) setCommands(key string, v []byte, ttl time.Duration) ([]command, error) {
	l, err := s.locate(key)
	if err != nil {
		return nil, err
	}
	cmds, err := s.writeCommands(l, s.encode(v), ttl)
	if err != nil {
		return nil, err
	}
	if s.old != nil {
		ol, err := s.old.locate(key)
		if err != nil {
			return nil, err
		}
		cmds = append(cmds, deleteCommands(ol)...)
	}
	return cmds, nil
}

// locateMoved is locate for operations that act on the value in place
// (increments, TTLs, conditional writes): while migrating, the key is first
// moved to the new layout, atomically, so that they see its current value.
func (s *Store) locateMoved(ctx context.Context, key string) (location, error) {
	if s.old != nil {
		if _, err := s.move(ctx, []string{key}); err != nil {
			return location{}, err
		}
	}
	return s.locate(key)
}

// SetNX stores v at key only if key does not exist, and reports whether it
// did.
func (s *Store) SetNX(ctx context.Context, key string, v []byte) (bool, error) {
	l, err := s.locateMoved(ctx, key)
	if err != nil {
		return false, err
	}
	enc := s.encode(v)
	switch {
	case l.bucket == "":
		return s.c.SetNX(ctx, l.plain, enc)
	case s.fits(enc):
		return s.c.HSetNX(ctx, l.bucket, l.field, enc)
	}
	// The value goes to its plain key first, then the marker claims the
	// field; if the field was taken, the plain key is an unused leftover.
	r, err := s.run(ctx, []command{{"SET", l.plain, enc, "NX"}, {"HSETNX", l.bucket, l.field, oversizeMarker}}, true)
	if err != nil {
		return false, err
	}
	ok, err := r[1].AsBool()
	if ok {
		s.oversize.Add(1)
	}
	return ok, err
}

// GetSet stores v at key and returns the previous value (zipline.Nil if
// there was none), atomically.
func (s *Store) GetSet(ctx context.Context, key string, v []byte) ([]byte, error) {
	tx := s.c.Tx()
	r, err := s.queueRead(tx, key, true)
	if err != nil {
		return nil, err
	}
	cmds, err := s.setCommands(key, v, 0)
	if err != nil {
		return nil, err
	}
	for _, c := range cmds {
		tx.Do(c...)
	}
	if err := tx.Exec(ctx); err != nil {
		return nil, err
	}
	return r.value()
}

// MGet returns the values of keys, nil for missing ones, in one round trip
// (two if some are oversize values stored as plain keys): one HMGET per
// bucket and one MGET for keys stored as plain keys.
func (s *Store) MGet(ctx context.Context, keys ...string) ([][]byte, error) {
	if s.old != nil {
		return s.mgetMigrating(ctx, keys)
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
		names := make([]string, len(follow))
		for n, i := range follow {
			names[n] = g.locs[i].plain
		}
		vs, err := s.c.MGet(ctx, names...)
		if err != nil {
			return nil, err
		}
		for n, i := range follow {
			out[i] = vs[n]
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

// groupedRead is an MGet queued on a batch: HMGETs by bucket and one MGET.
type groupedRead struct {
	locs    []location
	buckets []*zipline.Future[[][]byte] // one HMGET per bucket
	slots   [][]int                     // the key indexes each HMGET answers
	plain   *zipline.Future[[][]byte]   // MGET of the plain names
	plainOf []int                       // the key indexes it answers
}

// queueGroupedRead queues the reads of keys. With full, the plain names of
// bucketed keys are read too, so that oversize values need no second round
// trip.
func (s *Store) queueGroupedRead(b *zipline.Batch, keys []string, full bool) (*groupedRead, error) {
	g := &groupedRead{locs: make([]location, len(keys))}
	at := map[string]int{}
	var fields [][]string
	var plainNames []string
	for i, k := range keys {
		l, err := s.locate(k)
		if err != nil {
			return nil, err
		}
		g.locs[i] = l
		if l.bucket == "" || full {
			plainNames = append(plainNames, l.plain)
			g.plainOf = append(g.plainOf, i)
		}
		if l.bucket == "" {
			continue
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
// of keys whose bucket holds the oversize marker but whose plain name was
// not read.
func (g *groupedRead) resolve() (out [][]byte, follow []int, err error) {
	out = make([][]byte, len(g.locs))
	plain := map[int][]byte{}
	if g.plain != nil {
		vs, err := g.plain.Result()
		if err != nil {
			return nil, nil, err
		}
		for n, i := range g.plainOf {
			plain[i] = vs[n]
			if g.locs[i].bucket == "" {
				out[i] = vs[n]
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
			if bytes.Equal(v, oversizeMarker) {
				if pv, ok := plain[i]; ok {
					v = pv
				} else {
					follow = append(follow, i)
					v = nil
				}
			}
			out[i] = v
		}
	}
	return out, follow, nil
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

// MSet stores several values at once, atomically: an MSET of the keys
// stored as plain keys and one HSET per bucket, in a transaction when that
// is more than one command.
func (s *Store) MSet(ctx context.Context, pairs ...zipline.KeyValue) error {
	if s.old != nil {
		var cmds []command
		for _, p := range pairs {
			c, err := s.setCommands(p.Key, p.Value, 0)
			if err != nil {
				return err
			}
			cmds = append(cmds, c...)
		}
		_, err := s.run(ctx, cmds, true)
		return err
	}
	w, err := s.groupWrites(pairs)
	if err != nil {
		return err
	}
	if w.commands() == 1 && len(w.plain) > 0 {
		return s.c.MSet(ctx, w.plain...)
	}
	if w.commands() == 1 {
		_, err := s.c.HSet(ctx, w.bucketKeys[0], w.fields[0]...)
		return err
	}
	tx := s.c.Tx()
	w.queue(tx)
	return tx.Exec(ctx)
}

// groupedWrite is an MSet: the plain keys' pairs and each bucket's fields.
// Plain keys are written first, so that a reader never finds an oversize
// marker before its value.
type groupedWrite struct {
	plain      []zipline.KeyValue
	bucketKeys []string
	fields     [][]zipline.FieldValue
}

func (s *Store) groupWrites(pairs []zipline.KeyValue) (*groupedWrite, error) {
	w := &groupedWrite{}
	at := map[string]int{}
	addField := func(bucket string, f zipline.FieldValue) {
		n, ok := at[bucket]
		if !ok {
			n = len(w.bucketKeys)
			at[bucket] = n
			w.bucketKeys = append(w.bucketKeys, bucket)
			w.fields = append(w.fields, nil)
		}
		w.fields[n] = append(w.fields[n], f)
	}
	for _, p := range pairs {
		l, err := s.locate(p.Key)
		if err != nil {
			return nil, err
		}
		enc := s.encode(p.Value)
		switch {
		case l.bucket == "":
			w.plain = append(w.plain, zipline.KeyValue{Key: l.plain, Value: enc})
		case s.fits(enc):
			addField(l.bucket, zipline.FieldValue{Field: l.field, Value: enc})
		default:
			s.oversize.Add(1)
			w.plain = append(w.plain, zipline.KeyValue{Key: l.plain, Value: enc})
			addField(l.bucket, zipline.FieldValue{Field: l.field, Value: oversizeMarker})
		}
	}
	return w, nil
}

func (w *groupedWrite) commands() int {
	n := len(w.bucketKeys)
	if len(w.plain) > 0 {
		n++
	}
	return n
}

// queue queues the writes on b, returning their futures' errors.
func (w *groupedWrite) queue(b *zipline.Batch) []func() error {
	var errs []func() error
	if len(w.plain) > 0 {
		errs = append(errs, b.MSet(w.plain...).Err)
	}
	for n, bucket := range w.bucketKeys {
		errs = append(errs, b.HSet(bucket, w.fields[n]...).Err)
	}
	return errs
}

// Del deletes keys and returns how many existed, atomically.
func (s *Store) Del(ctx context.Context, keys ...string) (int64, error) {
	var cmds []command
	var first []int // index of each key's existence reply, new layout then old
	for _, k := range keys {
		l, err := s.locate(k)
		if err != nil {
			return 0, err
		}
		first = append(first, len(cmds))
		cmds = append(cmds, deleteCommands(l)...)
		if s.old != nil {
			ol, err := s.old.locate(k)
			if err != nil {
				return 0, err
			}
			first = append(first, len(cmds))
			cmds = append(cmds, deleteCommands(ol)...)
		}
	}
	replies, err := s.run(ctx, cmds, true)
	if err != nil {
		return 0, err
	}
	per := 1
	if s.old != nil {
		per = 2
	}
	var n int64
	for i := 0; i < len(first); i += per {
		for j := i; j < i+per; j++ {
			if c, _ := replies[first[j]].AsInt64(); c > 0 {
				n++
				break
			}
		}
	}
	return n, nil
}

// Exists returns how many of keys exist.
func (s *Store) Exists(ctx context.Context, keys ...string) (int64, error) {
	b := s.c.Batch()
	checks := make([][]*zipline.Future[zipline.Value], len(keys))
	for i, k := range keys {
		for st := s; st != nil; st = st.old {
			l, err := st.locate(k)
			if err != nil {
				return 0, err
			}
			if l.bucket != "" {
				checks[i] = append(checks[i], b.Do("HEXISTS", l.bucket, l.field))
			} else {
				checks[i] = append(checks[i], b.Do("EXISTS", l.plain))
			}
		}
	}
	if err := b.Exec(ctx); err != nil {
		return 0, err
	}
	var n int64
	for _, fs := range checks {
		for _, f := range fs {
			if c, _ := f.Val().AsInt64(); c > 0 {
				n++
				break
			}
		}
	}
	return n, nil
}

// Incr adds 1 to the integer at key and returns the result.
func (s *Store) Incr(ctx context.Context, key string) (int64, error) { return s.IncrBy(ctx, key, 1) }

// IncrBy adds n to the integer at key and returns the result. Integers are
// shorter than any codec's minimum size, so they are stored as they are and
// the server can add to them; in a bucket they are listpack integers.
func (s *Store) IncrBy(ctx context.Context, key string, n int64) (int64, error) {
	l, err := s.locateMoved(ctx, key)
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
// and fails with ErrNoFieldTTL otherwise.
func (s *Store) Expire(ctx context.Context, key string, d time.Duration) (bool, error) {
	l, err := s.locateMoved(ctx, key)
	if err != nil {
		return false, err
	}
	if l.bucket == "" {
		return s.c.Expire(ctx, l.plain, d)
	}
	if !s.fieldTTL.hpexpire {
		return false, ErrNoFieldTTL
	}
	r, err := s.run(ctx, []command{
		{"HPEXPIRE", l.bucket, d.Milliseconds(), "FIELDS", 1, l.field},
		{"PEXPIRE", l.plain, d.Milliseconds()}, // the value behind an oversize marker, if any
	}, true)
	if err != nil {
		return false, err
	}
	codes, _ := r[0].AsSlice()
	if len(codes) != 1 {
		return false, fmt.Errorf("layout: HPEXPIRE replied %v", r[0])
	}
	code, err := codes[0].AsInt64()
	return code == 1 || code == 2, err
}

// TTL returns key's remaining time to live, zipline.NoExpiry if it has
// none, or zipline.Nil if it does not exist. On a bucketed namespace without
// hash field expiry it reports the bucket's TTL (see Namespace.BucketTTL).
func (s *Store) TTL(ctx context.Context, key string) (time.Duration, error) {
	l, err := s.locateMoved(ctx, key)
	if err != nil {
		return 0, err
	}
	if l.bucket == "" {
		return s.c.PTTL(ctx, l.plain)
	}
	if !s.fieldTTL.hpexpire {
		if ok, err := s.c.HExists(ctx, l.bucket, l.field); err != nil || !ok {
			return 0, errors.Join(err, zipline.Nil)
		}
		return s.c.PTTL(ctx, l.bucket)
	}
	b := s.c.Batch()
	field := b.Do("HPTTL", l.bucket, "FIELDS", 1, l.field)
	val := b.Do("HGET", l.bucket, l.field)
	plain := b.PTTL(l.plain)
	if err := b.Exec(ctx); err != nil {
		return 0, err
	}
	if v, _ := val.Val().AsBytes(); bytes.Equal(v, oversizeMarker) {
		return plain.Result()
	}
	codes, _ := field.Val().AsSlice()
	if len(codes) != 1 {
		return 0, fmt.Errorf("layout: HPTTL replied %v", field.Val())
	}
	switch ms, _ := codes[0].AsInt64(); ms {
	case -2:
		return 0, zipline.Nil
	case -1:
		return zipline.NoExpiry, nil
	default:
		return time.Duration(ms) * time.Millisecond, nil
	}
}
