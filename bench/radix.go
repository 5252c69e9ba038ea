package bench

import (
	"context"

	"github.com/mediocregopher/radix/v4"
)

func init() {
	Register(Factory{
		Name:  "radix",
		Desc:  "radix v4 (PoolConfig{}).New (4 shared, implicitly pipelined conns); Do(ctx, radix.Cmd(&s, \"GET\", k))",
		Order: orderPeer,
		New: func(addr string, _ int) (Client, error) {
			c, err := (radix.PoolConfig{}).New(context.Background(), "tcp", addr)
			if err != nil {
				return nil, err
			}
			return radixClient{c}, nil
		},
	})
}

type radixClient struct{ c radix.Client }

func (r radixClient) Get(ctx context.Context, key string) (int, error) {
	var s string
	err := r.c.Do(ctx, radix.Cmd(&s, "GET", key))
	return len(s), err
}

func (r radixClient) Set(ctx context.Context, key string, val []byte) error {
	return r.c.Do(ctx, radix.Cmd(nil, "SET", key, bstr(val)))
}

func (r radixClient) Close() error { return r.c.Close() }
