package cache

import (
	"context"
	"crypto/rand"
	mrand "math/rand/v2"
	"time"

	"github.com/ziplinekv/zipline"
)

// lockSuffix is appended to a value's key to name its lock.
const lockSuffix = ":lock"

// How a waiter polls for the value while another process holds the lock:
// the first poll after pollMin, each next one twice as late, up to pollMax,
// with jitter so that waiters in many processes do not poll in step.
const (
	pollMin = time.Millisecond
	pollMax = 32 * time.Millisecond
)

// unlockTimeout bounds the release of a lock (and the store of a loaded
// value) once the callers are gone: they run on a context detached from
// theirs, since a load that was done is worth keeping and a lock left
// behind would make the other processes wait out its TTL.
const unlockTimeout = time.Second

// unlockScript deletes the lock only if it still holds the token: a holder
// whose lock expired must not free the lock of the process that took it
// next. Its one key is declared, as Script.Run requires.
var unlockScript = zipline.NewScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`)

// lock is a held lock key.
type lock struct{ key, token string }

// tryLock tries to take key's lock (SET NX PX), and reads the lock's token
// in the same round trip: on failure it returns the holder's token ("" if
// the lock vanished in between).
func (c *Cache[T]) tryLock(ctx context.Context, key, token string) (held bool, holder string, err error) {
	b := c.locks.Batch()
	set := b.SetNX(key+lockSuffix, []byte(token), zipline.PX(c.lockTTL))
	cur := b.Get(key + lockSuffix)
	if err := b.Exec(ctx); err != nil {
		return false, "", err
	}
	if set.Val() {
		return true, token, nil
	}
	return false, string(cur.Val()), nil
}

// acquire takes key's lock, waiting while another process holds it. It
// returns the lock when it got it; or the entry, when the holder stored one
// meanwhile; or neither when the lock cannot be had (the server failed, or a
// holder kept it longer than LockTTL), and the caller loads without it.
func (c *Cache[T]) acquire(ctx context.Context, key string) (*lock, entry, bool, error) {
	token := rand.Text()
	held, holder, err := c.tryLock(ctx, key, token)
	if err != nil {
		return nil, entry{}, false, c.storeFailed(ctx)
	}
	if held {
		return &lock{key + lockSuffix, token}, entry{}, false, nil
	}
	c.stats.lockWaits.Add(1)
	since := time.Now()
	timer := time.NewTimer(0)
	defer timer.Stop()
	delay := pollMin
	for {
		// Jitter of ±25%, so that waiters in many processes spread out.
		timer.Reset(delay*3/4 + mrand.N(delay/2+1))
		select {
		case <-ctx.Done():
			return nil, entry{}, false, ctx.Err()
		case <-timer.C:
		}
		if e, ok := c.lookup(ctx, key); ok {
			return nil, e, true, nil
		}
		held, h, err := c.tryLock(ctx, key, token)
		switch {
		case err != nil:
			return nil, entry{}, false, c.storeFailed(ctx)
		case held:
			return &lock{key + lockSuffix, token}, entry{}, false, nil
		case h != holder:
			holder, since = h, time.Now() // a new holder: its lock is at most LockTTL old
		case time.Since(since) > c.lockTTL:
			return nil, entry{}, false, nil // a lock that does not expire: ignore it
		}
		delay = min(2*delay, pollMax, max(c.lockTTL/4, pollMin))
	}
}

// lockNow takes key's lock if it is free, and returns nil if it is not (or
// the server failed).
func (c *Cache[T]) lockNow(ctx context.Context, key string) *lock {
	token := rand.Text()
	held, _, err := c.tryLock(ctx, key, token)
	if err != nil {
		c.storeFailed(ctx)
		return nil
	}
	if !held {
		return nil
	}
	return &lock{key + lockSuffix, token}
}

// unlock releases l if this process still holds it.
func (c *Cache[T]) unlock(ctx context.Context, l *lock) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), unlockTimeout)
	defer cancel()
	if _, err := unlockScript.Run(ctx, c.locks, []string{l.key}, l.token); err != nil {
		c.stats.storeErrors.Add(1) // the lock expires by itself
	}
}

// storeFailed counts a failed store or lock operation, and returns the
// error the caller must stop with: ctx's, if it ended; nil otherwise, as
// the Cache then works without the store.
func (c *Cache[T]) storeFailed(ctx context.Context) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	c.stats.storeErrors.Add(1)
	return nil
}
