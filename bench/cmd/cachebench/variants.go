package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	gocache "github.com/go-redis/cache/v9"
	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/cache"
)

// User is the cached record: about 200 bytes of JSON.
type User struct {
	ID      int       `json:"id"`
	Name    string    `json:"name"`
	Email   string    `json:"email"`
	Bio     string    `json:"bio"`
	Plan    string    `json:"plan"`
	Created time.Time `json:"created"`
	// Version counts the record's changes in the database: a read that
	// returns one older than the last change committed before it began is
	// stale.
	Version int64 `json:"version"`
}

func makeUser(id int, version int64) User {
	return User{
		ID:      id,
		Version: version,
		Name:    "User Number " + strconv.Itoa(id),
		Email:   "user" + strconv.Itoa(id) + "@example.com",
		Bio:     "Writes Go at a company that caches its database in Redis, and would rather not think about it.",
		Plan:    "pro",
		Created: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(id) * time.Minute),
	}
}

// database is the simulated source of truth: every load sleeps for its
// latency and is counted.
type database struct {
	latency time.Duration
	loads   atomic.Int64
	ver     *versions
}

// versions are each record's version in the database, and the last one
// whose invalidation of the cache has returned: a read that begins after
// that must not return an older one. They live as long as a variant's
// records on the server, across cells.
type versions struct {
	current, committed []atomic.Int64
}

func newVersions(keys int) *versions {
	return &versions{current: make([]atomic.Int64, keys), committed: make([]atomic.Int64, keys)}
}

// change makes a new version of record id in the database.
func (v *versions) change(id int) int64 { return v.current[id].Add(1) }

// commit records that version's invalidation has returned.
func (v *versions) commit(id int, version int64) {
	for {
		c := v.committed[id].Load()
		if c >= version || v.committed[id].CompareAndSwap(c, version) {
			return
		}
	}
}

func (d *database) load(ctx context.Context, id int) (User, error) {
	d.loads.Add(1)
	version := d.ver.current[id].Load() // the record as the query finds it
	t := time.NewTimer(d.latency)
	defer t.Stop()
	select {
	case <-t.C:
		return makeUser(id, version), nil
	case <-ctx.Done():
		return User{}, ctx.Err()
	}
}

// aside is one cache-aside implementation under test.
type aside interface {
	// Fetch returns user id from the cache, loading it from db on a miss.
	Fetch(ctx context.Context, id int) (User, error)
	// Invalidate removes user id from every tier, as after a write.
	Invalidate(ctx context.Context, id int) error
	// Prefill stores u without touching the database.
	Prefill(ctx context.Context, u User) error
	Close() error
}

// variant is a named way to build an aside.
type variant struct {
	name string
	desc string
	open func(addr string, db *database, ttl time.Duration) (aside, error)
}

var variants = []variant{
	{
		name: "zipline",
		desc: "zipline client (default options) + cache.New[User](c, Options{TTL}); no local tier: every hit is a GET",
		open: openZipline,
	},
	{
		name: "zipline-cached",
		desc: "zipline client with ClientCache{MaxBytes: 128 MiB} + cache with Options{Store: c.Cached(ttl)}: the client-side tier, invalidated by the server",
		open: openZiplineCached,
	},
	{
		name: "zipline-cached-ignoring-key-ttl",
		desc: "as zipline-cached, with Options{Store: c.Cached(ttl).IgnoringKeyTTL()}: a miss sends CLIENT CACHING YES and GET, no PTTL " +
			"(safe here: the cache package's values carry their own expiry)",
		open: openZiplineCachedIgnoringKeyTTL,
	},
	{
		name: "zipline-cached-static",
		desc: "as zipline-cached-ignoring-key-ttl, with Options{LockTTL: -1}: no lock across processes (this process's " +
			"loads of a key are still shared), so a miss costs CLIENT CACHING YES and GET, the load, and SET, as rueidis by hand",
		open: openZiplineCachedStatic,
	},
	{
		name: "goredis-cache",
		desc: "go-redis v9 client (default pool) + go-redis/cache v9 with LocalCache NewTinyLFU(10000, 1m); Once(&Item{Do})",
		open: openGoredisCache,
	},
	{
		name: "rueidis",
		desc: "rueidis client (default options, 128 MiB client-side cache per connection); DoCache(GET, 1m), on nil load and SET EX",
		open: openRueidis,
	},
	{
		name: "rueidis-static-ttl",
		desc: "as rueidis, with DoCache(GET.Cache().ToStaticTTL(), 1m): a miss sends CLIENT CACHING YES and GET, without MULTI, PTTL, EXEC",
		open: openRueidisStaticTTL,
	},
}

