package zipline

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/internal/testkit"
)

// The commands typed since the spec, family by family, on Redis 7.0 and
// Valkey 9.1 in RESP3 and RESP2. Commands one server lacks are refused by
// the client there, naming the versions that have them.

func TestStringCommandsFromTheSpec(t *testing.T) {
	onEveryServer(t, func(t *testing.T, c *Client, kind testkit.Kind) {
		ctx := context.Background()
		mustOK(t, c.Set(ctx, "s", []byte("Hello World")))
		eq(t, "GetRange", string(must(c.GetRange(ctx, "s", 0, 4))(t)), "Hello")
		eq(t, "SetRange", must(c.SetRange(ctx, "s", 6, []byte("Redis")))(t), int64(11))
		eq(t, "after SetRange", string(must(c.Get(ctx, "s"))(t)), "Hello Redis")
		mustOK(t, c.Set(ctx, "l1", []byte("ohmytext")))
		mustOK(t, c.Set(ctx, "l2", []byte("mynewtext")))
		eq(t, "LCS", string(must(c.LCS(ctx, "l1", "l2"))(t)), "mytext")
		eq(t, "LCSLen", must(c.LCSLen(ctx, "l1", "l2"))(t), int64(6))
		if kind == testkit.Redis {
			_, err := c.SetIfEq(ctx, "s", []byte("x"), []byte("Hello Redis"))
			if err == nil {
				t.Error("SET IFEQ on Redis 7.0: no error")
			}
			_, err = c.DelIfEq(ctx, "s", []byte("x"))
			notOnServer(t, "DelIfEq", err)
			_, err = c.MSetEx(ctx, EX(time.Minute), KeyValue{"m1", []byte("1")})
			notOnServer(t, "MSetEx", err)
			return
		}
		eq(t, "SetIfEq mismatch", must(c.SetIfEq(ctx, "s", []byte("x"), []byte("nope")))(t), false)
		eq(t, "SetIfEq", must(c.SetIfEq(ctx, "s", []byte("x"), []byte("Hello Redis"), EX(time.Minute)))(t), true)
		eq(t, "after SetIfEq", string(must(c.Get(ctx, "s"))(t)), "x")
		if ttl := must(c.TTL(ctx, "s"))(t); ttl <= 0 {
			t.Errorf("SetIfEq EX: TTL %v", ttl)
		}
		eq(t, "DelIfEq mismatch", must(c.DelIfEq(ctx, "s", []byte("y")))(t), false)
		eq(t, "DelIfEq", must(c.DelIfEq(ctx, "s", []byte("x")))(t), true)
		eq(t, "MSetEx", must(c.MSetEx(ctx, EX(time.Minute), KeyValue{"m1", []byte("1")}, KeyValue{"m2", []byte("2")}))(t), true)
		if ttl := must(c.TTL(ctx, "m2"))(t); ttl <= 0 {
			t.Errorf("MSetEx: TTL %v", ttl)
		}
	})
}

