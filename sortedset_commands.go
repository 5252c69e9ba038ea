package zipline

import "time"

// The sorted-set commands. Each is defined once; go generate makes its
// Client and Batch methods (commands_gen.go). Scores and ranges are given
// in the server's syntax where it has one: "1", "(1" exclusive, "-inf",
// "+inf" for scores; "[a", "(a", "-", "+" for lexicographic bounds.

func zmembers(args []arg, members []Z) []arg {
	for _, m := range members {
		args = append(args, flt(m.Score), str(m.Member))
	}
	return args
}

// ZAdd adds members with their scores (updating existing scores) and
// returns how many were new.
//
//zipline:twins ZAdd
func zaddCmd(key string, members ...Z) command[int64] {
	return define(decInt, specZADD, zmembers(append(make([]arg, 0, 1+2*len(members)), keyArg(key)), members)...)
}

// ZAddArgs are ZADD's options with its members.
type ZAddArgs struct {
	NX      bool // only add new members
	XX      bool // only update existing members
	GT      bool // only update to a greater score (new members are added)
	LT      bool // only update to a lesser score
	Ch      bool // count changed members, not only new ones
	Members []Z
}

func (a *ZAddArgs) appendTo(args []arg) []arg {
	for _, f := range []struct {
		on   bool
		word string
	}{{a.NX, "NX"}, {a.XX, "XX"}, {a.GT, "GT"}, {a.LT, "LT"}, {a.Ch, "CH"}} {
		if f.on {
			args = append(args, str(f.word))
		}
	}
	return args
}

// ZAddArgs is ZAdd with options (ZADD key NX|XX GT|LT CH ...), and returns
// how many members were added (with Ch, changed).
//
//zipline:twins ZAddArgs
func zaddArgsCmd(key string, a ZAddArgs) command[int64] {
	args := a.appendTo(append(make([]arg, 0, 6+2*len(a.Members)), keyArg(key)))
	return define(decInt, specZADD, zmembers(args, a.Members)...)
}

// ZAddIncr is ZADD ... INCR: it adds incr to member's score (as ZIncrBy)
// under the options of a, which hold no members, and returns the new score,
// or Nil when the options refused it.
//
//zipline:twins ZAddIncr
func zaddIncrCmd(key string, a ZAddArgs, incr float64, member string) command[float64] {
	args := a.appendTo(append(make([]arg, 0, 9), keyArg(key)))
	return define(decFloatOrNil, specZADD, append(args, str("INCR"), flt(incr), str(member))...)
}

// ZRem removes members and returns how many were present.
//
//zipline:twins ZRem
func zremCmd(key string, members ...string) command[int64] {
	return define(decInt, specZREM, keyAnd(key, members)...)
}

// ZScore returns member's score, or Nil if it is not in the set.
//
//zipline:twins ZScore
func zscoreCmd(key, member string) command[float64] {
	return define(decFloatOrNil, specZSCORE, keyArg(key), str(member))
}

// ZMScore returns the scores of members, with NaN for those not in the set.
//
//zipline:twins ZMScore
func zmscoreCmd(key string, members ...string) command[[]float64] {
	return define(decFloatsOrNaN, specZMSCORE, keyAnd(key, members)...)
}

// ZIncrBy adds incr to member's score and returns the new score.
//
//zipline:twins ZIncrBy
func zincrByCmd(key string, incr float64, member string) command[float64] {
	return define(decFloat, specZINCRBY, keyArg(key), flt(incr), str(member))
}

// ZCard returns the number of members.
//
//zipline:twins ZCard
func zcardCmd(key string) command[int64] { return define(decInt, specZCARD, keyArg(key)) }

// ZCount returns how many members have a score between min and max.
//
//zipline:twins ZCount
func zcountCmd(key, min, max string) command[int64] {
	return define(decInt, specZCOUNT, keyArg(key), str(min), str(max))
}

// ZLexCount returns how many members are between min and max
// lexicographically (all members having the same score).
//
//zipline:twins ZLexCount
func zlexCountCmd(key, min, max string) command[int64] {
	return define(decInt, specZLEXCOUNT, keyArg(key), str(min), str(max))
}

