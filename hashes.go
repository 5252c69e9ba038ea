package zipline

import "context"

// FieldValue is one field of a hash and its value.
type FieldValue struct {
	Field string
	Value []byte
}

func hsetArgs(key string, fields []FieldValue) []arg {
	args := make([]arg, 0, 1+2*len(fields))
	args = append(args, str(key))
	for _, f := range fields {
		args = append(args, str(f.Field), hvalue(f.Value))
	}
	return args
}

func keyAndFields(key string, fields []string) []arg {
	args := make([]arg, 0, 1+len(fields))
	args = append(args, str(key))
	for _, f := range fields {
		args = append(args, str(f))
	}
	return args
}

// HSet sets fields of the hash at key and returns how many were new.
func (c *Client) HSet(ctx context.Context, key string, fields ...FieldValue) (int64, error) {
	return do(ctx, c, decInt, "HSET", hsetArgs(key, fields)...)
}

// HSetNX sets field only if it does not exist, and reports whether it did.
func (c *Client) HSetNX(ctx context.Context, key, field string, val []byte) (bool, error) {
	return do(ctx, c, decBool, "HSETNX", str(key), str(field), hvalue(val))
}

// HGet returns the value of field, or Nil if the field or hash is missing.
func (c *Client) HGet(ctx context.Context, key, field string) ([]byte, error) {
	return do(ctx, c, decHashValue, "HGET", str(key), str(field))
}

// HMGet returns the values of fields, with nil for missing ones.
func (c *Client) HMGet(ctx context.Context, key string, fields ...string) ([][]byte, error) {
	return do(ctx, c, decHashValues, "HMGET", keyAndFields(key, fields)...)
}

// HGetAll returns every field and value of the hash (empty if missing).
func (c *Client) HGetAll(ctx context.Context, key string) (map[string][]byte, error) {
	return do(ctx, c, decHashMap, "HGETALL", str(key))
}

// HDel deletes fields and returns how many existed.
func (c *Client) HDel(ctx context.Context, key string, fields ...string) (int64, error) {
	return do(ctx, c, decInt, "HDEL", keyAndFields(key, fields)...)
}

// HExists reports whether field exists in the hash.
func (c *Client) HExists(ctx context.Context, key, field string) (bool, error) {
	return do(ctx, c, decBool, "HEXISTS", str(key), str(field))
}

// HIncrBy adds n to the integer in field and returns the result.
func (c *Client) HIncrBy(ctx context.Context, key, field string, n int64) (int64, error) {
	return do(ctx, c, decInt, "HINCRBY", str(key), str(field), num(n))
}

// HIncrByFloat adds f to the number in field and returns the result.
func (c *Client) HIncrByFloat(ctx context.Context, key, field string, f float64) (float64, error) {
	return do(ctx, c, decFloat, "HINCRBYFLOAT", str(key), str(field), flt(f))
}

// HKeys returns the hash's field names.
func (c *Client) HKeys(ctx context.Context, key string) ([]string, error) {
	return do(ctx, c, decStrings, "HKEYS", str(key))
}

// HVals returns the hash's values.
func (c *Client) HVals(ctx context.Context, key string) ([][]byte, error) {
	return do(ctx, c, decHashValues, "HVALS", str(key))
}

// HLen returns the number of fields in the hash.
func (c *Client) HLen(ctx context.Context, key string) (int64, error) {
	return do(ctx, c, decInt, "HLEN", str(key))
}

// HSet queues HSET; see Client.HSet.
func (b *Batch) HSet(key string, fields ...FieldValue) *Future[int64] {
	return add(b, decInt, "HSET", hsetArgs(key, fields)...)
}

// HSetNX queues HSETNX; see Client.HSetNX.
func (b *Batch) HSetNX(key, field string, val []byte) *Future[bool] {
	return add(b, decBool, "HSETNX", str(key), str(field), hvalue(val))
}

// HGet queues HGET; see Client.HGet.
func (b *Batch) HGet(key, field string) *Future[[]byte] {
	return add(b, decHashValue, "HGET", str(key), str(field))
}

// HMGet queues HMGET; see Client.HMGet.
func (b *Batch) HMGet(key string, fields ...string) *Future[[][]byte] {
	return add(b, decHashValues, "HMGET", keyAndFields(key, fields)...)
}

// HGetAll queues HGETALL; see Client.HGetAll.
func (b *Batch) HGetAll(key string) *Future[map[string][]byte] {
	return add(b, decHashMap, "HGETALL", str(key))
}

// HDel queues HDEL; see Client.HDel.
func (b *Batch) HDel(key string, fields ...string) *Future[int64] {
	return add(b, decInt, "HDEL", keyAndFields(key, fields)...)
}

// HExists queues HEXISTS; see Client.HExists.
func (b *Batch) HExists(key, field string) *Future[bool] {
	return add(b, decBool, "HEXISTS", str(key), str(field))
}

// HIncrBy queues HINCRBY; see Client.HIncrBy.
func (b *Batch) HIncrBy(key, field string, n int64) *Future[int64] {
	return add(b, decInt, "HINCRBY", str(key), str(field), num(n))
}

// HIncrByFloat queues HINCRBYFLOAT; see Client.HIncrByFloat.
func (b *Batch) HIncrByFloat(key, field string, f float64) *Future[float64] {
	return add(b, decFloat, "HINCRBYFLOAT", str(key), str(field), flt(f))
}

// HKeys queues HKEYS; see Client.HKeys.
func (b *Batch) HKeys(key string) *Future[[]string] { return add(b, decStrings, "HKEYS", str(key)) }

// HVals queues HVALS; see Client.HVals.
func (b *Batch) HVals(key string) *Future[[][]byte] {
	return add(b, decHashValues, "HVALS", str(key))
}

// HLen queues HLEN; see Client.HLen.
func (b *Batch) HLen(key string) *Future[int64] { return add(b, decInt, "HLEN", str(key)) }
