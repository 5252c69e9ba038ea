package zipline

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"time"

	"github.com/ziplinekv/zipline/internal/resp"
)

// Cached is a view of a Client whose reads go through the client-side
// cache (Options.ClientCache): a value read once is served from the
// process, with no round trip, until the server says it changed, it
// expires, or its connection's tracking is lost. Get it from
// Client.Cached; it is a small value, cheap to make per call.
//
// An entry lives no longer than the TTL given to Cached, nor than the
// key's own time to live on the server (see IgnoringKeyTTL, which drops
// that second bound to save a command per read). A missing key is cached
// too (as Nil), and invalidated when someone creates it. With the cache
// off, Cached reads go to the server every time.
//
// A read that misses costs the server three commands per key missed:
// CLIENT CACHING YES, GET and PTTL (in Broadcast mode GET and PTTL, two).
// Through IgnoringKeyTTL it costs one fewer: no PTTL. A hit costs none.
//
// The bytes a cached read returns are shared with the cache and with
// every other reader of the key: do not modify them.
type Cached struct {
	c   *Client
	ttl time.Duration
	// ignoreKeyTTL: do not read the key's PTTL on a miss; the entry lives
	// for ttl unless invalidated.
	ignoreKeyTTL bool
}

// Cached returns a view of c whose reads are served from the client-side
// cache, each entry for at most ttl.
func (c *Client) Cached(ttl time.Duration) Cached { return Cached{c: c, ttl: ttl} }

// IgnoringKeyTTL returns a view like v whose misses do not read the key's
// time to live: a miss sends CLIENT CACHING YES and GET (in Broadcast
// mode, GET alone) instead of CLIENT CACHING YES, GET and PTTL, and the
// entry lives for the TTL given to Cached unless the server invalidates it
// first. Writes, deletions and flushes invalidate it as before.
//
// What is given up is the bound by the key's own expiry. The server
// invalidates a tracked key when it is written, deleted, flushed, or
// expired and deleted; but a key whose time to live has passed is deleted,
// and so invalidated, only when the server's expiry finds it: lazily, when
// something accesses it, or by the active expire cycle, which examines a
// few keys with a TTL per cycle (about 200 a second per database by
// default) and can lag by minutes on a database with many such keys. Until
// that invalidation arrives, an entry read through this view is served
// past its key's expiry, for at most the TTL given to Cached after it was
// read.
//
// So it is safe, and the same as Cached, for keys that have no TTL; and
// for keys that have one, when serving a value for up to that TTL past
// its server-side expiry is acceptable: values that carry their own expiry
// (as the cache package's do, so c.Cached(ttl).IgnoringKeyTTL() is a safe
// cache.Options.Store), or a TTL that is only there to reclaim memory. It
// is not for values whose expiry means something at the instant it passes
// (sessions, locks, rate-limit windows, one-time tokens): read those
// through Cached, or keep the TTL given to Cached below what overstaying
// may cost.
//
// It is a view, like Cached: the choice is made per call site, since it
// depends on the keys read, and it adds nothing to a hit.
func (v Cached) IgnoringKeyTTL() Cached {
	v.ignoreKeyTTL = true
	return v
}