// ZRange returns the members ranked start to stop inclusive, lowest score
// first; negative ranks count from the end.
//
//zipline:twins ZRange
func zrangeCmd(key string, start, stop int64) command[[]string] {
	return define(decStrings, specZRANGE, keyArg(key), num(start), num(stop))
}

// ZRangeWithScores is ZRange with each member's score.
//
//zipline:twins ZRangeWithScores
func zrangeWithScoresCmd(key string, start, stop int64) command[[]Z] {
	return define(decZs, specZRANGE, keyArg(key), num(start), num(stop), str("WITHSCORES"))
}

// ZRangeByScore returns the members with scores between min and max,
// lowest first.
//
//zipline:twins ZRangeByScore
func zrangeByScoreCmd(key, min, max string) command[[]string] {
	return define(decStrings, specZRANGE, keyArg(key), str(min), str(max), str("BYSCORE"))
}

// ZRevRange returns the members ranked start to stop inclusive, highest
// score first.
//
//zipline:twins ZRevRange
func zrevRangeCmd(key string, start, stop int64) command[[]string] {
	return define(decStrings, specZRANGE, keyArg(key), num(start), num(stop), str("REV"))
}

// ZRevRangeWithScores is ZRevRange with each member's score.
//
//zipline:twins ZRevRangeWithScores
func zrevRangeWithScoresCmd(key string, start, stop int64) command[[]Z] {
	return define(decZs, specZRANGE, keyArg(key), num(start), num(stop), str("REV"), str("WITHSCORES"))
}

// ZRangeArgs is a ZRANGE query: by rank (the default), score or
// lexicographic order, either way round, with an optional page. Start and
// Stop are bounds in the server's syntax for the order chosen ("0", "-1";
// "(1", "+inf"; "[a", "-"). With Rev, Start is the higher bound.
type ZRangeArgs struct {
	Key           string
	Start, Stop   string
	ByScore       bool
	ByLex         bool
	Rev           bool
	Offset, Count int64 // a page, with ByScore or ByLex; Count 0: all
}

func (a *ZRangeArgs) appendTo(args []arg, withScores bool) []arg {
	args = append(args, str(a.Start), str(a.Stop))
	switch {
	case a.ByScore:
		args = append(args, str("BYSCORE"))
	case a.ByLex:
		args = append(args, str("BYLEX"))
	}
	if a.Rev {
		args = append(args, str("REV"))
	}
	if a.Offset != 0 || a.Count != 0 {
		count := a.Count
		if count == 0 {
			count = -1
		}
		args = append(args, str("LIMIT"), num(a.Offset), num(count))
	}
	if withScores {
		args = append(args, str("WITHSCORES"))
	}
	return args
}

// ZRangeArgs runs a ZRANGE query (see ZRangeArgs).
//
//zipline:twins ZRangeArgs buf=10
func zrangeArgsCmd(buf []arg, a ZRangeArgs) command[[]string] {
	return define(decStrings, specZRANGE, a.appendTo(append(buf, keyArg(a.Key)), false)...)
}

// ZRangeArgsWithScores is ZRangeArgs with each member's score.
//
//zipline:twins ZRangeArgsWithScores buf=10
func zrangeArgsWithScoresCmd(buf []arg, a ZRangeArgs) command[[]Z] {
	return define(decZs, specZRANGE, a.appendTo(append(buf, keyArg(a.Key)), true)...)
}

// ZRangeStore stores what ZRangeArgs returns in dst (ZRANGESTORE), and
// returns its size.
//
//zipline:twins ZRangeStore buf=11
func zrangeStoreCmd(buf []arg, dst string, a ZRangeArgs) command[int64] {
	return define(decInt, specZRANGESTORE, a.appendTo(append(buf, keyArg(dst), keyArg(a.Key)), false)...)
}

// ZRank returns member's rank, lowest score first, or Nil if absent.
//
//zipline:twins ZRank
func zrankCmd(key, member string) command[int64] {
	return define(decIntOrNil, specZRANK, keyArg(key), str(member))
}

// ZRevRank returns member's rank, highest score first, or Nil if absent.
//
//zipline:twins ZRevRank
func zrevRankCmd(key, member string) command[int64] {
	return define(decIntOrNil, specZREVRANK, keyArg(key), str(member))
}