func TestKeyCommandsFromTheSpec(t *testing.T) {
	onEveryServer(t, func(t *testing.T, c *Client, _ testkit.Kind) {
		ctx := context.Background()
		mustOK(t, c.Set(ctx, "k", []byte("v")))
		eq(t, "ExpireIf XX without expiry", must(c.ExpireIf(ctx, "k", time.Minute, IfExpiry))(t), false)
		eq(t, "ExpireIf NX", must(c.ExpireIf(ctx, "k", time.Minute, IfNoExpiry))(t), true)
		eq(t, "ExpireIf GT sooner", must(c.ExpireIf(ctx, "k", time.Second, IfLater))(t), false)
		eq(t, "ExpireIf LT sooner", must(c.ExpireIf(ctx, "k", 30*time.Second, IfSooner))(t), true)
		eq(t, "PExpire", must(c.PExpire(ctx, "k", 20*time.Second))(t), true)
		at := time.Now().Add(time.Hour).Truncate(time.Second)
		eq(t, "ExpireAtIf LT later", must(c.ExpireAtIf(ctx, "k", at, IfSooner))(t), false)
		eq(t, "ExpireAt", must(c.ExpireAt(ctx, "k", at))(t), true)
		if et := must(c.ExpireTime(ctx, "k"))(t); !et.Equal(at) {
			t.Errorf("ExpireTime = %v, want %v", et, at)
		}
		if et := must(c.PExpireTime(ctx, "k"))(t); !et.Equal(at) {
			t.Errorf("PExpireTime = %v, want %v", et, at)
		}
		mustOK(t, c.Set(ctx, "n", []byte("v")))
		if et := must(c.ExpireTime(ctx, "n"))(t); !et.IsZero() {
			t.Errorf("ExpireTime without an expiry = %v, want the zero time", et)
		}
		if _, err := c.ExpireTime(ctx, "missing"); !errors.Is(err, Nil) {
			t.Errorf("ExpireTime of a missing key: %v", err)
		}
		eq(t, "RenameNX onto an existing key", must(c.RenameNX(ctx, "k", "n"))(t), false)
		eq(t, "RenameNX", must(c.RenameNX(ctx, "k", "k2"))(t), true)
		eq(t, "Copy", must(c.Copy(ctx, "k2", "k3", false))(t), true)
		eq(t, "Copy onto an existing key", must(c.Copy(ctx, "k2", "k3", false))(t), false)
		eq(t, "Copy REPLACE", must(c.Copy(ctx, "n", "k3", true))(t), true)
		eq(t, "CopyToDB", must(c.CopyToDB(ctx, "n", "n", 1, false))(t), true)
		eq(t, "Move onto an existing key", must(c.Move(ctx, "n", 1))(t), false)
		if k := must(c.RandomKey(ctx))(t); k == "" {
			t.Error("RandomKey returned nothing")
		}
		dump := must(c.Dump(ctx, "k2"))(t)
		mustOK(t, c.Restore(ctx, "k4", 0, dump))
		if err := c.Restore(ctx, "k4", 0, dump); err == nil {
			t.Error("Restore onto an existing key: no error")
		}
		mustOK(t, c.RestoreReplace(ctx, "k4", time.Minute, dump))
		eq(t, "restored", string(must(c.Get(ctx, "k4"))(t)), "v")
		if _, err := c.Dump(ctx, "missing"); !errors.Is(err, Nil) {
			t.Errorf("Dump of a missing key: %v", err)
		}
		eq(t, "ObjectEncoding", must(c.ObjectEncoding(ctx, "k4"))(t), "embstr")
		if _, err := c.ObjectEncoding(ctx, "missing"); !errors.Is(err, Nil) {
			t.Errorf("ObjectEncoding of a missing key: %v", err)
		}
		if n := must(c.ObjectRefCount(ctx, "k4"))(t); n < 1 {
			t.Errorf("ObjectRefCount = %d", n)
		}
		if d := must(c.ObjectIdleTime(ctx, "k4"))(t); d < 0 || d > time.Minute {
			t.Errorf("ObjectIdleTime = %v", d)
		}
		if _, err := c.ObjectFreq(ctx, "k4"); err == nil {
			t.Error("ObjectFreq without an LFU policy: no error")
		}
		must(c.RPush(ctx, "ids", []byte("3"), []byte("1"), []byte("2")))(t)
		mustOK(t, c.MSet(ctx, KeyValue{"w_1", []byte("30")}, KeyValue{"w_2", []byte("20")}, KeyValue{"w_3", []byte("10")},
			KeyValue{"o_1", []byte("one")}, KeyValue{"o_3", []byte("three")}))
		got := must(c.Sort(ctx, "ids", SortArgs{}))(t)
		eq(t, "Sort", string(slices.Concat(got...)), "123")
		got = must(c.Sort(ctx, "ids", SortArgs{By: "w_*", Get: []string{"#", "o_*"}, Desc: true, Offset: 0, Count: 2}))(t)
		if len(got) != 4 || string(got[0]) != "1" || string(got[1]) != "one" || string(got[2]) != "2" || got[3] != nil {
			t.Errorf("Sort BY GET DESC LIMIT = %q", got)
		}
		eq(t, "SortRO ALPHA", string(slices.Concat(must(c.SortRO(ctx, "ids", SortArgs{Alpha: true}))(t)...)), "123")
		eq(t, "SortStore", must(c.SortStore(ctx, "ids", "sorted", SortArgs{}))(t), int64(3))
		eq(t, "Keys", len(must(c.Keys(ctx, "w_*"))(t)), 3)
	})
}

