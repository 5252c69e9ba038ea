package zipline

import "context"

// FieldValue is one field of a hash and its value.
type FieldValue struct {
	Field string
	Value []byte
}

func hsetArgs(key string, fields []FieldValue) []arg {
	args := make([]arg, 0, 1+2*len(fields))
	args = append(args, keyArg(key))
	for _, f := range fields {
		args = append(args, str(f.Field), bin(f.Value))
	}
	return args
}

func hsetCmd(key string, fields []FieldValue) command[int64] {
	return cmd(decInt, "HSET", hsetArgs(key, fields)...)
}

func hsetNXCmd(key, field string, val []byte) command[bool] {
	return cmd(decBool, "HSETNX", keyArg(key), str(field), bin(val))
}

// fieldCmd is a command on one field of a hash.
func fieldCmd[T any](dec *decoder[T], name, key, field string) command[T] {
	return cmd(dec, name, keyArg(key), str(field))
}

// fieldsCmd is a command on several fields of a hash.
func fieldsCmd[T any](dec *decoder[T], name, key string, fields []string) command[T] {
	return cmd(dec, name, keyAnd(key, fields)...)
}

func hincrByCmd(key, field string, n int64) command[int64] {
	return cmd(decInt, "HINCRBY", keyArg(key), str(field), num(n))
}

func hincrByFloatCmd(key, field string, f float64) command[float64] {
	return cmd(decFloat, "HINCRBYFLOAT", keyArg(key), str(field), flt(f))
}

// HSet sets fields of the hash at key and returns how many were new.
func (c *Client) HSet(ctx context.Context, key string, fields ...FieldValue) (int64, error) {
	return run(ctx, c, hsetCmd(key, fields))
}

// HSet queues HSET; see Client.HSet.
func (b *Batch) HSet(key string, fields ...FieldValue) *Future[int64] {
	return enqueue(b, hsetCmd(key, fields))
}

// HSetNX sets field only if it does not exist, and reports whether it did.
func (c *Client) HSetNX(ctx context.Context, key, field string, val []byte) (bool, error) {
	return run(ctx, c, hsetNXCmd(key, field, val))
}

// HSetNX queues HSETNX; see Client.HSetNX.
func (b *Batch) HSetNX(key, field string, val []byte) *Future[bool] {
	return enqueue(b, hsetNXCmd(key, field, val))
}

// HGet returns the value of field, or Nil if the field or hash is missing.
func (c *Client) HGet(ctx context.Context, key, field string) ([]byte, error) {
	return run(ctx, c, fieldCmd(decBytes, "HGET", key, field))
}

// HGet queues HGET; see Client.HGet.
func (b *Batch) HGet(key, field string) *Future[[]byte] {
	return enqueue(b, fieldCmd(decBytes, "HGET", key, field))
}

// HMGet returns the values of fields, with nil for missing ones.
func (c *Client) HMGet(ctx context.Context, key string, fields ...string) ([][]byte, error) {
	return run(ctx, c, fieldsCmd(decBytesSlice, "HMGET", key, fields))
}

// HMGet queues HMGET; see Client.HMGet.
func (b *Batch) HMGet(key string, fields ...string) *Future[[][]byte] {
	return enqueue(b, fieldsCmd(decBytesSlice, "HMGET", key, fields))
}

// HGetAll returns every field and value of the hash (empty if missing).
func (c *Client) HGetAll(ctx context.Context, key string) (map[string][]byte, error) {
	return run(ctx, c, keyCmd(decBytesMap, "HGETALL", key))
}

// HGetAll queues HGETALL; see Client.HGetAll.
func (b *Batch) HGetAll(key string) *Future[map[string][]byte] {
	return enqueue(b, keyCmd(decBytesMap, "HGETALL", key))
}

// HDel deletes fields and returns how many existed.
func (c *Client) HDel(ctx context.Context, key string, fields ...string) (int64, error) {
	return run(ctx, c, fieldsCmd(decInt, "HDEL", key, fields))
}

// HDel queues HDEL; see Client.HDel.
func (b *Batch) HDel(key string, fields ...string) *Future[int64] {
	return enqueue(b, fieldsCmd(decInt, "HDEL", key, fields))
}

// HExists reports whether field exists in the hash.
func (c *Client) HExists(ctx context.Context, key, field string) (bool, error) {
	return run(ctx, c, fieldCmd(decBool, "HEXISTS", key, field))
}

// HExists queues HEXISTS; see Client.HExists.
func (b *Batch) HExists(key, field string) *Future[bool] {
	return enqueue(b, fieldCmd(decBool, "HEXISTS", key, field))
}

// HIncrBy adds n to the integer in field and returns the result.
func (c *Client) HIncrBy(ctx context.Context, key, field string, n int64) (int64, error) {
	return run(ctx, c, hincrByCmd(key, field, n))
}

// HIncrBy queues HINCRBY; see Client.HIncrBy.
func (b *Batch) HIncrBy(key, field string, n int64) *Future[int64] {
	return enqueue(b, hincrByCmd(key, field, n))
}

// HIncrByFloat adds f to the number in field and returns the result.
func (c *Client) HIncrByFloat(ctx context.Context, key, field string, f float64) (float64, error) {
	return run(ctx, c, hincrByFloatCmd(key, field, f))
}

// HIncrByFloat queues HINCRBYFLOAT; see Client.HIncrByFloat.
func (b *Batch) HIncrByFloat(key, field string, f float64) *Future[float64] {
	return enqueue(b, hincrByFloatCmd(key, field, f))
}

// HKeys returns the hash's field names.
func (c *Client) HKeys(ctx context.Context, key string) ([]string, error) {
	return run(ctx, c, keyCmd(decStrings, "HKEYS", key))
}

// HKeys queues HKEYS; see Client.HKeys.
func (b *Batch) HKeys(key string) *Future[[]string] {
	return enqueue(b, keyCmd(decStrings, "HKEYS", key))
}

// HVals returns the hash's values.
func (c *Client) HVals(ctx context.Context, key string) ([][]byte, error) {
	return run(ctx, c, keyCmd(decBytesSlice, "HVALS", key))
}

// HVals queues HVALS; see Client.HVals.
func (b *Batch) HVals(key string) *Future[[][]byte] {
	return enqueue(b, keyCmd(decBytesSlice, "HVALS", key))
}

// HLen returns the number of fields in the hash.
func (c *Client) HLen(ctx context.Context, key string) (int64, error) {
	return run(ctx, c, keyCmd(decInt, "HLEN", key))
}

// HLen queues HLEN; see Client.HLen.
func (b *Batch) HLen(key string) *Future[int64] { return enqueue(b, keyCmd(decInt, "HLEN", key)) }
