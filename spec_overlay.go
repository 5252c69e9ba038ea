package zipline

import "time"

// overlay adds to the servers' spec what they do not say, by command name
// ("OBJECT ENCODING" for a subcommand). It is the one hand-written table
// of what a command is; spec_gen.go puts each entry in its command's row,
// and TestOverlayNamesCommands checks that every name is one.
var overlay = map[string]commandOverlay{
	// Strings: GLIDE's set, compressed by default. SET ... GET returns the
	// old value.
	"SET":    {value: valueSpec{family: familyStrings, values: at(1), reply: replyValue, refuseWith: setIfEq}},
	"SETNX":  {value: valueSpec{family: familyStrings, values: at(1)}},
	"SETEX":  {value: valueSpec{family: familyStrings, values: at(2)}},
	"PSETEX": {value: valueSpec{family: familyStrings, values: at(2)}},
	"GETSET": {value: valueSpec{family: familyStrings, values: at(1), reply: replyValue}},
	"MSET":   {value: valueSpec{family: familyStrings, values: every(1, 2)}},
	"MSETNX": {value: valueSpec{family: familyStrings, values: every(1, 2)}, whole: true},
	"MSETEX": {value: valueSpec{family: familyStrings, valuesNumKeys: true}, since: redisSince("8.4.0"), whole: true},
	"GET":    {value: valueSpec{family: familyStrings, reply: replyValue}},
	"GETEX":  {value: valueSpec{family: familyStrings, reply: replyValue}},
	"GETDEL": {value: valueSpec{family: familyStrings, reply: replyValue}},
	"MGET":   {value: valueSpec{family: familyStrings, reply: replyValues}},

	// Hashes (Families: Hashes).
	"HSET":       {value: valueSpec{family: familyHashes, values: every(2, 2)}},
	"HMSET":      {value: valueSpec{family: familyHashes, values: every(2, 2)}},
	"HSETNX":     {value: valueSpec{family: familyHashes, values: at(2)}},
	"HSETEX":     {value: valueSpec{family: familyHashes, valuesAfter: hsetexFields}, since: redisSince("8.0.0")},
	"HGET":       {value: valueSpec{family: familyHashes, reply: replyValue}},
	"HMGET":      {value: valueSpec{family: familyHashes, reply: replyValues}},
	"HVALS":      {value: valueSpec{family: familyHashes, reply: replyValues}},
	"HGETALL":    {value: valueSpec{family: familyHashes, reply: replyPairs}},
	"HGETDEL":    {value: valueSpec{family: familyHashes, reply: replyValues}, since: redisSince("8.0.0")},
	"HGETEX":     {value: valueSpec{family: familyHashes, reply: replyValues}, since: redisSince("8.0.0")},
	"HRANDFIELD": {value: valueSpec{family: familyHashes, reply: replyPairs, replyWith: hrandfieldWithValues}},
	"HSCAN":      {value: valueSpec{family: familyHashes, reply: replyScanPairs, replyWithout: hscanNoValues}},

	// Hash field expiration: Redis 7.4, Valkey 9.0.
	"HEXPIRE":      {since: redisSince("7.4.0")},
	"HPEXPIRE":     {since: redisSince("7.4.0")},
	"HEXPIREAT":    {since: redisSince("7.4.0")},
	"HPEXPIREAT":   {since: redisSince("7.4.0")},
	"HTTL":         {since: redisSince("7.4.0")},
	"HPTTL":        {since: redisSince("7.4.0")},
	"HEXPIRETIME":  {since: redisSince("7.4.0")},
	"HPEXPIRETIME": {since: redisSince("7.4.0")},
	"HPERSIST":     {since: redisSince("7.4.0")},

	// Lists (Families: Lists). A pivot is compressed like an element: it
	// matches elements stored with the same settings.
	"LPUSH":      {value: valueSpec{family: familyLists, values: every(1, 1)}},
	"RPUSH":      {value: valueSpec{family: familyLists, values: every(1, 1)}},
	"LPUSHX":     {value: valueSpec{family: familyLists, values: every(1, 1)}},
	"RPUSHX":     {value: valueSpec{family: familyLists, values: every(1, 1)}},
	"LSET":       {value: valueSpec{family: familyLists, values: at(2)}},
	"LINSERT":    {value: valueSpec{family: familyLists, values: span(2, 1, 2)}},
	"LREM":       {value: valueSpec{family: familyLists, values: at(2)}},
	"LRANGE":     {value: valueSpec{family: familyLists, reply: replyValues}},
	"LINDEX":     {value: valueSpec{family: familyLists, reply: replyValue}},
	"LPOP":       {value: valueSpec{family: familyLists, reply: replyValues}},
	"RPOP":       {value: valueSpec{family: familyLists, reply: replyValues}},
	"LMOVE":      {value: valueSpec{family: familyLists, reply: replyValue, moves: true}},
	"RPOPLPUSH":  {value: valueSpec{family: familyLists, reply: replyValue, moves: true}},
	"LMPOP":      {value: valueSpec{family: familyLists, reply: replyKeyAndList}},
	"BLMOVE":     {block: lastArg(time.Second), value: valueSpec{family: familyLists, reply: replyValue, moves: true}},
	"BRPOPLPUSH": {block: lastArg(time.Second), value: valueSpec{family: familyLists, reply: replyValue, moves: true}},
	"BLPOP":      {block: lastArg(time.Second), value: valueSpec{family: familyLists, reply: replyKeyAndValue}},
	"BRPOP":      {block: lastArg(time.Second), value: valueSpec{family: familyLists, reply: replyKeyAndValue}},
	"BLMPOP":     {block: firstArg(time.Second), value: valueSpec{family: familyLists, reply: replyKeyAndList}},

	// The other blocking commands: where their timeout is.
	"BZPOPMIN":   {block: lastArg(time.Second)},
	"BZPOPMAX":   {block: lastArg(time.Second)},
	"BZMPOP":     {block: firstArg(time.Second)},
	"WAIT":       {block: lastArg(time.Millisecond)},
	"WAITAOF":    {block: lastArg(time.Millisecond), since: redisSince("7.2.0")},
	"XREAD":      {block: blockArg{option: xreadBlock, unit: time.Millisecond}},
	"XREADGROUP": {block: blockArg{option: xreadgroupBlock, unit: time.Millisecond}},

	// Replies that can hold stored values from anywhere: what a script or
	// function returns, what SORT ... GET reads. Every valid envelope in
	// them is expanded, at any depth, as GLIDE expands a batch's replies.
	"EVAL":       {value: valueSpec{family: familyStrings, reply: replyDeep, script: true}},
	"EVALSHA":    {value: valueSpec{family: familyStrings, reply: replyDeep, script: true}},
	"EVAL_RO":    {value: valueSpec{family: familyStrings, reply: replyDeep, script: true}},
	"EVALSHA_RO": {value: valueSpec{family: familyStrings, reply: replyDeep, script: true}},
	"FCALL":      {value: valueSpec{family: familyStrings, reply: replyDeep, script: true}},
	"FCALL_RO":   {value: valueSpec{family: familyStrings, reply: replyDeep, script: true}},
	"SORT":       {value: valueSpec{family: familyStrings, reply: replyDeep, sortsStored: true}},
	"SORT_RO":    {value: valueSpec{family: familyStrings, reply: replyDeep, sortsStored: true}},

	// Pub/sub messages (Families: PubSub).
	"PUBLISH":  {value: valueSpec{family: familyPubSub, values: at(1)}},
	"SPUBLISH": {value: valueSpec{family: familyPubSub, values: at(1)}},

	// Commands that work on the stored bytes, which compression would
	// corrupt or misread. On a key in the compressed scope (any key, unless
	// Compression.Rules keeps it plain), the reads are answered from the
	// expanded value and the writes refused. INCR, INCRBYFLOAT and their
	// kin stay allowed: a value the server reads as a number is never
	// stored compressed (codec.Codec.Encode).
	"STRLEN":      {value: readPlain(familyStrings, readStrlen)},
	"GETRANGE":    {value: readPlain(familyStrings, readGetRange)},
	"SUBSTR":      {value: readPlain(familyStrings, readGetRange)},
	"GETBIT":      {value: readPlain(familyStrings, readGetBit)},
	"BITCOUNT":    {value: readPlain(familyStrings, readBitCount)},
	"BITPOS":      {value: readPlain(familyStrings, readBitPos)},
	"HSTRLEN":     {value: readPlain(familyHashes, readHStrlen)},
	"APPEND":      {value: refused(familyStrings)},
	"SETRANGE":    {value: refused(familyStrings)},
	"SETBIT":      {value: refused(familyStrings)},
	"BITFIELD":    {value: refused(familyStrings)},
	"BITFIELD_RO": {value: refused(familyStrings)},
	"BITOP":       {value: refused(familyStrings)},
	"DELIFEQ":     {value: refused(familyStrings)},
	"LPOS":        {value: refused(familyLists)},
	"LCS":         {value: refused(familyStrings)}, // two reads, which no one command answers: plainreads.go

	// Commands that move or copy a stored value between keys, whatever its
	// type: refused from a key in the compressed scope to one a rule keeps
	// plain.
	"RENAME":   {value: moving(familyStrings)},
	"RENAMENX": {value: moving(familyStrings)},
	"COPY":     {value: moving(familyStrings)},

	// Commands that change the connection's state: on the shared
	// connection that would leak into every caller, so they are only
	// allowed on a Client from Dedicated or Watch.
	"SELECT": {class: classConnState}, "AUTH": {class: classConnState}, "HELLO": {class: classConnState},
	"WATCH": {class: classConnState}, "UNWATCH": {class: classConnState}, "MULTI": {class: classConnState},
	"EXEC": {class: classConnState}, "DISCARD": {class: classConnState}, "READONLY": {class: classConnState},
	"READWRITE": {class: classConnState}, "RESET": {class: classConnState}, "ASKING": {class: classConnState},
	"CLIENT TRACKING": {class: classConnState}, "CLIENT SETNAME": {class: classConnState},
	"CLIENT NO-EVICT": {class: classConnState}, "CLIENT NO-TOUCH": {class: classConnState},
	"CLIENT SETINFO": {class: classConnState}, "CLIENT CACHING": {class: classConnState},
	"CLIENT CAPA": {class: classConnState},

	// Commands that switch the connection into another protocol mode
	// (pub/sub, MONITOR, replication) or end it: never sent. CLIENT REPLY
	// OFF would leave callers waiting for replies that never come.
	"SUBSCRIBE": {class: classForbidden}, "PSUBSCRIBE": {class: classForbidden},
	"SSUBSCRIBE": {class: classForbidden}, "UNSUBSCRIBE": {class: classForbidden},
	"PUNSUBSCRIBE": {class: classForbidden}, "SUNSUBSCRIBE": {class: classForbidden},
	"MONITOR": {class: classForbidden}, "SYNC": {class: classForbidden}, "PSYNC": {class: classForbidden},
	"QUIT": {class: classForbidden}, "SHUTDOWN": {class: classForbidden}, "CLIENT REPLY": {class: classForbidden},
}

// redisSince is the overlay's since for a command Redis added after the
// spec's Redis.
func redisSince(v string) [serverKinds]string {
	var s [serverKinds]string
	s[serverRedis] = v
	return s
}