func TestHashCommandsFromTheSpec(t *testing.T) {
	onEveryServer(t, func(t *testing.T, c *Client, kind testkit.Kind) {
		ctx := context.Background()
		must(c.HSet(ctx, "h", FieldValue{"a", []byte("1")}, FieldValue{"b", []byte("22")}))(t)
		eq(t, "HStrLen", must(c.HStrLen(ctx, "h", "b"))(t), int64(2))
		fields := must(c.HRandField(ctx, "h", 5))(t)
		slices.Sort(fields)
		eq(t, "HRandField", slices.Equal(fields, []string{"a", "b"}), true)
		eq(t, "HRandField negative", len(must(c.HRandField(ctx, "h", -5))(t)), 5)
		fvs := must(c.HRandFieldWithValues(ctx, "h", 5))(t)
		slices.SortFunc(fvs, func(x, y FieldValue) int { return cmpString(x.Field, y.Field) })
		if len(fvs) != 2 || fvs[1].Field != "b" || string(fvs[1].Value) != "22" {
			t.Errorf("HRandFieldWithValues = %+v", fvs)
		}
		if kind == testkit.Redis {
			_, err := c.HExpire(ctx, "h", time.Minute, "", "a")
			notOnServer(t, "HExpire", err)
			_, err = c.HGetEx(ctx, "h", EX(time.Minute), "a")
			notOnServer(t, "HGetEx", err)
			b := c.Batch()
			f := b.HTTL("h", "a")
			g := b.HStrLen("h", "a")
			b.Exec(ctx)
			notOnServer(t, "HTTL in a batch", f.Err())
			if g.Val() != 1 {
				t.Errorf("the batch's other command: %v %v", g.Val(), g.Err())
			}
			return
		}
		codes := must(c.HExpire(ctx, "h", time.Minute, "", "a", "missing"))(t)
		eq(t, "HExpire", slices.Equal(codes, []int64{1, -2}), true)
		eq(t, "HExpire NX", slices.Equal(must(c.HExpire(ctx, "h", time.Hour, IfNoExpiry, "a"))(t), []int64{0}), true)
		eq(t, "HPExpire sub-second", slices.Equal(must(c.HExpire(ctx, "h", 90500*time.Millisecond, "", "a"))(t), []int64{1}), true)
		ttls := must(c.HTTL(ctx, "h", "a", "b", "missing"))(t)
		if len(ttls) != 3 || ttls[0] <= 80*time.Second || ttls[1] != NoExpiry || ttls[2] != NoKey {
			t.Errorf("HTTL = %v", ttls)
		}
		if p := must(c.HPTTL(ctx, "h", "a"))(t); p[0] <= 80*time.Second || p[0] > 91*time.Second {
			t.Errorf("HPTTL = %v", p)
		}
		at := time.Now().Add(time.Hour).Truncate(time.Millisecond)
		eq(t, "HExpireAt", slices.Equal(must(c.HExpireAt(ctx, "h", at, "", "b"))(t), []int64{1}), true)
		if et := must(c.HExpireTime(ctx, "h", "b", "missing"))(t); et[0] != at.UnixMilli() || et[1] != -2 {
			t.Errorf("HExpireTime = %v, want [%d -2]", et, at.UnixMilli())
		}
		eq(t, "HPersist", slices.Equal(must(c.HPersist(ctx, "h", "b", "missing"))(t), []int64{1, -2}), true)
		vals := must(c.HGetEx(ctx, "h", Persist(), "a", "missing"))(t)
		if len(vals) != 2 || string(vals[0]) != "1" || vals[1] != nil {
			t.Errorf("HGetEx = %q", vals)
		}
		eq(t, "HGetEx persisted", must(c.HTTL(ctx, "h", "a"))(t)[0], NoExpiry)
		eq(t, "HSetEx", must(c.HSetEx(ctx, "h2", EX(time.Minute), FieldValue{"x", []byte("1")}, FieldValue{"y", []byte("")}))(t), true)
		if ttl := must(c.HTTL(ctx, "h2", "y"))(t); ttl[0] <= 0 {
			t.Errorf("HSetEx: HTTL %v", ttl)
		}
		got := must(c.HGetDel(ctx, "h2", "x", "y", "z"))(t)
		if len(got) != 3 || string(got[0]) != "1" || got[1] == nil || len(got[1]) != 0 || got[2] != nil {
			t.Errorf("HGetDel = %q", got)
		}
		eq(t, "HLen after HGetDel", must(c.HLen(ctx, "h2"))(t), int64(0))
		if _, err := c.HGetEx(ctx, "h", KeepTTL(), "a"); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("HGetEx KeepTTL: %v, want an ArgumentError", err)
		}
	})
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func TestListCommandsFromTheSpec(t *testing.T) {
	onEveryServer(t, func(t *testing.T, c *Client, _ testkit.Kind) {
		ctx := context.Background()
		eq(t, "LPushX missing", must(c.LPushX(ctx, "l", []byte("x")))(t), int64(0))
		must(c.RPush(ctx, "l", []byte("a"), []byte("b"), []byte("c"), []byte("b")))(t)
		eq(t, "RPushX", must(c.RPushX(ctx, "l", []byte("d")))(t), int64(5))
		eq(t, "LPos", must(c.LPos(ctx, "l", []byte("b"), LPosArgs{}))(t), int64(1))
		eq(t, "LPos rank 2", must(c.LPos(ctx, "l", []byte("b"), LPosArgs{Rank: 2}))(t), int64(3))
		if _, err := c.LPos(ctx, "l", []byte("zz"), LPosArgs{}); !errors.Is(err, Nil) {
			t.Errorf("LPos of nothing: %v", err)
		}
		eq(t, "LPosCount", slices.Equal(must(c.LPosCount(ctx, "l", []byte("b"), 0, LPosArgs{}))(t), []int64{1, 3}), true)
		got := must(c.LPopCount(ctx, "l", 2))(t)
		eq(t, "LPopCount", string(slices.Concat(got...)), "ab")
		got = must(c.RPopCount(ctx, "l", 2))(t)
		eq(t, "RPopCount", string(slices.Concat(got...)), "db")
		if _, err := c.LPopCount(ctx, "missing", 2); !errors.Is(err, Nil) {
			t.Errorf("LPopCount of a missing list: %v", err)
		}
		eq(t, "RPopLPush", string(must(c.RPopLPush(ctx, "l", "l2"))(t)), "c")
		kv := must(c.LMPop(ctx, Left, 5, "missing", "l2"))(t)
		if kv.Key != "l2" || len(kv.Values) != 1 || string(kv.Values[0]) != "c" {
			t.Errorf("LMPop = %+v", kv)
		}
		if _, err := c.LMPop(ctx, Right, 1, "missing"); !errors.Is(err, Nil) {
			t.Errorf("LMPop of nothing: %v", err)
		}
		if _, err := c.BLMPop(ctx, 50*time.Millisecond, Left, 1, "missing"); !errors.Is(err, Nil) {
			t.Errorf("BLMPop timeout: %v", err)
		}
		must(c.RPush(ctx, "l3", []byte("z")))(t)
		eq(t, "BRPopLPush", string(must(c.BRPopLPush(ctx, "l3", "l4", time.Second))(t)), "z")
		kv = must(c.BLMPop(ctx, time.Second, Right, 1, "l4"))(t)
		if kv.Key != "l4" || string(kv.Values[0]) != "z" {
			t.Errorf("BLMPop = %+v", kv)
		}
	})
}

