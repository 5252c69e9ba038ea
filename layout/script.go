package layout

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ziplinekv/zipline"
)

// opsLua runs a list of operations atomically. Writes that touch more than
// one key use it: a bucket field and its oversize value, the new layout and
// the old one while migrating on a single server, a guarded move, and the
// steps of a migration on a cluster (split.go). Each operation names its
// keys by their index in KEYS (0: none), so a script never touches a key it
// did not declare, and a list whose keys share a hash slot runs on a
// cluster. ARGV is the operations, each an opcode and its arguments:
//
//	G kind key field want   guard: abort the script (reply 0) unless GET key
//	                        (kind "g") or HGET key field ("h") equals want
//	P bucket n mode ttl nx  write n fields of bucket, then n times:
//	  oversize legacy field value big
//	                        write them (and their oversize values); reply
//	                        how many were written, or in mode "b", when the
//	                        bucket has just got its TTL and holds older
//	                        oversize values, that number and their fields
//	T bucket n oversize field...
//	                        give those values' keys the bucket's expiry, if
//	                        their fields still hold the marker
//	S key value mode ttl nx SET a plain key; reply 1 if it was set
//	D bucket oversize legacy field
//	                        delete a field and its oversize value; reply 1
//	                        if the key existed
//	M n key value...        MSET n plain keys; reply 1
//	U key                   UNLINK a plain key; reply the count
//	X bucket oversize legacy field ms
//	                        PEXPIRE a field and its oversize value; reply
//	                        HPEXPIRE's code (-2 when the key does not exist)
//	W key ms                PEXPIRE a plain key; reply its code
//	R bucket oversize legacy field
//	                        read a field, following its marker
//	V key                   GET a plain key
//	I kind key field n create
//	                        HINCRBY key field n (kind "h") or INCRBY key n
//	                        ("g"); without create, only if the key exists
//	                        (else reply null). A server error (not an
//	                        integer) is the reply, not the script's failure
//
// The operations of a migration on a cluster name a key's place in the new
// layout by a "where": kind ("h" a bucket field, "g" a plain key), the
// bucket or plain key, the oversize key (0 for a plain key), the field (""),
// the tombstone set and the key's member in it (Store.touchedKey). A key is
// "live" if its field or plain key exists, "touched" if it is in the set.
//
//	K set member            add member to the tombstone set; reply 1 or 0
//	Q where                 read: the value (following an oversize
//	                        marker), else 1 if touched, else 0
//	Y where fieldttl        the remaining TTL in ms, -1 for none, else -3
//	                        if touched, else -2; fieldttl "1" reads the
//	                        field's own (HPTTL), "0" the bucket's
//	A mode n where exp      the key's state: 2 live, 1 touched (a
//	                        tombstone), 3 neither but the old layout held a
//	                        value that lives on (exp: "" none was read, "0"
//	                        one without expiry, else its expiry in Unix ms,
//	                        compared with TIME), 0 otherwise. Mode "a" runs
//	                        the next n operations only in state 3 (adopt the
//	                        old value), mode "g" skips them in state 3
//
// An operation that is not run still reads its arguments; its reply is
// null. mode is "" (no TTL), "px" (ttl is milliseconds from now), "at" (ttl
// is a Unix time in milliseconds) or "b" (PEXPIRE the bucket by ttl unless
// it already expires: Namespace.BucketTTL). Guards come before any write.
// The reply is the list of the operations' replies, or 0 when a guard
// failed.
//
// The markers' lifetimes rule the oversize values: whenever a field that
// holds a marker is overwritten or deleted, its oversize key is removed in
// the same script, and an oversize key always expires when its marker does
// (the field's TTL, bounded by the bucket key's own). A legacy marker whose
// key is gone (an expiry before this rule) counts as a missing key.
const opsLua = `local M, L = '\0{', '\0~'
local i, out, skip = 1, {}, 0
local function a() i = i + 1 return ARGV[i - 1] end
local function k() local n = tonumber(a()) if n == 0 then return false end return KEYS[n] end
local function live(c, l)
  if c == L and (not l or redis.call('EXISTS', l) == 0) then return false end
  return c
end
local function bound(b, mode, t)
  local e
  if mode == 'b' then
    -- The bucket's expiry as a time, where the server has PEXPIRETIME
    -- (Redis 7.0+): the key then expires in the same millisecond as its
    -- bucket, however long the script has run since (time moves on inside
    -- a script), and even when less than a millisecond is left.
    local ok, at = pcall(redis.call, 'PEXPIRETIME', b)
    if ok then
      if at > 0 then return 'PXAT', at end
      return nil
    end
  end
  if mode == 'at' then e = redis.call('PEXPIRETIME', b) else e = redis.call('PTTL', b) end
  if e > 0 and (not t or e < t) then t = e end
  if not t then return nil end
  if mode == 'at' then return 'PXAT', t end
  return 'PX', t
end
local function put(run)
  local b, n, mode, ttl, nx = k(), tonumber(a()), a(), a(), a() == '1'
  local items, fields = {}, {}
  for j = 1, n do
    items[j] = {k(), k(), a(), a(), a() == '1'}
    fields[j] = items[j][3]
  end
  if not run then return false end
  local t = nil
  if mode == 'px' or mode == 'at' then t = tonumber(ttl) end
  local cur = redis.call('HMGET', b, unpack(fields))
  if nx and live(cur[1], items[1][2]) then return 0 end
  local hs, big = {}, false
  for j = 1, n do
    local it, c = items[j], cur[j]
    if c == M and not it[5] then redis.call('UNLINK', it[1]) end
    if c == L and it[2] then redis.call('UNLINK', it[2]) end
    hs[#hs + 1] = it[3]
    if it[5] then hs[#hs + 1] = M big = true else hs[#hs + 1] = it[4] end
  end
  redis.call('HSET', b, unpack(hs))
  local untied = nil
  if mode == 'px' then redis.call('HPEXPIRE', b, ttl, 'FIELDS', n, unpack(fields))
  elseif mode == 'at' then redis.call('HPEXPIREAT', b, ttl, 'FIELDS', n, unpack(fields))
  elseif mode == 'b' and redis.call('PEXPIRE', b, ttl, 'NX') == 1 and redis.call('HLEN', b) > n then
    local mine, all = {}, redis.call('HGETALL', b)
    for j = 1, n do mine[fields[j]] = true end
    for j = 1, #all, 2 do
      if all[j + 1] == M and not mine[all[j]] then untied = untied or {n} untied[#untied + 1] = all[j] end
    end
  end
  if big then
    local unit, e = bound(b, mode, t)
    for j = 1, n do
      local it = items[j]
      if it[5] then
        if unit then redis.call('SET', it[1], it[4], unit, e) else redis.call('SET', it[1], it[4]) end
      end
    end
  end
  return untied or n
end
local function tie(run)
  local b, n, ms, fs = k(), tonumber(a()), {}, {}
  for j = 1, n do ms[j] = k() fs[j] = a() end
  if not run then return false end
  local unit, e = bound(b, 'b', nil)
  for j = 1, n do
    if e and redis.call('HGET', b, fs[j]) == M then
      if unit == 'PXAT' then redis.call('PEXPIREAT', ms[j], e) else redis.call('PEXPIRE', ms[j], e) end
    end
  end
  return n
end
local function set(run)
  local key, v, mode, ttl, nx = k(), a(), a(), a(), a() == '1'
  if not run then return false end
  local args = {key, v}
  if mode == 'px' then args[3], args[4] = 'PX', ttl elseif mode == 'at' then args[3], args[4] = 'PXAT', ttl end
  if nx then args[#args + 1] = 'NX' end
  if redis.call('SET', unpack(args)) then return 1 end
  return 0
end
local function del(run)
  local b, m, l, f = k(), k(), k(), a()
  if not run then return false end
  local c = live(redis.call('HGET', b, f), l)
  redis.call('HDEL', b, f)
  redis.call('UNLINK', m)
  if l then redis.call('UNLINK', l) end
  if c then return 1 end
  return 0
end
local function expire(run)
  local b, m, l, f, ms = k(), k(), k(), a(), a()
  if not run then return false end
  local c = live(redis.call('HGET', b, f), l)
  if not c then return -2 end
  local r = redis.call('HPEXPIRE', b, ms, 'FIELDS', 1, f)[1]
  local v = nil
  if c == M then v = m elseif c == L then v = l end
  if v then
    if r == 2 then redis.call('UNLINK', v)
    elseif r == 1 then local _, e = bound(b, 'px', tonumber(ms)) redis.call('PEXPIRE', v, e) end
  end
  return r
end
local function read(run)
  local b, m, l, f = k(), k(), k(), a()
  if not run then return false end
  local c = redis.call('HGET', b, f)
  if c == M then return redis.call('GET', m) end
  if c == L then if l then return redis.call('GET', l) end return false end
  return c
end
local function guard(run)
  local kind, key, f, want = a(), k(), a(), a()
  if not run then return false end
  local c
  if kind == 'h' then c = redis.call('HGET', key, f) else c = redis.call('GET', key) end
  if c ~= want then return nil end
  return 1
end
local function mset(run)
  local n, kv = tonumber(a()), {}
  for j = 1, n do kv[2 * j - 1] = k() kv[2 * j] = a() end
  if not run then return false end
  redis.call('MSET', unpack(kv))
  return 1
end
local function one(cmd)
  return function(run)
    local key = k()
    if not run then return false end
    return redis.call(cmd, key)
  end
end
local function pexpire(run)
  local key, ms = k(), a()
  if not run then return false end
  return redis.call('PEXPIRE', key, ms)
end
local function incr(run)
  local kind, key, f, n, create = a(), k(), a(), a(), a() == '1'
  if not run then return false end
  if kind == 'h' then
    if not create and redis.call('HEXISTS', key, f) == 0 then return false end
    return redis.pcall('HINCRBY', key, f, n)
  end
  if not create and redis.call('EXISTS', key) == 0 then return false end
  return redis.pcall('INCRBY', key, n)
end
local function where() return {a(), k(), k(), a(), k(), a()} end
local function holds(w)
  if w[1] == 'h' then return redis.call('HEXISTS', w[2], w[4]) == 1 end
  return redis.call('EXISTS', w[2]) == 1
end
local function touched(w) return redis.call('SISMEMBER', w[5], w[6]) == 1 end
local function touch(run)
  local t, m = k(), a()
  if not run then return false end
  return redis.call('SADD', t, m)
end
local function query(run)
  local w = where()
  if not run then return false end
  local c
  if w[1] == 'h' then
    c = redis.call('HGET', w[2], w[4])
    if c == M then c = redis.call('GET', w[3]) end
  else c = redis.call('GET', w[2]) end
  if c then return c end
  if touched(w) then return 1 end
  return 0
end
local function pttl(run)
  local w, own = where(), a() == '1'
  if not run then return false end
  local r = -2
  if w[1] == 'h' then
    local c = redis.call('HGET', w[2], w[4])
    if c == M then r = redis.call('PTTL', w[3])
    elseif c and own then r = redis.call('HPTTL', w[2], 'FIELDS', 1, w[4])[1]
    elseif c then r = redis.call('PTTL', w[2]) end
  else r = redis.call('PTTL', w[2]) end
  if r == -2 and touched(w) then return -3 end
  return r
end
local function adopt(run)
  local mode, n, w, exp = a(), tonumber(a()), where(), a()
  if not run then skip = skip + n return false end
  local st = 0
  if holds(w) then st = 2
  elseif touched(w) then st = 1
  elseif exp ~= '' then
    local t = redis.call('TIME')
    if exp == '0' or tonumber(exp) > tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) then st = 3 end
  end
  if (mode == 'a') ~= (st == 3) then skip = skip + n end
  return st
end
local ops = {G = guard, P = put, S = set, D = del, M = mset, U = one('UNLINK'), X = expire, W = pexpire,
  T = tie, R = read, V = one('GET'), I = incr, K = touch, Q = query, Y = pttl, A = adopt}
while i <= #ARGV do
  local f = ops[a()]
  if not f then return redis.error_reply('layout: unknown operation') end
  local run = skip == 0
  if not run then skip = skip - 1 end
  local r = f(run)
  if r == nil then return 0 end
  out[#out + 1] = r
end
return out`

