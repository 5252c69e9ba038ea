package main

import (
	"context"
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
			return setget.Zipline(ctx, zipline.Options{Addrs: seeds, Logger: quiet})
		},
		sentinel: func(ctx context.Context, master string, sentinels []string) (setget.Store, error) {
			return setget.Zipline(ctx, zipline.Options{Sentinel: zipline.Sentinel{MasterName: master, Addrs: sentinels}, Logger: quiet})
		},
	},
	{
		name: "go-redis",
		desc: "`redis.NewClusterClient(&redis.ClusterOptions{Addrs: seeds})` or `redis.NewFailoverClient(&redis.FailoverOptions{" +
			"MasterName, SentinelAddrs})`, every other option at its default (v9.23.0: retries, backoff and redirects " +
			"as it sets them); `Set(ctx, k, v, 0)`, `Get(ctx, k)`",
		cluster: func(ctx context.Context, seeds []string) (setget.Store, error) {
			return setget.GoRedis(ctx, redis.NewClusterClient(&redis.ClusterOptions{Addrs: seeds}))
		},
		sentinel: func(ctx context.Context, master string, sentinels []string) (setget.Store, error) {
			return setget.GoRedis(ctx, redis.NewFailoverClient(&redis.FailoverOptions{MasterName: master, SentinelAddrs: sentinels}))
		},
	},
}

func (d clientDef) String() string { return d.name }
