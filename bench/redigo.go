package bench

import (
	"context"

	"github.com/gomodule/redigo/redis"
)

func init() {
	Register(Factory{
		Name:  "redigo",
		Desc:  "redigo Pool{MaxIdle=MaxActive=conc, Wait:true} (one conn per goroutine, its best case); GetContext + redis.Bytes(conn.Do)",
		Order: orderPeer,
		New: func(addr string, conc int) (Client, error) {
			p := &redis.Pool{
				MaxIdle:   conc,
				MaxActive: conc,
				Wait:      true,
				DialContext: func(ctx context.Context) (redis.Conn, error) {
					return redis.DialContext(ctx, "tcp", addr)
				},
			}
			c := p.Get()
			_, err := c.Do("PING")
			c.Close()
			if err != nil {
				p.Close()
				return nil, err
			}
			return redigoClient{p}, nil
		},
	})
}

type redigoClient struct{ p *redis.Pool }

func (r redigoClient) Get(ctx context.Context, key string) (int, error) {
	c, err := r.p.GetContext(ctx)
	if err != nil {
		return 0, err
	}
	b, err := redis.Bytes(c.Do("GET", key))
	c.Close()
	return len(b), err
}

func (r redigoClient) Set(ctx context.Context, key string, val []byte) error {
	c, err := r.p.GetContext(ctx)
	if err != nil {
		return err
	}
	_, err = c.Do("SET", key, val)
	c.Close()
	return err
}

func (r redigoClient) Close() error { return r.p.Close() }