// Get returns the value of key, from the cache when it holds it.
// Concurrent misses of one key share one read (CacheStats.Coalesced),
// unless the key is invalidated while that read is in flight: a Get that
// begins after an invalidation never gets what was read before it.
func (v Cached) Get(ctx context.Context, key string) ([]byte, error) {
	cc := v.c.s.cache
	if cc == nil || !v.cacheable(key) {
		return v.c.Get(ctx, key)
	}
	for {
		if ent, ok := cc.lookup(key); ok {
			return v.served(ent)
		}
		cc.misses.Add(1)
		f, lead := cc.join(key)
		if lead {
			vs, err := v.fetch(ctx, []string{key})
			var val []byte
			if err == nil {
				val = vs[0]
			}
			cc.land(key, f, val, err)
			return flightResult(val, err)
		}
		cc.coalesced.Add(1)
		select {
		case <-f.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if f.err != nil && (errors.Is(f.err, context.Canceled) || errors.Is(f.err, context.DeadlineExceeded)) {
			continue // the leader's context ended, not this caller's: read again
		}
		return flightResult(f.value, f.err)
	}
}

// GetDecoded is Get for a caller that turns the bytes into a value of its
// own (decodes them, say): the result of decode is kept beside the cached
// copy, under tag, so that later hits on that copy return it without
// decoding again, until the copy is invalidated, expires or is evicted. A
// hit whose copy holds what another tag kept decodes anew and keeps its
// own. tag must be comparable: a pointer that names the decoder suits.
//
// What decode returns is shared by every caller that hits the same copy,
// so it must not be modified: a value with no pointers, slices or maps in
// it, or one its callers only read. A value kept is counted in
// ClientCache.MaxBytes as the size of the bytes it came from. decode's
// errors are returned and nothing is kept; a missing key is Nil, as from
// Get, and decode is not called. Misses, and reads with the cache off, call
// decode on every read.
func (v Cached) GetDecoded(ctx context.Context, key string, tag any, decode func([]byte) (any, error)) (any, error) {
	cc := v.c.s.cache
	if cc != nil && !v.cacheable(key) {
		cc = nil
	}
	if cc != nil {
		if ent, ok := cc.lookup(key); ok && !ent.missing {
			if d := ent.decoded.Load(); d != nil && d.tag == tag {
				return d.val, nil
			}
			b, err := v.served(ent)
			if err != nil {
				return nil, err
			}
			return decodeAndKeep(cc, ent, b, tag, decode)
		}
	}
	b, err := v.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	if cc != nil {
		// The read filled the cache: keep what it decodes to beside that
		// copy, if the copy there is still the one b is (not compressed,
		// not replaced).
		if ent, _ := cc.peek(key); ent != nil && len(b) > 0 && len(ent.value) == len(b) && &ent.value[0] == &b[0] {
			return decodeAndKeep(cc, ent, b, tag, decode)
		}
	}
	return decode(b)
}

// decodeAndKeep decodes b, ent's value as served, and keeps the result
// beside ent under tag; a decode error is returned and nothing kept.
func decodeAndKeep(cc *clientCache, ent *cacheEntry, b []byte, tag any, decode func([]byte) (any, error)) (any, error) {
	val, err := decode(b)
	if err != nil {
		return nil, err
	}
	cc.keepDecoded(ent, &decodedValue{tag: tag, val: val}, int64(len(b)))
	return val, nil
}

// flightResult is a read's outcome as Get returns it.
func flightResult(val []byte, err error) ([]byte, error) {
	switch {
	case err != nil:
		return nil, err
	case val == nil:
		return nil, Nil
	}
	return val, nil
}

// MGet returns the values of keys (nil for missing ones), from the cache
// for those it holds and in one round trip for the others.
func (v Cached) MGet(ctx context.Context, keys ...string) ([][]byte, error) {
	cc := v.c.s.cache
	if cc == nil {
		return v.c.MGet(ctx, keys...)
	}
	out := make([][]byte, len(keys))
	var misses []string
	var at []int
	for i, k := range keys {
		if !v.cacheable(k) {
			misses, at = append(misses, k), append(at, i)
			continue
		}
		ent, ok := cc.lookup(k)
		if !ok {
			cc.misses.Add(1)
			misses, at = append(misses, k), append(at, i)
			continue
		}
		b, err := v.served(ent)
		if err != nil && err != Nil {
			return nil, err
		}
		out[i] = b
	}
	if len(misses) == 0 {
		return out, nil
	}
	vs, err := v.fetch(ctx, misses)
	if err != nil {
		return nil, err
	}
	for j, i := range at {
		out[i] = vs[j]
	}
	return out, nil
}

// Set stores val at key on the server (as Client.Set); the server then
// invalidates every cached copy. This client's copy is dropped before Set
// returns, whatever the outcome: a read that follows it in this process
// never finds what was there before, even before the server's
// invalidation has been read.
func (v Cached) Set(ctx context.Context, key string, val []byte, exp ...Expiry) error {
	err := v.c.Set(ctx, key, val, exp...)
	v.dropOwn(key)
	return err
}

// Del deletes keys on the server (as Client.Del), invalidating their
// cached copies; this client's are dropped before it returns, as with Set.
func (v Cached) Del(ctx context.Context, keys ...string) (int64, error) {
	n, err := v.c.Del(ctx, keys...)
	v.dropOwn(keys...)
	return n, err
}

// dropOwn drops this client's copies of keys it has just written.
func (v Cached) dropOwn(keys ...string) {
	if cc := v.c.s.cache; cc != nil {
		for _, k := range keys {
			cc.drop(k)
		}
	}
}

// cacheable: in broadcast mode with prefixes, only keys under them are
// tracked, so only they may be cached.
func (v Cached) cacheable(key string) bool {
	cfg := &v.c.s.cache.cfg
	if !cfg.Broadcast || len(cfg.Prefixes) == 0 {
		return true
	}
	for _, p := range cfg.Prefixes {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

// served returns an entry's value as the caller wrote it.
func (v Cached) served(ent *cacheEntry) ([]byte, error) {
	if ent.missing {
		return nil, Nil
	}
	if vc := v.c.codec; vc != nil && !v.c.s.cache.cfg.StoreExpanded {
		return vc.decodeValue(ent.value)
	}
	return ent.value, nil
}

// fetch reads keys from the server with tracking, fills the cache, and
// returns their values as the caller wrote them (nil for missing keys).
// Each key is read as CLIENT CACHING YES (in OPTIN mode: track the next
// command), GET, PTTL, back to back on one connection, so its local
// lifetime is capped by its server one; with ignoreKeyTTL, and for a key
// that will not be cached, without the PTTL.
func (v Cached) fetch(ctx context.Context, keys []string) ([][]byte, error) {
	c, cc := v.c, v.c.s.cache
	// What each fill depends on is read before the request goes out: a
	// tracking connection lost, or a slot moved (a redirect included),
	// after that point makes the entry invalid from birth.
	type fill struct {
		token  uint64
		via    endpoint
		epoch  uint32
		slot   int32
		slotEp uint32
		first  int // index of its GET among the request's commands
		pttl   int // index of its PTTL, or -1 if not sent
		cached bool
	}
	fills := make([]fill, len(keys))
	r := c.s.newRequest()
	defer r.release()
	optin := !cc.cfg.Broadcast
	for i, k := range keys {
		f := &fills[i]
		f.slot = noSlot
		if c.s.commandTable() != nil {
			f.slot = keySlot(k)
		}
		f.via = c.expectedVia(f.slot)
		if f.via.tracked != nil && v.cacheable(k) {
			f.cached = true
			f.epoch = f.via.tracked.epoch.Load()
			f.slotEp = cc.slotEpoch(f.slot)
			f.token = cc.reserve(k, f.via.tracked)
		}
		if optin && f.cached {
			c.encode(r, specCLIENT_CACHING, []arg{str("YES")}, tsStatus, argSpan{}, wireCommand{slot: f.slot})
		}
		f.first, f.pttl = len(r.cmds), -1
		c.encode(r, specGET, []arg{keyArg(k)}, tsBulk, argSpan{}, wireCommand{slot: f.slot, readOnly: false})
		if f.cached && !v.ignoreKeyTTL {
			f.pttl = len(r.cmds)
			c.encode(r, specPTTL, []arg{keyArg(k)}, tsInt, argSpan{}, wireCommand{slot: f.slot})
		}
	}
	if err := c.carrier.send(ctx, r); err != nil {
		return nil, err
	}
	// Where the replies stood among the connection's invalidations: known
	// when the request went out whole on the connection the fills track.
	var stamp uint32
	var stamped bool
	out := make([][]byte, len(keys))
	for i, k := range keys {
		f := &fills[i]
		if f.via.pipe != nil && r.sentOn == f.via.pipe {
			stamp, stamped = r.call.PushesBefore(), true
		} else {
			stamped = false
		}
		if r.errs != nil && r.errs[f.first] != nil {
			return nil, r.errs[f.first]
		}
		val := r.replies[f.first]
		if err := c.s.replyError(val); err != nil {
			return nil, err
		}
		missing := val.IsNull()
		stored := val.Bytes()
		if f.cached {
			ttl := v.ttl
			if f.pttl >= 0 {
				pttl := r.replies[f.pttl]
				if r.errs != nil && r.errs[f.pttl] != nil {
					ttl = 0 // the key's lifetime is unknown: do not cache
				} else if ms := pttl.Int(); pttl.Type() == resp.Integer && ms >= 0 && time.Duration(ms)*time.Millisecond < ttl {
					ttl = time.Duration(ms) * time.Millisecond
				}
			}
			keep := stored
			switch {
			case missing: // nothing to keep but the fact
			case cc.cfg.StoreExpanded && c.codec != nil:
				var err error
				if keep, err = c.codec.decodeValue(stored); err != nil {
					return nil, err
				}
			case len(keys) > 1:
				// The replies of one request may share one allocation
				// (resp.Reader.ShareNext): an entry keeps bytes of its
				// own, or one entry left in the cache would hold its
				// evicted neighbours' bytes beyond the budget.
				keep = bytes.Clone(stored)
			}
			cc.fill(k, f.token, f.via.tracked, f.epoch, f.slot, f.slotEp, stamp, stamped, keep, missing, ttl)
		}
		if missing {
			continue
		}
		if c.codec != nil {
			b, err := c.codec.decodeValue(stored)
			if err != nil {
				return nil, err
			}
			out[i] = b
		} else {
			out[i] = stored
		}
	}
	return out, nil
}

// expectedVia is the server connection a read of slot goes to now: the one
// server's, or on a cluster the slot primary's.
func (c *Client) expectedVia(slot int32) endpoint { return c.s.top.serving(slot) }
