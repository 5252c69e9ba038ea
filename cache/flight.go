package cache

import (
	"context"
	"sync"
)

// group runs at most one fill per key at a time in this process, and hands
// its result to every caller that asked for the key meanwhile. Unlike
// x/sync/singleflight, a caller can stop waiting when its context ends, and
// the fill runs on a goroutine of its own with a context that ends only when
// every caller has stopped waiting. The zero group is ready to use.
type group struct {
	mu sync.Mutex
	m  map[string]*flight
	// refreshing holds the keys with an early refresh under way, which has
	// no callers waiting and so is not a flight, and its claim.
	refreshing map[string]*claim
}

// claim is a load's right to store what it loaded. A write of the key in
// this process (Cache.Set, Cache.Delete) revokes the claims of the loads
// under way before it goes to the store: what they loaded may predate the
// write, and stored after it would stay until its TTL. A load holds its
// claim's lock while it stores, so a write that revokes it goes after.
type claim struct {
	mu      sync.Mutex
	revoked bool
	// release, set while the load holds the key's lock across processes,
	// frees it: a revoked load will not store, so the load that follows
	// the write need not wait for it to finish.
	release func()
}

// revoke takes cl's right to store away, once any store under way is
// done, and frees the lock it holds, if any.
func (cl *claim) revoke() {
	cl.mu.Lock()
	cl.revoked = true
	release := cl.release
	cl.release = nil
	cl.mu.Unlock()
	if release != nil {
		go release()
	}
}

// holding records that the load holds a lock that release frees; if the
// claim was revoked already, it frees it at once.
func (cl *claim) holding(release func()) {
	cl.mu.Lock()
	revoked := cl.revoked
	if !revoked {
		cl.release = release
	}
	cl.mu.Unlock()
	if revoked {
		go release()
	}
}

// flight is one fill in progress.
type flight struct {
	done    chan struct{} // closed when e and err are set
	e       entry
	err     error
	waiters int // guarded by group.mu
	cancel  context.CancelFunc
	claim   claim
}

// do returns the result of fill for key, starting it unless a fill for key
// is already running, in which case it waits for that one. fill gets a
// context that keeps ctx's values but not its cancellation: it ends when the
// last caller waiting for the flight gives up. fill must not panic.
func (g *group) do(ctx context.Context, key string, fill func(context.Context, *claim) (entry, error)) (entry, error) {
	g.mu.Lock()
	f, ok := g.m[key]
	if !ok {
		if g.m == nil {
			g.m = make(map[string]*flight)
		}
		fctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		f = &flight{done: make(chan struct{}), cancel: cancel}
		g.m[key] = f
		go g.run(fctx, key, f, fill)
	}
	f.waiters++
	g.mu.Unlock()

	select {
	case <-f.done:
		return f.e, f.err
	case <-ctx.Done():
	}
	g.mu.Lock()
	f.waiters--
	if f.waiters == 0 {
		// Nobody wants the result any more: stop the fill, and let the
		// next caller start a fresh one rather than join a cancelled one.
		f.cancel()
		if g.m[key] == f {
			delete(g.m, key)
		}
	}
	g.mu.Unlock()
	return entry{}, ctx.Err()
}

func (g *group) run(ctx context.Context, key string, f *flight, fill func(context.Context, *claim) (entry, error)) {
	defer f.cancel()
	e, err := fill(ctx, &f.claim)
	g.mu.Lock()
	f.e, f.err = e, err
	if g.m[key] == f {
		delete(g.m, key)
	}
	g.mu.Unlock()
	close(f.done)
}

// waiting returns how many callers wait for key's flight (for tests).
func (g *group) waiting(key string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	if f, ok := g.m[key]; ok {
		return f.waiters
	}
	return 0
}

// isRefreshing reports whether a refresh of key is under way (for tests).
func (g *group) isRefreshing(key string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	_, ok := g.refreshing[key]
	return ok
}

// startRefresh marks key as being refreshed and returns the refresh's
// claim, or nil if a refresh was under way already.
func (g *group) startRefresh(key string) *claim {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.refreshing[key]; ok {
		return nil
	}
	if g.refreshing == nil {
		g.refreshing = make(map[string]*claim)
	}
	cl := &claim{}
	g.refreshing[key] = cl
	return cl
}

// revoke revokes the claims of key's load and refresh under way, if any,
// and takes its flight out of the map, so that the Fetches that begin from
// now on start a new one rather than join it: a Fetch that begins after a
// write must not be handed what was read before it. A flight out of the
// map is out of reach of later revokes: its claim is revoked here or never.
func (g *group) revoke(key string) {
	g.mu.Lock()
	f := g.m[key]
	r := g.refreshing[key]
	g.mu.Unlock()
	if f != nil {
		// Revoked before it leaves the map: its claim waits for a store
		// under way, and a revoke that comes meanwhile must find the
		// flight, and wait for that store too, rather than send its write
		// while the store is still on its way.
		f.claim.revoke()
		g.mu.Lock()
		if g.m[key] == f {
			delete(g.m, key)
		}
		g.mu.Unlock()
	}
	if r != nil {
		r.revoke()
	}
}

// endRefresh clears the mark set by startRefresh.
func (g *group) endRefresh(key string) {
	g.mu.Lock()
	delete(g.refreshing, key)
	g.mu.Unlock()
}
