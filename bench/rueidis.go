package bench

import (
	"context"

	"github.com/redis/rueidis"
)

func init() {
	Register(Factory{
		Name:  "rueidis",
		Desc:  "rueidis.NewClient with default options (auto-pipelining, RESP3); Do(ctx, B().Get().Key(k).Build()).ToString()",
		Order: orderPeer,
		New: func(addr string, _ int) (Client, error) {
			c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}})
			if err != nil {
				return nil, err
			}
			return rueidisClient{c}, nil
		},
	})
}

type rueidisClient struct{ c rueidis.Client }

func (r rueidisClient) Get(ctx context.Context, key string) (int, error) {
	s, err := r.c.Do(ctx, r.c.B().Get().Key(key).Build()).ToString()
	return len(s), err
}

func (r rueidisClient) Set(ctx context.Context, key string, val []byte) error {
	return r.c.Do(ctx, r.c.B().Set().Key(key).Value(rueidis.BinaryString(val)).Build()).Error()
}

func (r rueidisClient) Close() error { r.c.Close(); return nil }
