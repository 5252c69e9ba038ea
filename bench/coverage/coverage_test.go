// Package coverage measures how much of go-redis v9's Cmdable zipline
// types: every method is mapped to the zipline Client method that does
// its job, or excluded with the reason. The figure and the exclusions are
// in the README ("Coming from go-redis"); TestCoverage keeps them true.
package coverage

import (
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/ziplinekv/zipline"
)

// Why a go-redis method has no zipline twin.
const (
	// Commands of modules and of Redis Stack, which neither server zipline
	// targets (Redis 7.0, Valkey 9.1) has: search, JSON, time series,
	// probabilistic structures, vector sets, arrays.
	module = "a module's command (RediSearch, RedisJSON, TimeSeries, Bloom, vector sets, arrays): not on Redis 7.0 or Valkey 9.1"
	// Commands Redis added after 8.0 that Valkey does not have.
	redis8 = "a Redis 8.x command or option that neither Redis 7.0 nor Valkey 9.1 has"
	// What a pipelined, shared connection must not do.
	notShared = "ends the connection or its protocol mode; zipline refuses it (use Close, or a server's own tools)"
	// go-redis's own machinery, not a command.
	goredisOnly = "go-redis's own client feature, not a server command"
)

// twins maps go-redis methods to zipline's; excluded, to the reason.
var twins = map[string]string{
	"Pipeline": "Batch", "Pipelined": "Pipelined", "TxPipeline": "Tx", "TxPipelined": "TxPipelined",
	"Command": "Command", "CommandList": "CommandList", "CommandGetKeys": "CommandGetKeys",
	"CommandGetKeysAndFlags": "CommandGetKeysAndFlags", "ClientGetName": "ClientGetName", "Echo": "Echo",
	"Ping": "Ping", "Unlink": "Unlink", "BgRewriteAOF": "BgRewriteAOF", "BgSave": "BgSave",
	"ClientKill": "ClientKill", "ClientKillByFilter": "ClientKillByFilter", "ClientList": "ClientList",
	"ClientInfo": "ClientInfo", "ClientPause": "ClientPause", "ClientUnpause": "ClientUnpause",
	"ClientID": "ClientID", "ClientUnblock": "ClientUnblock", "ClientUnblockWithError": "ClientUnblockWithError",
	"ClientTracking": "ClientTracking", "ClientTrackingOn": "ClientTracking", "ClientTrackingOff": "ClientTracking",
	"ConfigGet": "ConfigGet", "ConfigResetStat": "ConfigResetStat", "ConfigSet": "ConfigSet",
	"ConfigRewrite": "ConfigRewrite", "DBSize": "DBSize", "FlushAll": "FlushAll", "FlushAllAsync": "FlushAllAsync",
	"FlushDB": "FlushDB", "FlushDBAsync": "FlushDBAsync", "Info": "Info", "InfoMap": "Info", "LastSave": "LastSave",
	"Save": "Save", "SlaveOf": "ReplicaOf", "ReplicaOf": "ReplicaOf", "SlowLogGet": "SlowLogGet",
	"SlowLogLen": "SlowLogLen", "SlowLogReset": "SlowLogReset", "Time": "Time", "DebugObject": "DebugObject",
	"MemoryUsage": "MemoryUsage", "Latency": "LatencyLatest", "LatencyReset": "LatencyReset",
	"ReadOnly": "ReadOnly", "ReadWrite": "ReadWrite",

	// ACL.
	"ACLCat": "ACLCat", "ACLCatArgs": "ACLCat", "ACLDelUser": "ACLDelUser", "ACLDryRun": "ACLDryRun",
	"ACLGenPass": "ACLGenPass", "ACLList": "ACLList", "ACLLog": "ACLLog", "ACLLogReset": "ACLLogReset",
	"ACLSetUser": "ACLSetUser", "ACLUsers": "ACLUsers", "ACLWhoAmI": "ACLWhoAmI",

	// Bitmaps.
	"BitCount": "BitCount", "BitField": "BitField", "BitFieldRO": "BitFieldRO", "BitOpAnd": "BitOp",
	"BitOpOr": "BitOp", "BitOpXor": "BitOp", "BitOpNot": "BitOp", "BitPos": "BitPos", "BitPosSpan": "BitPos",
	"GetBit": "GetBit", "SetBit": "SetBit",

	// Cluster.
	"ClusterAddSlots": "ClusterAddSlots", "ClusterAddSlotsRange": "ClusterAddSlotsRange",
	"ClusterCountFailureReports": "ClusterCountFailureReports", "ClusterCountKeysInSlot": "ClusterCountKeysInSlot",
	"ClusterDelSlots": "ClusterDelSlots", "ClusterDelSlotsRange": "ClusterDelSlotsRange",
	"ClusterFailover": "ClusterFailover", "ClusterForget": "ClusterForget",
	"ClusterGetKeysInSlot": "ClusterGetKeysInSlot", "ClusterInfo": "ClusterInfo", "ClusterKeySlot": "ClusterKeySlot",
	"ClusterLinks": "ClusterLinks", "ClusterMeet": "ClusterMeet", "ClusterMyID": "ClusterMyID",
	"ClusterMyShardID": "ClusterMyShardID", "ClusterNodes": "ClusterNodes", "ClusterReplicate": "ClusterReplicate",
	"ClusterResetHard": "ClusterReset", "ClusterResetSoft": "ClusterReset", "ClusterSaveConfig": "ClusterSaveConfig",
	"ClusterShards": "ClusterShards", "ClusterSlaves": "ClusterReplicas", "ClusterSlots": "ClusterSlots",

	// Keys.
	"Copy": "Copy", "Del": "Del", "Dump": "Dump", "Exists": "Exists", "Expire": "Expire", "ExpireAt": "ExpireAt",
	"ExpireGT": "ExpireIf", "ExpireLT": "ExpireIf", "ExpireNX": "ExpireIf", "ExpireXX": "ExpireIf",
	"ExpireTime": "ExpireTime", "Keys": "Keys", "Migrate": "Migrate", "Move": "Move",
	"ObjectEncoding": "ObjectEncoding", "ObjectFreq": "ObjectFreq", "ObjectIdleTime": "ObjectIdleTime",
	"ObjectRefCount": "ObjectRefCount", "PExpire": "PExpire", "PExpireAt": "ExpireAt", "PExpireTime": "PExpireTime",
	"PTTL": "PTTL", "Persist": "Persist", "RandomKey": "RandomKey", "Rename": "Rename", "RenameNX": "RenameNX",
	"Restore": "Restore", "RestoreReplace": "RestoreReplace", "Scan": "Scan", "ScanType": "Scan", "Sort": "Sort",
	"SortInterfaces": "Sort", "SortRO": "SortRO", "SortStore": "SortStore", "TTL": "TTL", "Touch": "Touch",
	"Type": "Type",

	// Geo.
	"GeoAdd": "GeoAdd", "GeoDist": "GeoDist", "GeoHash": "GeoHash", "GeoPos": "GeoPos",
	"GeoRadius": "GeoSearchLocation", "GeoRadiusByMember": "GeoSearchLocation", "GeoRadiusStore": "GeoSearchStore",
	"GeoRadiusByMemberStore": "GeoSearchStore", "GeoSearch": "GeoSearch", "GeoSearchLocation": "GeoSearchLocation",
	"GeoSearchStore": "GeoSearchStore",

	// Hashes.
	"HDel": "HDel", "HExists": "HExists", "HExpire": "HExpire", "HExpireWithArgs": "HExpire",
	"HExpireAt": "HExpireAt", "HExpireAtWithArgs": "HExpireAt", "HExpireTime": "HExpireTime", "HGet": "HGet",
	"HGetAll": "HGetAll", "HGetDel": "HGetDel", "HGetEX": "HGetEx", "HGetEXWithArgs": "HGetEx", "HIncrBy": "HIncrBy",
	"HIncrByFloat": "HIncrByFloat", "HKeys": "HKeys", "HLen": "HLen", "HMGet": "HMGet", "HMSet": "HSet",
	"HPExpire": "HPExpire", "HPExpireWithArgs": "HPExpire", "HPExpireAt": "HExpireAt", "HPExpireAtWithArgs": "HExpireAt",
	"HPExpireTime": "HExpireTime", "HPTTL": "HPTTL", "HPersist": "HPersist", "HRandField": "HRandField",
	"HRandFieldWithValues": "HRandFieldWithValues", "HScan": "HScan", "HScanNoValues": "HScanFields", "HSet": "HSet",
	"HSetEX": "HSetEx", "HSetEXWithArgs": "HSetEx", "HSetNX": "HSetNX", "HStrLen": "HStrLen", "HTTL": "HTTL",
	"HVals": "HVals",

	// HyperLogLog.
	"PFAdd": "PFAdd", "PFCount": "PFCount", "PFMerge": "PFMerge",

	// Lists.
	"BLMPop": "BLMPop", "BLMove": "BLMove", "BLPop": "BLPop", "BRPop": "BRPop", "BRPopLPush": "BRPopLPush",
	"LIndex": "LIndex", "LInsert": "LInsert", "LInsertAfter": "LInsert", "LInsertBefore": "LInsert", "LLen": "LLen",
	"LMPop": "LMPop", "LMove": "LMove", "LPop": "LPop", "LPopCount": "LPopCount", "LPos": "LPos",
	"LPosCount": "LPosCount", "LPush": "LPush", "LPushX": "LPushX", "LRange": "LRange", "LRem": "LRem", "LSet": "LSet",
	"LTrim": "LTrim", "RPop": "RPop", "RPopCount": "RPopCount", "RPopLPush": "RPopLPush", "RPush": "RPush",
	"RPushX": "RPushX", "BLMoveM": "BLMove", "LMoveM": "LMove",

	// Pub/sub.
	"PubSubChannels": "PubSubChannels", "PubSubNumPat": "PubSubNumPat", "PubSubNumSub": "PubSubNumSub",
	"PubSubShardChannels": "PubSubShardChannels", "PubSubShardNumSub": "PubSubShardNumSub", "Publish": "Publish",
	"SPublish": "SPublish",

	// Scripting and functions.
	"Eval": "Eval", "EvalRO": "EvalRO", "EvalSha": "EvalSha", "EvalShaRO": "EvalShaRO", "FCall": "FCall",
	"FCallRO": "FCallRO", "FCallRo": "FCallRO", "FunctionDelete": "FunctionDelete", "FunctionDump": "FunctionDump",
	"FunctionFlush": "FunctionFlush", "FunctionFlushAsync": "FunctionFlushAsync", "FunctionKill": "FunctionKill",
	"FunctionList": "FunctionList", "FunctionLoad": "FunctionLoad", "FunctionLoadReplace": "FunctionLoadReplace",
	"FunctionRestore": "FunctionRestore", "FunctionStats": "FunctionStats", "ScriptExists": "ScriptExists",
	"ScriptFlush": "ScriptFlush", "ScriptKill": "ScriptKill", "ScriptLoad": "ScriptLoad",

	// Sets.
	"SAdd": "SAdd", "SCard": "SCard", "SDiff": "SDiff", "SDiffStore": "SDiffStore", "SInter": "SInter",
	"SInterCard": "SInterCard", "SInterStore": "SInterStore", "SIsMember": "SIsMember", "SMIsMember": "SMIsMember",
	"SMembers": "SMembers", "SMembersMap": "SMembers", "SMove": "SMove", "SPop": "SPop", "SPopN": "SPopN",
	"SRandMember": "SRandMember", "SRandMemberN": "SRandMemberN", "SRem": "SRem", "SScan": "SScan",
	"SUnion": "SUnion", "SUnionStore": "SUnionStore",

	// Sorted sets.
	"BZMPop": "BZMPop", "BZPopMax": "BZPopMax", "BZPopMin": "BZPopMin", "ZAdd": "ZAdd", "ZAddArgs": "ZAddArgs",
	"ZAddArgsIncr": "ZAddIncr", "ZAddGT": "ZAddArgs", "ZAddLT": "ZAddArgs", "ZAddNX": "ZAddArgs", "ZAddXX": "ZAddArgs",
	"ZCard": "ZCard", "ZCount": "ZCount", "ZDiff": "ZDiff", "ZDiffStore": "ZDiffStore",
	"ZDiffWithScores": "ZDiffWithScores", "ZIncrBy": "ZIncrBy", "ZInter": "ZInter", "ZInterCard": "ZInterCard",
	"ZInterStore": "ZInterStore", "ZInterWithScores": "ZInterWithScores", "ZLexCount": "ZLexCount", "ZMPop": "ZMPop",
	"ZMScore": "ZMScore", "ZPopMax": "ZPopMaxN", "ZPopMin": "ZPopMinN", "ZRandMember": "ZRandMember",
	"ZRandMemberWithScores": "ZRandMemberWithScores", "ZRange": "ZRange", "ZRangeArgs": "ZRangeArgs",
	"ZRangeArgsWithScores": "ZRangeArgsWithScores", "ZRangeByLex": "ZRangeArgs", "ZRangeByScore": "ZRangeByScore",
	"ZRangeByScoreWithScores": "ZRangeArgsWithScores", "ZRangeStore": "ZRangeStore",
	"ZRangeWithScores": "ZRangeWithScores", "ZRank": "ZRank", "ZRankWithScore": "ZRankWithScore", "ZRem": "ZRem",
	"ZRemRangeByLex": "ZRemRangeByLex", "ZRemRangeByRank": "ZRemRangeByRank", "ZRemRangeByScore": "ZRemRangeByScore",
	"ZRevRange": "ZRevRange", "ZRevRangeByLex": "ZRangeArgs", "ZRevRangeByScore": "ZRangeArgs",
	"ZRevRangeByScoreWithScores": "ZRangeArgsWithScores", "ZRevRangeWithScores": "ZRevRangeWithScores",
	"ZRevRank": "ZRevRank", "ZRevRankWithScore": "ZRevRankWithScore", "ZScan": "ZScan", "ZScore": "ZScore",
	"ZUnion": "ZUnion", "ZUnionStore": "ZUnionStore", "ZUnionWithScores": "ZUnionWithScores",

	// Strings.
	"Append": "Append", "Decr": "Decr", "DecrBy": "DecrBy", "Get": "Get", "GetDel": "GetDel", "GetEx": "GetEx",
	"GetRange": "GetRange", "GetSet": "GetSet", "GetToBuffer": "Get", "Incr": "Incr", "IncrBy": "IncrBy",
	"IncrByFloat": "IncrByFloat", "LCS": "LCS", "MGet": "MGet", "MSet": "MSet", "MSetEX": "MSetEx", "MSetNX": "MSetNX",
	"Set": "Set", "SetArgs": "Set", "SetEx": "Set", "SetFromBuffer": "Set", "SetIFEQ": "SetIfEq",
	"SetIFEQGet": "SetIfEqGet", "SetNX": "SetNX", "SetRange": "SetRange", "SetXX": "SetXX", "StrLen": "StrLen",

	// Streams.
	"XAck": "XAck", "XAdd": "XAdd", "XAutoClaim": "XAutoClaim", "XAutoClaimJustID": "XAutoClaimJustID",
	"XAutoClaimWithDeleted": "XAutoClaim", "XClaim": "XClaim", "XClaimJustID": "XClaimJustID", "XDel": "XDel",
	"XGroupCreate": "XGroupCreate", "XGroupCreateConsumer": "XGroupCreateConsumer",
	"XGroupCreateMkStream": "XGroupCreateMkStream", "XGroupDelConsumer": "XGroupDelConsumer",
	"XGroupDestroy": "XGroupDestroy", "XGroupSetID": "XGroupSetID", "XInfoConsumers": "XInfoConsumers",
	"XInfoGroups": "XInfoGroups", "XInfoStream": "XInfoStream", "XInfoStreamFull": "XInfoStreamFull", "XLen": "XLen",
	"XPending": "XPending", "XPendingExt": "XPendingExt", "XRange": "XRange", "XRangeN": "XRangeN", "XRead": "XRead",
	"XReadGroup": "XReadGroup", "XReadStreams": "XRead", "XRevRange": "XRevRange", "XRevRangeN": "XRevRangeN",
	"XTrimMaxLen": "XTrim", "XTrimMaxLenApprox": "XTrim", "XTrimMinID": "XTrim", "XTrimMinIDApprox": "XTrim",
	"BitOpAndOr": "BitOp", "BitOpDiff": "BitOp", "BitOpDiff1": "BitOp", "BitOpOne": "BitOp",
}