func userKey(prefix string, id int) string { return prefix + strconv.Itoa(id) }

// zipline + cache.

type ziplineAside struct {
	c     *zipline.Client
	users *cache.Cache[User]
	db    *database
	// prefix is the variant's own: the zipline variants share a server
	// between cells, and each counts its records' versions apart, so a
	// record one stored must not be read by another.
	prefix string
}

func openZipline(addr string, db *database, ttl time.Duration) (aside, error) {
	c, err := zipline.New(zipline.Options{Addr: addr, Logger: quiet})
	if err != nil {
		return nil, err
	}
	return &ziplineAside{c: c, users: cache.New[User](c, cache.Options{TTL: ttl}), db: db, prefix: "ca:zipline:user:"}, nil
}

// openZiplineCached is openZipline with the client-side cache as the
// cache's store: hits are served in the process, and a write anywhere
// invalidates them (CLIENT TRACKING).
func openZiplineCached(addr string, db *database, ttl time.Duration) (aside, error) {
	c, err := zipline.New(zipline.Options{Addr: addr, Logger: quiet, ClientCache: zipline.ClientCache{MaxBytes: 128 << 20}})
	if err != nil {
		return nil, err
	}
	return &ziplineAside{c: c, users: cache.New[User](c, cache.Options{TTL: ttl, Store: c.Cached(ttl)}), db: db,
		prefix: "ca:zipline-cached:user:"}, nil
}

// openZiplineCachedIgnoringKeyTTL is openZiplineCached with the
// two-command cached read.
func openZiplineCachedIgnoringKeyTTL(addr string, db *database, ttl time.Duration) (aside, error) {
	c, err := zipline.New(zipline.Options{Addr: addr, Logger: quiet, ClientCache: zipline.ClientCache{MaxBytes: 128 << 20}})
	if err != nil {
		return nil, err
	}
	return &ziplineAside{c: c, users: cache.New[User](c, cache.Options{TTL: ttl, Store: c.Cached(ttl).IgnoringKeyTTL()}), db: db,
		prefix: "ca:zipline-cached-ignoring-key-ttl:user:"}, nil
}

// openZiplineCachedStatic is openZiplineCachedIgnoringKeyTTL without the
// lock across processes.
func openZiplineCachedStatic(addr string, db *database, ttl time.Duration) (aside, error) {
	c, err := zipline.New(zipline.Options{Addr: addr, Logger: quiet, ClientCache: zipline.ClientCache{MaxBytes: 128 << 20}})
	if err != nil {
		return nil, err
	}
	return &ziplineAside{c: c, users: cache.New[User](c, cache.Options{TTL: ttl, LockTTL: -1,
		Store: c.Cached(ttl).IgnoringKeyTTL()}), db: db, prefix: "ca:zipline-cached-static:user:"}, nil
}

func (z *ziplineAside) Fetch(ctx context.Context, id int) (User, error) {
	return z.users.Fetch(ctx, userKey(z.prefix, id), func(ctx context.Context) (User, error) {
		return z.db.load(ctx, id)
	})
}

func (z *ziplineAside) Invalidate(ctx context.Context, id int) error {
	return z.users.Delete(ctx, userKey(z.prefix, id))
}

func (z *ziplineAside) Prefill(ctx context.Context, u User) error {
	return z.users.Set(ctx, userKey(z.prefix, u.ID), u)
}

func (z *ziplineAside) Close() error { return z.c.Close() }

// go-redis/cache with its local TinyLFU.

type goredisAside struct {
	rdb   *redis.Client
	cache *gocache.Cache
	db    *database
	ttl   time.Duration
}

