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

// PX expires the key after d, with millisecond precision. A positive d
// under a millisecond is rounded up to one: the server would refuse 0, or
// (EXPIRE) delete the key.
func PX(d time.Duration) Expiry { return Expiry{"PX", millis(d)} }

// TTL returns the time to live e sets (for ExpireAt, from now), or zero if
// it sets none (KeepTTL): for stores that take a duration rather than an
// Expiry, such as an adapter from Set's signature to a SetEX.
func (e Expiry) TTL() time.Duration {
	switch e.opt {
	case "EX":
		return time.Duration(e.n) * time.Second
	case "PX":
		return time.Duration(e.n) * time.Millisecond
	case "PXAT":
		return time.Until(time.UnixMilli(e.n))
	}
	return 0
}

// millis converts d to whole milliseconds, rounding a positive d under one
// millisecond up to 1.
func millis(d time.Duration) int64 {
	if d > 0 && d < time.Millisecond {
		return 1
	}
	return int64(d / time.Millisecond)
}

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
	args := append(buf, keyArg(key), bin(val))
	if cond != "" {
		args = append(args, str(cond))
	}
	return appendExpiry(args, exp)
}

// pairArgs builds MSET's key, value pairs.
func pairArgs(pairs []KeyValue) []arg {
	args := make([]arg, 0, 2*len(pairs))
	for _, p := range pairs {
		args = append(args, keyArg(p.Key), bin(p.Value))
	}
	return args
}

// The string commands. Each is defined once, by its ...Cmd function, and
// used by the Client method that runs it and the Batch method that queues
// it.

func getCmd(key string) command[[]byte] { return cmd(decBytes, "GET", keyArg(key)) }

func setCmd(buf []arg, key string, val []byte, exp []Expiry) command[bool] {
	return cmd(decOK, "SET", setArgs(buf, key, val, "", exp)...)
}

// setCondCmd is SET ... NX or XX, which replies null when it did not set.
func setCondCmd(buf []arg, key string, val []byte, cond string, exp []Expiry) command[bool] {
	return cmd(decSetCond, "SET", setArgs(buf, key, val, cond, exp)...)
}

func setGetCmd(buf []arg, key string, val []byte, exp []Expiry) command[[]byte] {
	return cmd(decBytes, "SET", setArgs(buf, key, val, "GET", exp)...)
}

func getSetCmd(key string, val []byte) command[[]byte] {
	return cmd(decBytes, "GETSET", keyArg(key), bin(val))
}

func mgetCmd(keys []string) command[[][]byte] { return cmd(decBytesSlice, "MGET", keyArgs(keys)...) }

func msetCmd(pairs []KeyValue) command[bool] { return cmd(decOK, "MSET", pairArgs(pairs)...) }

func msetNXCmd(pairs []KeyValue) command[bool] { return cmd(decBool, "MSETNX", pairArgs(pairs)...) }

func getExCmd(buf []arg, key string, exp []Expiry) command[[]byte] {
	return cmd(decBytes, "GETEX", appendExpiry(append(buf, keyArg(key)), exp)...)
}

func getDelCmd(key string) command[[]byte] { return cmd(decBytes, "GETDEL", keyArg(key)) }

// incrCmd is INCR or DECR; incrByCmd is INCRBY or DECRBY.
func incrCmd(name, key string) command[int64] { return cmd(decInt, name, keyArg(key)) }

func incrByCmd(name, key string, n int64) command[int64] {
	return cmd(decInt, name, keyArg(key), num(n))
}

func incrByFloatCmd(key string, f float64) command[float64] {
	return cmd(decFloat, "INCRBYFLOAT", keyArg(key), flt(f))
}

func appendCmd(key string, val []byte) command[int64] {
	return cmd(decInt, "APPEND", keyArg(key), bin(val))
}

func strLenCmd(key string) command[int64] { return cmd(decInt, "STRLEN", keyArg(key)) }

