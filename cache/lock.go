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

// attempt is the outcome of one try at a key's lock.
type attempt struct {
	lock   *lock  // the lock, if this try took it
	holder string // otherwise the holder's token ("" if the lock vanished meanwhile)
	e      entry  // the value read after the try
	found  bool   // whether e is a fresh value
}

// try takes key's lock if it is free (SET NX PX), reads the lock's token,
// and then reads the value: all in one round trip when the values are on
// the Client, else in two. Reading the value after taking the lock closes
// the race with a process that stored it and released the lock just
// before.
func (c *Cache[T]) try(ctx context.Context, key, token string) (attempt, error) {
	lk := key + lockSuffix
	b := c.client.Batch()
	raw := b.Raw() // the token is compared as stored
	set := raw.SetNX(lk, []byte(token), zipline.PX(c.lockTTL))
	cur := raw.Get(lk)
	var val *zipline.Future[[]byte]
	if c.direct {
		val = b.Get(key)
	}
	if err := b.Exec(ctx); err != nil {
		return attempt{}, err
	}
	var a attempt
	if set.Val() {
		a.lock = &lock{lk, token}
	} else {
		a.holder = string(cur.Val())
	}
	if c.direct {
		v, err := val.Result()
		a.e, a.found = c.fresh(ctx, v, err)
	} else {
		a.e, a.found = c.lookup(ctx, key)
	}
	return a, nil
}

// acquire takes key's lock, waiting while another process holds it. It
// returns the lock when it got it; or the entry, when the holder stored one
// meanwhile; or neither when the lock cannot be had (the server failed, or a
// holder kept it longer than LockTTL), and the caller loads without it.
func (c *Cache[T]) acquire(ctx context.Context, key string) (*lock, entry, bool, error) {
	token := rand.Text()
	var (
		holder string
		since  time.Time
		timer  *time.Timer
		delay  = pollMin
	)
	for i := 0; ; i++ {
		a, err := c.try(ctx, key, token)
		switch {
		case err != nil:
			return nil, entry{}, false, c.storeFailed(ctx)
		case a.found:
			if a.lock != nil {
				c.unlock(ctx, a.lock) // taken just after the value was stored
			}
			return nil, a.e, true, nil
		case a.lock != nil:
			return a.lock, entry{}, false, nil
		case i == 0:
			c.stats.lockWaits.Add(1)
			holder, since = a.holder, time.Now()
			timer = time.NewTimer(time.Hour)
			defer timer.Stop()
		case a.holder != holder:
			holder, since = a.holder, time.Now() // a new holder: its lock is at most LockTTL old
		case time.Since(since) > c.lockTTL:
			return nil, entry{}, false, nil // a lock that does not expire: ignore it
		}
		// Jitter of ±25%, so that waiters in many processes spread out.
		timer.Reset(delay*3/4 + mrand.N(delay/2+1))
		select {
		case <-ctx.Done():
			return nil, entry{}, false, ctx.Err()
		case <-timer.C:
		}
		delay = min(2*delay, pollMax, max(c.lockTTL/4, pollMin))
	}
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