var opsScript = zipline.NewScript(opsLua)

// setSmallLua is opsLua's P operation cut down to the common case, so that
// it costs as little as a script can: values that fit the bucket, no TTL,
// no condition. KEYS[1] is the bucket, then for each field its oversize key
// and, with legacy names on, its legacy one; ARGV is the fields and values.
// It writes them with one HSET, and removes the key of each oversize value
// it replaces: the only extra work is one HGET (HMGET) per call.
const setSmallLua = `local b, n = KEYS[1], #ARGV / 2
local s = (#KEYS - 1) / n
local cur
if n == 1 then cur = {redis.call('HGET', b, ARGV[1])} else
  local fs = {}
  for j = 1, n do fs[j] = ARGV[2 * j - 1] end
  cur = redis.call('HMGET', b, unpack(fs))
end
for j = 1, n do
  local c = cur[j]
  if c == '\0{' then redis.call('UNLINK', KEYS[2 + s * (j - 1)])
  elseif c == '\0~' and s == 2 then redis.call('UNLINK', KEYS[3 + s * (j - 1)]) end
end
return redis.call('HSET', b, unpack(ARGV))`

var setSmallScript = zipline.NewScript(setSmallLua)

// smallWrite is a setSmallLua call: the writing of fields of one bucket
// that all fit it.
type smallWrite struct {
	keys []string
	args []any
}