// Get returns the value of key, or Nil if it does not exist.
func (c *Client) Get(ctx context.Context, key string) ([]byte, error) {
	return run(ctx, c, getCmd(key))
}

// Get queues GET; see Client.Get.
func (b *Batch) Get(key string) *Future[[]byte] { return enqueue(b, getCmd(key)) }

// Set stores value at key, replacing any value and, unless KeepTTL is
// given, any time to live.
func (c *Client) Set(ctx context.Context, key string, val []byte, exp ...Expiry) error {
	var buf [8]arg
	_, err := run(ctx, c, setCmd(buf[:0], key, val, exp))
	return err
}

// Set queues SET; see Client.Set. The future holds true once stored.
func (b *Batch) Set(key string, val []byte, exp ...Expiry) *Future[bool] {
	var buf [8]arg
	return enqueue(b, setCmd(buf[:0], key, val, exp))
}

// SetNX stores value at key only if key does not exist (SET ... NX), and
// reports whether it did.
func (c *Client) SetNX(ctx context.Context, key string, val []byte, exp ...Expiry) (bool, error) {
	var buf [8]arg
	return run(ctx, c, setCondCmd(buf[:0], key, val, "NX", exp))
}

// SetNX queues SET ... NX; see Client.SetNX.
func (b *Batch) SetNX(key string, val []byte, exp ...Expiry) *Future[bool] {
	var buf [8]arg
	return enqueue(b, setCondCmd(buf[:0], key, val, "NX", exp))
}

// SetXX stores value at key only if key exists (SET ... XX), and reports
// whether it did.
func (c *Client) SetXX(ctx context.Context, key string, val []byte, exp ...Expiry) (bool, error) {
	var buf [8]arg
	return run(ctx, c, setCondCmd(buf[:0], key, val, "XX", exp))
}

// SetXX queues SET ... XX; see Client.SetXX.
func (b *Batch) SetXX(key string, val []byte, exp ...Expiry) *Future[bool] {
	var buf [8]arg
	return enqueue(b, setCondCmd(buf[:0], key, val, "XX", exp))
}

// SetGet stores value at key and returns the old value (SET ... GET), or
// Nil if there was none.
func (c *Client) SetGet(ctx context.Context, key string, val []byte, exp ...Expiry) ([]byte, error) {
	var buf [8]arg
	return run(ctx, c, setGetCmd(buf[:0], key, val, exp))
}

// SetGet queues SET ... GET; see Client.SetGet.
func (b *Batch) SetGet(key string, val []byte, exp ...Expiry) *Future[[]byte] {
	var buf [8]arg
	return enqueue(b, setGetCmd(buf[:0], key, val, exp))
}

// GetSet is SetGet without options, with the legacy GETSET command.
func (c *Client) GetSet(ctx context.Context, key string, val []byte) ([]byte, error) {
	return run(ctx, c, getSetCmd(key, val))
}

// GetSet queues GETSET; see Client.GetSet.
func (b *Batch) GetSet(key string, val []byte) *Future[[]byte] {
	return enqueue(b, getSetCmd(key, val))
}

// MGet returns the values of keys, with nil for keys that do not exist.
func (c *Client) MGet(ctx context.Context, keys ...string) ([][]byte, error) {
	return run(ctx, c, mgetCmd(keys))
}

// MGet queues MGET; see Client.MGet.
func (b *Batch) MGet(keys ...string) *Future[[][]byte] { return enqueue(b, mgetCmd(keys)) }

// MSet stores several values at once, atomically.
func (c *Client) MSet(ctx context.Context, pairs ...KeyValue) error {
	_, err := run(ctx, c, msetCmd(pairs))
	return err
}

// MSet queues MSET; see Client.MSet.
func (b *Batch) MSet(pairs ...KeyValue) *Future[bool] { return enqueue(b, msetCmd(pairs)) }

// MSetNX stores several values only if none of the keys exists, and
// reports whether it did.
func (c *Client) MSetNX(ctx context.Context, pairs ...KeyValue) (bool, error) {
	return run(ctx, c, msetNXCmd(pairs))
}

