package zipline

import (
	"context"
	"time"
)

func zaddArgs(key string, members []Z) []arg {
	args := make([]arg, 0, 1+2*len(members))
	args = append(args, str(key))
	for _, m := range members {
		args = append(args, flt(m.Score), str(m.Member))
	}
	return args
}

// ZAdd adds members with their scores (updating existing scores) and
// returns how many were new.
func (c *Client) ZAdd(ctx context.Context, key string, members ...Z) (int64, error) {
	return do(ctx, c, decInt, "ZADD", zaddArgs(key, members)...)
}

// ZRem removes members and returns how many were present.
func (c *Client) ZRem(ctx context.Context, key string, members ...string) (int64, error) {
	return do(ctx, c, decInt, "ZREM", keyAndMembers(key, members)...)
}

// ZScore returns member's score, or Nil if it is not in the set.
func (c *Client) ZScore(ctx context.Context, key, member string) (float64, error) {
	return do(ctx, c, decFloat, "ZSCORE", str(key), str(member))
}

// ZIncrBy adds incr to member's score and returns the new score.
func (c *Client) ZIncrBy(ctx context.Context, key string, incr float64, member string) (float64, error) {
	return do(ctx, c, decFloat, "ZINCRBY", str(key), flt(incr), str(member))
}

// ZCard returns the number of members.
func (c *Client) ZCard(ctx context.Context, key string) (int64, error) {
	return do(ctx, c, decInt, "ZCARD", str(key))
}

// ZCount returns how many members have a score between min and max, given
// in Redis's syntax ("1", "(1" exclusive, "-inf", "+inf").
func (c *Client) ZCount(ctx context.Context, key, min, max string) (int64, error) {
	return do(ctx, c, decInt, "ZCOUNT", str(key), str(min), str(max))
}

// ZRange returns the members ranked start to stop inclusive, lowest score
// first; negative ranks count from the end.
func (c *Client) ZRange(ctx context.Context, key string, start, stop int64) ([]string, error) {
	return do(ctx, c, decStrings, "ZRANGE", str(key), num(start), num(stop))
}

// ZRangeWithScores is ZRange with each member's score.
func (c *Client) ZRangeWithScores(ctx context.Context, key string, start, stop int64) ([]Z, error) {
	return do(ctx, c, decZs, "ZRANGE", str(key), num(start), num(stop), str("WITHSCORES"))
}

// ZRangeByScore returns the members with scores between min and max (see
// ZCount for the syntax), lowest first.
func (c *Client) ZRangeByScore(ctx context.Context, key, min, max string) ([]string, error) {
	return do(ctx, c, decStrings, "ZRANGE", str(key), str(min), str(max), str("BYSCORE"))
}

// ZRank returns member's rank, lowest score first, or Nil if absent.
func (c *Client) ZRank(ctx context.Context, key, member string) (int64, error) {
	return do(ctx, c, decInt, "ZRANK", str(key), str(member))
}

// ZRevRank returns member's rank, highest score first, or Nil if absent.
func (c *Client) ZRevRank(ctx context.Context, key, member string) (int64, error) {
	return do(ctx, c, decInt, "ZREVRANK", str(key), str(member))
}

// ZPopMin removes and returns the member with the lowest score, or Nil.
func (c *Client) ZPopMin(ctx context.Context, key string) (Z, error) {
	return do(ctx, c, decZ, "ZPOPMIN", str(key))
}

// ZPopMax removes and returns the member with the highest score, or Nil.
func (c *Client) ZPopMax(ctx context.Context, key string) (Z, error) {
	return do(ctx, c, decZ, "ZPOPMAX", str(key))
}

// BZPopMin is ZPopMin over several keys that waits up to timeout (0: until
// ctx ends); Nil on timeout. It runs on a dedicated connection.
func (c *Client) BZPopMin(ctx context.Context, timeout time.Duration, keys ...string) (KeyZ, error) {
	return doBlocking(ctx, c, decKeyZ, "BZPOPMIN", keysThenTimeout(keys, timeout)...)
}

// BZPopMax is BZPopMin for the highest score.
func (c *Client) BZPopMax(ctx context.Context, timeout time.Duration, keys ...string) (KeyZ, error) {
	return doBlocking(ctx, c, decKeyZ, "BZPOPMAX", keysThenTimeout(keys, timeout)...)
}

// ZAdd queues ZADD; see Client.ZAdd.
func (b *Batch) ZAdd(key string, members ...Z) *Future[int64] {
	return add(b, decInt, "ZADD", zaddArgs(key, members)...)
}

// ZRem queues ZREM; see Client.ZRem.
func (b *Batch) ZRem(key string, members ...string) *Future[int64] {
	return add(b, decInt, "ZREM", keyAndMembers(key, members)...)
}

// ZScore queues ZSCORE; see Client.ZScore.
func (b *Batch) ZScore(key, member string) *Future[float64] {
	return add(b, decFloat, "ZSCORE", str(key), str(member))
}

// ZIncrBy queues ZINCRBY; see Client.ZIncrBy.
func (b *Batch) ZIncrBy(key string, incr float64, member string) *Future[float64] {
	return add(b, decFloat, "ZINCRBY", str(key), flt(incr), str(member))
}

// ZCard queues ZCARD; see Client.ZCard.
func (b *Batch) ZCard(key string) *Future[int64] { return add(b, decInt, "ZCARD", str(key)) }

// ZCount queues ZCOUNT; see Client.ZCount.
func (b *Batch) ZCount(key, min, max string) *Future[int64] {
	return add(b, decInt, "ZCOUNT", str(key), str(min), str(max))
}

// ZRange queues ZRANGE; see Client.ZRange.
func (b *Batch) ZRange(key string, start, stop int64) *Future[[]string] {
	return add(b, decStrings, "ZRANGE", str(key), num(start), num(stop))
}

// ZRangeWithScores queues ZRANGE ... WITHSCORES; see Client.ZRangeWithScores.
func (b *Batch) ZRangeWithScores(key string, start, stop int64) *Future[[]Z] {
	return add(b, decZs, "ZRANGE", str(key), num(start), num(stop), str("WITHSCORES"))
}

// ZRank queues ZRANK; see Client.ZRank.
func (b *Batch) ZRank(key, member string) *Future[int64] {
	return add(b, decInt, "ZRANK", str(key), str(member))
}

// ZPopMin queues ZPOPMIN; see Client.ZPopMin.
func (b *Batch) ZPopMin(key string) *Future[Z] { return add(b, decZ, "ZPOPMIN", str(key)) }

// ZPopMax queues ZPOPMAX; see Client.ZPopMax.
func (b *Batch) ZPopMax(key string) *Future[Z] { return add(b, decZ, "ZPOPMAX", str(key)) }
