package zipline

import (
	"context"
	"time"
)

func zaddCmd(key string, members []Z) command[int64] {
	args := make([]arg, 0, 1+2*len(members))
	args = append(args, keyArg(key))
	for _, m := range members {
		args = append(args, flt(m.Score), str(m.Member))
	}
	return cmd(decInt, "ZADD", args...)
}

func zincrByCmd(key string, incr float64, member string) command[float64] {
	return cmd(decFloat, "ZINCRBY", keyArg(key), flt(incr), str(member))
}

// zspanCmd is a command on the members between two bounds (ranks, or
// scores in Redis's syntax), with at most one option.
func zspanCmd[T any](dec *decoder[T], name, key string, lo, hi arg, opt ...arg) command[T] {
	if len(opt) == 0 {
		return cmd(dec, name, keyArg(key), lo, hi)
	}
	return cmd(dec, name, keyArg(key), lo, hi, opt[0])
}

func bzpopCmd(name string, timeout time.Duration, keys []string) command[KeyZ] {
	return blockingCmd(decKeyZ, timeout, name, keysThenTimeout(keys, timeout)...)
}

// ZAdd adds members with their scores (updating existing scores) and
// returns how many were new.
func (c *Client) ZAdd(ctx context.Context, key string, members ...Z) (int64, error) {
	return run(ctx, c, zaddCmd(key, members))
}

// ZAdd queues ZADD; see Client.ZAdd.
func (b *Batch) ZAdd(key string, members ...Z) *Future[int64] {
	return enqueue(b, zaddCmd(key, members))
}

// ZRem removes members and returns how many were present.
func (c *Client) ZRem(ctx context.Context, key string, members ...string) (int64, error) {
	return run(ctx, c, fieldsCmd(decInt, "ZREM", key, members))
}

// ZRem queues ZREM; see Client.ZRem.
func (b *Batch) ZRem(key string, members ...string) *Future[int64] {
	return enqueue(b, fieldsCmd(decInt, "ZREM", key, members))
}

// ZScore returns member's score, or Nil if it is not in the set.
func (c *Client) ZScore(ctx context.Context, key, member string) (float64, error) {
	return run(ctx, c, fieldCmd(decFloatOrNil, "ZSCORE", key, member))
}

// ZScore queues ZSCORE; see Client.ZScore.
func (b *Batch) ZScore(key, member string) *Future[float64] {
	return enqueue(b, fieldCmd(decFloatOrNil, "ZSCORE", key, member))
}

// ZIncrBy adds incr to member's score and returns the new score.
func (c *Client) ZIncrBy(ctx context.Context, key string, incr float64, member string) (float64, error) {
	return run(ctx, c, zincrByCmd(key, incr, member))
}

// ZIncrBy queues ZINCRBY; see Client.ZIncrBy.
func (b *Batch) ZIncrBy(key string, incr float64, member string) *Future[float64] {
	return enqueue(b, zincrByCmd(key, incr, member))
}

// ZCard returns the number of members.
func (c *Client) ZCard(ctx context.Context, key string) (int64, error) {
	return run(ctx, c, keyCmd(decInt, "ZCARD", key))
}

// ZCard queues ZCARD; see Client.ZCard.
func (b *Batch) ZCard(key string) *Future[int64] { return enqueue(b, keyCmd(decInt, "ZCARD", key)) }

// ZCount returns how many members have a score between min and max, given
// in Redis's syntax ("1", "(1" exclusive, "-inf", "+inf").
func (c *Client) ZCount(ctx context.Context, key, min, max string) (int64, error) {
	return run(ctx, c, zspanCmd(decInt, "ZCOUNT", key, str(min), str(max)))
}

// ZCount queues ZCOUNT; see Client.ZCount.
func (b *Batch) ZCount(key, min, max string) *Future[int64] {
	return enqueue(b, zspanCmd(decInt, "ZCOUNT", key, str(min), str(max)))
}

// ZRange returns the members ranked start to stop inclusive, lowest score
// first; negative ranks count from the end.
func (c *Client) ZRange(ctx context.Context, key string, start, stop int64) ([]string, error) {
	return run(ctx, c, zspanCmd(decStrings, "ZRANGE", key, num(start), num(stop)))
}

// ZRange queues ZRANGE; see Client.ZRange.
func (b *Batch) ZRange(key string, start, stop int64) *Future[[]string] {
	return enqueue(b, zspanCmd(decStrings, "ZRANGE", key, num(start), num(stop)))
}

