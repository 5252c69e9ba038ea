package cache

import (
	"context"
	"encoding/json"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/layout"
)

// Store is where a Cache keeps its values. *zipline.Client satisfies it, and
// so does any view of one. A Store that keeps values somewhere else (a layout
// namespace, a client-side tier) plugs in through Options.Store.
//
// A Store may keep a value longer than the expiry it was given: each value
// carries its own expiry, and the Cache treats a value past it as missing.
type Store interface {
	// Get returns the value at key, or an error matching zipline.Nil if there
	// is none.
	Get(ctx context.Context, key string) ([]byte, error)
	// Set stores val at key. The Cache passes one zipline.PX expiry.
	Set(ctx context.Context, key string, val []byte, exp ...zipline.Expiry) error
	// Del removes keys.
	Del(ctx context.Context, keys ...string) (int64, error)
}

// Codec turns values into bytes and back. Its methods have the signatures of
// encoding/json's, so most encoding packages fit with a one-line adapter.
type Codec interface {
	Marshal(v any) ([]byte, error)
	Unmarshal(data []byte, v any) error
}

// JSON is the default Codec: encoding/json.
type JSON struct{}

// Marshal is json.Marshal.
func (JSON) Marshal(v any) ([]byte, error) { return json.Marshal(v) }

// Unmarshal is json.Unmarshal.
func (JSON) Unmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }

// Layout adapts a layout.Store to Store, so that cached values get the
// namespace's key zipping, buckets and codec: Set with an expiry becomes
// the Store's SetEX (on a bucketed namespace that needs hash field expiry,
// Redis 7.4+ or Valkey 9+, or the namespace's BucketTTL: see
// layout.Store.SetEX). Locks still go through the Client given to New.
func Layout(s *layout.Store) Store { return layoutStore{s} }

type layoutStore struct{ s *layout.Store }

func (l layoutStore) Get(ctx context.Context, key string) ([]byte, error) { return l.s.Get(ctx, key) }

func (l layoutStore) Set(ctx context.Context, key string, val []byte, exp ...zipline.Expiry) error {
	for _, e := range exp {
		if d := e.TTL(); d > 0 {
			return l.s.SetEX(ctx, key, val, d)
		}
	}
	return l.s.Set(ctx, key, val)
}

func (l layoutStore) Del(ctx context.Context, keys ...string) (int64, error) {
	return l.s.Del(ctx, keys...)
}