func TestSetCommandsFromTheSpec(t *testing.T) {
	onEveryServer(t, func(t *testing.T, c *Client, _ testkit.Kind) {
		ctx := context.Background()
		must(c.SAdd(ctx, "a", "1", "2", "3"))(t)
		must(c.SAdd(ctx, "b", "2", "3", "4"))(t)
		eq(t, "SInterCard", must(c.SInterCard(ctx, 0, "a", "b"))(t), int64(2))
		eq(t, "SInterCard LIMIT", must(c.SInterCard(ctx, 1, "a", "b"))(t), int64(1))
		eq(t, "SInterStore", must(c.SInterStore(ctx, "i", "a", "b"))(t), int64(2))
		eq(t, "SUnionStore", must(c.SUnionStore(ctx, "u", "a", "b"))(t), int64(4))
		eq(t, "SDiffStore", must(c.SDiffStore(ctx, "d", "a", "b"))(t), int64(1))
		eq(t, "SMove", must(c.SMove(ctx, "a", "b", "1"))(t), true)
		eq(t, "SMove absent", must(c.SMove(ctx, "a", "b", "9"))(t), false)
		all := must(c.SRandMemberN(ctx, "b", 10))(t)
		slices.Sort(all)
		eq(t, "SRandMemberN", slices.Equal(all, []string{"1", "2", "3", "4"}), true)
		eq(t, "SRandMemberN negative", len(must(c.SRandMemberN(ctx, "b", -6))(t)), 6)
		eq(t, "SPopN", len(must(c.SPopN(ctx, "b", 3))(t)), 3)
		eq(t, "SCard after SPopN", must(c.SCard(ctx, "b"))(t), int64(1))
	})
}

