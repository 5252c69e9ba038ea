package bench

import (
	"context"

	"github.com/ziplinekv/zipline"
)

func init() {
	Register(Factory{
		Name:  "zipline",
		Desc:  "zipline.New(Options{Addr}) with default options; Get(ctx,k) []byte",
		Order: orderZipline,
		New: func(addr string, _ int) (Client, error) {
			c, err := zipline.New(zipline.Options{Addr: addr})
			if err != nil {
				return nil, err
			}
			return ziplineClient{c}, nil
		},
	})
}

type ziplineClient struct{ c *zipline.Client }

func (z ziplineClient) Get(ctx context.Context, key string) (int, error) {
	v, err := z.c.Get(ctx, key)
	return len(v), err
}

func (z ziplineClient) Set(ctx context.Context, key string, val []byte) error {
	return z.c.Set(ctx, key, val)
}

func (z ziplineClient) Close() error { return z.c.Close() }
