package zipline

import (
	"context"
	"time"
)

// ListEnd names an end of a list, for LMove and BLMove.
type ListEnd string

const (
	Left  ListEnd = "LEFT"
	Right ListEnd = "RIGHT"
)

func keyAndValues(key string, vals [][]byte) []arg {
	args := make([]arg, 0, 1+len(vals))
	args = append(args, str(key))
	for _, v := range vals {
		args = append(args, lvalue(v))
	}
	return args
}

// blockingArgs appends a blocking command's timeout, in seconds as Redis
// takes it (fractions allowed since 6.0). Zero waits forever, bounded only
// by ctx.
func keysThenTimeout(keys []string, timeout time.Duration) []arg {
	args := make([]arg, 0, len(keys)+1)
	for _, k := range keys {
		args = append(args, str(k))
	}
	return append(args, flt(timeout.Seconds()))
}

// LPush inserts values at the head of the list and returns its length.
func (c *Client) LPush(ctx context.Context, key string, vals ...[]byte) (int64, error) {
	return do(ctx, c, decInt, "LPUSH", keyAndValues(key, vals)...)
}

// RPush appends values to the tail of the list and returns its length.
func (c *Client) RPush(ctx context.Context, key string, vals ...[]byte) (int64, error) {
	return do(ctx, c, decInt, "RPUSH", keyAndValues(key, vals)...)
}

// LPop removes and returns the first element, or Nil if the list is empty.
func (c *Client) LPop(ctx context.Context, key string) ([]byte, error) {
	return do(ctx, c, decListValue, "LPOP", str(key))
}

// RPop removes and returns the last element, or Nil if the list is empty.
func (c *Client) RPop(ctx context.Context, key string) ([]byte, error) {
	return do(ctx, c, decListValue, "RPOP", str(key))
}

// LRange returns the elements from start to stop inclusive; negative
// indexes count from the end.
func (c *Client) LRange(ctx context.Context, key string, start, stop int64) ([][]byte, error) {
	return do(ctx, c, decListValues, "LRANGE", str(key), num(start), num(stop))
}

// LLen returns the length of the list.
func (c *Client) LLen(ctx context.Context, key string) (int64, error) {
	return do(ctx, c, decInt, "LLEN", str(key))
}

// LIndex returns the element at index, or Nil if out of range.
func (c *Client) LIndex(ctx context.Context, key string, index int64) ([]byte, error) {
	return do(ctx, c, decListValue, "LINDEX", str(key), num(index))
}

// LSet replaces the element at index.
func (c *Client) LSet(ctx context.Context, key string, index int64, val []byte) error {
	_, err := do(ctx, c, decOK, "LSET", str(key), num(index), lvalue(val))
	return err
}

// LRem removes count occurrences of val (all if 0, from the tail if
// negative) and returns how many were removed.
func (c *Client) LRem(ctx context.Context, key string, count int64, val []byte) (int64, error) {
	return do(ctx, c, decInt, "LREM", str(key), num(count), lvalue(val))
}

// LTrim keeps only the elements from start to stop inclusive.
func (c *Client) LTrim(ctx context.Context, key string, start, stop int64) error {
	_, err := do(ctx, c, decOK, "LTRIM", str(key), num(start), num(stop))
	return err
}

// LInsert inserts val before (or after) the first element equal to pivot
// and returns the new length, or -1 if pivot is not found.
func (c *Client) LInsert(ctx context.Context, key string, before bool, pivot, val []byte) (int64, error) {
	where := "AFTER"
	if before {
		where = "BEFORE"
	}
	return do(ctx, c, decInt, "LINSERT", str(key), str(where), lvalue(pivot), lvalue(val))
}

// LMove atomically pops an element from one end of src and pushes it to an
// end of dst, returning it (Nil if src is empty).
func (c *Client) LMove(ctx context.Context, src, dst string, from, to ListEnd) ([]byte, error) {
	return do(ctx, c, decListValue, "LMOVE", str(src), str(dst), str(string(from)), str(string(to)))
}