// smallWrite returns the call that writes fs into bucket, or false if
// setSmallLua cannot: a value does not fit, or there are more than
// maxPutFields.
func (s *Store) smallWrite(bucket string, fs []field) (smallWrite, bool) {
	if len(fs) > maxPutFields {
		return smallWrite{}, false
	}
	per := 1
	if s.legacy {
		per = 2
	}
	w := smallWrite{keys: make([]string, 1, 1+per*len(fs)), args: make([]any, 0, 2*len(fs))}
	w.keys[0] = bucket
	for _, f := range fs {
		if !s.fits(f.enc) {
			return smallWrite{}, false
		}
		w.keys = append(w.keys, s.oversizeKey(f.l))
		if s.legacy {
			w.keys = append(w.keys, f.l.plain)
		}
		w.args = append(w.args, f.l.field, f.enc)
	}
	s.bucketWrites.Add(uint64(len(fs)))
	return w, true
}

// run calls setSmallLua (EVALSHA, or EVAL the first time on a server).
func (w smallWrite) run(ctx context.Context, c *zipline.Client) error {
	_, err := setSmallScript.Run(ctx, c, w.keys, w.args...)
	return err
}

// queue queues setSmallLua on b with its source (EVAL), so that it cannot
// fail for want of a cached script inside a caller's transaction.
func (w smallWrite) queue(b *zipline.Batch) *zipline.Future[zipline.Value] {
	args := make([]any, 0, 3+len(w.keys)+len(w.args))
	args = append(args, "EVAL", setSmallLua, len(w.keys))
	for _, k := range w.keys {
		args = append(args, k)
	}
	return b.Do(append(args, w.args...)...)
}

