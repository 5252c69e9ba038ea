package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"github.com/ziplinekv/zipline"
)

// store is one cluster client as the benchmark drives it: a SET of the
// key once, then GETs of it.
type store interface {
	Set(ctx context.Context, key string) error
	Get(ctx context.Context, key string) error
	Close()
}

// clientKind is one client library: how one of the N clients is opened
// on one seed address, and how the report describes it.
type clientKind struct {
	name string
	desc string
	open func(seed string) (store, error)
}

func (k clientKind) String() string { return k.name }

// value is what every client SETs and expects back.
var value = []byte("v")

var errWrong = errors.New("wrong value")

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// quietRedis silences go-redis's process-wide logger, as quiet does
// zipline's: 200 clients through a failover would log thousands of lines.
type quietRedis struct{}

func (quietRedis) Printf(context.Context, string, ...any) {}

func init() { redis.SetLogger(quietRedis{}) }

var clientKinds = []clientKind{
	{
		name: "zipline",
		desc: "`zipline.New(zipline.Options{Addrs: []string{seed}, Logger: quiet})`, every other option at its " +
			"default; `Set`, `Get`",
		open: func(seed string) (store, error) {
			c, err := zipline.New(zipline.Options{Addrs: []string{seed}, Logger: quiet})
			if err != nil {
				return nil, err
			}
			return ziplineStore{c}, nil
		},
	},
	{
		name: "go-redis",
		desc: "`redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{seed}})`, every other option at its " +
			"default (logger silenced with `redis.SetLogger`); `Set(ctx, k, v, 0)`, `Get(ctx, k)`",
		open: func(seed string) (store, error) {
			return goredisStore{redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{seed}})}, nil
		},
	},
	{
		name: "rueidis",
		desc: "`rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{seed}})`, every other option at its " +
			"default; `Do` of SET and GET",
		open: func(seed string) (store, error) {
			c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{seed}})
			if err != nil {
				return nil, err
			}
			return rueidisStore{c}, nil
		},
	},
}

type ziplineStore struct{ c *zipline.Client }

func (s ziplineStore) Set(ctx context.Context, key string) error { return s.c.Set(ctx, key, value) }
func (s ziplineStore) Get(ctx context.Context, key string) error {
	v, err := s.c.Get(ctx, key)
	return check(v, err)
}
func (s ziplineStore) Close() { s.c.Close() }

type goredisStore struct{ c *redis.ClusterClient }

func (s goredisStore) Set(ctx context.Context, key string) error {
	return s.c.Set(ctx, key, value, 0).Err()
}
func (s goredisStore) Get(ctx context.Context, key string) error {
	v, err := s.c.Get(ctx, key).Bytes()
	return check(v, err)
}
func (s goredisStore) Close() { s.c.Close() }

type rueidisStore struct{ c rueidis.Client }

func (s rueidisStore) Set(ctx context.Context, key string) error {
	return s.c.Do(ctx, s.c.B().Set().Key(key).Value(string(value)).Build()).Error()
}
func (s rueidisStore) Get(ctx context.Context, key string) error {
	v, err := s.c.Do(ctx, s.c.B().Get().Key(key).Build()).AsBytes()
	return check(v, err)
}
func (s rueidisStore) Close() { s.c.Close() }

func check(v []byte, err error) error {
	if err == nil && !bytes.Equal(v, value) {
		return errWrong
	}
	return err
}
