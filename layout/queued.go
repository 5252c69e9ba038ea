package layout

import (
	"errors"

	"github.com/ziplinekv/zipline"
)

// Queued runs a namespace's operations inside a zipline Batch or Tx: each
// method queues its commands and returns a Result, filled when the batch's
// Exec returns. Writes are atomic inside a Tx; while migrating, each write
// is atomic on its own in any batch. On a cluster, a Tx must keep to one
// hash slot (one bucket), and a migration's operations take several round
// trips, so they cannot be queued: while migrating there, every method
// fails with ErrQueuedWhileSplit.
type Queued struct {
	s *Store
	b *zipline.Batch // the Raw view of the caller's batch
}

// In returns the namespace's operations queued on b.
func (s *Store) In(b *zipline.Batch) *Queued { return &Queued{s: s, b: b.Raw()} }

// ErrQueuedWhileSplit is the error of a Queued operation while the
// namespace migrates on a cluster, where each operation takes several
// round trips: use the Store's methods.
var ErrQueuedWhileSplit = errors.New("layout: operations cannot be queued in a batch while migrating on a cluster; use the Store's methods")

// Result is the outcome of an operation queued with In.
type Result[T any] struct {
	get  func() (T, error)
	done bool
	val  T
	err  error
}

// Result returns the operation's value and error; call it after Exec.
func (r *Result[T]) Result() (T, error) {
	if !r.done {
		r.val, r.err = r.get()
		r.done = true
	}
	return r.val, r.err
}

// Val returns the value, or the zero value on error.
func (r *Result[T]) Val() T { v, _ := r.Result(); return v }

// Err returns the error.
func (r *Result[T]) Err() error { _, err := r.Result(); return err }

func failed[T any](err error) *Result[T] {
	return &Result[T]{done: true, err: err}
}

// Get queues a read of key; see Store.Get.
func (q *Queued) Get(key string) *Result[[]byte] {
	if q.s.splitting() {
		return failed[[]byte](ErrQueuedWhileSplit)
	}
	r, err := q.s.queueRead(q.b, key, true)
	if err != nil {
		return failed[[]byte](err)
	}
	return &Result[[]byte]{get: r.value}
}

// MGet queues a read of keys; see Store.MGet. Oversize values are read in
// the same round trip.
func (q *Queued) MGet(keys ...string) *Result[[][]byte] {
	if q.s.splitting() {
		return failed[[][]byte](ErrQueuedWhileSplit)
	}
	if q.s.old == nil {
		g, err := q.s.queueGroupedRead(q.b, keys, true)
		if err != nil {
			return failed[[][]byte](err)
		}
		return &Result[[][]byte]{get: func() ([][]byte, error) {
			out, _, err := g.resolve()
			if err != nil {
				return nil, err
			}
			return out, q.s.decodeAll(out)
		}}
	}
	reads, err := q.s.queueReads(q.b, keys)
	if err != nil {
		return failed[[][]byte](err)
	}
	return &Result[[][]byte]{get: func() ([][]byte, error) { return readValues(reads) }}
}

// Set queues a write; see Store.Set. A bucket field is written by the ops
// script, sent with its source (EVAL) so that it needs no cached script.
func (q *Queued) Set(key string, v []byte) *Result[bool] {
	if q.s.splitting() {
		return failed[bool](ErrQueuedWhileSplit)
	}
	l, err := q.s.locate(key)
	if err != nil {
		return failed[bool](err)
	}
	enc := q.s.encode(v)
	if q.s.old == nil && l.bucket == "" {
		f := q.b.Set(l.plain, enc)
		return &Result[bool]{get: f.Result}
	}
	if q.s.old == nil {
		if w, ok := q.s.smallWrite(l.bucket, []field{{l, enc}}); ok {
			return q.done(w.queue(q.b))
		}
	}
	g := q.s.newLists()
	if err := q.s.addSet(g.of(l.anchor()), key, l, enc, 0); err != nil {
		return failed[bool](err)
	}
	return q.write(g)
}

// MSet queues writes; see Store.MSet. They are atomic on a single server:
// one script call, or one MSET for a namespace without buckets; on a
// cluster, one script call per bucket.
func (q *Queued) MSet(pairs ...zipline.KeyValue) *Result[bool] {
	if q.s.splitting() {
		return failed[bool](ErrQueuedWhileSplit)
	}
	o, plainOnly, small, err := q.s.msetOps(pairs)
	switch {
	case err != nil:
		return failed[bool](err)
	case plainOnly != nil:
		f := q.b.MSet(plainOnly...)
		return &Result[bool]{get: func() (bool, error) { return f.Err() == nil, f.Err() }}
	case small != nil:
		return q.done(small.queue(q.b))
	}
	return q.write(o)
}

// write queues g's lists, each a script call.
func (q *Queued) write(g *lists) *Result[bool] {
	fs := make([]*zipline.Future[zipline.Value], len(g.all))
	for i, o := range g.all {
		fs[i] = o.queue(q.b)
	}
	return q.done(fs...)
}

// done is the Result of a queued write of one or more calls.
func (q *Queued) done(fs ...*zipline.Future[zipline.Value]) *Result[bool] {
	return &Result[bool]{get: func() (bool, error) {
		for _, f := range fs {
			if err := f.Err(); err != nil {
				return false, err
			}
		}
		return true, nil
	}}
}

// Del queues a deletion; see Store.Del. It is atomic on a single server:
// one UNLINK for a namespace without buckets, one script call otherwise;
// on a cluster, one script call per bucket and plain key.
func (q *Queued) Del(keys ...string) *Result[int64] {
	if q.s.splitting() {
		return failed[int64](ErrQueuedWhileSplit)
	}
	if q.s.old == nil && q.s.buckets == nil {
		names, err := q.s.plainNames(keys)
		if err != nil {
			return failed[int64](err)
		}
		f := q.b.Unlink(names...)
		return &Result[int64]{get: f.Result}
	}
	g, firsts, err := q.s.delOps(keys)
	if err != nil {
		return failed[int64](err)
	}
	fs := make([]*zipline.Future[zipline.Value], len(g.all))
	for i, o := range g.all {
		fs[i] = o.queue(q.b)
	}
	return &Result[int64]{get: func() (int64, error) {
		r := make(replies, len(g.all))
		for i, f := range fs {
			v, err := f.Result()
			if err != nil {
				return 0, err
			}
			if r[g.all[i]], err = opsReplies(v, g.all[i].n); err != nil {
				return 0, err
			}
		}
		return countExisting(r, firsts), nil
	}}
}

// Incr queues an increment of the integer at key; see Store.IncrBy. It is
// not available while migrating, where an increment must move the key
// first.
func (q *Queued) IncrBy(key string, n int64) *Result[int64] {
	if q.s.old != nil {
		return failed[int64](errors.New("layout: IncrBy in a batch is not available while migrating; use Store.IncrBy"))
	}
	l, err := q.s.locate(key)
	if err != nil {
		return failed[int64](err)
	}
	var f *zipline.Future[int64]
	if l.bucket == "" {
		f = q.b.IncrBy(l.plain, n)
	} else {
		f = q.b.HIncrBy(l.bucket, l.field, n)
	}
	return &Result[int64]{get: f.Result}
}

// Exists queues an existence check; see Store.Exists.
func (q *Queued) Exists(keys ...string) *Result[int64] {
	if q.s.splitting() {
		return failed[int64](ErrQueuedWhileSplit)
	}
	checks, err := q.s.queueExists(q.b, keys, true)
	if err != nil {
		return failed[int64](err)
	}
	return &Result[int64]{get: func() (int64, error) { return countExists(checks) }}
}