// ZRankWithScore is ZRank with member's score (Redis 7.2, Valkey 7.2).
//
//zipline:twins ZRankWithScore
func zrankWithScoreCmd(key, member string) command[RankScore] {
	return define(decRankScore, specZRANK, keyArg(key), str(member), str("WITHSCORE"))
}

// ZRevRankWithScore is ZRevRank with member's score.
//
//zipline:twins ZRevRankWithScore
func zrevRankWithScoreCmd(key, member string) command[RankScore] {
	return define(decRankScore, specZREVRANK, keyArg(key), str(member), str("WITHSCORE"))
}

// ZRemRangeByRank removes the members ranked start to stop, and returns
// how many.
//
//zipline:twins ZRemRangeByRank
func zremRangeByRankCmd(key string, start, stop int64) command[int64] {
	return define(decInt, specZREMRANGEBYRANK, keyArg(key), num(start), num(stop))
}

// ZRemRangeByScore removes the members with scores between min and max,
// and returns how many.
//
//zipline:twins ZRemRangeByScore
func zremRangeByScoreCmd(key, min, max string) command[int64] {
	return define(decInt, specZREMRANGEBYSCORE, keyArg(key), str(min), str(max))
}

// ZRemRangeByLex removes the members between min and max
// lexicographically, and returns how many.
//
//zipline:twins ZRemRangeByLex
func zremRangeByLexCmd(key, min, max string) command[int64] {
	return define(decInt, specZREMRANGEBYLEX, keyArg(key), str(min), str(max))
}

// ZPopMin removes and returns the member with the lowest score, or Nil.
//
//zipline:twins ZPopMin
func zpopMinCmd(key string) command[Z] { return define(decZ, specZPOPMIN, keyArg(key)) }

// ZPopMax removes and returns the member with the highest score, or Nil.
//
//zipline:twins ZPopMax
func zpopMaxCmd(key string) command[Z] { return define(decZ, specZPOPMAX, keyArg(key)) }

// ZPopMinN removes and returns up to count members, lowest score first.
//
//zipline:twins ZPopMinN
func zpopMinNCmd(key string, count int64) command[[]Z] {
	return define(decZs, specZPOPMIN, keyArg(key), num(count))
}

// ZPopMaxN removes and returns up to count members, highest score first.
//
//zipline:twins ZPopMaxN
func zpopMaxNCmd(key string, count int64) command[[]Z] {
	return define(decZs, specZPOPMAX, keyArg(key), num(count))
}

// ZRandMember returns up to count distinct random members; a negative
// count may repeat them and returns -count.
//
//zipline:twins ZRandMember
func zrandMemberCmd(key string, count int64) command[[]string] {
	return define(decStrings, specZRANDMEMBER, keyArg(key), num(count))
}

// ZRandMemberWithScores is ZRandMember with each member's score.
//
//zipline:twins ZRandMemberWithScores
func zrandMemberWithScoresCmd(key string, count int64) command[[]Z] {
	return define(decZs, specZRANDMEMBER, keyArg(key), num(count), str("WITHSCORES"))
}

// ZStore is the input of ZUNION, ZINTER and their STORE forms: the sets,
// their weights (none: 1 each), and how scores aggregate ("SUM", the
// default, "MIN" or "MAX").
type ZStore struct {
	Keys      []string
	Weights   []float64
	Aggregate string
}

func (s *ZStore) appendTo(args []arg, withScores bool) []arg {
	args = append(args, num(int64(len(s.Keys))))
	args = append(args, keyArgs(s.Keys)...)
	if len(s.Weights) > 0 {
		args = append(args, str("WEIGHTS"))
		for _, w := range s.Weights {
			args = append(args, flt(w))
		}
	}
	if s.Aggregate != "" {
		args = append(args, str("AGGREGATE"), str(s.Aggregate))
	}
	if withScores {
		args = append(args, str("WITHSCORES"))
	}
	return args
}

// ZUnion returns the members of any of the sets.
//
//zipline:twins ZUnion
func zunionCmd(s ZStore) command[[]string] {
	return define(decStrings, specZUNION, s.appendTo(nil, false)...)
}

// ZUnionWithScores is ZUnion with each member's aggregated score.
//
//zipline:twins ZUnionWithScores
func zunionWithScoresCmd(s ZStore) command[[]Z] {
	return define(decZs, specZUNION, s.appendTo(nil, true)...)
}

