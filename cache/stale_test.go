package cache

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ziplinekv/zipline"
)

// Never stale under writes: workers read records through the cache while
// others change them in the source and invalidate the cache, as an
// application does after a write. A read that begins after a change's
// invalidation returned never gets a version older than that change, with
// the values on the Client and in its client-side tier, with and without
// the lock across processes.
func TestNeverStaleUnderWrites(t *testing.T) {
	for _, tier := range []string{"client", "cached"} {
		for _, lockTTL := range []time.Duration{0, -1} {
			t.Run(fmt.Sprintf("%s/lock=%v", tier, lockTTL >= 0), func(t *testing.T) {
				srv := newServer(t)
				var c *zipline.Client
				var store Store
				if tier == "cached" {
					c = newClient(t, srv.Addr, func(o *zipline.Options) { o.ClientCache = zipline.ClientCache{MaxBytes: 8 << 20} })
					store = c.Cached(time.Minute).IgnoringKeyTTL()
				} else {
					c = newClient(t, srv.Addr)
				}
				type rec struct{ V int64 }
				const keys = 20
				var current, committed [keys]atomic.Int64
				recs := New[rec](c, Options{TTL: time.Minute, LockTTL: lockTTL, Store: store})
				ctx := testCtx(t, 60*time.Second)
				var stale, reads atomic.Int64

				var wg sync.WaitGroup
				deadline := time.Now().Add(2 * time.Second)
				for w := range 16 {
					wg.Go(func() {
						rng := rand.New(rand.NewPCG(uint64(w), 1))
						for time.Now().Before(deadline) {
							id := rng.IntN(keys)
							key := fmt.Sprintf("rec:%d", id)
							if rng.IntN(10) == 0 {
								v := current[id].Add(1)
								if err := recs.Delete(ctx, key); err != nil {
									t.Error(err)
									return
								}
								for c := committed[id].Load(); c < v && !committed[id].CompareAndSwap(c, v); c = committed[id].Load() {
								}
							}
							floor := committed[id].Load()
							r, err := recs.Fetch(ctx, key, func(context.Context) (rec, error) {
								v := current[id].Load()
								time.Sleep(time.Duration(rng.IntN(500)) * time.Microsecond) // the query's time
								return rec{v}, nil
							})
							if err != nil {
								t.Error(err)
								return
							}
							reads.Add(1)
							if r.V < floor {
								stale.Add(1)
							}
						}
					})
				}
				wg.Wait()
				t.Logf("%d reads, %d stale; %+v", reads.Load(), stale.Load(), recs.Stats())
				if stale.Load() > 0 {
					t.Errorf("%d of %d reads returned a version older than one whose invalidation had returned", stale.Load(), reads.Load())
				}
			})
		}
	}
}
