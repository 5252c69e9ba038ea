package zipline

import (
	"context"
	"time"
)

// expireArgs picks EXPIRE for whole seconds and PEXPIRE otherwise.
func expireCommand(d time.Duration) (string, int64) {
	if d%time.Second == 0 {
		return "EXPIRE", int64(d / time.Second)
	}
	return "PEXPIRE", int64(d / time.Millisecond)
}

// Del deletes keys and returns how many existed.
func (c *Client) Del(ctx context.Context, keys ...string) (int64, error) {
	return do(ctx, c, decInt, "DEL", strs(keys)...)
}

// Unlink deletes keys like Del, reclaiming their memory in the background.
func (c *Client) Unlink(ctx context.Context, keys ...string) (int64, error) {
	return do(ctx, c, decInt, "UNLINK", strs(keys)...)
}

// Exists returns how many of keys exist (a key named twice counts twice).
func (c *Client) Exists(ctx context.Context, keys ...string) (int64, error) {
	return do(ctx, c, decInt, "EXISTS", strs(keys)...)
}

// Expire sets key to expire after d (EXPIRE, or PEXPIRE below a second),
// and reports whether the key exists.
func (c *Client) Expire(ctx context.Context, key string, d time.Duration) (bool, error) {
	cmd, n := expireCommand(d)
	return do(ctx, c, decBool, cmd, str(key), num(n))
}

// ExpireAt sets key to expire at t (PEXPIREAT), and reports whether the key
// exists.
func (c *Client) ExpireAt(ctx context.Context, key string, t time.Time) (bool, error) {
	return do(ctx, c, decBool, "PEXPIREAT", str(key), num(t.UnixMilli()))
}

// Persist removes key's expiry and reports whether it had one.
func (c *Client) Persist(ctx context.Context, key string) (bool, error) {
	return do(ctx, c, decBool, "PERSIST", str(key))
}

// TTL returns key's remaining time to live in whole seconds, NoExpiry if it
// has none, or Nil if the key does not exist.
func (c *Client) TTL(ctx context.Context, key string) (time.Duration, error) {
	return do(ctx, c, decTTL, "TTL", str(key))
}

// PTTL is TTL with millisecond precision.
func (c *Client) PTTL(ctx context.Context, key string) (time.Duration, error) {
	return do(ctx, c, decPTTL, "PTTL", str(key))
}

// Type returns the type of key's value ("string", "hash", ...), or "none".
func (c *Client) Type(ctx context.Context, key string) (string, error) {
	return do(ctx, c, decString, "TYPE", str(key))
}

// Rename renames key to newKey, replacing newKey if it exists.
func (c *Client) Rename(ctx context.Context, key, newKey string) error {
	_, err := do(ctx, c, decOK, "RENAME", str(key), str(newKey))
	return err
}

// Del queues DEL; see Client.Del.
func (b *Batch) Del(keys ...string) *Future[int64] { return add(b, decInt, "DEL", strs(keys)...) }

// Unlink queues UNLINK; see Client.Unlink.
func (b *Batch) Unlink(keys ...string) *Future[int64] {
	return add(b, decInt, "UNLINK", strs(keys)...)
}

// Exists queues EXISTS; see Client.Exists.
func (b *Batch) Exists(keys ...string) *Future[int64] {
	return add(b, decInt, "EXISTS", strs(keys)...)
}

// Expire queues EXPIRE or PEXPIRE; see Client.Expire.
func (b *Batch) Expire(key string, d time.Duration) *Future[bool] {
	cmd, n := expireCommand(d)
	return add(b, decBool, cmd, str(key), num(n))
}

// ExpireAt queues PEXPIREAT; see Client.ExpireAt.
func (b *Batch) ExpireAt(key string, t time.Time) *Future[bool] {
	return add(b, decBool, "PEXPIREAT", str(key), num(t.UnixMilli()))
}

// Persist queues PERSIST; see Client.Persist.
func (b *Batch) Persist(key string) *Future[bool] { return add(b, decBool, "PERSIST", str(key)) }

// TTL queues TTL; see Client.TTL.
func (b *Batch) TTL(key string) *Future[time.Duration] { return add(b, decTTL, "TTL", str(key)) }

// PTTL queues PTTL; see Client.PTTL.
func (b *Batch) PTTL(key string) *Future[time.Duration] {
	return add(b, decPTTL, "PTTL", str(key))
}

// Type queues TYPE; see Client.Type.
func (b *Batch) Type(key string) *Future[string] { return add(b, decString, "TYPE", str(key)) }

// Rename queues RENAME; see Client.Rename.
func (b *Batch) Rename(key, newKey string) *Future[bool] {
	return add(b, decOK, "RENAME", str(key), str(newKey))
}