// ZRangeWithScores is ZRange with each member's score.
func (c *Client) ZRangeWithScores(ctx context.Context, key string, start, stop int64) ([]Z, error) {
	return run(ctx, c, zspanCmd(decZs, "ZRANGE", key, num(start), num(stop), str("WITHSCORES")))
}

// ZRangeWithScores queues ZRANGE ... WITHSCORES; see Client.ZRangeWithScores.
func (b *Batch) ZRangeWithScores(key string, start, stop int64) *Future[[]Z] {
	return enqueue(b, zspanCmd(decZs, "ZRANGE", key, num(start), num(stop), str("WITHSCORES")))
}

// ZRangeByScore returns the members with scores between min and max (see
// ZCount for the syntax), lowest first.
func (c *Client) ZRangeByScore(ctx context.Context, key, min, max string) ([]string, error) {
	return run(ctx, c, zspanCmd(decStrings, "ZRANGE", key, str(min), str(max), str("BYSCORE")))
}

// ZRangeByScore queues ZRANGE ... BYSCORE; see Client.ZRangeByScore.
func (b *Batch) ZRangeByScore(key, min, max string) *Future[[]string] {
	return enqueue(b, zspanCmd(decStrings, "ZRANGE", key, str(min), str(max), str("BYSCORE")))
}

// ZRank returns member's rank, lowest score first, or Nil if absent.
func (c *Client) ZRank(ctx context.Context, key, member string) (int64, error) {
	return run(ctx, c, fieldCmd(decIntOrNil, "ZRANK", key, member))
}

// ZRank queues ZRANK; see Client.ZRank.
func (b *Batch) ZRank(key, member string) *Future[int64] {
	return enqueue(b, fieldCmd(decIntOrNil, "ZRANK", key, member))
}

// ZRevRank returns member's rank, highest score first, or Nil if absent.
func (c *Client) ZRevRank(ctx context.Context, key, member string) (int64, error) {
	return run(ctx, c, fieldCmd(decIntOrNil, "ZREVRANK", key, member))
}

// ZRevRank queues ZREVRANK; see Client.ZRevRank.
func (b *Batch) ZRevRank(key, member string) *Future[int64] {
	return enqueue(b, fieldCmd(decIntOrNil, "ZREVRANK", key, member))
}

// ZPopMin removes and returns the member with the lowest score, or Nil.
func (c *Client) ZPopMin(ctx context.Context, key string) (Z, error) {
	return run(ctx, c, keyCmd(decZ, "ZPOPMIN", key))
}

// ZPopMin queues ZPOPMIN; see Client.ZPopMin.
func (b *Batch) ZPopMin(key string) *Future[Z] { return enqueue(b, keyCmd(decZ, "ZPOPMIN", key)) }

// ZPopMax removes and returns the member with the highest score, or Nil.
func (c *Client) ZPopMax(ctx context.Context, key string) (Z, error) {
	return run(ctx, c, keyCmd(decZ, "ZPOPMAX", key))
}

// ZPopMax queues ZPOPMAX; see Client.ZPopMax.
func (b *Batch) ZPopMax(key string) *Future[Z] { return enqueue(b, keyCmd(decZ, "ZPOPMAX", key)) }

// BZPopMin is ZPopMin over several keys that waits up to timeout (0: until
// ctx ends); Nil on timeout. It runs on a dedicated connection.
func (c *Client) BZPopMin(ctx context.Context, timeout time.Duration, keys ...string) (KeyZ, error) {
	return run(ctx, c, bzpopCmd("BZPOPMIN", timeout, keys))
}

// BZPopMin queues BZPOPMIN; the batch then runs on a dedicated connection.
func (b *Batch) BZPopMin(timeout time.Duration, keys ...string) *Future[KeyZ] {
	return enqueue(b, bzpopCmd("BZPOPMIN", timeout, keys))
}

// BZPopMax is BZPopMin for the highest score.
func (c *Client) BZPopMax(ctx context.Context, timeout time.Duration, keys ...string) (KeyZ, error) {
	return run(ctx, c, bzpopCmd("BZPOPMAX", timeout, keys))
}

// BZPopMax queues BZPOPMAX; the batch then runs on a dedicated connection.
func (b *Batch) BZPopMax(timeout time.Duration, keys ...string) *Future[KeyZ] {
	return enqueue(b, bzpopCmd("BZPOPMAX", timeout, keys))
}
