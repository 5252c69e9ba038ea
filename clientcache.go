package zipline

import (
	"errors"
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ziplinekv/zipline/internal/pipe"
	"github.com/ziplinekv/zipline/internal/resp"
)

// CacheStats count what the client-side cache did.
type CacheStats struct {
	Hits, Misses uint64
	// Coalesced counts the misses that waited for a read of the same key
	// already in flight instead of sending their own (Cached.Get).
	Coalesced      uint64
	Invalidations  uint64 // keys the server said changed, and whole flushes
	Evictions      uint64 // entries dropped for room
	Expirations    uint64 // entries reclaimed after their time to live
	Entries, Bytes int64  // held now
}

// clientCache is the client-side cache: a map per shard, each guarded by
// its own lock, so that hits from many goroutines do not contend.
type clientCache struct {
	cfg     ClientCache
	shards  [cacheShards]cacheShard
	seed    maphash.Seed
	budget  int64 // bytes per shard
	conns   []*trackedConn
	connsMu sync.Mutex
	// slots: an epoch per slot, bumped when the slot moves on a cluster
	// (made up front, so a Client that connects later needs no lock).
	slots []atomic.Uint32
	start time.Time // monotonic clock origin for expiries
	stop  chan struct{}
	wg    sync.WaitGroup

	// flightGen moves on when a connection's entries all die (see
	// loseAll): flights begun before then are not joined.
	flightGen atomic.Uint64

	misses, coalesced, invalidations, evictions, expirations atomic.Uint64
	entries, bytes                                           atomic.Int64
}

const cacheShards = 64

type cacheShard struct {
	mu      sync.RWMutex
	entries map[string]*cacheEntry
	pending map[string]*pendingFill // fills in flight, by key
	// flights are the reads of a key in flight that later misses of it
	// join, rather than each sending its own (see Cached.Get). An
	// invalidation takes a key's flight out: a read that starts after it
	// must not be given what was read before it.
	flights map[string]*cacheFlight
	clock   []*cacheEntry // CLOCK ring for eviction
	hand    int
	bytes   int64
	token   uint64
	// hits are counted per shard: one counter for every hit of the client
	// would be a cache line that all cores write on every hit.
	hits atomic.Uint64
	_    [64]byte // keeps the next shard's lock off this shard's counter's line
}

// cacheEntry is one cached reply.
type cacheEntry struct {
	key     string
	value   []byte // as stored (compressed) unless StoreExpanded; nil with missing
	missing bool   // the key did not exist: a cached Nil
	expires int64  // monotonic nanoseconds
	conn    *trackedConn
	epoch   uint32 // conn's epoch at fill
	slot    int32
	slotEp  uint32
	size    int64
	ref     atomic.Bool // CLOCK reference bit
	// pushes is where its reply stood among its connection's pushes
	// (pipe.Call.PushesBefore), if stamped: an invalidation numbered at
	// most this came before the reply, and so before the read.
	pushes  uint32
	stamped bool
	// gone: removed from its shard (set under the shard lock). A reader
	// that found the entry before an invalidation removed it checks this,
	// so it cannot serve what that invalidation killed.
	gone     atomic.Bool
	position int // index in the shard's clock ring
	// decoded is what Cached.GetDecoded's caller made of value, kept so
	// that later hits need not decode again; counted in size once kept.
	decoded atomic.Pointer[decodedValue]
}

// decodedValue is a value decoded from an entry's, with the tag of the
// decoder that made it.
type decodedValue struct {
	tag, val any
}

// trackedConn is one connection with tracking on: what its entries depend
// on.
type trackedConn struct {
	epoch    atomic.Uint32 // bumped when its tracking is lost: its entries die
	lastRead atomic.Int64  // UnixNano: the last proof it is alive
	// pipe numbers its pushes (pipe.Pipe.PushSeq); set by attach.
	pipe atomic.Pointer[pipe.Pipe]
}

// pendingFill is a fill in flight: the read of a key on tc, and what
// invalidations of the key have come since it was reserved.
type pendingFill struct {
	token uint64
	tc    *trackedConn
	// killedAt is the number of the last invalidation of the key on tc
	// (killed set); blind, one whose place against the read is unknown
	// (another connection's, or one without a number).
	killedAt      uint32
	killed, blind bool
}

