package zipline

import (
	"context"
	"time"
)

// Expiry sets a key's time to live, in Set and GetEx.
type Expiry struct {
	opt string
	n   int64
}

// EX expires the key after d: whole seconds are sent as EX, anything finer
// as PX milliseconds.
func EX(d time.Duration) Expiry {
	if d%time.Second == 0 {
		return Expiry{"EX", int64(d / time.Second)}
	}
	return PX(d)
}

// PX expires the key after d, with millisecond precision.
func PX(d time.Duration) Expiry { return Expiry{"PX", int64(d / time.Millisecond)} }

// ExpireAt expires the key at t (PXAT).
func ExpireAt(t time.Time) Expiry { return Expiry{"PXAT", t.UnixMilli()} }

// KeepTTL keeps the key's current time to live when Set overwrites it.
func KeepTTL() Expiry { return Expiry{opt: "KEEPTTL"} }

// Persist removes the key's time to live (GetEx only).
func Persist() Expiry { return Expiry{opt: "PERSIST"} }

func appendExpiry(args []arg, exp []Expiry) []arg {
	for _, e := range exp {
		args = append(args, str(e.opt))
		if e.opt != "KEEPTTL" && e.opt != "PERSIST" {
			args = append(args, num(e.n))
		}
	}
	return args
}

// setArgs builds SET's arguments in buf, which callers keep on the stack.
func setArgs(buf []arg, key string, val []byte, cond string, exp []Expiry) []arg {
	args := append(buf, str(key), value(val))
	if cond != "" {
		args = append(args, str(cond))
	}
	return appendExpiry(args, exp)
}

func pairArgs(pairs []KeyValue) []arg {
	args := make([]arg, 0, 2*len(pairs))
	for _, p := range pairs {
		args = append(args, str(p.Key), value(p.Value))
	}
	return args
}

// Get returns the value of key, or Nil if it does not exist.
func (c *Client) Get(ctx context.Context, key string) ([]byte, error) {
	return do(ctx, c, decStored, "GET", str(key))
}

// Set stores value at key, replacing any value and, unless KeepTTL is
// given, any time to live.
func (c *Client) Set(ctx context.Context, key string, val []byte, exp ...Expiry) error {
	var buf [8]arg
	_, err := do(ctx, c, decOK, "SET", setArgs(buf[:0], key, val, "", exp)...)
	return err
}

// SetNX stores value at key only if key does not exist (SET ... NX), and
// reports whether it did.
func (c *Client) SetNX(ctx context.Context, key string, val []byte, exp ...Expiry) (bool, error) {
	var buf [8]arg
	return do(ctx, c, decSetCond, "SET", setArgs(buf[:0], key, val, "NX", exp)...)
}

// SetXX stores value at key only if key exists (SET ... XX), and reports
// whether it did.
func (c *Client) SetXX(ctx context.Context, key string, val []byte, exp ...Expiry) (bool, error) {
	var buf [8]arg
	return do(ctx, c, decSetCond, "SET", setArgs(buf[:0], key, val, "XX", exp)...)
}

// SetGet stores value at key and returns the old value (SET ... GET), or
// Nil if there was none.
func (c *Client) SetGet(ctx context.Context, key string, val []byte, exp ...Expiry) ([]byte, error) {
	var buf [8]arg
	return do(ctx, c, decStored, "SET", setArgs(buf[:0], key, val, "GET", exp)...)
}

// GetSet is SetGet without options, with the legacy GETSET command.
func (c *Client) GetSet(ctx context.Context, key string, val []byte) ([]byte, error) {
	return do(ctx, c, decStored, "GETSET", str(key), value(val))
}

// MGet returns the values of keys, with nil for keys that do not exist.
func (c *Client) MGet(ctx context.Context, keys ...string) ([][]byte, error) {
	return do(ctx, c, decStoredSlice, "MGET", strs(keys)...)
}

// MSet stores several values at once, atomically.
func (c *Client) MSet(ctx context.Context, pairs ...KeyValue) error {
	_, err := do(ctx, c, decOK, "MSET", pairArgs(pairs)...)
	return err
}

// MSetNX stores several values only if none of the keys exists, and
// reports whether it did.
func (c *Client) MSetNX(ctx context.Context, pairs ...KeyValue) (bool, error) {
	return do(ctx, c, decBool, "MSETNX", pairArgs(pairs)...)
}

// GetEx returns the value of key and changes its expiry.
func (c *Client) GetEx(ctx context.Context, key string, exp ...Expiry) ([]byte, error) {
	var buf [4]arg
	return do(ctx, c, decStored, "GETEX", appendExpiry(append(buf[:0], str(key)), exp)...)
}

// GetDel returns the value of key and deletes the key.
func (c *Client) GetDel(ctx context.Context, key string) ([]byte, error) {
	return do(ctx, c, decStored, "GETDEL", str(key))
}

// Incr adds 1 to the integer at key and returns the result.
func (c *Client) Incr(ctx context.Context, key string) (int64, error) {
	return do(ctx, c, decInt, "INCR", str(key))
}