// MSetNX queues MSETNX; see Client.MSetNX.
func (b *Batch) MSetNX(pairs ...KeyValue) *Future[bool] { return enqueue(b, msetNXCmd(pairs)) }

// GetEx returns the value of key and changes its expiry.
func (c *Client) GetEx(ctx context.Context, key string, exp ...Expiry) ([]byte, error) {
	var buf [4]arg
	return run(ctx, c, getExCmd(buf[:0], key, exp))
}

// GetEx queues GETEX; see Client.GetEx.
func (b *Batch) GetEx(key string, exp ...Expiry) *Future[[]byte] {
	var buf [4]arg
	return enqueue(b, getExCmd(buf[:0], key, exp))
}

// GetDel returns the value of key and deletes the key.
func (c *Client) GetDel(ctx context.Context, key string) ([]byte, error) {
	return run(ctx, c, getDelCmd(key))
}

// GetDel queues GETDEL; see Client.GetDel.
func (b *Batch) GetDel(key string) *Future[[]byte] { return enqueue(b, getDelCmd(key)) }

// Incr adds 1 to the integer at key and returns the result.
func (c *Client) Incr(ctx context.Context, key string) (int64, error) {
	return run(ctx, c, incrCmd("INCR", key))
}

// Incr queues INCR; see Client.Incr.
func (b *Batch) Incr(key string) *Future[int64] { return enqueue(b, incrCmd("INCR", key)) }

// IncrBy adds n to the integer at key and returns the result.
func (c *Client) IncrBy(ctx context.Context, key string, n int64) (int64, error) {
	return run(ctx, c, incrByCmd("INCRBY", key, n))
}

// IncrBy queues INCRBY; see Client.IncrBy.
func (b *Batch) IncrBy(key string, n int64) *Future[int64] {
	return enqueue(b, incrByCmd("INCRBY", key, n))
}

// IncrByFloat adds f to the number at key and returns the result.
func (c *Client) IncrByFloat(ctx context.Context, key string, f float64) (float64, error) {
	return run(ctx, c, incrByFloatCmd(key, f))
}

// IncrByFloat queues INCRBYFLOAT; see Client.IncrByFloat.
func (b *Batch) IncrByFloat(key string, f float64) *Future[float64] {
	return enqueue(b, incrByFloatCmd(key, f))
}

// Decr subtracts 1 from the integer at key and returns the result.
func (c *Client) Decr(ctx context.Context, key string) (int64, error) {
	return run(ctx, c, incrCmd("DECR", key))
}

// Decr queues DECR; see Client.Decr.
func (b *Batch) Decr(key string) *Future[int64] { return enqueue(b, incrCmd("DECR", key)) }

// DecrBy subtracts n from the integer at key and returns the result.
func (c *Client) DecrBy(ctx context.Context, key string, n int64) (int64, error) {
	return run(ctx, c, incrByCmd("DECRBY", key, n))
}

// DecrBy queues DECRBY; see Client.DecrBy.
func (b *Batch) DecrBy(key string, n int64) *Future[int64] {
	return enqueue(b, incrByCmd("DECRBY", key, n))
}

// Append appends value to the string at key and returns its new length.
// It is refused while compression is on: appending to a compressed value
// would corrupt it.
func (c *Client) Append(ctx context.Context, key string, val []byte) (int64, error) {
	return run(ctx, c, appendCmd(key, val))
}

// Append queues APPEND; see Client.Append.
func (b *Batch) Append(key string, val []byte) *Future[int64] { return enqueue(b, appendCmd(key, val)) }

// StrLen returns the length of the string at key (0 if missing). It is
// refused while compression is on: it would measure the stored bytes.
func (c *Client) StrLen(ctx context.Context, key string) (int64, error) {
	return run(ctx, c, strLenCmd(key))
}

// StrLen queues STRLEN; see Client.StrLen.
func (b *Batch) StrLen(key string) *Future[int64] { return enqueue(b, strLenCmd(key)) }
