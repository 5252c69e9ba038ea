package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"github.com/ziplinekv/zipline"
)

// writer is a client under test, connected to a Sentinel group.
type writer interface {
	Set(ctx context.Context, key string, val []byte) error
	Close() error
}

// clientDef is one client: how it is made and how the report describes it.
type clientDef struct {
	name string
	desc string
	// module is the Go module whose version the report prints.
	module string
	dial   func(ctx context.Context, master string, sentinels []string) (writer, error)
}

var clientDefs = []clientDef{
	{
		name:   "zipline",
		module: "github.com/ziplinekv/zipline",
		desc: "`zipline.New(zipline.Options{Sentinel: zipline.Sentinel{MasterName, Addrs}})`, every other option " +
			"at its default; `Set(ctx, k, v)`",
		dial: func(ctx context.Context, master string, sentinels []string) (writer, error) {
			c, err := zipline.New(zipline.Options{Sentinel: zipline.Sentinel{MasterName: master, Addrs: sentinels}})
			if err != nil {
				return nil, err
			}
			// zipline.New may connect lazily: make sure it reached the
			// primary before the load starts, as the others do below.
			if err := c.Ping(ctx); err != nil {
				c.Close()
				return nil, err
			}
			return ziplineWriter{c}, nil
		},
	},
	{
		name:   "go-redis",
		module: "github.com/redis/go-redis/v9",
		desc: "`redis.NewFailoverClient(&redis.FailoverOptions{MasterName, SentinelAddrs})`, every other option at its " +
			"default (MaxRetries 0 → 3 retries with 10 ms-1 s backoff, pool of 10 × GOMAXPROCS, ReadTimeout and WriteTimeout 5 s, " +
			"ContextTimeoutEnabled false); `Set(ctx, k, v, 0).Err()`",
		dial: func(ctx context.Context, master string, sentinels []string) (writer, error) {
			c := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: master, SentinelAddrs: sentinels})
			if err := c.Ping(ctx).Err(); err != nil {
				c.Close()
				return nil, err
			}
			return goredisWriter{c}, nil
		},
	},
	{
		name:   "rueidis",
		module: "github.com/redis/rueidis",
		desc: "`rueidis.NewClient(rueidis.ClientOption{InitAddress: sentinels, Sentinel: rueidis.SentinelOption{MasterSet}})`, " +
			"every other option at its default (auto-pipelining; SET is not retried; no periodic topology refresh); " +
			"`Do(ctx, B().Set().Key(k).Value(v).Build()).Error()`",
		dial: func(ctx context.Context, master string, sentinels []string) (writer, error) {
			c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: sentinels,
				Sentinel: rueidis.SentinelOption{MasterSet: master}})
			if err != nil {
				return nil, err
			}
			if err := c.Do(ctx, c.B().Ping().Build()).Error(); err != nil {
				c.Close()
				return nil, err
			}
			return rueidisWriter{c}, nil
		},
	},
}

func clientNames() string {
	var n []string
	for _, d := range clientDefs {
		n = append(n, d.name)
	}
	return strings.Join(n, ",")
}

func pickClients(list string) ([]clientDef, error) {
	var out []clientDef
	for name := range strings.SplitSeq(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		found := false
		for _, d := range clientDefs {
			if d.name == name {
				out, found = append(out, d), true
			}
		}
		if !found {
			return nil, fmt.Errorf("unknown client %q (known: %s)", name, clientNames())
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no client")
	}
	return out, nil
}

type ziplineWriter struct{ c *zipline.Client }

func (w ziplineWriter) Set(ctx context.Context, k string, v []byte) error { return w.c.Set(ctx, k, v) }
func (w ziplineWriter) Close() error                                      { return w.c.Close() }

type goredisWriter struct{ c *redis.Client }

func (w goredisWriter) Set(ctx context.Context, k string, v []byte) error {
	return w.c.Set(ctx, k, v, 0).Err()
}
func (w goredisWriter) Close() error { return w.c.Close() }

type rueidisWriter struct{ c rueidis.Client }

func (w rueidisWriter) Set(ctx context.Context, k string, v []byte) error {
	return w.c.Do(ctx, w.c.B().Set().Key(k).Value(rueidis.BinaryString(v)).Build()).Error()
}
func (w rueidisWriter) Close() error { w.c.Close(); return nil }
