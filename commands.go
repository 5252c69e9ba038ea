package zipline

import (
	"context"
	"iter"
	"time"
)

// Commands is every command a Client runs (subscriptions aside): what the
// shared Client, a
// Client from Dedicated and the Client passed to a Watch callback all
// offer. Accept it instead of *Client where code only runs commands, so
// that tests can pass a fake (embed Commands in a struct and override the
// methods the test needs).
//
// TestCommandsInterfaceIsComplete keeps it equal to the Client's command
// methods.
type Commands interface {
	Append(ctx context.Context, key string, val []byte) (int64, error)
	BLMove(ctx context.Context, src, dst string, from, to ListEnd, timeout time.Duration) ([]byte, error)
	BLPop(ctx context.Context, timeout time.Duration, keys ...string) (KeyValue, error)
	BRPop(ctx context.Context, timeout time.Duration, keys ...string) (KeyValue, error)
	BZPopMax(ctx context.Context, timeout time.Duration, keys ...string) (KeyZ, error)
	BZPopMin(ctx context.Context, timeout time.Duration, keys ...string) (KeyZ, error)
	ConfigGet(ctx context.Context, pattern string) (map[string]string, error)
	DBSize(ctx context.Context) (int64, error)
	Decr(ctx context.Context, key string) (int64, error)
	DecrBy(ctx context.Context, key string, n int64) (int64, error)
	Del(ctx context.Context, keys ...string) (int64, error)
	Do(ctx context.Context, args ...any) (Value, error)
	Echo(ctx context.Context, msg string) (string, error)
	Exists(ctx context.Context, keys ...string) (int64, error)
	Expire(ctx context.Context, key string, d time.Duration) (bool, error)
	ExpireAt(ctx context.Context, key string, t time.Time) (bool, error)
	FlushAll(ctx context.Context) error
	FlushDB(ctx context.Context) error
	Get(ctx context.Context, key string) ([]byte, error)
	GetDel(ctx context.Context, key string) ([]byte, error)
	GetEx(ctx context.Context, key string, exp ...Expiry) ([]byte, error)
	GetSet(ctx context.Context, key string, val []byte) ([]byte, error)
	HDel(ctx context.Context, key string, fields ...string) (int64, error)
	HExists(ctx context.Context, key, field string) (bool, error)
	HGet(ctx context.Context, key, field string) ([]byte, error)
	HGetAll(ctx context.Context, key string) (map[string][]byte, error)
	HIncrBy(ctx context.Context, key, field string, n int64) (int64, error)
	HIncrByFloat(ctx context.Context, key, field string, f float64) (float64, error)
	HKeys(ctx context.Context, key string) ([]string, error)
	HLen(ctx context.Context, key string) (int64, error)
	HMGet(ctx context.Context, key string, fields ...string) ([][]byte, error)
	HScan(ctx context.Context, key string, opts ScanOptions) iter.Seq2[FieldValue, error]
	HSet(ctx context.Context, key string, fields ...FieldValue) (int64, error)
	HSetNX(ctx context.Context, key, field string, val []byte) (bool, error)
	HVals(ctx context.Context, key string) ([][]byte, error)
	Incr(ctx context.Context, key string) (int64, error)
	IncrBy(ctx context.Context, key string, n int64) (int64, error)
	IncrByFloat(ctx context.Context, key string, f float64) (float64, error)
	Info(ctx context.Context, sections ...string) (map[string]string, error)
	LIndex(ctx context.Context, key string, index int64) ([]byte, error)
	LInsert(ctx context.Context, key string, before bool, pivot, val []byte) (int64, error)
	LLen(ctx context.Context, key string) (int64, error)
	LMove(ctx context.Context, src, dst string, from, to ListEnd) ([]byte, error)
	LPop(ctx context.Context, key string) ([]byte, error)
	LPush(ctx context.Context, key string, vals ...[]byte) (int64, error)
	LRange(ctx context.Context, key string, start, stop int64) ([][]byte, error)
	LRem(ctx context.Context, key string, count int64, val []byte) (int64, error)
	LSet(ctx context.Context, key string, index int64, val []byte) error
	LTrim(ctx context.Context, key string, start, stop int64) error
	MGet(ctx context.Context, keys ...string) ([][]byte, error)
	MSet(ctx context.Context, pairs ...KeyValue) error
	MSetNX(ctx context.Context, pairs ...KeyValue) (bool, error)
	PTTL(ctx context.Context, key string) (time.Duration, error)
	Persist(ctx context.Context, key string) (bool, error)
	Ping(ctx context.Context) error
	Publish(ctx context.Context, channel string, msg []byte) (int64, error)
	RPop(ctx context.Context, key string) ([]byte, error)
	RPush(ctx context.Context, key string, vals ...[]byte) (int64, error)
	Rename(ctx context.Context, key, newKey string) error
	SAdd(ctx context.Context, key string, members ...string) (int64, error)
	SCard(ctx context.Context, key string) (int64, error)
	SDiff(ctx context.Context, keys ...string) ([]string, error)
	SInter(ctx context.Context, keys ...string) ([]string, error)
	SIsMember(ctx context.Context, key, member string) (bool, error)
	SMIsMember(ctx context.Context, key string, members ...string) ([]bool, error)
	SMembers(ctx context.Context, key string) ([]string, error)
	SPop(ctx context.Context, key string) (string, error)
	SRandMember(ctx context.Context, key string) (string, error)
	SRem(ctx context.Context, key string, members ...string) (int64, error)
	SScan(ctx context.Context, key string, opts ScanOptions) iter.Seq2[string, error]
	SUnion(ctx context.Context, keys ...string) ([]string, error)
	Scan(ctx context.Context, opts ScanOptions) iter.Seq2[string, error]
	Set(ctx context.Context, key string, val []byte, exp ...Expiry) error
	SetGet(ctx context.Context, key string, val []byte, exp ...Expiry) ([]byte, error)
	SetNX(ctx context.Context, key string, val []byte, exp ...Expiry) (bool, error)
	SetXX(ctx context.Context, key string, val []byte, exp ...Expiry) (bool, error)
	StrLen(ctx context.Context, key string) (int64, error)
	TTL(ctx context.Context, key string) (time.Duration, error)
	Touch(ctx context.Context, keys ...string) (int64, error)
	Type(ctx context.Context, key string) (string, error)
	Unlink(ctx context.Context, keys ...string) (int64, error)
	ZAdd(ctx context.Context, key string, members ...Z) (int64, error)
	ZCard(ctx context.Context, key string) (int64, error)
	ZCount(ctx context.Context, key, min, max string) (int64, error)
	ZIncrBy(ctx context.Context, key string, incr float64, member string) (float64, error)
	ZPopMax(ctx context.Context, key string) (Z, error)
	ZPopMin(ctx context.Context, key string) (Z, error)
	ZRange(ctx context.Context, key string, start, stop int64) ([]string, error)
	ZRangeByScore(ctx context.Context, key, min, max string) ([]string, error)
	ZRangeWithScores(ctx context.Context, key string, start, stop int64) ([]Z, error)
	ZRank(ctx context.Context, key, member string) (int64, error)
	ZRem(ctx context.Context, key string, members ...string) (int64, error)
	ZRevRank(ctx context.Context, key, member string) (int64, error)
	ZScan(ctx context.Context, key string, opts ScanOptions) iter.Seq2[Z, error]
	ZScore(ctx context.Context, key, member string) (float64, error)
}

var _ Commands = (*Client)(nil)