// kill records an invalidation of the fill's key: numbered seq on tc, if
// known.
func (pf *pendingFill) kill(tc *trackedConn, seq uint32, known bool) {
	if !known || tc != pf.tc {
		pf.blind = true
		return
	}
	pf.killed, pf.killedAt = true, seq
}

// survives reports whether the fill may still be stored, its reply having
// been read at stamp (if stamped): every invalidation since it was
// reserved came before the reply, and so before the read, which saw the
// write it was for. This client's own writes are told apart so: their
// invalidation comes right after their reply, before the reply of a read
// sent after it.
func (pf *pendingFill) survives(stamp uint32, stamped bool) bool {
	return !pf.blind && (!pf.killed || stamped && int32(pf.killedAt-stamp) <= 0)
}

func newClientCache(cfg ClientCache) *clientCache {
	if cfg.MaxStaleness <= 0 {
		cfg.MaxStaleness = DefaultMaxStaleness
	}
	cc := &clientCache{cfg: cfg, seed: maphash.MakeSeed(), budget: max(cfg.MaxBytes/cacheShards, 1),
		start: time.Now(), stop: make(chan struct{}), slots: make([]atomic.Uint32, slotCount)}
	for i := range cc.shards {
		cc.shards[i].entries = map[string]*cacheEntry{}
		cc.shards[i].pending = map[string]*pendingFill{}
		cc.shards[i].flights = map[string]*cacheFlight{}
	}
	cc.wg.Add(1)
	go cc.sweep()
	return cc
}

func (cc *clientCache) shard(key string) *cacheShard {
	return &cc.shards[maphash.String(cc.seed, key)&(cacheShards-1)]
}

// track registers a connection whose reads fill the cache, and sets the
// options that make it track: CLIENT TRACKING on every connect, the
// invalidation handler, and the loss of its entries when it drops. Once the
// pipe exists, attach gives the connection its invalidation backlog.
func (cc *clientCache) track(o *pipe.Options) *trackedConn {
	tc := &trackedConn{}
	cc.connsMu.Lock()
	cc.conns = append(cc.conns, tc)
	cc.connsMu.Unlock()
	args := []string{"CLIENT", "TRACKING", "ON"}
	if cc.cfg.Broadcast {
		args = append(args, "BCAST")
		for _, p := range cc.cfg.Prefixes {
			args = append(args, "PREFIX", p)
		}
	} else {
		args = append(args, "OPTIN")
	}
	prev := o.OnConnect
	o.OnConnect = func(su *pipe.Setup) error {
		if prev != nil {
			if err := prev(su); err != nil {
				return err
			}
		}
		if su.Protocol != 3 {
			return errors.New("zipline: the client-side cache needs RESP3 (Options.Protocol 0 or 3)")
		}
		v, err := su.Do(args...)
		if err == nil && v.IsError() {
			err = serverError(v)
		}
		cc.loseAll(tc) // entries from before this connection are not tracked by it
		return err
	}
	prevLost := o.OnDisconnect
	o.OnDisconnect = func(err error) {
		cc.loseAll(tc)
		if prevLost != nil {
			prevLost(err)
		}
	}
	o.LastRead = &tc.lastRead
	o.Push = append(o.Push, pipe.PushHandler{
		Kinds:  []string{"invalidate"},
		Handle: func(v resp.Value) { cc.invalidate(tc, v) },
		// In order with the replies, on the reader's goroutine: a reply is
		// handed over only after the invalidations before it have done
		// their work, and each one's number (pipe.Pipe.PushSeq) places it
		// against the reads in flight. It only takes a shard's lock.
		Inline: true,
	})
	return tc
}

// attach ties a tracked connection to its pipe, which numbers its
// invalidations.
func (tc *trackedConn) attach(p *pipe.Pipe) { tc.pipe.Store(p) }