func openGoredisCache(addr string, db *database, ttl time.Duration) (aside, error) {
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	if err := rdb.Ping(context.Background()).Err(); err != nil {
		rdb.Close()
		return nil, err
	}
	c := gocache.New(&gocache.Options{Redis: rdb, LocalCache: gocache.NewTinyLFU(10_000, time.Minute)})
	return &goredisAside{rdb: rdb, cache: c, db: db, ttl: ttl}, nil
}

const goredisPrefix = "ca:goredis:user:"

func (g *goredisAside) Fetch(ctx context.Context, id int) (User, error) {
	var u User
	err := g.cache.Once(&gocache.Item{
		Ctx:   ctx,
		Key:   userKey(goredisPrefix, id),
		Value: &u,
		TTL:   g.ttl,
		Do:    func(it *gocache.Item) (any, error) { return g.db.load(it.Ctx, id) },
	})
	return u, err
}

func (g *goredisAside) Invalidate(ctx context.Context, id int) error {
	err := g.cache.Delete(ctx, userKey(goredisPrefix, id))
	if errors.Is(err, gocache.ErrCacheMiss) {
		return nil
	}
	return err
}

func (g *goredisAside) Prefill(ctx context.Context, u User) error {
	return g.cache.Set(&gocache.Item{Ctx: ctx, Key: userKey(goredisPrefix, u.ID), Value: u, TTL: g.ttl, SkipLocalCache: true})
}

func (g *goredisAside) Close() error { return g.rdb.Close() }

// rueidis with DoCache, cache-aside by hand (rueidis has no loader API).

type rueidisAside struct {
	c   rueidis.Client
	db  *database
	ttl time.Duration
	// static: DoCache with ToStaticTTL, without the MULTI/PTTL/EXEC wrapper.
	static bool
}

func openRueidis(addr string, db *database, ttl time.Duration) (aside, error) {
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}})
	if err != nil {
		return nil, err
	}
	return &rueidisAside{c: c, db: db, ttl: ttl}, nil
}

func openRueidisStaticTTL(addr string, db *database, ttl time.Duration) (aside, error) {
	a, err := openRueidis(addr, db, ttl)
	if err != nil {
		return nil, err
	}
	a.(*rueidisAside).static = true
	return a, nil
}

const rueidisPrefix = "ca:rueidis:user:"

func (r *rueidisAside) Fetch(ctx context.Context, id int) (User, error) {
	key := userKey(rueidisPrefix, id)
	cmd := r.c.B().Get().Key(key).Cache()
	if r.static {
		cmd = cmd.ToStaticTTL()
	}
	b, err := r.c.DoCache(ctx, cmd, time.Minute).AsBytes()
	var u User
	switch {
	case err == nil:
		err = json.Unmarshal(b, &u)
		return u, err
	case !rueidis.IsRedisNil(err):
		return u, err
	}
	if u, err = r.db.load(ctx, id); err != nil {
		return u, err
	}
	return u, r.set(ctx, key, u)
}

func (r *rueidisAside) set(ctx context.Context, key string, u User) error {
	b, err := json.Marshal(u)
	if err != nil {
		return err
	}
	return r.c.Do(ctx, r.c.B().Set().Key(key).Value(rueidis.BinaryString(b)).Ex(r.ttl).Build()).Error()
}

func (r *rueidisAside) Invalidate(ctx context.Context, id int) error {
	return r.c.Do(ctx, r.c.B().Del().Key(userKey(rueidisPrefix, id)).Build()).Error()
}

func (r *rueidisAside) Prefill(ctx context.Context, u User) error {
	return r.set(ctx, userKey(rueidisPrefix, u.ID), u)
}

func (r *rueidisAside) Close() error { r.c.Close(); return nil }

// lookupVariants resolves a comma list of names.
func lookupVariants(names []string) ([]variant, error) {
	var out []variant
	for _, n := range names {
		found := false
		for _, v := range variants {
			if v.name == n {
				out, found = append(out, v), true
			}
		}
		if !found {
			return nil, fmt.Errorf("unknown variant %q", n)
		}
	}
	return out, nil
}
