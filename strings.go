package zipline

import (
	"context"
	"strconv"
	"time"
)

// Expiry sets a key's time to live, in Set and GetEx. The zero Expiry sets
// none, as does EX(0): go-redis's 0 means "no expiration", and so does
// zipline's. An Expiry with no meaning the server would take (a negative
// duration, a time before 1970) fails the command with an *ArgumentError
// before anything is sent, as do two expiries for one command.
type Expiry struct {
	opt string // "" for none
	n   int64
}

// EX expires the key after d: whole seconds are sent as EX, anything finer
// as PX milliseconds. EX(0) sets no expiry; a negative d is refused.
func EX(d time.Duration) Expiry {
	if d%time.Second == 0 && d != 0 {
		return Expiry{"EX", int64(d / time.Second)}
	}
	return PX(d)
}

// PX expires the key after d, with millisecond precision. A positive d
// under a millisecond is rounded up to one: the server would refuse 0, or
// (EXPIRE) delete the key. PX(0) sets no expiry; a negative d is refused.
func PX(d time.Duration) Expiry {
	if d == 0 {
		return Expiry{}
	}
	return Expiry{"PX", millis(d)}
}

// TTL returns the time to live e sets (for ExpireAt, from now), or zero if
// it sets none (KeepTTL, the zero Expiry): for stores that take a duration
// rather than an Expiry, such as an adapter from Set's signature to a
// SetEX.
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

// ExpireAt expires the key at t (PXAT). The zero time sets no expiry, as
// in go-redis's SetArgs; a time in the past expires the key at once.
func ExpireAt(t time.Time) Expiry {
	if t.IsZero() {
		return Expiry{}
	}
	return Expiry{"PXAT", t.UnixMilli()}
}

// KeepTTL keeps the key's current time to live when Set overwrites it (Set
// only).
func KeepTTL() Expiry { return Expiry{opt: "KEEPTTL"} }

// Persist removes the key's time to live (GetEx only).
func Persist() Expiry { return Expiry{opt: "PERSIST"} }

// appendExpiry appends the one expiry among exp to args for the command
// name (SET or GETEX), or returns why it cannot: zero Expiry values set
// none, and any other must be one the command takes, with a positive
// number.
func appendExpiry(args []arg, exp []Expiry, name string) ([]arg, error) {
	var e *Expiry
	for i := range exp {
		switch {
		case exp[i].opt == "":
		case e != nil:
			return args, &ArgumentError{Command: name, Reason: "more than one expiry (" + e.opt + " and " + exp[i].opt + ")"}
		default:
			e = &exp[i]
		}
	}
	switch {
	case e == nil:
		return args, nil
	case e.opt == "KEEPTTL" && name != "SET", e.opt == "PERSIST" && name != "GETEX":
		return args, &ArgumentError{Command: name, Reason: e.opt + " is not an expiry " + name + " takes"}
	case e.opt == "KEEPTTL", e.opt == "PERSIST":
		return append(args, str(e.opt)), nil
	case e.n <= 0:
		return args, &ArgumentError{Command: name, Reason: "expiry " + e.opt + " " + strconv.FormatInt(e.n, 10) +
			" is not positive (a zero Expiry, EX(0) or PX(0), sets none)"}
	}
	return append(args, str(e.opt), num(e.n)), nil
}

