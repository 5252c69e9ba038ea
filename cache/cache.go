package cache

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"reflect"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/ziplinekv/zipline"
)

// Defaults for the zero fields of Options.
const (
	// DefaultTTL is how long a loaded value stays fresh.
	DefaultTTL = time.Hour
	// DefaultNotFoundTTL is how long a "not found" is remembered: short, so
	// that a record created meanwhile shows up soon.
	DefaultNotFoundTTL = time.Minute
	// DefaultLockTTL is the life of the cross-process lock: longer than most
	// loads, since a load that outlives it may run again in another process,
	// and short enough that the waiters of a crashed loader go on soon.
	DefaultLockTTL = 5 * time.Second
	// DefaultBeta is XFetch's scale for early refresh: 1, the value the
	// paper shows to be optimal.
	DefaultBeta = 1.0
)

// ErrNotFound is what a loader returns (or wraps) when the record does not
// exist. Fetch caches that for Options.NotFoundTTL and returns it.
var ErrNotFound = errors.New("cache: not found")

// Options configure a Cache. The zero Options are ready to use: every zero
// field takes its default. A negative duration turns its feature off.
type Options struct {
	// TTL is how long a loaded value stays fresh. Zero or negative means
	// DefaultTTL.
	TTL time.Duration
	// NotFoundTTL is how long a loader's ErrNotFound is cached. Zero means
	// DefaultNotFoundTTL; negative turns negative caching off, so every
	// Fetch of a missing record loads.
	NotFoundTTL time.Duration
	// LockTTL is the life of the lock that keeps other processes from
	// loading a key this one is loading, and so the longest a process waits
	// for a loader that died. Make it longer than the slowest load. Zero
	// means DefaultLockTTL; negative turns the lock off, leaving only the
	// single flight inside each process.
	LockTTL time.Duration
	// Beta scales early refresh (XFetch, see the package documentation):
	// larger refreshes hot keys earlier. Zero means DefaultBeta; negative
	// turns early refresh off.
	Beta float64
	// Codec encodes values; nil means JSON.
	Codec Codec
	// Store holds the values; nil means the Client given to New. Locks
	// always go to that Client.
	Store Store
}

// Cache is a cache-aside view of a Store for values of type T. It is safe
// for concurrent use; create one per kind of value and keep it.
type Cache[T any] struct {
	store  Store
	client *zipline.Client
	// locks is client without compression, so that a lock's token is stored
	// as the unlock script compares it.
	locks *zipline.Client
	// direct is set when the values are on client, so that a lock and a
	// value travel in one round trip.
	direct      bool
	codec       Codec
	ttl         time.Duration
	notFoundTTL time.Duration
	lockTTL     time.Duration
	beta        float64

	// now and rand drive the expiry and early refresh decisions; tests
	// replace them. rand returns a number in (0, 1].
	now  func() time.Time
	rand func() float64

	flights group
	stats   counters

	// decoding is store when it keeps decoded values and T's can be shared
	// (keeps): then hits are not decoded again. Nil otherwise.
	decoding decodingStore
}

// New returns a Cache of values of type T stored through c (or
// opts.Store) under opts. It panics if c is nil.
func New[T any](c *zipline.Client, opts Options) *Cache[T] {
	if c == nil {
		panic("cache: New with a nil client")
	}
	ca := &Cache[T]{
		store:       opts.Store,
		client:      c,
		locks:       c.Raw(),
		codec:       opts.Codec,
		ttl:         orDefault(opts.TTL, DefaultTTL),
		notFoundTTL: opts.NotFoundTTL,
		lockTTL:     opts.LockTTL,
		beta:        opts.Beta,
		now:         time.Now,
		rand:        func() float64 { return 1 - mrand.Float64() },
	}
	if ca.store == nil {
		ca.store = c
	}
	ca.direct = ca.store == Store(c)
	if ds, ok := ca.store.(decodingStore); ok && keeps(reflect.TypeFor[T]()) {
		ca.decoding = ds
	}
	if ca.codec == nil {
		ca.codec = JSON{}
	}
	if ca.ttl < 0 {
		ca.ttl = DefaultTTL
	}
	if ca.notFoundTTL == 0 {
		ca.notFoundTTL = DefaultNotFoundTTL
	}
	if ca.lockTTL == 0 {
		ca.lockTTL = DefaultLockTTL
	}
	if ca.beta == 0 {
		ca.beta = DefaultBeta
	}
	return ca
}

