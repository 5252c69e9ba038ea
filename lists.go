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

func pushCmd(name, key string, vals [][]byte) command[int64] {
	args := make([]arg, 0, 1+len(vals))
	args = append(args, keyArg(key))
	for _, v := range vals {
		args = append(args, bin(v))
	}
	return cmd(decInt, name, args...)
}

// keysThenTimeout builds a blocking pop's arguments: the keys, then the
// timeout in seconds as Redis takes it (fractions allowed since 6.0). Zero
// waits forever, bounded only by ctx.
func keysThenTimeout(keys []string, timeout time.Duration) []arg {
	args := make([]arg, 0, len(keys)+1)
	args = append(args, keyArgs(keys)...)
	return append(args, flt(timeout.Seconds()))
}

func rangeCmd[T any](dec *decoder[T], name, key string, start, stop int64) command[T] {
	return cmd(dec, name, keyArg(key), num(start), num(stop))
}

func lindexCmd(key string, index int64) command[[]byte] {
	return cmd(decBytes, "LINDEX", keyArg(key), num(index))
}

func lsetCmd(key string, index int64, val []byte) command[bool] {
	return cmd(decOK, "LSET", keyArg(key), num(index), bin(val))
}

func lremCmd(key string, count int64, val []byte) command[int64] {
	return cmd(decInt, "LREM", keyArg(key), num(count), bin(val))
}

func linsertCmd(key string, before bool, pivot, val []byte) command[int64] {
	where := "AFTER"
	if before {
		where = "BEFORE"
	}
	return cmd(decInt, "LINSERT", keyArg(key), str(where), bin(pivot), bin(val))
}

func lmoveCmd(src, dst string, from, to ListEnd) command[[]byte] {
	return cmd(decBytes, "LMOVE", keyArg(src), keyArg(dst), str(string(from)), str(string(to)))
}

func blmoveCmd(src, dst string, from, to ListEnd, timeout time.Duration) command[[]byte] {
	return blockingCmd(decBytes, timeout, "BLMOVE", keyArg(src), keyArg(dst), str(string(from)), str(string(to)),
		flt(timeout.Seconds()))
}

func bpopCmd(name string, timeout time.Duration, keys []string) command[KeyValue] {
	return blockingCmd(decKeyValue, timeout, name, keysThenTimeout(keys, timeout)...)
}

// LPush inserts values at the head of the list and returns its length.
func (c *Client) LPush(ctx context.Context, key string, vals ...[]byte) (int64, error) {
	return run(ctx, c, pushCmd("LPUSH", key, vals))
}

// LPush queues LPUSH; see Client.LPush.
func (b *Batch) LPush(key string, vals ...[]byte) *Future[int64] {
	return enqueue(b, pushCmd("LPUSH", key, vals))
}

// RPush appends values to the tail of the list and returns its length.
func (c *Client) RPush(ctx context.Context, key string, vals ...[]byte) (int64, error) {
	return run(ctx, c, pushCmd("RPUSH", key, vals))
}

// RPush queues RPUSH; see Client.RPush.
func (b *Batch) RPush(key string, vals ...[]byte) *Future[int64] {
	return enqueue(b, pushCmd("RPUSH", key, vals))
}

// LPop removes and returns the first element, or Nil if the list is empty.
func (c *Client) LPop(ctx context.Context, key string) ([]byte, error) {
	return run(ctx, c, keyCmd(decBytes, "LPOP", key))
}

// LPop queues LPOP; see Client.LPop.
func (b *Batch) LPop(key string) *Future[[]byte] { return enqueue(b, keyCmd(decBytes, "LPOP", key)) }

// RPop removes and returns the last element, or Nil if the list is empty.
func (c *Client) RPop(ctx context.Context, key string) ([]byte, error) {
	return run(ctx, c, keyCmd(decBytes, "RPOP", key))
}

// RPop queues RPOP; see Client.RPop.
func (b *Batch) RPop(key string) *Future[[]byte] { return enqueue(b, keyCmd(decBytes, "RPOP", key)) }

// LRange returns the elements from start to stop inclusive; negative
// indexes count from the end.
func (c *Client) LRange(ctx context.Context, key string, start, stop int64) ([][]byte, error) {
	return run(ctx, c, rangeCmd(decBytesSlice, "LRANGE", key, start, stop))
}

// LRange queues LRANGE; see Client.LRange.
func (b *Batch) LRange(key string, start, stop int64) *Future[[][]byte] {
	return enqueue(b, rangeCmd(decBytesSlice, "LRANGE", key, start, stop))
}

// LLen returns the length of the list.
func (c *Client) LLen(ctx context.Context, key string) (int64, error) {
	return run(ctx, c, keyCmd(decInt, "LLEN", key))
}