// IncrBy adds n to the integer at key and returns the result.
func (c *Client) IncrBy(ctx context.Context, key string, n int64) (int64, error) {
	return do(ctx, c, decInt, "INCRBY", str(key), num(n))
}

// IncrByFloat adds f to the number at key and returns the result.
func (c *Client) IncrByFloat(ctx context.Context, key string, f float64) (float64, error) {
	return do(ctx, c, decFloat, "INCRBYFLOAT", str(key), flt(f))
}

// Decr subtracts 1 from the integer at key and returns the result.
func (c *Client) Decr(ctx context.Context, key string) (int64, error) {
	return do(ctx, c, decInt, "DECR", str(key))
}

// DecrBy subtracts n from the integer at key and returns the result.
func (c *Client) DecrBy(ctx context.Context, key string, n int64) (int64, error) {
	return do(ctx, c, decInt, "DECRBY", str(key), num(n))
}

// Append appends value to the string at key and returns its new length.
// It is refused while compression is on: appending to a compressed value
// would corrupt it.
func (c *Client) Append(ctx context.Context, key string, val []byte) (int64, error) {
	if err := c.checkCompatible("APPEND"); err != nil {
		return 0, err
	}
	return do(ctx, c, decInt, "APPEND", str(key), bin(val))
}

// Batch versions: each queues the command and returns its future.

// Get queues GET; see Client.Get.
func (b *Batch) Get(key string) *Future[[]byte] { return add(b, decStored, "GET", str(key)) }

// Set queues SET; see Client.Set. The future holds true once stored.
func (b *Batch) Set(key string, val []byte, exp ...Expiry) *Future[bool] {
	var buf [8]arg
	return add(b, decOK, "SET", setArgs(buf[:0], key, val, "", exp)...)
}

// SetNX queues SET ... NX; see Client.SetNX.
func (b *Batch) SetNX(key string, val []byte, exp ...Expiry) *Future[bool] {
	var buf [8]arg
	return add(b, decSetCond, "SET", setArgs(buf[:0], key, val, "NX", exp)...)
}

// SetXX queues SET ... XX; see Client.SetXX.
func (b *Batch) SetXX(key string, val []byte, exp ...Expiry) *Future[bool] {
	var buf [8]arg
	return add(b, decSetCond, "SET", setArgs(buf[:0], key, val, "XX", exp)...)
}

// SetGet queues SET ... GET; see Client.SetGet.
func (b *Batch) SetGet(key string, val []byte, exp ...Expiry) *Future[[]byte] {
	var buf [8]arg
	return add(b, decStored, "SET", setArgs(buf[:0], key, val, "GET", exp)...)
}

// GetSet queues GETSET; see Client.GetSet.
func (b *Batch) GetSet(key string, val []byte) *Future[[]byte] {
	return add(b, decStored, "GETSET", str(key), value(val))
}

// MGet queues MGET; see Client.MGet.
func (b *Batch) MGet(keys ...string) *Future[[][]byte] {
	return add(b, decStoredSlice, "MGET", strs(keys)...)
}

// MSet queues MSET; see Client.MSet.
func (b *Batch) MSet(pairs ...KeyValue) *Future[bool] {
	return add(b, decOK, "MSET", pairArgs(pairs)...)
}

// MSetNX queues MSETNX; see Client.MSetNX.
func (b *Batch) MSetNX(pairs ...KeyValue) *Future[bool] {
	return add(b, decBool, "MSETNX", pairArgs(pairs)...)
}

// GetEx queues GETEX; see Client.GetEx.
func (b *Batch) GetEx(key string, exp ...Expiry) *Future[[]byte] {
	var buf [4]arg
	return add(b, decStored, "GETEX", appendExpiry(append(buf[:0], str(key)), exp)...)
}

// GetDel queues GETDEL; see Client.GetDel.
func (b *Batch) GetDel(key string) *Future[[]byte] { return add(b, decStored, "GETDEL", str(key)) }

// Incr queues INCR; see Client.Incr.
func (b *Batch) Incr(key string) *Future[int64] { return add(b, decInt, "INCR", str(key)) }

// IncrBy queues INCRBY; see Client.IncrBy.
func (b *Batch) IncrBy(key string, n int64) *Future[int64] {
	return add(b, decInt, "INCRBY", str(key), num(n))
}

// IncrByFloat queues INCRBYFLOAT; see Client.IncrByFloat.
func (b *Batch) IncrByFloat(key string, f float64) *Future[float64] {
	return add(b, decFloat, "INCRBYFLOAT", str(key), flt(f))
}

// Decr queues DECR; see Client.Decr.
func (b *Batch) Decr(key string) *Future[int64] { return add(b, decInt, "DECR", str(key)) }

// DecrBy queues DECRBY; see Client.DecrBy.
func (b *Batch) DecrBy(key string, n int64) *Future[int64] {
	return add(b, decInt, "DECRBY", str(key), num(n))
}

// Append queues APPEND; see Client.Append.
func (b *Batch) Append(key string, val []byte) *Future[int64] {
	if err := b.c.checkCompatible("APPEND"); err != nil && b.err == nil {
		b.err = err
	}
	return add(b, decInt, "APPEND", str(key), bin(val))
}