// pushSeq is the number of the push being handled, if known.
func (tc *trackedConn) pushSeq() (uint32, bool) {
	if p := tc.pipe.Load(); p != nil {
		return p.PushSeq(), true
	}
	return 0, false
}

// invalidate applies one invalidation push: the keys it names, or all the
// connection's entries when it names none (FLUSHALL, FLUSHDB, or the
// server's tracking table overflowing).
func (cc *clientCache) invalidate(tc *trackedConn, v resp.Value) {
	e := v.Elems()
	if len(e) < 2 || e[1].IsNull() {
		cc.invalidations.Add(1)
		cc.loseAll(tc)
		return
	}
	seq, known := tc.pushSeq()
	for _, k := range e[1].Elems() {
		cc.dropInvalidated(unsafeString(k.Bytes()), tc, seq, known)
		cc.invalidations.Add(1)
	}
}

// dropInvalidated applies the invalidation of key numbered seq on tc: the
// entry read before it goes, the fills in flight learn of it (see
// pendingFill.survives), and the key's flight is detached. key may be a
// view of the push's bytes: it is never stored.
func (cc *clientCache) dropInvalidated(key string, tc *trackedConn, seq uint32, known bool) {
	sh := cc.shard(key)
	sh.mu.Lock()
	if pf := sh.pending[key]; pf != nil {
		pf.kill(tc, seq, known)
	}
	delete(sh.flights, key)
	if ent := sh.entries[key]; ent != nil && !(known && ent.stamped && ent.conn == tc && int32(seq-ent.pushes) <= 0) {
		cc.removeLocked(sh, ent)
	}
	sh.mu.Unlock()
}

// loseAll kills every entry tc filled (its epoch moves on), and detaches
// every flight in flight: which keys they read is not known.
func (cc *clientCache) loseAll(tc *trackedConn) {
	tc.epoch.Add(1)
	cc.flightGen.Add(1)
}

// drop removes key's entry, cancels its fills in flight and detaches its
// flight: for this client's own writes (see Cached.Set), which must not
// wait for the server's invalidation to be read.
func (cc *clientCache) drop(key string) {
	sh := cc.shard(key)
	sh.mu.Lock()
	delete(sh.pending, key)
	delete(sh.flights, key)
	if ent := sh.entries[key]; ent != nil {
		cc.removeLocked(sh, ent)
	}
	sh.mu.Unlock()
}

// cacheFlight is one read of a key that concurrent misses of it share.
type cacheFlight struct {
	done  chan struct{}
	gen   uint64 // cc.flightGen when it started
	value []byte // as the caller wrote it; nil for a missing key
	err   error
}

// join returns the flight reading key, and whether the caller leads it:
// a leader reads and then calls land; the others wait on done.
func (cc *clientCache) join(key string) (*cacheFlight, bool) {
	sh := cc.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	gen := cc.flightGen.Load()
	if f := sh.flights[key]; f != nil && f.gen == gen {
		return f, false
	}
	f := &cacheFlight{done: make(chan struct{}), gen: gen}
	sh.flights[key] = f
	return f, true
}

// land ends a flight with its outcome, and detaches it unless an
// invalidation did first.
func (cc *clientCache) land(key string, f *cacheFlight, value []byte, err error) {
	f.value, f.err = value, err
	sh := cc.shard(key)
	sh.mu.Lock()
	if sh.flights[key] == f {
		delete(sh.flights, key)
	}
	sh.mu.Unlock()
	close(f.done)
}

// lookup returns the live entry for key, if any. It allocates nothing.
func (cc *clientCache) lookup(key string) (*cacheEntry, bool) {
	ent, sh := cc.peek(key)
	if ent == nil || !cc.valid(ent, time.Now()) {
		return nil, false
	}
	if !ent.ref.Load() { // a hot entry's line stays shared: no write per hit
		ent.ref.Store(true)
	}
	sh.hits.Add(1)
	return ent, true
}

// peek returns key's entry, valid or not, or nil, and its shard: unlike
// lookup, it counts no hit and marks no use.
func (cc *clientCache) peek(key string) (*cacheEntry, *cacheShard) {
	sh := cc.shard(key)
	sh.mu.RLock()
	ent := sh.entries[key]
	sh.mu.RUnlock()
	return ent, sh
}

