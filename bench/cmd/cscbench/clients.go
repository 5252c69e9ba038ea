package main

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"github.com/ziplinekv/zipline"
)

// getFunc is one cached read: the value's length.
type getFunc func(ctx context.Context, key string) (int, error)

// client is one client-side cache under test.
type client struct {
	name, desc string
	open       func(addr string) (*opened, error)
}

// opened is a connected client: its cached read, its count of reads that
// missed the cache (cumulative), and how to close it.
type opened struct {
	get    getFunc
	misses func() uint64
	close  func()
}

// cacheBytes is every client's cache size: rueidis's default per connection.
const cacheBytes = 128 << 20

// ttl is the local lifetime asked for, far longer than a cell.
const ttl = time.Minute

var clients = []*client{
	{
		name: "zipline",
		desc: "zipline.New(Options{Addr, ClientCache: {MaxBytes: 128 MiB}}) (RESP3, tracking OPTIN); " +
			"cv := c.Cached(time.Minute) once, then cv.Get(ctx, k) []byte (shared with the cache, not copied); " +
			"misses from c.Stats().Cache.Misses",
		open: openZipline,
	},
	{
		name: "rueidis",
		desc: "rueidis.NewClient(ClientOption{InitAddress}) (RESP3, CacheSizeEachConn 128 MiB by default); " +
			"c.DoCache(ctx, c.B().Get().Key(k).Cache(), time.Minute).ToString(), building the command each call as its " +
			"docs show; a miss is a result whose IsCacheHit() is false",
		open: openRueidis,
	},
	{
		name: "goredis",
		desc: "go-redis v9 redis.NewClient(&Options{Addr, Protocol: 3, ClientSideCacheConfig: &{MaxMemoryBytes: 128 MiB}}) " +
			"(its experimental client-side cache: every allow-listed read command, GET included, goes through it); " +
			"c.Get(ctx, k).Result() string; misses from c.CSCStats().Misses",
		open: openGoredis,
	},
}

// extraClients are the two-command forms of a cached read. A hit costs
// what their base form's does, so they are not timed unless -clients names
// them; their misses are counted with the others' (see countCommands).
var extraClients = []*client{
	{
		name: "zipline-ignoring-key-ttl",
		desc: "as zipline, with cv := c.Cached(time.Minute).IgnoringKeyTTL(): a miss sends CLIENT CACHING YES and GET, no PTTL",
		open: openZiplineIgnoringKeyTTL,
	},
	{
		name: "rueidis-static-ttl",
		desc: "as rueidis, with c.B().Get().Key(k).Cache().ToStaticTTL(): a miss sends CLIENT CACHING YES and GET, " +
			"without MULTI, PTTL and EXEC",
		open: openRueidisStaticTTL,
	},
}

// allClients are every client cscbench knows, timed by default or not.
var allClients = append(append([]*client{}, clients...), extraClients...)

func clientName(c *client) string { return c.name }

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func openZipline(addr string) (*opened, error) { return openZiplineView(addr, false) }

func openZiplineIgnoringKeyTTL(addr string) (*opened, error) { return openZiplineView(addr, true) }

func openZiplineView(addr string, ignoreKeyTTL bool) (*opened, error) {
	c, err := zipline.New(zipline.Options{Addr: addr, Logger: quiet, ClientCache: zipline.ClientCache{MaxBytes: cacheBytes}})
	if err != nil {
		return nil, err
	}
	cv := c.Cached(ttl)
	if ignoreKeyTTL {
		cv = cv.IgnoringKeyTTL()
	}
	return &opened{
		get: func(ctx context.Context, key string) (int, error) {
			v, err := cv.Get(ctx, key)
			return len(v), err
		},
		misses: func() uint64 { return c.Stats().Cache.Misses },
		close:  func() { c.Close() },
	}, nil
}

func openRueidis(addr string) (*opened, error) { return openRueidisForm(addr, false) }

func openRueidisStaticTTL(addr string) (*opened, error) { return openRueidisForm(addr, true) }

func openRueidisForm(addr string, static bool) (*opened, error) {
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}})
	if err != nil {
		return nil, err
	}
	var misses atomic.Uint64
	return &opened{
		get: func(ctx context.Context, key string) (int, error) {
			cmd := c.B().Get().Key(key).Cache()
			if static {
				cmd = cmd.ToStaticTTL()
			}
			r := c.DoCache(ctx, cmd, ttl)
			if !r.IsCacheHit() {
				misses.Add(1)
			}
			s, err := r.ToString()
			return len(s), err
		},
		misses: misses.Load,
		close:  c.Close,
	}, nil
}

func openGoredis(addr string) (*opened, error) {
	c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 3,
		ClientSideCacheConfig: &redis.ClientSideCacheConfig{MaxMemoryBytes: cacheBytes}})
	if err := c.Ping(context.Background()).Err(); err != nil {
		c.Close()
		return nil, err
	}
	return &opened{
		get: func(ctx context.Context, key string) (int, error) {
			s, err := c.Get(ctx, key).Result()
			return len(s), err
		},
		misses: func() uint64 { return c.CSCStats().Misses },
		close:  func() { c.Close() },
	}, nil
}