func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// Fetch returns the value cached at key, or loads it with load, caches it
// and returns it. Concurrent Fetches of a key that misses share one load in
// this process, and, through a lock key on the server, in the whole fleet
// (see the package documentation).
//
// A load that returns ErrNotFound is cached as such (Options.NotFoundTTL),
// and Fetch returns an error matching ErrNotFound. Other load errors are
// returned and not cached; a load that panics gives a *PanicError. load runs
// on a goroutine of its own, with a context that carries ctx's values and
// ends when every caller waiting for it has given up. A hit close to its
// expiry may start an early refresh (see the package documentation): load
// then runs in the background, with ctx's values, for at most LockTTL.
//
// If the store fails, Fetch loads from the source instead of failing; the
// error shows in Stats.StoreErrors.
func (c *Cache[T]) Fetch(ctx context.Context, key string, load func(context.Context) (T, error)) (T, error) {
	if e, ok := c.lookup(ctx, key); ok {
		if e.notFound {
			c.stats.negativeHits.Add(1)
		} else {
			c.stats.hits.Add(1)
		}
		c.refreshEarly(ctx, key, e, load)
		return c.decode(e)
	}
	if err := ctx.Err(); err != nil {
		var zero T
		return zero, err
	}
	c.stats.misses.Add(1)
	e, err := c.flights.do(ctx, key, func(ctx context.Context, cl *claim) (entry, error) {
		return c.fill(ctx, key, load, cl)
	})
	if err != nil {
		var zero T
		return zero, err
	}
	return c.decode(e)
}

// Set stores v at key for Options.TTL, replacing what is there: for writing
// a value through to the cache when the source changes. A value stored by
// Set has no load time, so it is not refreshed early.
func (c *Cache[T]) Set(ctx context.Context, key string, v T) error {
	payload, err := c.codec.Marshal(v)
	if err != nil {
		return fmt.Errorf("cache: encode: %w", err)
	}
	c.flights.revoke(key)
	err = c.put(ctx, key, entry{expiry: c.now().Add(c.ttl), payload: payload}, c.ttl)
	c.flights.revoke(key) // see Delete
	return err
}

// Delete removes key's cached value or "not found", so that the next Fetch
// loads it: for invalidating the cache when the source changes. A load of
// key under way in this process when Delete is called does not store what
// it loaded (it may predate the change), and Fetches that begin after
// Delete do not wait for it.
func (c *Cache[T]) Delete(ctx context.Context, key string) error {
	// Revoked before the write, so that no load under way stores after it;
	// and after it, for a flight begun while the write was on its way: it
	// may have read the key before the write reached it, and a Fetch that
	// begins after Delete must not join it.
	c.flights.revoke(key)
	_, err := c.store.Del(ctx, key)
	c.flights.revoke(key)
	return err
}

// decode returns e's value.
func (c *Cache[T]) decode(e entry) (T, error) {
	var v T
	if e.notFound {
		return v, ErrNotFound
	}
	if k, ok := e.decoded.(*kept[T]); ok {
		return k.v, k.err
	}
	if err := c.codec.Unmarshal(e.payload, &v); err != nil {
		return v, fmt.Errorf("cache: decode: %w", err)
	}
	return v, nil
}

// lookup reads key's entry, and reports whether it found a fresh one. A
// store error counts as a miss (and in Stats.StoreErrors).
func (c *Cache[T]) lookup(ctx context.Context, key string) (entry, bool) {
	if c.decoding != nil {
		return c.lookupKept(ctx, key)
	}
	b, err := c.store.Get(ctx, key)
	return c.fresh(ctx, b, err)
}