// maxPutFields caps the fields of one P operation: the script unpacks them
// onto Lua's stack, which holds a few thousand values.
const maxPutFields = 1000

// errChanged is the reply of an operation list whose guard failed.
var errChanged = errors.New("layout: changed during a move")

// opList builds the arguments of one opsLua call.
type opList struct {
	keys  []string
	index map[string]int // KEYS index of each name, from 1
	args  []any
	n     int // operations, so replies
}

// key declares name and returns its KEYS index; "" is 0, no key.
func (o *opList) key(name string) int {
	if name == "" {
		return 0
	}
	if i, ok := o.index[name]; ok {
		return i
	}
	if o.index == nil {
		o.index = make(map[string]int)
	}
	o.keys = append(o.keys, name)
	o.index[name] = len(o.keys)
	return len(o.keys)
}

// op appends one operation and returns the index of its reply.
func (o *opList) op(args ...any) int {
	o.args = append(o.args, args...)
	o.n++
	return o.n - 1
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// expiry is a TTL in the script's terms (see opsLua's mode).
type expiry struct {
	mode string
	ms   int64
}

// expiryIn returns the expiry that gives l's value a TTL of ttl (at, when
// non-zero, is an absolute time instead), or ErrNoFieldTTL when l is in a
// bucket and the server cannot expire fields and no BucketTTL is set.
func (s *Store) expiryIn(l location, ttl time.Duration, at time.Time) (expiry, error) {
	switch {
	case ttl <= 0 && at.IsZero():
		return expiry{}, nil
	case l.bucket != "" && !s.fieldTTL.hpexpire:
		if s.ns.BucketTTL > 0 {
			return expiry{mode: "b", ms: s.ns.BucketTTL.Milliseconds()}, nil
		}
		return expiry{}, ErrNoFieldTTL
	case !at.IsZero():
		return expiry{mode: "at", ms: at.UnixMilli()}, nil
	}
	return expiry{mode: "px", ms: max(ttl.Milliseconds(), 1)}, nil
}

// field is one value to write into a bucket.
type field struct {
	l   location
	enc []byte
}

// addWrite appends the writing of enc at l. With nx, only if l holds no
// value; the reply then says whether it was written.
func (s *Store) addWrite(o *opList, l location, enc []byte, e expiry, nx bool) int {
	if l.bucket == "" {
		return o.op("S", o.key(l.plain), enc, e.mode, e.ms, flag(nx))
	}
	return s.addPut(o, l.bucket, []field{{l, enc}}, e, nx)
}

// addPut appends the writing of fields of one bucket, at most maxPutFields,
// each field at most once. A value too large for the bucket goes to its
// oversize key, whose name is declared for every field, as the field may
// hold a marker now.
func (s *Store) addPut(o *opList, bucket string, fs []field, e expiry, nx bool) int {
	args := make([]any, 0, 6+5*len(fs))
	args = append(args, "P", o.key(bucket), len(fs), e.mode, e.ms, flag(nx))
	for _, f := range fs {
		big := !s.fits(f.enc)
		if !nx {
			s.bucketWrites.Add(1)
			if big {
				s.oversize.Add(1)
			}
		}
		args = append(args, o.key(s.oversizeKey(f.l)), o.key(s.legacyKey(f.l)), f.l.field, f.enc, flag(big))
	}
	return o.op(args...)
}

// addDelete appends the deletion of l's value; the reply is 1 if it
// existed.
func (s *Store) addDelete(o *opList, l location) int {
	if l.bucket == "" {
		return o.op("U", o.key(l.plain))
	}
	return o.op("D", o.key(l.bucket), o.key(s.oversizeKey(l)), o.key(s.legacyKey(l)), l.field)
}

// addRead appends the reading of l's stored value (null if missing).
func (s *Store) addRead(o *opList, l location) int {
	if l.bucket == "" {
		return o.op("V", o.key(l.plain))
	}
	return o.op("R", o.key(l.bucket), o.key(s.oversizeKey(l)), o.key(s.legacyKey(l)), l.field)
}

// tieOlder gives the keys of a bucket's older oversize values the expiry
// the bucket has just got (mode "b"), if a P operation's reply lists them.
// It is a second call, as those keys could not be declared before the
// fields were known; if it never runs (the client stops in between), those
// keys outlive their bucket, unread: reads and SetNX follow the fields, and
// a later write or delete of the key removes them.
func (s *Store) tieOlder(ctx context.Context, bucket string, reply zipline.Value) error {
	r, err := reply.AsSlice()
	if err != nil || len(r) < 2 {
		return nil // a count: nothing to tie
	}
	var o opList
	args := []any{"T", o.key(bucket), len(r) - 1}
	for _, f := range r[1:] {
		name, err := f.AsString()
		if err != nil {
			return err
		}
		args = append(args, o.key(s.oversizeKey(location{bucket: bucket, field: name})), name)
	}
	o.op(args...)
	_, err = s.runOps(ctx, &o)
	return err
}

// runOps calls the ops script once (EVALSHA, or EVAL the first time on a
// server) and returns one reply per operation, or errChanged if a guard
// failed.
func (s *Store) runOps(ctx context.Context, o *opList) ([]zipline.Value, error) {
	v, err := opsScript.Run(ctx, s.c, o.keys, o.args...)
	if err != nil {
		return nil, err
	}
	return opsReplies(v, o.n)
}

// queue queues the script on b with its source (EVAL), so that it cannot
// fail for want of a cached script inside a caller's transaction.
func (o *opList) queue(b *zipline.Batch) *zipline.Future[zipline.Value] {
	return b.Do(o.call("EVAL", opsLua)...)
}

// queueDigest queues the script on b by its digest (EVALSHA): the reply is
// NOSCRIPT where the server has not cached it (see runOpsBatch).
func (o *opList) queueDigest(b *zipline.Batch) *zipline.Future[zipline.Value] {
	return b.Do(o.call("EVALSHA", opsScript.SHA1())...)
}

// call returns the command that runs the list: EVAL with the source, or
// EVALSHA with the digest, then the keys and the operations.
func (o *opList) call(cmd, script string) []any {
	args := make([]any, 0, 3+len(o.keys)+len(o.args))
	args = append(args, cmd, script, len(o.keys))
	for _, k := range o.keys {
		args = append(args, k)
	}
	return append(args, o.args...)
}

// opsReplies splits the script's reply.
func opsReplies(v zipline.Value, n int) ([]zipline.Value, error) {
	if c, err := v.AsInt64(); err == nil && c == 0 {
		return nil, errChanged
	}
	r, err := v.AsSlice()
	if err != nil {
		return nil, err
	}
	if len(r) != n {
		return nil, fmt.Errorf("layout: the script replied %d results for %d operations", len(r), n)
	}
	return r, nil
}
