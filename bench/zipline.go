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
	Register(Factory{
		Name: "zipline-batch16",
		Desc: "zipline.New(Options{Addr}) with default options; Batch() of 16 Get or Set, then Exec, from " +
			"a sixteenth of the goroutines (c=512: 32 goroutines, 512 commands in flight); counts commands",
		Order: orderZipline,
		Batch: 16,
		New: func(addr string, _ int) (Client, error) {
			c, err := zipline.New(zipline.Options{Addr: addr})
			if err != nil {
				return nil, err
			}
			return ziplineClient{c}, nil
		},
	})
}

func (z ziplineClient) GetBatch(ctx context.Context, keys []string) (int, error) {
	b := z.c.Batch()
	fs := make([]*zipline.Future[[]byte], len(keys))
	for i, k := range keys {
		fs[i] = b.Get(k)
	}
	if err := b.Exec(ctx); err != nil {
		return 0, err
	}
	n := 0
	for _, f := range fs {
		v, err := f.Result()
		if err != nil {
			return 0, err
		}
		n += len(v)
	}
	return n, nil
}

func (z ziplineClient) SetBatch(ctx context.Context, keys []string, val []byte) error {
	b := z.c.Batch()
	for _, k := range keys {
		b.Set(k, val)
	}
	return b.Exec(ctx)
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