// fresh is lookup's second half: it takes the outcome of a read.
func (c *Cache[T]) fresh(ctx context.Context, b []byte, err error) (entry, bool) {
	if err != nil {
		if !errors.Is(err, zipline.Nil) && ctx.Err() == nil {
			c.stats.storeErrors.Add(1)
		}
		return entry{}, false
	}
	e, ok := decodeEntry(b)
	if !ok || !c.now().Before(e.expiry) {
		return entry{}, false
	}
	return e, true
}

// fill is the body of a flight: it takes the lock (or waits for the process
// that holds it), reads the key once more, and loads only if it is still
// missing.
func (c *Cache[T]) fill(ctx context.Context, key string, load func(context.Context) (T, error), cl *claim) (entry, error) {
	var l *lock
	if c.lockTTL > 0 {
		var (
			e     entry
			found bool
			err   error
		)
		l, e, found, err = c.acquire(ctx, key) // reads the key after taking the lock
		if err != nil || found {
			return e, err
		}
		if l != nil && cl != nil {
			held := l
			cl.holding(func() { c.unlock(ctx, held) })
		}
	}
	if l == nil {
		// Another flight (here, or elsewhere when there is no lock) may have
		// stored the key since this one's caller missed.
		if e, ok := c.lookup(ctx, key); ok {
			return e, nil
		}
	}
	return c.load(ctx, key, load, l, cl)
}

// load runs the loader, stores what it returned (the value, or a "not
// found"), and releases l if it is not nil. It returns the loader's error,
// if any, so that a "not found" goes back to the callers as the loader
// worded it.
func (c *Cache[T]) load(ctx context.Context, key string, load func(context.Context) (T, error), l *lock, cl *claim) (entry, error) {
	c.stats.loads.Add(1)
	start := c.now()
	payload, err := c.call(ctx, load)
	e := entry{payload: payload, delta: c.now().Sub(start)}
	ttl := c.ttl
	var panicked *PanicError
	switch {
	case errors.Is(err, ErrNotFound) && !errors.As(err, &panicked):
		if c.notFoundTTL < 0 {
			c.save(ctx, "", entry{}, 0, l, cl)
			return entry{}, err
		}
		e.notFound, e.payload, ttl = true, nil, c.notFoundTTL
	case err != nil:
		c.stats.loadErrors.Add(1)
		c.save(ctx, "", entry{}, 0, l, cl)
		return entry{}, err
	}
	e.expiry = c.now().Add(ttl)
	c.save(ctx, key, e, ttl, l, cl)
	return e, err
}

// save stores e at key for the store to drop after ttl, unless key is ""
// or cl was revoked (a write of key in this process since the load began),
// and then releases l if it is not nil: in one round trip when the values
// are on the Client. It runs on a context detached from ctx, as the
// callers may all be gone by now: the load is still worth keeping, and a
// lock left behind would make other processes wait out its TTL.
func (c *Cache[T]) save(ctx context.Context, key string, e entry, ttl time.Duration, l *lock, cl *claim) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), unlockTimeout)
	defer cancel()
	if key != "" && cl != nil {
		cl.mu.Lock() // a write that revokes cl waits for this store
		defer cl.mu.Unlock()
		if cl.revoked {
			c.stats.superseded.Add(1)
			key = ""
		}
	}
	if c.direct && key != "" && l != nil {
		b := c.client.Batch()
		b.Set(key, e.encode(), zipline.PX(ttl))
		unlockScript.Queue(b.Raw(), []string{l.key}, l.token)
		if err := b.Exec(ctx); err != nil {
			c.stats.storeErrors.Add(1) // the lock expires by itself
		}
		return
	}
	if key != "" {
		if err := c.put(ctx, key, e, ttl); err != nil {
			c.stats.storeErrors.Add(1)
		}
	}
	if l != nil {
		c.unlock(ctx, l)
	}
}

// call runs the loader and encodes its value, turning a panic in either
// into a *PanicError.
func (c *Cache[T]) call(ctx context.Context, load func(context.Context) (T, error)) (payload []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			payload, err = nil, &PanicError{Value: r, Stack: debug.Stack()}
		}
	}()
	v, err := load(ctx)
	if err != nil {
		return nil, err
	}
	payload, err = c.codec.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("cache: encode: %w", err)
	}
	return payload, nil
}

