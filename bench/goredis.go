package bench

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

func init() {
	Register(Factory{
		Name:  "goredis",
		Desc:  "go-redis v9 redis.NewClient with default options (pool of 10×GOMAXPROCS conns); Get(ctx,k).Result()",
		Order: orderPeer,
		New: func(addr string, _ int) (Client, error) {
			c, err := dialGoredis(addr)
			if err != nil {
				return nil, err
			}
			return goredisClient{c: c}, nil
		},
	})
	Register(Factory{
		Name:  "goredis-ap",
		Desc:  "go-redis v9 client.AutoPipeline() with its default (blocking) options; ap.Get(ctx,k).Result()",
		Order: orderPeer,
		New: func(addr string, _ int) (Client, error) {
			c, err := dialGoredis(addr)
			if err != nil {
				return nil, err
			}
			return autoPipelined(c)
		},
	})
}

// dialGoredis returns a go-redis client with default options, checked with a
// PING so that a bad address fails here rather than in the first cell.
func dialGoredis(addr string) (*redis.Client, error) {
	c := redis.NewClient(&redis.Options{Addr: addr})
	if err := c.Ping(context.Background()).Err(); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// autoPipelined returns the adapter over c's AutoPipeliner; closing it
// closes both. c is a *redis.Client or a *redis.ClusterClient.
func autoPipelined(c interface {
	AutoPipeline() (*redis.AutoPipeliner, error)
	Close() error
}) (goredisClient, error) {
	ap, err := c.AutoPipeline()
	if err != nil {
		c.Close()
		return goredisClient{}, err
	}
	return goredisClient{c: ap, close: func() error {
		err := ap.Close()
		if cerr := c.Close(); err == nil {
			err = cerr
		}
		return err
	}}, nil
}

// goredisCmds is the part of redis.Cmdable the adapter uses; both *Client and
// *AutoPipeliner implement it.
type goredisCmds interface {
	Get(ctx context.Context, key string) *redis.StringCmd
	Set(ctx context.Context, key string, value any, expiration time.Duration) *redis.StatusCmd
	Close() error
}

type goredisClient struct {
	c     goredisCmds
	close func() error
}

func (g goredisClient) Get(ctx context.Context, key string) (int, error) {
	s, err := g.c.Get(ctx, key).Result()
	return len(s), err
}

func (g goredisClient) Set(ctx context.Context, key string, val []byte) error {
	return g.c.Set(ctx, key, val, 0).Err()
}

func (g goredisClient) Close() error {
	if g.close != nil {
		return g.close()
	}
	return g.c.Close()
}
