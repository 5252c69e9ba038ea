package layout

import (
	"errors"

	"github.com/ziplinekv/zipline"
)

// Queued runs a namespace's operations inside a zipline Batch or Tx: each
// method queues its commands and returns a Result, filled when the batch's
// Exec returns. Writes are atomic inside a Tx; while migrating, each write
// is atomic on its own in any batch.
type Queued struct {
	s *Store
	b *zipline.Batch // the Raw view of the caller's batch
}

// In returns the namespace's operations queued on b.
func (s *Store) In(b *zipline.Batch) *Queued { return &Queued{s: s, b: b.Raw()} }

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
	r, err := q.s.queueRead(q.b, key, true)
	if err != nil {
		return failed[[]byte](err)
	}
	return &Result[[]byte]{get: r.value}
}

// MGet queues a read of keys; see Store.MGet. Oversize values are read in
// the same round trip.
func (q *Queued) MGet(keys ...string) *Result[[][]byte] {
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

// Set queues a write; see Store.Set.
func (q *Queued) Set(key string, v []byte) *Result[bool] {
	if q.s.old == nil {
		l, err := q.s.locate(key)
		if err != nil {
			return failed[bool](err)
		}
		enc := q.s.encode(v)
		switch {
		case l.bucket == "":
			f := q.b.Set(l.plain, enc)
			return &Result[bool]{get: f.Result}
		case q.s.fits(enc):
			f := q.b.HSet(l.bucket, zipline.FieldValue{Field: l.field, Value: enc})
			return &Result[bool]{get: func() (bool, error) { return f.Err() == nil, f.Err() }}
		}
	}
	cmds, err := q.s.setCommands(key, v, 0)
	if err != nil {
		return failed[bool](err)
	}
	return q.write(cmds)
}

// MSet queues writes; see Store.MSet. They are atomic inside a Tx.
func (q *Queued) MSet(pairs ...zipline.KeyValue) *Result[bool] {
	if q.s.old == nil {
		w, err := q.s.groupWrites(pairs)
		if err != nil {
			return failed[bool](err)
		}
		errs := w.queue(q.b)
		return &Result[bool]{get: func() (bool, error) {
			for _, e := range errs {
				if err := e(); err != nil {
					return false, err
				}
			}
			return true, nil
		}}
	}
	var cmds []command
	for _, p := range pairs {
		c, err := q.s.setCommands(p.Key, p.Value, 0)
		if err != nil {
			return failed[bool](err)
		}
		cmds = append(cmds, c...)
	}
	return q.write(cmds)
}

// write queues cmds: one atomic group while migrating (the new value and
// the old copy's deletion must not be split), plain commands otherwise.
func (q *Queued) write(cmds []command) *Result[bool] {
	var fs []*zipline.Future[zipline.Value]
	if q.s.old != nil {
		fs = append(fs, q.b.Do(groupArgs(cmds)...))
	} else {
		for _, c := range cmds {
			fs = append(fs, q.b.Do(c...))
		}
	}
	return &Result[bool]{get: func() (bool, error) {
		for _, f := range fs {
			if err := f.Err(); err != nil {
				return false, err
			}
		}
		return true, nil
	}}
}

// Del queues a deletion; see Store.Del.
func (q *Queued) Del(keys ...string) *Result[int64] {
	// For each key, the replies that say whether it existed: the first
	// reply of each layout's deletion commands.
	var exists []func() (bool, error)
	for _, k := range keys {
		var cmds []command
		var first []int
		for st := q.s; st != nil; st = st.old {
			l, err := st.locate(k)
			if err != nil {
				return failed[int64](err)
			}
			first = append(first, len(cmds))
			cmds = append(cmds, deleteCommands(l)...)
		}
		if q.s.old != nil {
			group := q.b.Do(groupArgs(cmds)...)
			exists = append(exists, func() (bool, error) {
				v, err := group.Result()
				if err != nil {
					return false, err
				}
				replies, err := v.AsSlice()
				if err != nil {
					return false, err
				}
				for _, i := range first {
					if c, _ := replies[i].AsInt64(); c > 0 {
						return true, nil
					}
				}
				return false, nil
			})
			continue
		}
		var head *zipline.Future[zipline.Value]
		for i, c := range cmds {
			f := q.b.Do(c...)
			if i == 0 {
				head = f
			}
		}
		exists = append(exists, func() (bool, error) {
			c, err := head.Val().AsInt64()
			if head.Err() != nil {
				return false, head.Err()
			}
			return c > 0, err
		})
	}
	return &Result[int64]{get: func() (int64, error) {
		var n int64
		for _, e := range exists {
			ok, err := e()
			if err != nil {
				return 0, err
			}
			if ok {
				n++
			}
		}
		return n, nil
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
	var checks [][]*zipline.Future[zipline.Value]
	for _, k := range keys {
		var fs []*zipline.Future[zipline.Value]
		for st := q.s; st != nil; st = st.old {
			l, err := st.locate(k)
			if err != nil {
				return failed[int64](err)
			}
			if l.bucket != "" {
				fs = append(fs, q.b.Do("HEXISTS", l.bucket, l.field))
			} else {
				fs = append(fs, q.b.Do("EXISTS", l.plain))
			}
		}
		checks = append(checks, fs)
	}
	return &Result[int64]{get: func() (int64, error) {
		var n int64
		for _, fs := range checks {
			for _, f := range fs {
				c, err := f.Val().AsInt64()
				if err != nil && f.Err() != nil {
					return 0, f.Err()
				}
				if c > 0 {
					n++
					break
				}
			}
		}
		return n, nil
	}}
}
