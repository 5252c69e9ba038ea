package setget

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"
	"github.com/ziplinekv/zipline"
)

// Zipline is a zipline Client as a Store, connected and pinged.
func Zipline(ctx context.Context, o zipline.Options) (Store, error) {
	c, err := zipline.New(o)
	if err != nil {
		return nil, err
	}
	if err := c.Ping(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return ZiplineStore{c}, nil
}

// ZiplineStore is a zipline Client as a Store.
type ZiplineStore struct{ C *zipline.Client }

func (z ZiplineStore) Set(ctx context.Context, k string, v []byte) error { return z.C.Set(ctx, k, v) }
func (z ZiplineStore) Close() error                                      { return z.C.Close() }
func (z ZiplineStore) Get(ctx context.Context, k string) ([]byte, error) {
	v, err := z.C.Get(ctx, k)
	if errors.Is(err, zipline.Nil) {
		return nil, nil
	}
	return v, err
}

// GoRedis is a go-redis client (a Client, ClusterClient or a
// FailoverClient's Client) as a Store, pinged; it is closed if the ping
// fails.
func GoRedis(ctx context.Context, c redis.UniversalClient) (Store, error) {
	if err := c.Ping(ctx).Err(); err != nil {
		c.Close()
		return nil, err
	}
	return goredisStore{c}, nil
}

type goredisStore struct{ c redis.UniversalClient }

func (g goredisStore) Set(ctx context.Context, k string, v []byte) error {
	return g.c.Set(ctx, k, v, 0).Err()
}
func (g goredisStore) Close() error { return g.c.Close() }
func (g goredisStore) Get(ctx context.Context, k string) ([]byte, error) {
	v, err := g.c.Get(ctx, k).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	return v, err
}