func TestSortedSetCommandsFromTheSpec(t *testing.T) {
	onEveryServer(t, func(t *testing.T, c *Client, kind testkit.Kind) {
		ctx := context.Background()
		must(c.ZAdd(ctx, "z", Z{"a", 1}, Z{"b", 2}, Z{"c", 3}))(t)
		eq(t, "ZAddArgs NX", must(c.ZAddArgs(ctx, "z", ZAddArgs{NX: true, Members: []Z{{"a", 10}, {"d", 4}}}))(t), int64(1))
		eq(t, "ZAddArgs GT CH", must(c.ZAddArgs(ctx, "z", ZAddArgs{GT: true, Ch: true, Members: []Z{{"a", 0}, {"b", 20}}}))(t), int64(1))
		eq(t, "ZAddIncr", must(c.ZAddIncr(ctx, "z", ZAddArgs{XX: true}, 1, "a"))(t), 2.0)
		if _, err := c.ZAddIncr(ctx, "z", ZAddArgs{NX: true}, 1, "a"); !errors.Is(err, Nil) {
			t.Errorf("ZAddIncr NX on an existing member: %v, want Nil", err)
		}
		ms := must(c.ZMScore(ctx, "z", "a", "missing"))(t)
		if len(ms) != 2 || ms[0] != 2 || !math.IsNaN(ms[1]) {
			t.Errorf("ZMScore = %v", ms)
		}
		eq(t, "ZRevRange", slices.Equal(must(c.ZRevRange(ctx, "z", 0, 1))(t), []string{"b", "d"}), true)
		if zs := must(c.ZRevRangeWithScores(ctx, "z", 0, 0))(t); len(zs) != 1 || zs[0] != (Z{"b", 20}) {
			t.Errorf("ZRevRangeWithScores = %v", zs)
		}
		byScore := must(c.ZRangeArgs(ctx, ZRangeArgs{Key: "z", Start: "(2", Stop: "+inf", ByScore: true, Offset: 0, Count: 2}))(t)
		eq(t, "ZRangeArgs BYSCORE LIMIT", slices.Equal(byScore, []string{"c", "d"}), true)
		rev := must(c.ZRangeArgsWithScores(ctx, ZRangeArgs{Key: "z", Start: "+inf", Stop: "3", ByScore: true, Rev: true}))(t)
		if len(rev) != 3 || rev[0].Member != "b" || rev[2].Member != "c" {
			t.Errorf("ZRangeArgsWithScores REV = %v", rev)
		}
		eq(t, "ZRangeStore", must(c.ZRangeStore(ctx, "z2", ZRangeArgs{Key: "z", Start: "0", Stop: "1"}))(t), int64(2))
		must(c.ZAdd(ctx, "lex", Z{"a", 0}, Z{"b", 0}, Z{"c", 0}))(t)
		eq(t, "ZLexCount", must(c.ZLexCount(ctx, "lex", "[b", "+"))(t), int64(2))
		eq(t, "ZRangeArgs BYLEX", slices.Equal(must(c.ZRangeArgs(ctx, ZRangeArgs{Key: "lex", Start: "-", Stop: "(c", ByLex: true}))(t), []string{"a", "b"}), true)
		eq(t, "ZRemRangeByLex", must(c.ZRemRangeByLex(ctx, "lex", "[a", "[a"))(t), int64(1))
		eq(t, "ZRemRangeByRank", must(c.ZRemRangeByRank(ctx, "lex", 0, 0))(t), int64(1))
		eq(t, "ZRemRangeByScore", must(c.ZRemRangeByScore(ctx, "lex", "-inf", "+inf"))(t), int64(1))
		must(c.ZAdd(ctx, "p", Z{"x", 1}, Z{"y", 2}, Z{"z", 3}))(t)
		if got := must(c.ZPopMinN(ctx, "p", 2))(t); len(got) != 2 || got[0] != (Z{"x", 1}) {
			t.Errorf("ZPopMinN = %v", got)
		}
		if got := must(c.ZPopMaxN(ctx, "p", 5))(t); len(got) != 1 || got[0] != (Z{"z", 3}) {
			t.Errorf("ZPopMaxN = %v", got)
		}
		members := must(c.ZRandMember(ctx, "z", 10))(t)
		eq(t, "ZRandMember", len(members), 4)
		if zs := must(c.ZRandMemberWithScores(ctx, "z", 10))(t); len(zs) != 4 {
			t.Errorf("ZRandMemberWithScores = %v", zs)
		}
		must(c.ZAdd(ctx, "u1", Z{"a", 1}, Z{"b", 2}))(t)
		must(c.ZAdd(ctx, "u2", Z{"b", 3}, Z{"c", 4}))(t)
		eq(t, "ZUnion", slices.Equal(must(c.ZUnion(ctx, ZStore{Keys: []string{"u1", "u2"}}))(t), []string{"a", "c", "b"}), true)
		zu := must(c.ZUnionWithScores(ctx, ZStore{Keys: []string{"u1", "u2"}, Weights: []float64{2, 1}, Aggregate: "MAX"}))(t)
		if len(zu) != 3 || zu[2] != (Z{"c", 4}) {
			t.Errorf("ZUnionWithScores WEIGHTS AGGREGATE = %v", zu)
		}
		eq(t, "ZInter", slices.Equal(must(c.ZInter(ctx, ZStore{Keys: []string{"u1", "u2"}}))(t), []string{"b"}), true)
		if zi := must(c.ZInterWithScores(ctx, ZStore{Keys: []string{"u1", "u2"}}))(t); len(zi) != 1 || zi[0] != (Z{"b", 5}) {
			t.Errorf("ZInterWithScores = %v", zi)
		}
		eq(t, "ZUnionStore", must(c.ZUnionStore(ctx, "us", ZStore{Keys: []string{"u1", "u2"}}))(t), int64(3))
		eq(t, "ZInterStore", must(c.ZInterStore(ctx, "is", ZStore{Keys: []string{"u1", "u2"}}))(t), int64(1))
		eq(t, "ZInterCard", must(c.ZInterCard(ctx, 0, "u1", "u2"))(t), int64(1))
		eq(t, "ZDiff", slices.Equal(must(c.ZDiff(ctx, "u1", "u2"))(t), []string{"a"}), true)
		if zd := must(c.ZDiffWithScores(ctx, "u1", "u2"))(t); len(zd) != 1 || zd[0] != (Z{"a", 1}) {
			t.Errorf("ZDiffWithScores = %v", zd)
		}
		eq(t, "ZDiffStore", must(c.ZDiffStore(ctx, "ds", "u1", "u2"))(t), int64(1))
		kz := must(c.ZMPop(ctx, MinScore, 2, "missing", "u2"))(t)
		if kz.Key != "u2" || len(kz.Members) != 2 || kz.Members[0] != (Z{"b", 3}) {
			t.Errorf("ZMPop = %+v", kz)
		}
		if _, err := c.BZMPop(ctx, 50*time.Millisecond, MaxScore, 1, "missing"); !errors.Is(err, Nil) {
			t.Errorf("BZMPop timeout: %v", err)
		}
		if kind == testkit.Valkey { // WITHSCORE: Redis 7.2, Valkey 7.2
			if rs := must(c.ZRankWithScore(ctx, "u1", "b"))(t); rs != (RankScore{1, 2}) {
				t.Errorf("ZRankWithScore = %+v", rs)
			}
			if rs := must(c.ZRevRankWithScore(ctx, "u1", "b"))(t); rs != (RankScore{0, 2}) {
				t.Errorf("ZRevRankWithScore = %+v", rs)
			}
			if _, err := c.ZRankWithScore(ctx, "u1", "missing"); !errors.Is(err, Nil) {
				t.Errorf("ZRankWithScore of a missing member: %v", err)
			}
		}
	})
}
