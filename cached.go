package zipline

import (
	"context"
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
// key's own time to live on the server. A missing key is cached too (as
// Nil), and invalidated when someone creates it. With the cache off,
// Cached reads go to the server every time.
//
// The bytes a cached read returns are shared with the cache and with
// every other reader of the key: do not modify them.
type Cached struct {
	c   *Client
	ttl time.Duration
}

// Cached returns a view of c whose reads are served from the client-side
// cache, each entry for at most ttl.
func (c *Client) Cached(ttl time.Duration) Cached { return Cached{c: c, ttl: ttl} }

// Get returns the value of key, from the cache when it holds it.
func (v Cached) Get(ctx context.Context, key string) ([]byte, error) {
	cc := v.c.s.cache
	if cc == nil || !v.cacheable(key) {
		return v.c.Get(ctx, key)
	}
	if ent, ok := cc.lookup(key); ok {
		return v.served(ent)
	}
	cc.misses.Add(1)
	vs, err := v.fetch(ctx, []string{key})
	if err != nil {
		return nil, err
	}
	if vs[0] == nil {
		return nil, Nil
	}
	return vs[0], nil
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
// invalidates every cached copy, this client's included.
func (v Cached) Set(ctx context.Context, key string, val []byte, exp ...Expiry) error {
	return v.c.Set(ctx, key, val, exp...)
}

// Del deletes keys on the server (as Client.Del), invalidating their
// cached copies.
func (v Cached) Del(ctx context.Context, keys ...string) (int64, error) {
	return v.c.Del(ctx, keys...)
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
// lifetime is capped by its server one.
func (v Cached) fetch(ctx context.Context, keys []string) ([][]byte, error) {
	c, cc := v.c, v.c.s.cache
	// What each fill depends on is read before the request goes out: a
	// tracking connection lost, or a slot moved (a redirect included),
	// after that point makes the entry invalid from birth.
	type fill struct {
		token  uint64
		via    *direct
		epoch  uint32
		slot   int32
		slotEp uint32
		first  int // index of its GET among the request's commands
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
		if f.via != nil && f.via.tracked != nil && v.cacheable(k) {
			f.cached = true
			f.epoch = f.via.tracked.epoch.Load()
			f.slotEp = cc.slotEpoch(f.slot)
			f.token = cc.reserve(k)
		}
		if optin && f.cached {
			c.encode(r, specCLIENT_CACHING, []arg{str("YES")}, tsStatus, argSpan{}, wireCommand{slot: f.slot})
		}
		f.first = len(r.cmds)
		c.encode(r, specGET, []arg{keyArg(k)}, tsBulk, argSpan{}, wireCommand{slot: f.slot, readOnly: false})
		c.encode(r, specPTTL, []arg{keyArg(k)}, tsInt, argSpan{}, wireCommand{slot: f.slot})
	}
	if err := c.carrier.send(ctx, r); err != nil {
		return nil, err
	}
	out := make([][]byte, len(keys))
	for i, k := range keys {
		f := &fills[i]
		if r.errs != nil && r.errs[f.first] != nil {
			return nil, r.errs[f.first]
		}
		val, pttl := r.replies[f.first], r.replies[f.first+1]
		if err := c.s.replyError(val); err != nil {
			return nil, err
		}
		missing := val.IsNull()
		stored := val.Bytes()
		if f.cached {
			ttl := v.ttl
			if ms := pttl.Int(); pttl.Type() == resp.Integer && ms >= 0 && time.Duration(ms)*time.Millisecond < ttl {
				ttl = time.Duration(ms) * time.Millisecond
			}
			keep := stored
			if cc.cfg.StoreExpanded && c.codec != nil && !missing {
				var err error
				if keep, err = c.codec.decodeValue(stored); err != nil {
					return nil, err
				}
			}
			cc.fill(k, f.token, f.via.tracked, f.epoch, f.slot, f.slotEp, keep, missing, ttl)
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
func (c *Client) expectedVia(slot int32) *direct { return c.s.top.serving(slot) }