// put stores e at key, for the store to drop after ttl.
func (c *Cache[T]) put(ctx context.Context, key string, e entry, ttl time.Duration) error {
	return c.store.Set(ctx, key, e.encode(), zipline.PX(ttl))
}

// refreshEarly starts a background refresh of key if XFetch says so (see
// the package documentation), and none is under way in this process.
func (c *Cache[T]) refreshEarly(ctx context.Context, key string, e entry, load func(context.Context) (T, error)) {
	if c.beta < 0 || e.delta <= 0 {
		return
	}
	headStart := time.Duration(float64(e.delta) * c.beta * -math.Log(c.rand()))
	if c.now().Add(headStart).Before(e.expiry) {
		return
	}
	cl := c.flights.startRefresh(key)
	if cl == nil {
		return
	}
	go func() {
		defer c.flights.endRefresh(key)
		timeout := c.lockTTL
		if timeout <= 0 {
			timeout = DefaultLockTTL
		}
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
		defer cancel()
		c.refresh(ctx, key, e.expiry, load, cl)
	}()
}

// refresh reloads key unless another process is refreshing it (it holds the
// lock) or has refreshed it already (the stored expiry moved on).
func (c *Cache[T]) refresh(ctx context.Context, key string, seen time.Time, load func(context.Context) (T, error), cl *claim) {
	var l *lock
	if c.lockTTL > 0 {
		a, err := c.try(ctx, key, rand.Text())
		if err != nil {
			c.storeFailed(ctx)
			return
		}
		if a.lock == nil {
			return // another process is refreshing it
		}
		l = a.lock
		if a.found && a.e.expiry.After(seen) {
			c.unlock(ctx, l)
			return
		}
	} else if e, ok := c.lookup(ctx, key); ok && e.expiry.After(seen) {
		return
	}
	c.stats.earlyRefreshes.Add(1)
	c.load(ctx, key, load, l, cl)
}

// PanicError is the error of a Fetch whose loader (or codec) panicked. The
// panic does not spread to the callers: each gets this error, nothing is
// cached, and the next Fetch loads again.
type PanicError struct {
	Value any    // what the loader panicked with
	Stack []byte // the loader's stack when it panicked
}

func (e *PanicError) Error() string { return fmt.Sprintf("cache: loader panicked: %v", e.Value) }

// Unwrap returns the panic value if it is an error.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// Stats are a Cache's counters since New, for this process.
type Stats struct {
	Hits           uint64 // Fetches that found a fresh value
	NegativeHits   uint64 // Fetches that found a cached "not found"
	Misses         uint64 // Fetches that found nothing fresh and joined or started a load
	Loads          uint64 // loader calls, early refreshes included
	LoadErrors     uint64 // loader calls that failed or panicked (ErrNotFound is not a failure)
	LockWaits      uint64 // loads that found another process loading the key, and waited for it
	EarlyRefreshes uint64 // loads started early by XFetch
	StoreErrors    uint64 // store and lock operations that failed, which Fetch worked around
	// Superseded counts loads not stored because this process wrote or
	// deleted the key (Set, Delete) while they ran.
	Superseded uint64
}

// Stats returns the counters.
func (c *Cache[T]) Stats() Stats {
	s := &c.stats
	return Stats{
		Hits: s.hits.Load(), NegativeHits: s.negativeHits.Load(), Misses: s.misses.Load(),
		Loads: s.loads.Load(), LoadErrors: s.loadErrors.Load(), LockWaits: s.lockWaits.Load(),
		EarlyRefreshes: s.earlyRefreshes.Load(), StoreErrors: s.storeErrors.Load(), Superseded: s.superseded.Load(),
	}
}

type counters struct {
	hits, negativeHits, misses, loads, loadErrors, lockWaits, earlyRefreshes, storeErrors, superseded atomic.Uint64
}