// BLPop pops the first element of the first non-empty list among keys,
// waiting up to timeout (0: until ctx ends) for one. It returns Nil on
// timeout. It runs on a dedicated connection, never stalling others.
func (c *Client) BLPop(ctx context.Context, timeout time.Duration, keys ...string) (KeyValue, error) {
	return doBlocking(ctx, c, decKeyValue, "BLPOP", keysThenTimeout(keys, timeout)...)
}

// BRPop is BLPop from the tail.
func (c *Client) BRPop(ctx context.Context, timeout time.Duration, keys ...string) (KeyValue, error) {
	return doBlocking(ctx, c, decKeyValue, "BRPOP", keysThenTimeout(keys, timeout)...)
}

// BLMove is LMove that waits up to timeout for src to have an element.
func (c *Client) BLMove(ctx context.Context, src, dst string, from, to ListEnd, timeout time.Duration) ([]byte, error) {
	return doBlocking(ctx, c, decListValue, "BLMOVE", str(src), str(dst), str(string(from)), str(string(to)), flt(timeout.Seconds()))
}

// LPush queues LPUSH; see Client.LPush.
func (b *Batch) LPush(key string, vals ...[]byte) *Future[int64] {
	return add(b, decInt, "LPUSH", keyAndValues(key, vals)...)
}

// RPush queues RPUSH; see Client.RPush.
func (b *Batch) RPush(key string, vals ...[]byte) *Future[int64] {
	return add(b, decInt, "RPUSH", keyAndValues(key, vals)...)
}

// LPop queues LPOP; see Client.LPop.
func (b *Batch) LPop(key string) *Future[[]byte] { return add(b, decListValue, "LPOP", str(key)) }

// RPop queues RPOP; see Client.RPop.
func (b *Batch) RPop(key string) *Future[[]byte] { return add(b, decListValue, "RPOP", str(key)) }

// LRange queues LRANGE; see Client.LRange.
func (b *Batch) LRange(key string, start, stop int64) *Future[[][]byte] {
	return add(b, decListValues, "LRANGE", str(key), num(start), num(stop))
}

// LLen queues LLEN; see Client.LLen.
func (b *Batch) LLen(key string) *Future[int64] { return add(b, decInt, "LLEN", str(key)) }

// LIndex queues LINDEX; see Client.LIndex.
func (b *Batch) LIndex(key string, index int64) *Future[[]byte] {
	return add(b, decListValue, "LINDEX", str(key), num(index))
}

// LSet queues LSET; see Client.LSet.
func (b *Batch) LSet(key string, index int64, val []byte) *Future[bool] {
	return add(b, decOK, "LSET", str(key), num(index), lvalue(val))
}

// LRem queues LREM; see Client.LRem.
func (b *Batch) LRem(key string, count int64, val []byte) *Future[int64] {
	return add(b, decInt, "LREM", str(key), num(count), lvalue(val))
}

// LTrim queues LTRIM; see Client.LTrim.
func (b *Batch) LTrim(key string, start, stop int64) *Future[bool] {
	return add(b, decOK, "LTRIM", str(key), num(start), num(stop))
}

// LMove queues LMOVE; see Client.LMove.
func (b *Batch) LMove(src, dst string, from, to ListEnd) *Future[[]byte] {
	return add(b, decListValue, "LMOVE", str(src), str(dst), str(string(from)), str(string(to)))
}

// BLPop queues BLPOP; the batch then runs on a dedicated connection.
func (b *Batch) BLPop(timeout time.Duration, keys ...string) *Future[KeyValue] {
	return addBlocking(b, decKeyValue, "BLPOP", keysThenTimeout(keys, timeout)...)
}

// BRPop queues BRPOP; the batch then runs on a dedicated connection.
func (b *Batch) BRPop(timeout time.Duration, keys ...string) *Future[KeyValue] {
	return addBlocking(b, decKeyValue, "BRPOP", keysThenTimeout(keys, timeout)...)
}