// valid reports whether an entry may be served now: the entry not
// removed, its connection's tracking unbroken since it was filled, not
// expired, proof of life within MaxStaleness, and, on a cluster, its slot
// not moved.
//
// The caller found ent before this check, and an invalidation may have
// removed it (or bumped the epoch, on a loss) since then: invalidations
// are handled on the reader's goroutine before the replies that follow
// them are handed over, so gone and the epoch, read here, show every one
// that came before a reply this caller has seen.
func (cc *clientCache) valid(ent *cacheEntry, now time.Time) bool {
	tc := ent.conn
	return !ent.gone.Load() &&
		tc.epoch.Load() == ent.epoch &&
		int64(now.Sub(cc.start)) < ent.expires &&
		now.UnixNano()-tc.lastRead.Load() < int64(cc.cfg.MaxStaleness) &&
		(ent.slot < 0 || cc.slots[ent.slot].Load() == ent.slotEp)
}

// dead reports whether an entry can never be served again: removed, its
// connection's tracking lost since it was filled, expired, or its slot
// moved. Unlike valid, it leaves out what passes: an invalidation waiting
// for its handler (every entry of the connection waits for it, and most
// are not named by it) and a connection not heard from lately. The sweep
// reclaims the dead; it took the merely waiting for dead, and under a
// steady flow of invalidations dropped thousands of live entries.
func (cc *clientCache) dead(ent *cacheEntry, now time.Time) bool {
	return ent.gone.Load() ||
		ent.conn.epoch.Load() != ent.epoch ||
		int64(now.Sub(cc.start)) >= ent.expires ||
		(ent.slot >= 0 && cc.slots[ent.slot].Load() != ent.slotEp)
}

// reserve records that key is being filled and returns the fill's token:
// an invalidation that arrives before the fill completes cancels it.
func (cc *clientCache) reserve(key string, tc *trackedConn) uint64 {
	sh := cc.shard(key)
	sh.mu.Lock()
	sh.token++
	t := sh.token
	sh.pending[key] = &pendingFill{token: t, tc: tc}
	sh.mu.Unlock()
	return t
}

// fill stores a reply read with tracking on tc, unless the key was
// invalidated after the reply since reserve (see pendingFill.survives) or
// the connection's tracking was lost. stamp is the reply's place among
// the connection's pushes (pipe.Call.PushesBefore), if stamped. ttl is the
// local lifetime: the caller's, capped by the key's own.
func (cc *clientCache) fill(key string, token uint64, tc *trackedConn, epoch uint32, slot int32, slotEp uint32,
	stamp uint32, stamped bool, value []byte, missing bool, ttl time.Duration) {
	if ttl <= 0 || tc.epoch.Load() != epoch {
		return
	}
	ent := &cacheEntry{key: key, value: value, missing: missing, expires: int64(time.Since(cc.start) + ttl), conn: tc, epoch: epoch,
		slot: slot, slotEp: slotEp, pushes: stamp, stamped: stamped, size: int64(len(key)+len(value)) + entryOverhead}
	sh := cc.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if pf := sh.pending[key]; pf == nil || pf.token != token || !pf.survives(stamp, stamped) {
		return // invalidated after its read (or filled again) meanwhile
	}
	delete(sh.pending, key)
	if old := sh.entries[key]; old != nil {
		cc.removeLocked(sh, old)
	}
	for sh.bytes+ent.size > cc.budget && len(sh.clock) > 0 {
		cc.evictLocked(sh)
	}
	if ent.size > cc.budget {
		return // larger than a shard's share: never cached
	}
	ent.position = len(sh.clock)
	sh.clock = append(sh.clock, ent)
	sh.entries[key] = ent
	sh.bytes += ent.size
	cc.entries.Add(1)
	cc.bytes.Add(ent.size)
}