// LLen queues LLEN; see Client.LLen.
func (b *Batch) LLen(key string) *Future[int64] { return enqueue(b, keyCmd(decInt, "LLEN", key)) }

// LIndex returns the element at index, or Nil if out of range.
func (c *Client) LIndex(ctx context.Context, key string, index int64) ([]byte, error) {
	return run(ctx, c, lindexCmd(key, index))
}

// LIndex queues LINDEX; see Client.LIndex.
func (b *Batch) LIndex(key string, index int64) *Future[[]byte] {
	return enqueue(b, lindexCmd(key, index))
}

// LSet replaces the element at index.
func (c *Client) LSet(ctx context.Context, key string, index int64, val []byte) error {
	_, err := run(ctx, c, lsetCmd(key, index, val))
	return err
}

// LSet queues LSET; see Client.LSet.
func (b *Batch) LSet(key string, index int64, val []byte) *Future[bool] {
	return enqueue(b, lsetCmd(key, index, val))
}

// LRem removes count occurrences of val (all if 0, from the tail if
// negative) and returns how many were removed.
func (c *Client) LRem(ctx context.Context, key string, count int64, val []byte) (int64, error) {
	return run(ctx, c, lremCmd(key, count, val))
}

// LRem queues LREM; see Client.LRem.
func (b *Batch) LRem(key string, count int64, val []byte) *Future[int64] {
	return enqueue(b, lremCmd(key, count, val))
}

// LTrim keeps only the elements from start to stop inclusive.
func (c *Client) LTrim(ctx context.Context, key string, start, stop int64) error {
	_, err := run(ctx, c, rangeCmd(decOK, "LTRIM", key, start, stop))
	return err
}

// LTrim queues LTRIM; see Client.LTrim.
func (b *Batch) LTrim(key string, start, stop int64) *Future[bool] {
	return enqueue(b, rangeCmd(decOK, "LTRIM", key, start, stop))
}

// LInsert inserts val before (or after) the first element equal to pivot
// and returns the new length, or -1 if pivot is not found.
func (c *Client) LInsert(ctx context.Context, key string, before bool, pivot, val []byte) (int64, error) {
	return run(ctx, c, linsertCmd(key, before, pivot, val))
}

// LInsert queues LINSERT; see Client.LInsert.
func (b *Batch) LInsert(key string, before bool, pivot, val []byte) *Future[int64] {
	return enqueue(b, linsertCmd(key, before, pivot, val))
}

// LMove atomically pops an element from one end of src and pushes it to an
// end of dst, returning it (Nil if src is empty).
func (c *Client) LMove(ctx context.Context, src, dst string, from, to ListEnd) ([]byte, error) {
	return run(ctx, c, lmoveCmd(src, dst, from, to))
}

// LMove queues LMOVE; see Client.LMove.
func (b *Batch) LMove(src, dst string, from, to ListEnd) *Future[[]byte] {
	return enqueue(b, lmoveCmd(src, dst, from, to))
}

// BLPop pops the first element of the first non-empty list among keys,
// waiting up to timeout (0: until ctx ends) for one. It returns Nil on
// timeout. It runs on a dedicated connection, never stalling others.
func (c *Client) BLPop(ctx context.Context, timeout time.Duration, keys ...string) (KeyValue, error) {
	return run(ctx, c, bpopCmd("BLPOP", timeout, keys))
}

// BLPop queues BLPOP; the batch then runs on a dedicated connection.
func (b *Batch) BLPop(timeout time.Duration, keys ...string) *Future[KeyValue] {
	return enqueue(b, bpopCmd("BLPOP", timeout, keys))
}

// BRPop is BLPop from the tail.
func (c *Client) BRPop(ctx context.Context, timeout time.Duration, keys ...string) (KeyValue, error) {
	return run(ctx, c, bpopCmd("BRPOP", timeout, keys))
}

// BRPop queues BRPOP; the batch then runs on a dedicated connection.
func (b *Batch) BRPop(timeout time.Duration, keys ...string) *Future[KeyValue] {
	return enqueue(b, bpopCmd("BRPOP", timeout, keys))
}

// BLMove is LMove that waits up to timeout for src to have an element.
func (c *Client) BLMove(ctx context.Context, src, dst string, from, to ListEnd, timeout time.Duration) ([]byte, error) {
	return run(ctx, c, blmoveCmd(src, dst, from, to, timeout))
}

// BLMove queues BLMOVE; the batch then runs on a dedicated connection.
func (b *Batch) BLMove(src, dst string, from, to ListEnd, timeout time.Duration) *Future[[]byte] {
	return enqueue(b, blmoveCmd(src, dst, from, to, timeout))
}
