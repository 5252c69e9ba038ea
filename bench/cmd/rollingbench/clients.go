package main

import (
	"context"
	"errors"
	"io"
	"log/slog"

	"github.com/ziplinekv/zipline/bench/setget"

	"github.com/redis/go-redis/v9"
	"github.com/ziplinekv/zipline"
)

// clientDef is one client: how it connects to a cluster and to a Sentinel
// group, and how the report describes it.
type clientDef struct {
	name     string
	desc     string
	cluster  func(ctx context.Context, seeds []string) (setget.Store, error)
	sentinel func(ctx context.Context, master string, sentinels []string) (setget.Store, error)
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

var clientDefs = []clientDef{
	{
		name: "zipline",
		desc: "`zipline.New(zipline.Options{Addrs: seeds})` or `Options{Sentinel: zipline.Sentinel{MasterName, Addrs}}`, " +
			"every other option at its default (logger silenced); `Set`, `Get`",
		cluster: func(ctx context.Context, seeds []string) (setget.Store, error) {
			return ziplineStore(ctx, zipline.Options{Addrs: seeds, Logger: quiet})
		},
		sentinel: func(ctx context.Context, master string, sentinels []string) (setget.Store, error) {
			return ziplineStore(ctx, zipline.Options{Sentinel: zipline.Sentinel{MasterName: master, Addrs: sentinels}, Logger: quiet})
		},
	},
	{
		name: "go-redis",
		desc: "`redis.NewClusterClient(&redis.ClusterOptions{Addrs: seeds})` or `redis.NewFailoverClient(&redis.FailoverOptions{" +
			"MasterName, SentinelAddrs})`, every other option at its default (v9.23.0: retries, backoff and redirects " +
			"as it sets them); `Set(ctx, k, v, 0)`, `Get(ctx, k)`",
		cluster: func(ctx context.Context, seeds []string) (setget.Store, error) {
			return goredisStore(ctx, redis.NewClusterClient(&redis.ClusterOptions{Addrs: seeds}))
		},
		sentinel: func(ctx context.Context, master string, sentinels []string) (setget.Store, error) {
			return goredisStore(ctx, redis.NewFailoverClient(&redis.FailoverOptions{MasterName: master, SentinelAddrs: sentinels}))
		},
	},
}

func (d clientDef) String() string { return d.name }

type ziplineClient struct{ c *zipline.Client }

func ziplineStore(ctx context.Context, o zipline.Options) (setget.Store, error) {
	c, err := zipline.New(o)
	if err != nil {
		return nil, err
	}
	if err := c.Ping(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return ziplineClient{c}, nil
}

func (z ziplineClient) Set(ctx context.Context, k string, v []byte) error { return z.c.Set(ctx, k, v) }
func (z ziplineClient) Close() error                                      { return z.c.Close() }
func (z ziplineClient) Get(ctx context.Context, k string) ([]byte, error) {
	v, err := z.c.Get(ctx, k)
	if errors.Is(err, zipline.Nil) {
		return nil, nil
	}
	return v, err
}

// goredisClient holds a ClusterClient or a FailoverClient's *redis.Client.
type goredisClient struct{ c redis.UniversalClient }

func goredisStore(ctx context.Context, c redis.UniversalClient) (setget.Store, error) {
	if err := c.Ping(ctx).Err(); err != nil {
		c.Close()
		return nil, err
	}
	return goredisClient{c}, nil
}

func (g goredisClient) Set(ctx context.Context, k string, v []byte) error {
	return g.c.Set(ctx, k, v, 0).Err()
}
func (g goredisClient) Close() error { return g.c.Close() }
func (g goredisClient) Get(ctx context.Context, k string) ([]byte, error) {
	v, err := g.c.Get(ctx, k).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	return v, err
}