// setArgs builds SET's arguments in buf, which callers keep on the stack.
func setArgs(buf []arg, key string, val []byte, cond string, exp []Expiry) ([]arg, error) {
	args := append(buf, keyArg(key), bin(val))
	if cond != "" {
		args = append(args, str(cond))
	}
	return appendExpiry(args, exp, "SET")
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

// The SET and GETEX builders return an *ArgumentError for expiries the
// server would refuse. It is not kept in the command: to escape analysis a
// command is one value, and an error in it would send its arguments to the
// heap along with the error.
func setCmd(buf []arg, key string, val []byte, exp []Expiry) (command[bool], error) {
	args, err := setArgs(buf, key, val, "", exp)
	return cmd(decOK, "SET", args...), err
}

// setCondCmd is SET ... NX or XX, which replies null when it did not set.
func setCondCmd(buf []arg, key string, val []byte, cond string, exp []Expiry) (command[bool], error) {
	args, err := setArgs(buf, key, val, cond, exp)
	return cmd(decSetCond, "SET", args...), err
}

func setGetCmd(buf []arg, key string, val []byte, exp []Expiry) (command[[]byte], error) {
	args, err := setArgs(buf, key, val, "GET", exp)
	return cmd(decBytes, "SET", args...), err
}

func getSetCmd(key string, val []byte) command[[]byte] {
	return cmd(decBytes, "GETSET", keyArg(key), bin(val))
}

func mgetCmd(keys []string) command[[][]byte] { return cmd(decBytesSlice, "MGET", keyArgs(keys)...) }

func msetCmd(pairs []KeyValue) command[bool] { return cmd(decOK, "MSET", pairArgs(pairs)...) }

func msetNXCmd(pairs []KeyValue) command[bool] { return cmd(decBool, "MSETNX", pairArgs(pairs)...) }

func getExCmd(buf []arg, key string, exp []Expiry) (command[[]byte], error) {
	args, err := appendExpiry(append(buf, keyArg(key)), exp, "GETEX")
	return cmd(decBytes, "GETEX", args...), err
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
	cm, err := setCmd(buf[:0], key, val, exp)
	if err == nil {
		_, err = run(ctx, c, cm)
	}
	return err
}

// Set queues SET; see Client.Set. The future holds true once stored.
func (b *Batch) Set(key string, val []byte, exp ...Expiry) *Future[bool] {
	var buf [8]arg
	cm, err := setCmd(buf[:0], key, val, exp)
	return enqueueChecked(b, cm, err)
}

// SetNX stores value at key only if key does not exist (SET ... NX), and
// reports whether it did.
func (c *Client) SetNX(ctx context.Context, key string, val []byte, exp ...Expiry) (bool, error) {
	var buf [8]arg
	cm, err := setCondCmd(buf[:0], key, val, "NX", exp)
	return runChecked(ctx, c, cm, err)
}

// SetNX queues SET ... NX; see Client.SetNX.
func (b *Batch) SetNX(key string, val []byte, exp ...Expiry) *Future[bool] {
	var buf [8]arg
	cm, err := setCondCmd(buf[:0], key, val, "NX", exp)
	return enqueueChecked(b, cm, err)
}

// SetXX stores value at key only if key exists (SET ... XX), and reports
// whether it did.
func (c *Client) SetXX(ctx context.Context, key string, val []byte, exp ...Expiry) (bool, error) {
	var buf [8]arg
	cm, err := setCondCmd(buf[:0], key, val, "XX", exp)
	return runChecked(ctx, c, cm, err)
}

// SetXX queues SET ... XX; see Client.SetXX.
func (b *Batch) SetXX(key string, val []byte, exp ...Expiry) *Future[bool] {
	var buf [8]arg
	cm, err := setCondCmd(buf[:0], key, val, "XX", exp)
	return enqueueChecked(b, cm, err)
}

// SetGet stores value at key and returns the old value (SET ... GET), or
// Nil if there was none.
func (c *Client) SetGet(ctx context.Context, key string, val []byte, exp ...Expiry) ([]byte, error) {
	var buf [8]arg
	cm, err := setGetCmd(buf[:0], key, val, exp)
	return runChecked(ctx, c, cm, err)
}

// SetGet queues SET ... GET; see Client.SetGet.
func (b *Batch) SetGet(key string, val []byte, exp ...Expiry) *Future[[]byte] {
	var buf [8]arg
	cm, err := setGetCmd(buf[:0], key, val, exp)
	return enqueueChecked(b, cm, err)
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
	cm, err := getExCmd(buf[:0], key, exp)
	return runChecked(ctx, c, cm, err)
}

// GetEx queues GETEX; see Client.GetEx.
func (b *Batch) GetEx(key string, exp ...Expiry) *Future[[]byte] {
	var buf [4]arg
	cm, err := getExCmd(buf[:0], key, exp)
	return enqueueChecked(b, cm, err)
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