// ZInter returns the members common to every set.
//
//zipline:twins ZInter
func zinterCmd(s ZStore) command[[]string] {
	return define(decStrings, specZINTER, s.appendTo(nil, false)...)
}

// ZInterWithScores is ZInter with each member's aggregated score.
//
//zipline:twins ZInterWithScores
func zinterWithScoresCmd(s ZStore) command[[]Z] {
	return define(decZs, specZINTER, s.appendTo(nil, true)...)
}

// ZUnionStore stores ZUnion's result, with scores, in dst and returns its
// size.
//
//zipline:twins ZUnionStore
func zunionStoreCmd(dst string, s ZStore) command[int64] {
	return define(decInt, specZUNIONSTORE, s.appendTo([]arg{keyArg(dst)}, false)...)
}

// ZInterStore stores ZInter's result, with scores, in dst and returns its
// size.
//
//zipline:twins ZInterStore
func zinterStoreCmd(dst string, s ZStore) command[int64] {
	return define(decInt, specZINTERSTORE, s.appendTo([]arg{keyArg(dst)}, false)...)
}

// ZInterCard returns how many members the sets have in common, counting
// at most limit (0: no limit).
//
//zipline:twins ZInterCard
func zinterCardCmd(limit int64, keys ...string) (command[int64], error) {
	args, err := numKeysLimit(keys, limit)
	return define(decInt, specZINTERCARD, args...), named(err, "ZINTERCARD")
}

// ZDiff returns the members of the first set that are in none of the
// others.
//
//zipline:twins ZDiff
func zdiffCmd(keys ...string) command[[]string] {
	return define(decStrings, specZDIFF, numKeys(keys)...)
}

// ZDiffWithScores is ZDiff with each member's score.
//
//zipline:twins ZDiffWithScores
func zdiffWithScoresCmd(keys ...string) command[[]Z] {
	return define(decZs, specZDIFF, append(numKeys(keys), str("WITHSCORES"))...)
}

// ZDiffStore stores ZDiff's result in dst and returns its size.
//
//zipline:twins ZDiffStore
func zdiffStoreCmd(dst string, keys ...string) command[int64] {
	return define(decInt, specZDIFFSTORE, append([]arg{keyArg(dst)}, numKeys(keys)...)...)
}

// numKeys is numkeys, then the keys.
func numKeys(keys []string) []arg {
	args := make([]arg, 0, 1+len(keys))
	args = append(args, num(int64(len(keys))))
	return append(args, keyArgs(keys)...)
}

// ZEnd names the end of a sorted set ZMPop pops from.
type ZEnd string

const (
	MinScore ZEnd = "MIN"
	MaxScore ZEnd = "MAX"
)

// ZMPop pops up to count members (at least one) from the given end of the
// first non-empty sorted set among keys, or returns Nil if all are empty.
//
//zipline:twins ZMPop
func zmpopCmd(from ZEnd, count int64, keys ...string) (command[KeyZs], error) {
	args, err := mpopArgs(nil, string(from), count, keys)
	return define(decKeyZs, specZMPOP, args...), named(err, "ZMPOP")
}

// BZPopMin is ZPopMin over several keys that waits up to timeout (0: until
// ctx ends); Nil on timeout.
//
//zipline:twins BZPopMin
func bzpopMinCmd(timeout time.Duration, keys ...string) command[KeyZ] {
	return defineBlocking(decKeyZ, timeout, specBZPOPMIN, keysThenTimeout(keys, timeout)...)
}

// BZPopMax is BZPopMin for the highest score.
//
//zipline:twins BZPopMax
func bzpopMaxCmd(timeout time.Duration, keys ...string) command[KeyZ] {
	return defineBlocking(decKeyZ, timeout, specBZPOPMAX, keysThenTimeout(keys, timeout)...)
}

// BZMPop is ZMPop that waits up to timeout for one of the sorted sets to
// have a member.
//
//zipline:twins BZMPop
func bzmpopCmd(timeout time.Duration, from ZEnd, count int64, keys ...string) (command[KeyZs], error) {
	args, err := mpopArgs(&timeout, string(from), count, keys)
	return defineBlocking(decKeyZs, timeout, specBZMPOP, args...), named(err, "BZMPOP")
}