// excluded are the go-redis methods without a twin, and why.
var excluded = map[string]string{
	"Quit": notShared, "Shutdown": notShared, "ShutdownSave": notShared, "ShutdownNoSave": notShared,
	"ClientMaintNotifications": goredisOnly, "ModuleLoadex": module,
	"DelExArgs": redis8, "Digest": redis8, "HImportDiscard": redis8, "HImportDiscardAll": redis8,
	"HImportPrepare": redis8, "HImportSet": redis8, "IncrEXFloat": redis8, "IncrEXInt": redis8,
	"SDiffCard": redis8, "SUnionCard": redis8, "SetIFDEQ": redis8, "SetIFDEQGet": redis8, "SetIFDNE": redis8,
	"SetIFDNEGet": redis8, "SetIFNE": redis8, "SetIFNEGet": redis8, "XAckDel": redis8, "XCfgSet": redis8,
	"XDelEx": redis8, "XNack": redis8, "XTrimMaxLenApproxMode": redis8, "XTrimMaxLenMode": redis8,
	"XTrimMinIDApproxMode": redis8, "XTrimMinIDMode": redis8,
}

// modulePrefixes name the methods of the module families, excluded as a
// whole.
var modulePrefixes = []string{"FT", "TS", "JSON", "BF", "CF", "CMS", "TopK", "TDigest", "AR", "V"}