// keepDecoded keeps d beside ent, which a hit just found, and counts size
// more bytes for it in the entry's shard (once: a later value of another
// tag replaces it at no extra count), evicting other entries to make room.
// An entry removed meanwhile, or with no room for d in its shard, keeps
// nothing.
func (cc *clientCache) keepDecoded(ent *cacheEntry, d *decodedValue, size int64) {
	sh := cc.shard(ent.key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if ent.gone.Load() {
		return
	}
	if ent.decoded.Load() == nil {
		if ent.size+size > cc.budget {
			return
		}
		ent.size += size
		sh.bytes += size
		cc.bytes.Add(size)
		for sh.bytes > cc.budget && len(sh.clock) > 0 {
			cc.evictLocked(sh)
		}
		if ent.gone.Load() {
			return
		}
	}
	ent.decoded.Store(d)
}

// entryOverhead approximates an entry's bookkeeping, so that MaxBytes
// bounds memory and not only payload.
const entryOverhead = 128

// evictLocked drops one entry chosen by the CLOCK algorithm: the hand
// skips (and clears) recently used entries.
func (cc *clientCache) evictLocked(sh *cacheShard) {
	for range 2 * len(sh.clock) {
		if sh.hand >= len(sh.clock) {
			sh.hand = 0
		}
		ent := sh.clock[sh.hand]
		if ent.ref.Swap(false) {
			sh.hand++
			continue
		}
		cc.removeLocked(sh, ent)
		cc.evictions.Add(1)
		return
	}
	cc.removeLocked(sh, sh.clock[0])
	cc.evictions.Add(1)
}

// removeLocked takes an entry out of its shard.
func (cc *clientCache) removeLocked(sh *cacheShard, ent *cacheEntry) {
	if ent.gone.Load() {
		return
	}
	ent.gone.Store(true)
	delete(sh.entries, ent.key)
	last := len(sh.clock) - 1
	moved := sh.clock[last]
	sh.clock[ent.position] = moved
	moved.position = ent.position
	sh.clock[last] = nil
	sh.clock = sh.clock[:last]
	sh.bytes -= ent.size
	cc.entries.Add(-1)
	cc.bytes.Add(-ent.size)
}

// sweep reclaims expired and dead entries actively, a few shards per tick,
// so that memory does not wait for the entries to be read again.
func (cc *clientCache) sweep() {
	defer cc.wg.Done()
	t := time.NewTicker(cacheSweepInterval)
	defer t.Stop()
	next := 0
	for {
		select {
		case <-cc.stop:
			return
		case <-t.C:
		}
		now := time.Now()
		for range cacheShards / 8 {
			cc.sweepShard(&cc.shards[next], now)
			next = (next + 1) % cacheShards
		}
	}
}

// sweepShard removes sh's dead entries.
func (cc *clientCache) sweepShard(sh *cacheShard, now time.Time) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	for i := 0; i < len(sh.clock); {
		ent := sh.clock[i]
		if !cc.dead(ent, now) {
			i++
			continue
		}
		cc.removeLocked(sh, ent) // moves the last entry to i
		cc.expirations.Add(1)
	}
}

// cacheSweepInterval: every shard is swept each 8 ticks.
const cacheSweepInterval = 125 * time.Millisecond

// slotEpoch returns a slot's epoch (zero on a single server).
func (cc *clientCache) slotEpoch(slot int32) uint32 {
	if slot < 0 {
		return 0
	}
	return cc.slots[slot].Load()
}

// slotMoved drops, on a cluster, the entries of a slot that moved.
func (cc *clientCache) slotMoved(slot int32) {
	if cc.slots != nil && slot >= 0 && int(slot) < len(cc.slots) {
		cc.slots[slot].Add(1)
	}
}

func (cc *clientCache) stats() CacheStats {
	var hits uint64
	for i := range cc.shards {
		hits += cc.shards[i].hits.Load()
	}
	return CacheStats{Hits: hits, Misses: cc.misses.Load(), Coalesced: cc.coalesced.Load(), Invalidations: cc.invalidations.Load(),
		Evictions: cc.evictions.Load(), Expirations: cc.expirations.Load(), Entries: cc.entries.Load(), Bytes: cc.bytes.Load()}
}

func (cc *clientCache) close() {
	close(cc.stop)
	cc.wg.Wait()
}
