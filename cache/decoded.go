package cache

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"
)

// decodingStore is a Store that can keep a decoded value beside its cached
// copy of a key (zipline.Cached.GetDecoded), so that a hit costs no
// decoding.
type decodingStore interface {
	GetDecoded(ctx context.Context, key string, tag any, decode func([]byte) (any, error)) (any, error)
}

// kept is a stored entry decoded once and kept by a decodingStore: what
// every hit on that copy returns.
type kept[T any] struct {
	e   entry // payload dropped: v is what it held
	v   T
	err error // the codec's, returned by every hit on this copy
}

// errNotEntry is decodeKept's answer to bytes that are not a stored entry:
// a miss, as fresh treats them.
var errNotEntry = errors.New("cache: not a stored entry")

// keeps reports whether values of type t can be kept decoded and handed
// to every caller: a copy of one shares nothing a caller could modify (no
// pointer, slice, map, channel, function or interface in it; strings are
// immutable, and time.Time's location is never modified).
func keeps(t reflect.Type) bool {
	if t == reflect.TypeFor[time.Time]() {
		return true
	}
	switch t.Kind() {
	case reflect.Bool, reflect.String,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return true
	case reflect.Array:
		return keeps(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if !keeps(t.Field(i).Type) {
				return false
			}
		}
		return true
	}
	return false
}

// lookupKept is lookup through a decodingStore: the entry comes decoded
// (entry.decoded), and a hit on a copy already decoded decodes nothing.
func (c *Cache[T]) lookupKept(ctx context.Context, key string) (entry, bool) {
	got, err := c.decoding.GetDecoded(ctx, key, c, c.decodeKept)
	if errors.Is(err, errNotEntry) {
		return entry{}, false
	}
	if err != nil {
		return c.fresh(ctx, nil, err)
	}
	k := got.(*kept[T])
	if !c.now().Before(k.e.expiry) {
		return entry{}, false
	}
	e := k.e
	e.decoded = k
	return e, true
}

// decodeKept decodes a stored entry and its value for keeping.
func (c *Cache[T]) decodeKept(b []byte) (any, error) {
	e, ok := decodeEntry(b)
	if !ok {
		return nil, errNotEntry
	}
	k := &kept[T]{e: e}
	k.e.payload = nil
	if !e.notFound {
		if err := c.codec.Unmarshal(e.payload, &k.v); err != nil {
			k.err = fmt.Errorf("cache: decode: %w", err)
		}
	}
	return k, nil
}
