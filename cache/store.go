package cache

import (
	"context"
	"encoding/json"

	"github.com/ziplinekv/zipline"
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