func isModule(name string) bool {
	for _, p := range modulePrefixes {
		if rest, ok := strings.CutPrefix(name, p); ok && (rest == "" || p == "FT" || rest[0] >= 'A' && rest[0] <= 'Z') {
			return true
		}
	}
	return false
}

func TestCoverage(t *testing.T) {
	cmdable := reflect.TypeFor[redis.Cmdable]()
	client := reflect.TypeFor[*zipline.Client]()
	var all, core, targeted, covered int
	reasons := map[string][]string{}
	for i := range cmdable.NumMethod() {
		name := cmdable.Method(i).Name
		all++
		if why, ok := excluded[name]; ok {
			reasons[why] = append(reasons[why], name)
			if why != redis8 && why != module {
				core++
				targeted++
			} else if why == redis8 {
				core++
			}
			continue
		}
		if isModule(name) {
			reasons[module] = append(reasons[module], name)
			continue
		}
		core++
		targeted++
		twin, ok := twins[name]
		if !ok {
			t.Errorf("go-redis's %s is neither mapped to a zipline method nor excluded", name)
			continue
		}
		if _, ok := client.MethodByName(twin); !ok {
			t.Errorf("go-redis's %s maps to zipline's %s, which does not exist", name, twin)
			continue
		}
		covered++
	}
	for name := range twins {
		if _, ok := cmdable.MethodByName(name); !ok {
			t.Errorf("twins names go-redis's %s, which Cmdable does not have", name)
		}
	}
	pct := func(n, of int) float64 { return 100 * float64(n) / float64(of) }
	t.Logf("go-redis v9 Cmdable: %d methods; %d for server commands outside modules, %d of them on Redis 7.0 or Valkey 9.1",
		all, core, targeted)
	t.Logf("zipline twins: %d: %.1f %% of the methods for commands the servers have, %.1f %% of those outside modules, %.1f %% of all",
		covered, pct(covered, targeted), pct(covered, core), pct(covered, all))
	keys := make([]string, 0, len(reasons))
	for k := range reasons {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, why := range keys {
		names := reasons[why]
		sort.Strings(names)
		t.Logf("excluded (%d): %s: %s", len(names), why, strings.Join(names, " "))
	}
	if pct(covered, targeted) < 95 {
		t.Errorf("zipline covers %.1f %% of go-redis's methods for commands Redis 7.0 or Valkey 9.1 has, want at least 95 %%",
			pct(covered, targeted))
	}
}
