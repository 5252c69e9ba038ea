package zipline

import (
	"context"
	"time"
)

// expireCmd is EXPIRE for whole seconds and PEXPIRE otherwise. A positive
// d under a millisecond is rounded up to one: PEXPIRE 0 would delete the
// key. A d of zero or less deletes it, as the server does.
func expireCmd(key string, d time.Duration) command[bool] {
	if d%time.Second == 0 {
		return cmd(decBool, "EXPIRE", keyArg(key), num(int64(d/time.Second)))
	}
	return cmd(decBool, "PEXPIRE", keyArg(key), num(millis(d)))
}

func keysCmd[T any](dec *decoder[T], name string, keys []string) command[T] {
	return cmd(dec, name, keyArgs(keys)...)
}

func keyCmd[T any](dec *decoder[T], name, key string) command[T] {
	return cmd(dec, name, keyArg(key))
}

func expireAtCmd(key string, t time.Time) command[bool] {
	return cmd(decBool, "PEXPIREAT", keyArg(key), num(t.UnixMilli()))
}

func renameCmd(key, newKey string) command[bool] {
	return cmd(decOK, "RENAME", keyArg(key), keyArg(newKey))
}

// Del deletes keys and returns how many existed.
func (c *Client) Del(ctx context.Context, keys ...string) (int64, error) {
	return run(ctx, c, keysCmd(decInt, "DEL", keys))
}

// Del queues DEL; see Client.Del.
func (b *Batch) Del(keys ...string) *Future[int64] { return enqueue(b, keysCmd(decInt, "DEL", keys)) }

// Unlink deletes keys like Del, reclaiming their memory in the background.
func (c *Client) Unlink(ctx context.Context, keys ...string) (int64, error) {
	return run(ctx, c, keysCmd(decInt, "UNLINK", keys))
}

// Unlink queues UNLINK; see Client.Unlink.
func (b *Batch) Unlink(keys ...string) *Future[int64] {
	return enqueue(b, keysCmd(decInt, "UNLINK", keys))
}

// Exists returns how many of keys exist (a key named twice counts twice).
func (c *Client) Exists(ctx context.Context, keys ...string) (int64, error) {
	return run(ctx, c, keysCmd(decInt, "EXISTS", keys))
}

// Exists queues EXISTS; see Client.Exists.
func (b *Batch) Exists(keys ...string) *Future[int64] {
	return enqueue(b, keysCmd(decInt, "EXISTS", keys))
}

// Touch updates the last access time of keys and returns how many exist.
func (c *Client) Touch(ctx context.Context, keys ...string) (int64, error) {
	return run(ctx, c, keysCmd(decInt, "TOUCH", keys))
}

// Touch queues TOUCH; see Client.Touch.
func (b *Batch) Touch(keys ...string) *Future[int64] {
	return enqueue(b, keysCmd(decInt, "TOUCH", keys))
}

// Expire sets key to expire after d (EXPIRE, or PEXPIRE below a second),
// and reports whether the key exists. A positive d under a millisecond
// counts as one millisecond; a d of zero or less deletes the key, as the
// server does.
func (c *Client) Expire(ctx context.Context, key string, d time.Duration) (bool, error) {
	return run(ctx, c, expireCmd(key, d))
}

// Expire queues EXPIRE or PEXPIRE; see Client.Expire.
func (b *Batch) Expire(key string, d time.Duration) *Future[bool] {
	return enqueue(b, expireCmd(key, d))
}

// ExpireAt sets key to expire at t (PEXPIREAT), and reports whether the key
// exists.
func (c *Client) ExpireAt(ctx context.Context, key string, t time.Time) (bool, error) {
	return run(ctx, c, expireAtCmd(key, t))
}

// ExpireAt queues PEXPIREAT; see Client.ExpireAt.
func (b *Batch) ExpireAt(key string, t time.Time) *Future[bool] {
	return enqueue(b, expireAtCmd(key, t))
}

// Persist removes key's expiry and reports whether it had one.
func (c *Client) Persist(ctx context.Context, key string) (bool, error) {
	return run(ctx, c, keyCmd(decBool, "PERSIST", key))
}

// Persist queues PERSIST; see Client.Persist.
func (b *Batch) Persist(key string) *Future[bool] { return enqueue(b, keyCmd(decBool, "PERSIST", key)) }

// TTL returns key's remaining time to live in whole seconds. As with
// go-redis, a key with no expiry gives NoExpiry (-1) and a missing key
// NoKey (-2), both with a nil error.
func (c *Client) TTL(ctx context.Context, key string) (time.Duration, error) {
	return run(ctx, c, keyCmd(decTTL, "TTL", key))
}

// TTL queues TTL; see Client.TTL.
func (b *Batch) TTL(key string) *Future[time.Duration] { return enqueue(b, keyCmd(decTTL, "TTL", key)) }

// PTTL is TTL with millisecond precision.
func (c *Client) PTTL(ctx context.Context, key string) (time.Duration, error) {
	return run(ctx, c, keyCmd(decPTTL, "PTTL", key))
}

// PTTL queues PTTL; see Client.PTTL.
func (b *Batch) PTTL(key string) *Future[time.Duration] {
	return enqueue(b, keyCmd(decPTTL, "PTTL", key))
}

// Type returns the type of key's value ("string", "hash", ...), or "none".
func (c *Client) Type(ctx context.Context, key string) (string, error) {
	return run(ctx, c, keyCmd(decStatus, "TYPE", key))
}

// Type queues TYPE; see Client.Type.
func (b *Batch) Type(key string) *Future[string] { return enqueue(b, keyCmd(decStatus, "TYPE", key)) }

// Rename renames key to newKey, replacing newKey if it exists.
func (c *Client) Rename(ctx context.Context, key, newKey string) error {
	_, err := run(ctx, c, renameCmd(key, newKey))
	return err
}

// Rename queues RENAME; see Client.Rename.
func (b *Batch) Rename(key, newKey string) *Future[bool] { return enqueue(b, renameCmd(key, newKey)) }
