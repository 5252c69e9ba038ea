package difftest

// The command table. Each row makes one random command of its kind in both
// clients' forms: zipline's Client method and Batch twin (typed), and the
// go-redis call. To cover a new command, add a row; give it the family it
// is refused under if zipline refuses it while compressing.

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/ziplinekv/zipline"
)

type (
	zcli       = *zipline.Client
	zbat       = *zipline.Batch
	fut[T any] = *zipline.Future[T]
	ctxT       = context.Context
	gcli       = goCmdable
	gcmd       = redis.Cmder
	row        struct {
		name   string
		weight int
		make   func(g *gen) *op
	}
)

// zExp is an expiry as zipline takes it.
func zExp(e expiry) []zipline.Expiry {
	switch e.kind {
	case "EX":
		return []zipline.Expiry{zipline.EX(e.d)}
	case "PX":
		return []zipline.Expiry{zipline.PX(e.d)}
	case "KEEPTTL":
		return []zipline.Expiry{zipline.KeepTTL()}
	case "PXAT":
		return []zipline.Expiry{zipline.ExpireAt(e.t)}
	case "PERSIST":
		return []zipline.Expiry{zipline.Persist()}
	case "EX0":
		return []zipline.Expiry{zipline.EX(0)}
	case "ZERO":
		return []zipline.Expiry{{}}
	case "ATZERO":
		return []zipline.Expiry{zipline.ExpireAt(time.Time{})}
	}
	return nil
}

// gSetArgs is a SET's options as go-redis takes them.
func gSetArgs(e expiry, mode string, get bool) redis.SetArgs {
	a := redis.SetArgs{Mode: mode, Get: get}
	switch e.kind {
	case "EX", "PX":
		a.TTL = e.d
	case "KEEPTTL":
		a.KeepTTL = true
	case "PXAT":
		a.ExpireAt = e.t
	}
	return a
}

// statusToBool renders SET ... NX/XX through go-redis's SetArgs: +OK is
// true, a null false, as zipline's SetNX and SetXX report them.
func statusToBool(c gcmd) reply {
	err := c.Err()
	switch {
	case err == redis.Nil:
		return val(vbool(false))
	case err != nil:
		return gErr(err)
	}
	return val(vbool(true))
}

func keyValues(ks []string, vs [][]byte) ([]zipline.KeyValue, []any) {
	kv := make([]zipline.KeyValue, len(ks))
	flat := make([]any, 0, 2*len(ks))
	for i, k := range ks {
		kv[i] = zipline.KeyValue{Key: k, Value: vs[i]}
		flat = append(flat, k, vs[i])
	}
	return kv, flat
}

func anys[T any](xs []T) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

func flatArgs(name string, head []any, rest ...any) []any {
	return append(append([]any{name}, head...), rest...)
}

func ttlConv(d time.Duration) string { return vttl(d) }

func pingConv(ok bool) string {
	if ok {
		return vstr("PONG")
	}
	return vbool(false)
}

// Scripts: one reads a value back (as stored), one writes through EVAL's
// arguments, which are not values zipline compresses.
var (
	zScriptGet    = zipline.NewScript("return redis.call('GET', KEYS[1])")
	gScriptGet    = redis.NewScript("return redis.call('GET', KEYS[1])")
	zScriptSetGet = zipline.NewScript("redis.call('SET', KEYS[1], ARGV[1]); return redis.call('GET', KEYS[1])")
	gScriptSetGet = redis.NewScript("redis.call('SET', KEYS[1], ARGV[1]); return redis.call('GET', KEYS[1])")
	zScriptType   = zipline.NewScript("return {redis.call('TYPE', KEYS[1])['ok'], redis.call('EXISTS', KEYS[1])}")
	gScriptType   = redis.NewScript("return {redis.call('TYPE', KEYS[1])['ok'], redis.call('EXISTS', KEYS[1])}")
	zScriptNested = zipline.NewScript(scriptNested)
	gScriptNested = redis.NewScript(scriptNested)
)

// scriptNested returns values read inside the server at several depths:
// a key's value, its list elements or its one hash value (a hash's order
// depends on its encoding, which compression can change), and a constant.
const scriptNested = `local t = redis.call('TYPE', KEYS[1])['ok']
local v
if t == 'string' then v = {redis.call('GET', KEYS[1])}
elseif t == 'list' then v = redis.call('LRANGE', KEYS[1], 0, -1)
elseif t == 'hash' and redis.call('HLEN', KEYS[1]) == 1 then v = redis.call('HVALS', KEYS[1])
else v = {} end
return {t, {v, 'constant'}}`

// blockTimeout is how long the blocking commands wait on empty keys.
const blockTimeout = 10 * time.Millisecond

// table is every row: the core commands here, and the families in
// rows_*_test.go.
var table = slices.Concat(coreRows, streamRows, geoRows, bitmapRows, hllRows, stringRows, keyRows,
	hashRows, listRows, setRows, zsetRows, scriptRows, serverRows)

var coreRows = []row{
	// Strings.
	{"GET", 40, func(g *gen) *op {
		k := g.key(bandStr)
		o := &op{name: "GET", desc: cmdline("GET", k), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.Get(ctx, k) }}
		return typed(o, zBytes,
			func(ctx ctxT, c zcli) ([]byte, error) { return c.Get(ctx, k) },
			func(b zbat) fut[[]byte] { return b.Get(k) })
	}},
	{"SET", 40, func(g *gen) *op {
		k, v, e := g.key(bandStr), g.value(), g.setExpiry()
		o := &op{name: "SET", desc: cmdline("SET", k, v) + e.String(), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.SetArgs(ctx, k, v, gSetArgs(e, "", false)) }}
		return typed(o, zOK,
			okOnly(func(ctx ctxT, c zcli) error { return c.Set(ctx, k, v, zExp(e)...) }),
			func(b zbat) fut[bool] { return b.Set(k, v, zExp(e)...) })
	}},
	{"SETNX", 10, func(g *gen) *op {
		k, v, e := g.key(bandStr), g.value(), g.setExpiry()
		o := &op{name: "SET NX", desc: cmdline("SET", k, v) + e.String() + " NX", keys: []string{k}, gr: statusToBool,
			g: func(ctx ctxT, c gcli) gcmd { return c.SetArgs(ctx, k, v, gSetArgs(e, "NX", false)) }}
		return typed(o, vbool,
			func(ctx ctxT, c zcli) (bool, error) { return c.SetNX(ctx, k, v, zExp(e)...) },
			func(b zbat) fut[bool] { return b.SetNX(k, v, zExp(e)...) })
	}},
	{"SETXX", 10, func(g *gen) *op {
		k, v, e := g.key(bandStr), g.value(), g.setExpiry()
		o := &op{name: "SET XX", desc: cmdline("SET", k, v) + e.String() + " XX", keys: []string{k}, gr: statusToBool,
			g: func(ctx ctxT, c gcli) gcmd { return c.SetArgs(ctx, k, v, gSetArgs(e, "XX", false)) }}
		return typed(o, vbool,
			func(ctx ctxT, c zcli) (bool, error) { return c.SetXX(ctx, k, v, zExp(e)...) },
			func(b zbat) fut[bool] { return b.SetXX(k, v, zExp(e)...) })
	}},
	{"SETGET", 12, func(g *gen) *op {
		k, v, e := g.key(bandStr), g.value(), g.setExpiry()
		o := &op{name: "SET GET", desc: cmdline("SET", k, v) + e.String() + " GET", keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.SetArgs(ctx, k, v, gSetArgs(e, "", true)) }}
		return typed(o, zBytes,
			func(ctx ctxT, c zcli) ([]byte, error) { return c.SetGet(ctx, k, v, zExp(e)...) },
			func(b zbat) fut[[]byte] { return b.SetGet(k, v, zExp(e)...) })
	}},
	{"GETSET", 8, func(g *gen) *op {
		k, v := g.key(bandStr), g.value()
		o := &op{name: "GETSET", desc: cmdline("GETSET", k, v), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.GetSet(ctx, k, v) }}
		return typed(o, zBytes,
			func(ctx ctxT, c zcli) ([]byte, error) { return c.GetSet(ctx, k, v) },
			func(b zbat) fut[[]byte] { return b.GetSet(k, v) })
	}},
	{"MGET", 20, func(g *gen) *op {
		ks := g.keys(bandStr, 1, 4)
		o := &op{name: "MGET", desc: cmdline("MGET", ks), keys: ks,
			g: func(ctx ctxT, c gcli) gcmd { return c.MGet(ctx, ks...) }}
		return typed(o, zBytesOrNil,
			func(ctx ctxT, c zcli) ([][]byte, error) { return c.MGet(ctx, ks...) },
			func(b zbat) fut[[][]byte] { return b.MGet(ks...) })
	}},
	{"MSET", 10, func(g *gen) *op {
		ks := g.keys(bandStr, 1, 3)
		vs := make([][]byte, len(ks))
		desc := "MSET"
		for i, k := range ks {
			vs[i] = g.value()
			desc += " " + cmdline("", k, vs[i])[1:]
		}
		kv, flat := keyValues(ks, vs)
		o := &op{name: "MSET", desc: desc, keys: ks,
			g: func(ctx ctxT, c gcli) gcmd { return c.MSet(ctx, flat...) }}
		return typed(o, zOK,
			okOnly(func(ctx ctxT, c zcli) error { return c.MSet(ctx, kv...) }),
			func(b zbat) fut[bool] { return b.MSet(kv...) })
	}},
	{"MSETNX", 6, func(g *gen) *op {
		ks := g.keys(bandStr, 1, 3)
		vs := make([][]byte, len(ks))
		desc := "MSETNX"
		for i, k := range ks {
			vs[i] = g.value()
			desc += " " + cmdline("", k, vs[i])[1:]
		}
		kv, flat := keyValues(ks, vs)
		o := &op{name: "MSETNX", desc: desc, keys: ks,
			g: func(ctx ctxT, c gcli) gcmd { return c.MSetNX(ctx, flat...) }}
		return typed(o, vbool,
			func(ctx ctxT, c zcli) (bool, error) { return c.MSetNX(ctx, kv...) },
			func(b zbat) fut[bool] { return b.MSetNX(kv...) })
	}},
	{"GETEX", 8, func(g *gen) *op {
		k, e := g.key(bandStr), g.getExExpiry()
		o := &op{name: "GETEX", desc: cmdline("GETEX", k) + e.String(), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd {
				switch e.kind {
				case "", "EX0", "ZERO", "ATZERO":
					// go-redis: a negative expiration sends no option (its
					// 0 is PERSIST here, where zipline's zero Expiry values
					// set nothing).
					return c.GetEx(ctx, k, -1)
				case "PERSIST":
					return c.GetEx(ctx, k, 0)
				case "PXAT":
					return goDo(ctx, c, "GETEX", k, "PXAT", e.t.UnixMilli())
				}
				return c.GetEx(ctx, k, e.d)
			}}
		return typed(o, zBytes,
			func(ctx ctxT, c zcli) ([]byte, error) { return c.GetEx(ctx, k, zExp(e)...) },
			func(b zbat) fut[[]byte] { return b.GetEx(k, zExp(e)...) })
	}},
	{"GETDEL", 6, func(g *gen) *op {
		k := g.key(bandStr)
		o := &op{name: "GETDEL", desc: cmdline("GETDEL", k), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.GetDel(ctx, k) }}
		return typed(o, zBytes,
			func(ctx ctxT, c zcli) ([]byte, error) { return c.GetDel(ctx, k) },
			func(b zbat) fut[[]byte] { return b.GetDel(k) })
	}},
	{"INCR", 10, func(g *gen) *op {
		k := g.key(bandStr)
		o := &op{name: "INCR", desc: cmdline("INCR", k), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.Incr(ctx, k) }}
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) { return c.Incr(ctx, k) },
			func(b zbat) fut[int64] { return b.Incr(k) })
	}},
	{"DECR", 4, func(g *gen) *op {
		k := g.key(bandStr)
		o := &op{name: "DECR", desc: cmdline("DECR", k), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.Decr(ctx, k) }}
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) { return c.Decr(ctx, k) },
			func(b zbat) fut[int64] { return b.Decr(k) })
	}},
	{"INCRBY", 6, func(g *gen) *op {
		k, n := g.key(bandStr), g.incr()
		o := &op{name: "INCRBY", desc: cmdline("INCRBY", k, n), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.IncrBy(ctx, k, n) }}
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) { return c.IncrBy(ctx, k, n) },
			func(b zbat) fut[int64] { return b.IncrBy(k, n) })
	}},
	{"DECRBY", 4, func(g *gen) *op {
		k, n := g.key(bandStr), g.incr()
		o := &op{name: "DECRBY", desc: cmdline("DECRBY", k, n), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.DecrBy(ctx, k, n) }}
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) { return c.DecrBy(ctx, k, n) },
			func(b zbat) fut[int64] { return b.DecrBy(k, n) })
	}},
	{"INCRBYFLOAT", 6, func(g *gen) *op {
		k, f := g.key(bandStr), g.incrFloat()
		o := &op{name: "INCRBYFLOAT", desc: cmdline("INCRBYFLOAT", k, f), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.IncrByFloat(ctx, k, f) }}
		return typed(o, vfloat,
			func(ctx ctxT, c zcli) (float64, error) { return c.IncrByFloat(ctx, k, f) },
			func(b zbat) fut[float64] { return b.IncrByFloat(k, f) })
	}},
	{"APPEND", 6, func(g *gen) *op {
		k, v := g.key(bandStr), g.value()
		o := &op{name: "APPEND", desc: cmdline("APPEND", k, v), keys: []string{k}, refuse: famStrings,
			g: func(ctx ctxT, c gcli) gcmd { return c.Append(ctx, k, string(v)) }}
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) { return c.Append(ctx, k, v) },
			func(b zbat) fut[int64] { return b.Append(k, v) })
	}},
	{"STRLEN", 5, func(g *gen) *op {
		k := g.key(bandStr)
		o := &op{name: "STRLEN", desc: cmdline("STRLEN", k), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.StrLen(ctx, k) }}
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) { return c.StrLen(ctx, k) },
			func(b zbat) fut[int64] { return b.StrLen(k) })
	}},

	// Keys.
	{"DEL", 8, func(g *gen) *op {
		ks := g.keys(bandAny, 1, 3)
		o := &op{name: "DEL", desc: cmdline("DEL", ks), keys: ks,
			g: func(ctx ctxT, c gcli) gcmd { return c.Del(ctx, ks...) }}
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) { return c.Del(ctx, ks...) },
			func(b zbat) fut[int64] { return b.Del(ks...) })
	}},
	{"UNLINK", 3, func(g *gen) *op {
		ks := g.keys(bandAny, 1, 3)
		o := &op{name: "UNLINK", desc: cmdline("UNLINK", ks), keys: ks,
			g: func(ctx ctxT, c gcli) gcmd { return c.Unlink(ctx, ks...) }}
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) { return c.Unlink(ctx, ks...) },
			func(b zbat) fut[int64] { return b.Unlink(ks...) })
	}},
	{"EXISTS", 6, func(g *gen) *op {
		ks := g.keys(bandAny, 1, 4)
		o := &op{name: "EXISTS", desc: cmdline("EXISTS", ks), keys: ks,
			g: func(ctx ctxT, c gcli) gcmd { return c.Exists(ctx, ks...) }}
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) { return c.Exists(ctx, ks...) },
			func(b zbat) fut[int64] { return b.Exists(ks...) })
	}},
	{"TOUCH", 3, func(g *gen) *op {
		ks := g.keys(bandAny, 1, 3)
		o := &op{name: "TOUCH", desc: cmdline("TOUCH", ks), keys: ks,
			g: func(ctx ctxT, c gcli) gcmd { return c.Touch(ctx, ks...) }}
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) { return c.Touch(ctx, ks...) },
			func(b zbat) fut[int64] { return b.Touch(ks...) })
	}},
	{"EXPIRE", 6, func(g *gen) *op {
		k, d := g.key(bandAny), g.expireDur()
		name := "EXPIRE"
		if d%time.Second != 0 {
			name = "PEXPIRE"
		}
		o := &op{name: name, desc: fmt.Sprintf("%s %q %v", name, k, d), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd {
				if d%time.Second != 0 {
					return c.PExpire(ctx, k, d)
				}
				return c.Expire(ctx, k, d)
			}}
		return typed(o, vbool,
			func(ctx ctxT, c zcli) (bool, error) { return c.Expire(ctx, k, d) },
			func(b zbat) fut[bool] { return b.Expire(k, d) })
	}},
	{"EXPIREAT", 3, func(g *gen) *op {
		k := g.key(bandAny)
		t := g.now.Add(pick(g, time.Hour, -time.Hour)).Truncate(time.Millisecond)
		o := &op{name: "PEXPIREAT", desc: cmdline("PEXPIREAT", k, t.UnixMilli()), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.PExpireAt(ctx, k, t) }}
		return typed(o, vbool,
			func(ctx ctxT, c zcli) (bool, error) { return c.ExpireAt(ctx, k, t) },
			func(b zbat) fut[bool] { return b.ExpireAt(k, t) })
	}},
	{"PERSIST", 4, func(g *gen) *op {
		k := g.key(bandAny)
		o := &op{name: "PERSIST", desc: cmdline("PERSIST", k), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.Persist(ctx, k) }}
		return typed(o, vbool,
			func(ctx ctxT, c zcli) (bool, error) { return c.Persist(ctx, k) },
			func(b zbat) fut[bool] { return b.Persist(k) })
	}},
	{"TTL", 5, func(g *gen) *op {
		k := g.key(bandAny)
		o := &op{name: "TTL", desc: cmdline("TTL", k), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.TTL(ctx, k) }}
		return typed(o, ttlConv,
			func(ctx ctxT, c zcli) (time.Duration, error) { return c.TTL(ctx, k) },
			func(b zbat) fut[time.Duration] { return b.TTL(k) })
	}},
	{"PTTL", 3, func(g *gen) *op {
		k := g.key(bandAny)
		o := &op{name: "PTTL", desc: cmdline("PTTL", k), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.PTTL(ctx, k) }}
		return typed(o, ttlConv,
			func(ctx ctxT, c zcli) (time.Duration, error) { return c.PTTL(ctx, k) },
			func(b zbat) fut[time.Duration] { return b.PTTL(k) })
	}},
	{"TYPE", 5, func(g *gen) *op {
		k := g.key(bandAny)
		o := &op{name: "TYPE", desc: cmdline("TYPE", k), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.Type(ctx, k) }}
		return typed(o, vstr,
			func(ctx ctxT, c zcli) (string, error) { return c.Type(ctx, k) },
			func(b zbat) fut[string] { return b.Type(k) })
	}},
	{"RENAME", 4, func(g *gen) *op {
		k, nk := g.key(bandAny), g.key(bandAny)
		o := &op{name: "RENAME", desc: cmdline("RENAME", k, nk), keys: []string{k, nk}, moves: famStrings,
			g: func(ctx ctxT, c gcli) gcmd { return c.Rename(ctx, k, nk) }}
		return typed(o, zOK,
			okOnly(func(ctx ctxT, c zcli) error { return c.Rename(ctx, k, nk) }),
			func(b zbat) fut[bool] { return b.Rename(k, nk) })
	}},
	{"DBSIZE", 2, func(g *gen) *op {
		// DBSIZE counts keys whose expiry has passed until the server
		// reclaims them, which each server does in its own time (a SET
		// ... PXAT in the past leaves one): alone, after EXISTS of every
		// key on both servers has reclaimed them.
		o := &op{name: "DBSIZE", desc: "DBSIZE (after EXISTS of every key)", solo: true, keys: allKeys}
		o.z = func(ctx ctxT, c zcli) reply {
			c.Exists(ctx, allKeys...)
			n, err := c.DBSize(ctx)
			return zResult(n, err, vint)
		}
		o.gd = func(ctx ctxT, c gcli) reply {
			c.Exists(ctx, allKeys...)
			return gReply(c.DBSize(ctx), false, false)
		}
		return o
	}},
	{"SCAN", 2, func(g *gen) *op {
		opts := zipline.ScanOptions{Match: pick(g, "", "", "k1*", "*5"), Count: pick[int64](g, 0, 2, 10),
			Type: pick(g, "", "", "", "string", "hash", "list", "set", "zset")}
		o := &op{name: "SCAN", desc: fmt.Sprintf("SCAN (whole) MATCH %q COUNT %d TYPE %q", opts.Match, opts.Count, opts.Type),
			keys: allKeys, solo: true}
		o.z = func(ctx ctxT, c zcli) reply {
			seen := map[string]bool{}
			for k, err := range c.Scan(ctx, opts) {
				if err != nil {
					return zErr(err)
				}
				seen[k] = true
			}
			return val(renderSet(seen))
		}
		o.gd = func(ctx ctxT, c gcli) reply {
			seen := map[string]bool{}
			var cursor uint64
			for {
				var keys []string
				var err error
				if opts.Type != "" {
					keys, cursor, err = c.ScanType(ctx, cursor, opts.Match, opts.Count, opts.Type).Result()
				} else {
					keys, cursor, err = c.Scan(ctx, cursor, opts.Match, opts.Count).Result()
				}
				if err != nil {
					return gErr(err)
				}
				for _, k := range keys {
					seen[k] = true
				}
				if cursor == 0 {
					return val(renderSet(seen))
				}
			}
		}
		return o
	}},

	// Hashes.
	{"HSET", 20, func(g *gen) *op {
		k := g.key(bandHash)
		fs := g.fields(1, 3)
		fvs := make([]zipline.FieldValue, len(fs))
		flat := make([]any, 0, 2*len(fs))
		desc := cmdline("HSET", k)
		for i, f := range fs {
			v := g.elem()
			fvs[i] = zipline.FieldValue{Field: f, Value: v}
			flat = append(flat, f, v)
			desc += cmdline("", f, v)
		}
		o := &op{name: "HSET", desc: desc, keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.HSet(ctx, k, flat...) }}
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) { return c.HSet(ctx, k, fvs...) },
			func(b zbat) fut[int64] { return b.HSet(k, fvs...) })
	}},
	{"HSETNX", 5, func(g *gen) *op {
		k, f, v := g.key(bandHash), g.field(), g.elem()
		o := &op{name: "HSETNX", desc: cmdline("HSETNX", k, f, v), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.HSetNX(ctx, k, f, v) }}
		return typed(o, vbool,
			func(ctx ctxT, c zcli) (bool, error) { return c.HSetNX(ctx, k, f, v) },
			func(b zbat) fut[bool] { return b.HSetNX(k, f, v) })
	}},
	{"HGET", 12, func(g *gen) *op {
		k, f := g.key(bandHash), g.field()
		o := &op{name: "HGET", desc: cmdline("HGET", k, f), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.HGet(ctx, k, f) }}
		return typed(o, zBytes,
			func(ctx ctxT, c zcli) ([]byte, error) { return c.HGet(ctx, k, f) },
			func(b zbat) fut[[]byte] { return b.HGet(k, f) })
	}},
	{"HMGET", 10, func(g *gen) *op {
		k, fs := g.key(bandHash), g.fields(1, 4)
		o := &op{name: "HMGET", desc: cmdline("HMGET", k, fs), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.HMGet(ctx, k, fs...) }}
		return typed(o, zBytesOrNil,
			func(ctx ctxT, c zcli) ([][]byte, error) { return c.HMGet(ctx, k, fs...) },
			func(b zbat) fut[[][]byte] { return b.HMGet(k, fs...) })
	}},
	{"HGETALL", 8, func(g *gen) *op {
		k := g.key(bandHash)
		o := &op{name: "HGETALL", desc: cmdline("HGETALL", k), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.HGetAll(ctx, k) }}
		return typed(o, func(m zipline.FieldMap) string { return zBytesMap(m) },
			func(ctx ctxT, c zcli) (zipline.FieldMap, error) { return c.HGetAll(ctx, k) },
			func(b zbat) fut[zipline.FieldMap] { return b.HGetAll(k) })
	}},
	{"HDEL", 6, func(g *gen) *op {
		k, fs := g.key(bandHash), g.fields(1, 3)
		o := &op{name: "HDEL", desc: cmdline("HDEL", k, fs), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.HDel(ctx, k, fs...) }}
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) { return c.HDel(ctx, k, fs...) },
			func(b zbat) fut[int64] { return b.HDel(k, fs...) })
	}},
	{"HEXISTS", 4, func(g *gen) *op {
		k, f := g.key(bandHash), g.field()
		o := &op{name: "HEXISTS", desc: cmdline("HEXISTS", k, f), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.HExists(ctx, k, f) }}
		return typed(o, vbool,
			func(ctx ctxT, c zcli) (bool, error) { return c.HExists(ctx, k, f) },
			func(b zbat) fut[bool] { return b.HExists(k, f) })
	}},
	{"HINCRBY", 6, func(g *gen) *op {
		k, f, n := g.key(bandHash), g.field(), g.incr()
		o := &op{name: "HINCRBY", desc: cmdline("HINCRBY", k, f, n), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.HIncrBy(ctx, k, f, n) }}
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) { return c.HIncrBy(ctx, k, f, n) },
			func(b zbat) fut[int64] { return b.HIncrBy(k, f, n) })
	}},
	{"HINCRBYFLOAT", 4, func(g *gen) *op {
		k, f, x := g.key(bandHash), g.field(), g.incrFloat()
		o := &op{name: "HINCRBYFLOAT", desc: cmdline("HINCRBYFLOAT", k, f, x), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.HIncrByFloat(ctx, k, f, x) }}
		return typed(o, vfloat,
			func(ctx ctxT, c zcli) (float64, error) { return c.HIncrByFloat(ctx, k, f, x) },
			func(b zbat) fut[float64] { return b.HIncrByFloat(k, f, x) })
	}},
	{"HKEYS", 4, func(g *gen) *op {
		k := g.key(bandHash)
		o := &op{name: "HKEYS", desc: cmdline("HKEYS", k), keys: []string{k}, unordered: true,
			g: func(ctx ctxT, c gcli) gcmd { return c.HKeys(ctx, k) }}
		return typed(o, zStrings(true),
			func(ctx ctxT, c zcli) ([]string, error) { return c.HKeys(ctx, k) },
			func(b zbat) fut[[]string] { return b.HKeys(k) })
	}},
	{"HVALS", 4, func(g *gen) *op {
		k := g.key(bandHash)
		o := &op{name: "HVALS", desc: cmdline("HVALS", k), keys: []string{k}, unordered: true,
			g: func(ctx ctxT, c gcli) gcmd { return c.HVals(ctx, k) }}
		return typed(o, zBytesList(true),
			func(ctx ctxT, c zcli) ([][]byte, error) { return c.HVals(ctx, k) },
			func(b zbat) fut[[][]byte] { return b.HVals(k) })
	}},
	{"HLEN", 3, func(g *gen) *op {
		k := g.key(bandHash)
		o := &op{name: "HLEN", desc: cmdline("HLEN", k), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.HLen(ctx, k) }}
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) { return c.HLen(ctx, k) },
			func(b zbat) fut[int64] { return b.HLen(k) })
	}},
	{"HSCAN", 3, func(g *gen) *op {
		k := g.scanKey(bandHash)
		opts := zipline.ScanOptions{Match: pick(g, "", "", "f*"), Count: pick[int64](g, 0, 1, 10)}
		o := &op{name: "HSCAN", desc: fmt.Sprintf("HSCAN %q (whole) MATCH %q COUNT %d", k, opts.Match, opts.Count),
			keys: []string{k}, solo: true}
		o.z = func(ctx ctxT, c zcli) reply {
			m := map[string]string{}
			for fv, err := range c.HScan(ctx, k, opts) {
				if err != nil {
					return zErr(err)
				}
				m[fv.Field] = vbytes(fv.Value)
			}
			return val(vmap(m))
		}
		o.gd = func(ctx ctxT, c gcli) reply {
			m := map[string]string{}
			var cursor uint64
			for {
				items, next, err := c.HScan(ctx, k, cursor, opts.Match, opts.Count).Result()
				if err != nil {
					return gErr(err)
				}
				for i := 0; i+1 < len(items); i += 2 {
					m[items[i]] = vstr(items[i+1])
				}
				if cursor = next; cursor == 0 {
					return val(vmap(m))
				}
			}
		}
		return o
	}},

	// Lists.
	{"LPUSH", 12, func(g *gen) *op {
		k, vs := g.key(bandList), g.elems(1, 3)
		o := &op{name: "LPUSH", desc: cmdline("LPUSH", k, vs), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.LPush(ctx, k, anys(vs)...) }}
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) { return c.LPush(ctx, k, vs...) },
			func(b zbat) fut[int64] { return b.LPush(k, vs...) })
	}},
	{"RPUSH", 12, func(g *gen) *op {
		k, vs := g.key(bandList), g.elems(1, 3)
		o := &op{name: "RPUSH", desc: cmdline("RPUSH", k, vs), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.RPush(ctx, k, anys(vs)...) }}
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) { return c.RPush(ctx, k, vs...) },
			func(b zbat) fut[int64] { return b.RPush(k, vs...) })
	}},
	{"LPOP", 6, func(g *gen) *op {
		k := g.key(bandList)
		o := &op{name: "LPOP", desc: cmdline("LPOP", k), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.LPop(ctx, k) }}
		return typed(o, zBytes,
			func(ctx ctxT, c zcli) ([]byte, error) { return c.LPop(ctx, k) },
			func(b zbat) fut[[]byte] { return b.LPop(k) })
	}},
	{"RPOP", 6, func(g *gen) *op {
		k := g.key(bandList)
		o := &op{name: "RPOP", desc: cmdline("RPOP", k), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.RPop(ctx, k) }}
		return typed(o, zBytes,
			func(ctx ctxT, c zcli) ([]byte, error) { return c.RPop(ctx, k) },
			func(b zbat) fut[[]byte] { return b.RPop(k) })
	}},
	{"LRANGE", 10, func(g *gen) *op {
		k, start, stop := g.key(bandList), g.index(), g.index()
		if g.intn(2) == 0 {
			start, stop = 0, -1
		}
		o := &op{name: "LRANGE", desc: cmdline("LRANGE", k, start, stop), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.LRange(ctx, k, start, stop) }}
		return typed(o, zBytesList(false),
			func(ctx ctxT, c zcli) ([][]byte, error) { return c.LRange(ctx, k, start, stop) },
			func(b zbat) fut[[][]byte] { return b.LRange(k, start, stop) })
	}},
	{"LLEN", 4, func(g *gen) *op {
		k := g.key(bandList)
		o := &op{name: "LLEN", desc: cmdline("LLEN", k), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.LLen(ctx, k) }}
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) { return c.LLen(ctx, k) },
			func(b zbat) fut[int64] { return b.LLen(k) })
	}},
	{"LINDEX", 5, func(g *gen) *op {
		k, i := g.key(bandList), g.index()
		o := &op{name: "LINDEX", desc: cmdline("LINDEX", k, i), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.LIndex(ctx, k, i) }}
		return typed(o, zBytes,
			func(ctx ctxT, c zcli) ([]byte, error) { return c.LIndex(ctx, k, i) },
			func(b zbat) fut[[]byte] { return b.LIndex(k, i) })
	}},
	{"LSET", 4, func(g *gen) *op {
		k, i, v := g.key(bandList), g.index(), g.elem()
		o := &op{name: "LSET", desc: cmdline("LSET", k, i, v), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.LSet(ctx, k, i, v) }}
		return typed(o, zOK,
			okOnly(func(ctx ctxT, c zcli) error { return c.LSet(ctx, k, i, v) }),
			func(b zbat) fut[bool] { return b.LSet(k, i, v) })
	}},
	{"LREM", 5, func(g *gen) *op {
		k, n, v := g.key(bandList), pick[int64](g, -2, -1, 0, 1, 2), g.elem()
		o := &op{name: "LREM", desc: cmdline("LREM", k, n, v), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.LRem(ctx, k, n, v) }}
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) { return c.LRem(ctx, k, n, v) },
			func(b zbat) fut[int64] { return b.LRem(k, n, v) })
	}},
	{"LTRIM", 3, func(g *gen) *op {
		k, start, stop := g.key(bandList), g.index(), g.index()
		o := &op{name: "LTRIM", desc: cmdline("LTRIM", k, start, stop), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.LTrim(ctx, k, start, stop) }}
		return typed(o, zOK,
			okOnly(func(ctx ctxT, c zcli) error { return c.LTrim(ctx, k, start, stop) }),
			func(b zbat) fut[bool] { return b.LTrim(k, start, stop) })
	}},
	{"LINSERT", 6, func(g *gen) *op {
		k, before, pivot, v := g.key(bandList), g.intn(2) == 0, g.elem(), g.elem()
		where := "AFTER"
		if before {
			where = "BEFORE"
		}
		o := &op{name: "LINSERT", desc: cmdline("LINSERT", k, where, pivot, v), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.LInsert(ctx, k, where, pivot, v) }}
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) { return c.LInsert(ctx, k, before, pivot, v) },
			func(b zbat) fut[int64] { return b.LInsert(k, before, pivot, v) })
	}},
	{"LMOVE", 6, func(g *gen) *op {
		src, dst := g.key(bandList), g.key(bandList)
		from, to := pick(g, zipline.Left, zipline.Right), pick(g, zipline.Left, zipline.Right)
		o := &op{name: "LMOVE", desc: cmdline("LMOVE", src, dst, string(from), string(to)), keys: []string{src, dst}, moves: famLists,
			g: func(ctx ctxT, c gcli) gcmd { return c.LMove(ctx, src, dst, string(from), string(to)) }}
		return typed(o, zBytes,
			func(ctx ctxT, c zcli) ([]byte, error) { return c.LMove(ctx, src, dst, from, to) },
			func(b zbat) fut[[]byte] { return b.LMove(src, dst, from, to) })
	}},
	{"BLPOP", 2, func(g *gen) *op {
		ks := g.keys(bandList, 1, 2)
		o := &op{name: "BLPOP", desc: cmdline("BLPOP", ks) + " 0.01", keys: ks,
			g: func(ctx ctxT, c gcli) gcmd { return goDo(ctx, c, flatArgs("BLPOP", anys(ks), "0.01")...) }}
		return typed(o, zKeyValue,
			func(ctx ctxT, c zcli) (zipline.KeyValue, error) { return c.BLPop(ctx, blockTimeout, ks...) },
			func(b zbat) fut[zipline.KeyValue] { return b.BLPop(blockTimeout, ks...) })
	}},
	{"BRPOP", 2, func(g *gen) *op {
		ks := g.keys(bandList, 1, 2)
		o := &op{name: "BRPOP", desc: cmdline("BRPOP", ks) + " 0.01", keys: ks,
			g: func(ctx ctxT, c gcli) gcmd { return goDo(ctx, c, flatArgs("BRPOP", anys(ks), "0.01")...) }}
		return typed(o, zKeyValue,
			func(ctx ctxT, c zcli) (zipline.KeyValue, error) { return c.BRPop(ctx, blockTimeout, ks...) },
			func(b zbat) fut[zipline.KeyValue] { return b.BRPop(blockTimeout, ks...) })
	}},
	{"BLMOVE", 2, func(g *gen) *op {
		src, dst := g.key(bandList), g.key(bandList)
		from, to := pick(g, zipline.Left, zipline.Right), pick(g, zipline.Left, zipline.Right)
		o := &op{name: "BLMOVE", desc: cmdline("BLMOVE", src, dst, string(from), string(to)) + " 0.01", keys: []string{src, dst}, moves: famLists,
			g: func(ctx ctxT, c gcli) gcmd { return goDo(ctx, c, "BLMOVE", src, dst, string(from), string(to), "0.01") }}
		return typed(o, zBytes,
			func(ctx ctxT, c zcli) ([]byte, error) { return c.BLMove(ctx, src, dst, from, to, blockTimeout) },
			func(b zbat) fut[[]byte] { return b.BLMove(src, dst, from, to, blockTimeout) })
	}},

	// Sets.
	{"SADD", 12, func(g *gen) *op {
		k, ms := g.key(bandSet), g.members(1, 3)
		o := &op{name: "SADD", desc: cmdline("SADD", k, ms), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.SAdd(ctx, k, anys(ms)...) }}
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) { return c.SAdd(ctx, k, ms...) },
			func(b zbat) fut[int64] { return b.SAdd(k, ms...) })
	}},
	{"SREM", 5, func(g *gen) *op {
		k, ms := g.key(bandSet), g.members(1, 3)
		o := &op{name: "SREM", desc: cmdline("SREM", k, ms), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.SRem(ctx, k, anys(ms)...) }}
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) { return c.SRem(ctx, k, ms...) },
			func(b zbat) fut[int64] { return b.SRem(k, ms...) })
	}},
	{"SMEMBERS", 6, func(g *gen) *op {
		k := g.key(bandSet)
		o := &op{name: "SMEMBERS", desc: cmdline("SMEMBERS", k), keys: []string{k}, unordered: true,
			g: func(ctx ctxT, c gcli) gcmd { return c.SMembers(ctx, k) }}
		return typed(o, zStrings(true),
			func(ctx ctxT, c zcli) ([]string, error) { return c.SMembers(ctx, k) },
			func(b zbat) fut[[]string] { return b.SMembers(k) })
	}},
	{"SISMEMBER", 4, func(g *gen) *op {
		k, m := g.key(bandSet), g.member()
		o := &op{name: "SISMEMBER", desc: cmdline("SISMEMBER", k, m), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.SIsMember(ctx, k, m) }}
		return typed(o, vbool,
			func(ctx ctxT, c zcli) (bool, error) { return c.SIsMember(ctx, k, m) },
			func(b zbat) fut[bool] { return b.SIsMember(k, m) })
	}},
	{"SMISMEMBER", 3, func(g *gen) *op {
		k, ms := g.key(bandSet), g.members(1, 3)
		o := &op{name: "SMISMEMBER", desc: cmdline("SMISMEMBER", k, ms), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.SMIsMember(ctx, k, anys(ms)...) }}
		return typed(o, zBools,
			func(ctx ctxT, c zcli) ([]bool, error) { return c.SMIsMember(ctx, k, ms...) },
			func(b zbat) fut[[]bool] { return b.SMIsMember(k, ms...) })
	}},
	{"SCARD", 3, func(g *gen) *op {
		k := g.key(bandSet)
		o := &op{name: "SCARD", desc: cmdline("SCARD", k), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.SCard(ctx, k) }}
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) { return c.SCard(ctx, k) },
			func(b zbat) fut[int64] { return b.SCard(k) })
	}},
	{"SPOP", 3, func(g *gen) *op {
		k := g.key(bandSet)
		// The servers pick at random: the replies must both be members (or
		// both nil), and the member zipline's server lost is then swapped
		// for the one go-redis's lost, so that the sets stay equal.
		var zm, gm string
		var zok, gok bool
		o := &op{name: "SPOP", desc: cmdline("SPOP", k), keys: []string{k}, solo: true,
			g: func(ctx ctxT, c gcli) gcmd {
				cmd := c.SPop(ctx, k)
				gm, gok = cmd.Val(), cmd.Err() == nil
				return cmd
			}}
		o.z = func(ctx ctxT, c zcli) reply {
			m, err := c.SPop(ctx, k)
			if err != nil {
				return zErr(err)
			}
			zm, zok = m, true
			return val(vstr(m))
		}
		o.same = func(ctx ctxT, r *runner, z, g reply) bool { return z.kind == g.kind && (z.kind == kVal || z == g) }
		o.after = func(ctx ctxT, r *runner) {
			if zok && gok && zm != gm {
				r.zc.SAdd(ctx, k, zm)
				r.zc.SRem(ctx, k, gm)
			}
		}
		return o
	}},
	{"SRANDMEMBER", 3, func(g *gen) *op {
		k := g.key(bandSet)
		var zm string
		o := &op{name: "SRANDMEMBER", desc: cmdline("SRANDMEMBER", k), keys: []string{k}, solo: true,
			g: func(ctx ctxT, c gcli) gcmd { return c.SRandMember(ctx, k) }}
		o.z = func(ctx ctxT, c zcli) reply {
			m, err := c.SRandMember(ctx, k)
			if err != nil {
				return zErr(err)
			}
			zm = m
			return val(vstr(m))
		}
		// Random: equal if both are members of the same set.
		o.same = func(ctx ctxT, r *runner, z, g reply) bool {
			if z.kind != kVal || g.kind != kVal {
				return sameReply(z, g)
			}
			ok, err := r.rc.SIsMember(ctx, k, zm).Result()
			return err == nil && ok
		}
		return o
	}},
	{"SINTER", 4, func(g *gen) *op {
		ks := g.keys(bandSet, 1, 3)
		o := &op{name: "SINTER", desc: cmdline("SINTER", ks), keys: ks, unordered: true,
			g: func(ctx ctxT, c gcli) gcmd { return c.SInter(ctx, ks...) }}
		return typed(o, zStrings(true),
			func(ctx ctxT, c zcli) ([]string, error) { return c.SInter(ctx, ks...) },
			func(b zbat) fut[[]string] { return b.SInter(ks...) })
	}},
	{"SUNION", 4, func(g *gen) *op {
		ks := g.keys(bandSet, 1, 3)
		o := &op{name: "SUNION", desc: cmdline("SUNION", ks), keys: ks, unordered: true,
			g: func(ctx ctxT, c gcli) gcmd { return c.SUnion(ctx, ks...) }}
		return typed(o, zStrings(true),
			func(ctx ctxT, c zcli) ([]string, error) { return c.SUnion(ctx, ks...) },
			func(b zbat) fut[[]string] { return b.SUnion(ks...) })
	}},
	{"SDIFF", 4, func(g *gen) *op {
		ks := g.keys(bandSet, 1, 3)
		o := &op{name: "SDIFF", desc: cmdline("SDIFF", ks), keys: ks, unordered: true,
			g: func(ctx ctxT, c gcli) gcmd { return c.SDiff(ctx, ks...) }}
		return typed(o, zStrings(true),
			func(ctx ctxT, c zcli) ([]string, error) { return c.SDiff(ctx, ks...) },
			func(b zbat) fut[[]string] { return b.SDiff(ks...) })
	}},
	{"SSCAN", 2, func(g *gen) *op {
		k := g.scanKey(bandSet)
		opts := zipline.ScanOptions{Match: pick(g, "", "", "m*"), Count: pick[int64](g, 0, 1, 10)}
		o := &op{name: "SSCAN", desc: fmt.Sprintf("SSCAN %q (whole) MATCH %q COUNT %d", k, opts.Match, opts.Count),
			keys: []string{k}, solo: true}
		o.z = func(ctx ctxT, c zcli) reply {
			seen := map[string]bool{}
			for m, err := range c.SScan(ctx, k, opts) {
				if err != nil {
					return zErr(err)
				}
				seen[m] = true
			}
			return val(renderSet(seen))
		}
		o.gd = func(ctx ctxT, c gcli) reply {
			seen := map[string]bool{}
			var cursor uint64
			for {
				items, next, err := c.SScan(ctx, k, cursor, opts.Match, opts.Count).Result()
				if err != nil {
					return gErr(err)
				}
				for _, m := range items {
					seen[m] = true
				}
				if cursor = next; cursor == 0 {
					return val(renderSet(seen))
				}
			}
		}
		return o
	}},

	// Sorted sets.
	{"ZADD", 12, func(g *gen) *op {
		k := g.key(bandZset)
		ms := g.members(1, 3)
		zs := make([]zipline.Z, len(ms))
		gz := make([]redis.Z, len(ms))
		desc := cmdline("ZADD", k)
		for i, m := range ms {
			s := g.score()
			zs[i], gz[i] = zipline.Z{Member: m, Score: s}, redis.Z{Member: m, Score: s}
			desc += fmt.Sprintf(" %v %q", s, m)
		}
		o := &op{name: "ZADD", desc: desc, keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.ZAdd(ctx, k, gz...) }}
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) { return c.ZAdd(ctx, k, zs...) },
			func(b zbat) fut[int64] { return b.ZAdd(k, zs...) })
	}},
	{"ZREM", 4, func(g *gen) *op {
		k, ms := g.key(bandZset), g.members(1, 3)
		o := &op{name: "ZREM", desc: cmdline("ZREM", k, ms), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.ZRem(ctx, k, anys(ms)...) }}
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) { return c.ZRem(ctx, k, ms...) },
			func(b zbat) fut[int64] { return b.ZRem(k, ms...) })
	}},
	{"ZSCORE", 5, func(g *gen) *op {
		k, m := g.key(bandZset), g.member()
		o := &op{name: "ZSCORE", desc: cmdline("ZSCORE", k, m), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.ZScore(ctx, k, m) }}
		return typed(o, vfloat,
			func(ctx ctxT, c zcli) (float64, error) { return c.ZScore(ctx, k, m) },
			func(b zbat) fut[float64] { return b.ZScore(k, m) })
	}},
	{"ZINCRBY", 5, func(g *gen) *op {
		k, m, x := g.key(bandZset), g.member(), g.score()
		o := &op{name: "ZINCRBY", desc: cmdline("ZINCRBY", k, x, m), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.ZIncrBy(ctx, k, x, m) }}
		return typed(o, vfloat,
			func(ctx ctxT, c zcli) (float64, error) { return c.ZIncrBy(ctx, k, x, m) },
			func(b zbat) fut[float64] { return b.ZIncrBy(k, x, m) })
	}},
	{"ZCARD", 3, func(g *gen) *op {
		k := g.key(bandZset)
		o := &op{name: "ZCARD", desc: cmdline("ZCARD", k), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.ZCard(ctx, k) }}
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) { return c.ZCard(ctx, k) },
			func(b zbat) fut[int64] { return b.ZCard(k) })
	}},
	{"ZCOUNT", 3, func(g *gen) *op {
		k, lo, hi := g.key(bandZset), g.bound(), g.bound()
		o := &op{name: "ZCOUNT", desc: cmdline("ZCOUNT", k, lo, hi), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.ZCount(ctx, k, lo, hi) }}
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) { return c.ZCount(ctx, k, lo, hi) },
			func(b zbat) fut[int64] { return b.ZCount(k, lo, hi) })
	}},
	{"ZRANGE", 5, func(g *gen) *op {
		k, start, stop := g.key(bandZset), g.index(), g.index()
		o := &op{name: "ZRANGE", desc: cmdline("ZRANGE", k, start, stop), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.ZRange(ctx, k, start, stop) }}
		return typed(o, zStrings(false),
			func(ctx ctxT, c zcli) ([]string, error) { return c.ZRange(ctx, k, start, stop) },
			func(b zbat) fut[[]string] { return b.ZRange(k, start, stop) })
	}},
	{"ZRANGEWITHSCORES", 5, func(g *gen) *op {
		k, start, stop := g.key(bandZset), g.index(), g.index()
		if g.intn(2) == 0 {
			start, stop = 0, -1
		}
		o := &op{name: "ZRANGE WITHSCORES", desc: cmdline("ZRANGE", k, start, stop) + " WITHSCORES", keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.ZRangeWithScores(ctx, k, start, stop) }}
		return typed(o, zZs,
			func(ctx ctxT, c zcli) ([]zipline.Z, error) { return c.ZRangeWithScores(ctx, k, start, stop) },
			func(b zbat) fut[[]zipline.Z] { return b.ZRangeWithScores(k, start, stop) })
	}},
	{"ZRANGEBYSCORE", 4, func(g *gen) *op {
		k, lo, hi := g.key(bandZset), g.bound(), g.bound()
		o := &op{name: "ZRANGE BYSCORE", desc: cmdline("ZRANGE", k, lo, hi) + " BYSCORE", keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.ZRangeByScore(ctx, k, &redis.ZRangeBy{Min: lo, Max: hi}) }}
		return typed(o, zStrings(false),
			func(ctx ctxT, c zcli) ([]string, error) { return c.ZRangeByScore(ctx, k, lo, hi) },
			func(b zbat) fut[[]string] { return b.ZRangeByScore(k, lo, hi) })
	}},
	{"ZRANK", 3, func(g *gen) *op {
		k, m := g.key(bandZset), g.member()
		o := &op{name: "ZRANK", desc: cmdline("ZRANK", k, m), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.ZRank(ctx, k, m) }}
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) { return c.ZRank(ctx, k, m) },
			func(b zbat) fut[int64] { return b.ZRank(k, m) })
	}},
	{"ZREVRANK", 3, func(g *gen) *op {
		k, m := g.key(bandZset), g.member()
		o := &op{name: "ZREVRANK", desc: cmdline("ZREVRANK", k, m), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.ZRevRank(ctx, k, m) }}
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) { return c.ZRevRank(ctx, k, m) },
			func(b zbat) fut[int64] { return b.ZRevRank(k, m) })
	}},
	{"ZPOPMIN", 3, func(g *gen) *op {
		k := g.key(bandZset)
		o := &op{name: "ZPOPMIN", desc: cmdline("ZPOPMIN", k), keys: []string{k}, gr: zpopReply,
			g: func(ctx ctxT, c gcli) gcmd { return c.ZPopMin(ctx, k) }}
		return typed(o, zZ,
			func(ctx ctxT, c zcli) (zipline.Z, error) { return c.ZPopMin(ctx, k) },
			func(b zbat) fut[zipline.Z] { return b.ZPopMin(k) })
	}},
	{"ZPOPMAX", 3, func(g *gen) *op {
		k := g.key(bandZset)
		o := &op{name: "ZPOPMAX", desc: cmdline("ZPOPMAX", k), keys: []string{k}, gr: zpopReply,
			g: func(ctx ctxT, c gcli) gcmd { return c.ZPopMax(ctx, k) }}
		return typed(o, zZ,
			func(ctx ctxT, c zcli) (zipline.Z, error) { return c.ZPopMax(ctx, k) },
			func(b zbat) fut[zipline.Z] { return b.ZPopMax(k) })
	}},
	{"BZPOPMIN", 1, func(g *gen) *op {
		ks := g.keys(bandZset, 1, 2)
		o := &op{name: "BZPOPMIN", desc: cmdline("BZPOPMIN", ks) + " 0.01", keys: ks, gr: bzpopReply,
			g: func(ctx ctxT, c gcli) gcmd { return goDo(ctx, c, flatArgs("BZPOPMIN", anys(ks), "0.01")...) }}
		return typed(o, zKeyZ,
			func(ctx ctxT, c zcli) (zipline.KeyZ, error) { return c.BZPopMin(ctx, blockTimeout, ks...) },
			func(b zbat) fut[zipline.KeyZ] { return b.BZPopMin(blockTimeout, ks...) })
	}},
	{"BZPOPMAX", 1, func(g *gen) *op {
		ks := g.keys(bandZset, 1, 2)
		o := &op{name: "BZPOPMAX", desc: cmdline("BZPOPMAX", ks) + " 0.01", keys: ks, gr: bzpopReply,
			g: func(ctx ctxT, c gcli) gcmd { return goDo(ctx, c, flatArgs("BZPOPMAX", anys(ks), "0.01")...) }}
		return typed(o, zKeyZ,
			func(ctx ctxT, c zcli) (zipline.KeyZ, error) { return c.BZPopMax(ctx, blockTimeout, ks...) },
			func(b zbat) fut[zipline.KeyZ] { return b.BZPopMax(blockTimeout, ks...) })
	}},
	{"ZSCAN", 2, func(g *gen) *op {
		k := g.scanKey(bandZset)
		opts := zipline.ScanOptions{Match: pick(g, "", "", "m*"), Count: pick[int64](g, 0, 1, 10)}
		o := &op{name: "ZSCAN", desc: fmt.Sprintf("ZSCAN %q (whole) MATCH %q COUNT %d", k, opts.Match, opts.Count),
			keys: []string{k}, solo: true}
		o.z = func(ctx ctxT, c zcli) reply {
			m := map[string]string{}
			for z, err := range c.ZScan(ctx, k, opts) {
				if err != nil {
					return zErr(err)
				}
				m[z.Member] = vfloat(z.Score)
			}
			return val(vmap(m))
		}
		o.gd = func(ctx ctxT, c gcli) reply {
			m := map[string]string{}
			var cursor uint64
			for {
				items, next, err := c.ZScan(ctx, k, cursor, opts.Match, opts.Count).Result()
				if err != nil {
					return gErr(err)
				}
				for i := 0; i+1 < len(items); i += 2 {
					m[items[i]] = vfloat(parseScore(items[i+1]))
				}
				if cursor = next; cursor == 0 {
					return val(vmap(m))
				}
			}
		}
		return o
	}},

	// Connection and pub/sub commands that take values.
	{"ECHO", 2, func(g *gen) *op {
		v := string(g.value())
		o := &op{name: "ECHO", desc: cmdline("ECHO", v),
			g: func(ctx ctxT, c gcli) gcmd { return c.Echo(ctx, v) }}
		return typed(o, vstr,
			func(ctx ctxT, c zcli) (string, error) { return c.Echo(ctx, v) },
			func(b zbat) fut[string] { return b.Echo(v) })
	}},
	{"PING", 1, func(g *gen) *op {
		o := &op{name: "PING", desc: "PING",
			g: func(ctx ctxT, c gcli) gcmd { return c.Ping(ctx) }}
		return typed(o, pingConv,
			okOnly(func(ctx ctxT, c zcli) error { return c.Ping(ctx) }),
			func(b zbat) fut[bool] { return b.Ping() })
	}},
	{"PUBLISH", 1, func(g *gen) *op {
		ch, v := pick(g, "ch1", "ch2"), g.value()
		o := &op{name: "PUBLISH", desc: cmdline("PUBLISH", ch, v),
			g: func(ctx ctxT, c gcli) gcmd { return c.Publish(ctx, ch, v) }}
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) { return c.Publish(ctx, ch, v) },
			func(b zbat) fut[int64] { return b.Publish(ch, v) })
	}},
	{"FLUSHDB", 1, func(g *gen) *op {
		// Rare (weight 1 in about 800): it empties the key space.
		o := &op{name: "FLUSHDB", desc: "FLUSHDB", keys: allKeys,
			g: func(ctx ctxT, c gcli) gcmd { return c.FlushDB(ctx) }}
		return typed(o, zOK,
			okOnly(func(ctx ctxT, c zcli) error { return c.FlushDB(ctx) }),
			func(b zbat) fut[bool] { return b.FlushDB() })
	}},

	// SORT through Do (the typed Sort, SortRO and SortStore are in
	// rows_strings_test.go), often enough to meet lists and weights that
	// hold compressed values.
	{"SORT", 6, func(g *gen) *op { return doOp(g, sortForm(g)) }},

	// Do: any command, with zipline's value table applied by name.
	{"DO", 20, func(g *gen) *op { return doOp(g, pick(g, doForms...)(g)) }},

	// Scripts: Run (EVALSHA, falling back to EVAL) directly, Queue (EVAL) in
	// a Batch; go-redis sends EVAL.
	{"EVAL", 6, func(g *gen) *op {
		k := g.key(bandStr)
		var zs *zipline.Script
		var gs *redis.Script
		var args []any
		name := "EVAL"
		switch g.intn(4) {
		case 0:
			zs, gs, name = zScriptGet, gScriptGet, "EVAL get"
		case 3:
			zs, gs, name = zScriptNested, gScriptNested, "EVAL nested"
		case 1:
			zs, gs, name = zScriptSetGet, gScriptSetGet, "EVAL set+get"
			args = []any{g.value()}
		default:
			zs, gs, name = zScriptType, gScriptType, "EVAL type"
		}
		o := &op{name: name, desc: fmt.Sprintf("EVALSHA %s 1 %s", zs.SHA1()[:8], cmdline("", k)[1:]) + cmdline("", args...),
			keys: []string{k}, refuse: famStrings, // refused on a key in the compressed scope
			g: func(ctx ctxT, c gcli) gcmd { return gs.Eval(ctx, c, []string{k}, args...) }}
		return typed(o, zValue(false, false),
			func(ctx ctxT, c zcli) (zipline.Value, error) { return zs.Run(ctx, c, []string{k}, args...) },
			func(b zbat) fut[zipline.Value] { return zs.Queue(b, []string{k}, args...) })
	}},
}

// zpopReply renders go-redis's ZPOPMIN/ZPOPMAX (an empty list when there is
// nothing to pop) as zipline's single Z (Nil then).
func zpopReply(c gcmd) reply {
	zc := c.(*redis.ZSliceCmd)
	if err := zc.Err(); err != nil {
		return gErr(err)
	}
	if len(zc.Val()) == 0 {
		return nilReply
	}
	z := zc.Val()[0]
	return val(vz(fmt.Sprint(z.Member), z.Score))
}

// bzpopReply renders BZPOPMIN/BZPOPMAX sent through Do: [key, member,
// score], the score a string in RESP2 and a double in RESP3.
func bzpopReply(c gcmd) reply {
	cmd := c.(*redis.Cmd)
	if err := cmd.Err(); err != nil {
		return gErr(err)
	}
	a, ok := cmd.Val().([]any)
	if !ok || len(a) != 3 {
		return reply{kClient, fmt.Sprintf("difftest: BZPOP reply %#v", cmd.Val())}
	}
	return val(vlist([]string{vstr(fmt.Sprint(a[0])), vstr(fmt.Sprint(a[1])), vfloat(parseScore(a[2]))}, false))
}

func renderSet(seen map[string]bool) string {
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, vstr(k))
	}
	slices.Sort(out)
	return vlist(out, false)
}

// doOp is d sent with Do by both clients.
func doOp(g *gen, d doCmd) *op {
	name := d.args[0].(string)
	o := &op{name: "DO " + name, desc: "Do " + cmdline(name, d.args[1:]...), keys: d.keys, refuse: d.refuse, refuseAlways: d.refuseAlways, moves: d.moves,
		unordered: d.unordered, pairs: d.pairs,
		g: func(ctx ctxT, c gcli) gcmd { return goDo(ctx, c, d.args...) }}
	if d.alphaTies {
		sortTies(o, d.keys[0])
	}
	return typed(o, zValue(d.unordered, d.pairs),
		func(ctx ctxT, c zcli) (zipline.Value, error) { return c.Do(ctx, d.args...) },
		func(b zbat) fut[zipline.Value] { return b.Do(d.args...) })
}

// doCmd is a command sent with Do by both clients.
type doCmd struct {
	args             []any
	keys             []string
	refuse           family
	refuseAlways     bool   // SORT: whatever its keys
	moves            family // a move from keys[0] to keys[1]
	unordered, pairs bool
	alphaTies        bool // SORT ... ALPHA without BY of keys[0] (sortTies)
}

// doForms are the commands the DO row sends: some that zipline types too
// (through Do's own path), commands it does not type that carry values
// (its value table still applies), and the ones it refuses while
// compressing.
var doForms = []func(g *gen) doCmd{
	func(g *gen) doCmd { k := g.key(bandStr); return doCmd{args: []any{"GET", k}, keys: []string{k}} },
	func(g *gen) doCmd {
		k, v := g.key(bandStr), g.value()
		args := []any{"SET", k, v}
		if g.intn(2) == 0 {
			args = append(args, "EX", 1000)
		}
		if g.intn(3) == 0 {
			args = append(args, "GET")
		}
		return doCmd{args: args, keys: []string{k}}
	},
	func(g *gen) doCmd {
		ks := g.keys(bandStr, 1, 3)
		return doCmd{args: flatArgs("MGET", anys(ks)), keys: ks}
	},
	func(g *gen) doCmd {
		k, v := g.key(bandStr), g.value()
		return doCmd{args: []any{pick(g, "SETNX", "GETSET"), k, v}, keys: []string{k}}
	},
	func(g *gen) doCmd {
		k, v := g.key(bandStr), g.value()
		return doCmd{args: []any{pick(g, "SETEX", "PSETEX"), k, pick(g, 100000, 0, -1), v}, keys: []string{k}}
	},
	func(g *gen) doCmd { k := g.key(bandStr); return doCmd{args: []any{"GETDEL", k}, keys: []string{k}} },
	func(g *gen) doCmd {
		k := g.key(bandHash)
		return doCmd{args: []any{"HGETALL", k}, keys: []string{k}, pairs: true}
	},
	func(g *gen) doCmd {
		k, fs := g.key(bandHash), g.fields(1, 3)
		return doCmd{args: flatArgs("HMGET", []any{k}, anys(fs)...), keys: []string{k}}
	},
	func(g *gen) doCmd {
		k, f, v := g.key(bandHash), g.field(), g.elem()
		return doCmd{args: []any{pick(g, "HSET", "HMSET", "HSETNX"), k, f, v}, keys: []string{k}}
	},
	func(g *gen) doCmd { // hash field expiry: Valkey 9 and Redis 8 (an unknown command on Redis 7)
		k, f, v := g.key(bandHash), g.field(), g.elem()
		return doCmd{args: []any{"HSETEX", k, "EX", 1000, "FIELDS", 1, f, v}, keys: []string{k}}
	},
	func(g *gen) doCmd {
		k, fs := g.key(bandHash), g.fields(1, 2)
		return doCmd{args: flatArgs(pick(g, "HGETEX", "HGETDEL"), []any{k, "FIELDS", len(fs)}, anys(fs)...), keys: []string{k}}
	},
	func(g *gen) doCmd {
		k := g.key(bandHash)
		return doCmd{args: []any{"HVALS", k}, keys: []string{k}, unordered: true}
	},
	func(g *gen) doCmd {
		k := g.key(bandList)
		return doCmd{args: []any{"LRANGE", k, 0, -1}, keys: []string{k}}
	},
	func(g *gen) doCmd {
		k := g.key(bandList)
		return doCmd{args: []any{pick(g, "LPOP", "RPOP"), k, pick(g, 1, 2, 5)}, keys: []string{k}}
	},
	func(g *gen) doCmd {
		ks := g.keys(bandList, 1, 2)
		return doCmd{args: flatArgs("LMPOP", []any{len(ks)}, append(anys(ks), pick(g, "LEFT", "RIGHT"), "COUNT", 2)...), keys: ks}
	},
	func(g *gen) doCmd {
		k, vs := g.key(bandList), g.elems(1, 2)
		return doCmd{args: flatArgs(pick(g, "LPUSHX", "RPUSHX"), []any{k}, anys(vs)...), keys: []string{k}}
	},
	func(g *gen) doCmd {
		src, dst := g.key(bandList), g.key(bandList)
		return doCmd{args: []any{"RPOPLPUSH", src, dst}, keys: []string{src, dst}, moves: famLists}
	},
	func(g *gen) doCmd {
		src, dst := g.key(bandAny), g.key(bandAny)
		return doCmd{args: []any{"COPY", src, dst, "REPLACE"}, keys: []string{src, dst}, moves: famStrings}
	},
	func(g *gen) doCmd {
		k := g.key(bandSet)
		return doCmd{args: []any{"SMEMBERS", k}, keys: []string{k}, unordered: true}
	},
	func(g *gen) doCmd {
		src, dst := g.key(bandSet), g.key(bandSet)
		return doCmd{args: []any{"SMOVE", src, dst, g.member()}, keys: []string{src, dst}}
	},
	sortForm,
	func(g *gen) doCmd {
		k := g.key(bandStr)
		return doCmd{args: []any{"GETRANGE", k, 0, pick(g, -1, 3)}, keys: []string{k}} // answered on the plaintext
	},
	func(g *gen) doCmd {
		k := g.key(bandStr)
		return doCmd{args: []any{"SETRANGE", k, pick(g, 0, 2, 70), g.value()}, keys: []string{k}, refuse: famStrings}
	},
	func(g *gen) doCmd {
		k := g.key(bandStr)
		args := pick(g, []any{"STRLEN", k}, []any{"BITCOUNT", k}, []any{"GETBIT", k, 3}, []any{"SUBSTR", k, 0, 2})
		return doCmd{args: args, keys: []string{k}} // answered on the plaintext
	},
	func(g *gen) doCmd {
		k := g.key(bandHash)
		return doCmd{args: []any{"HSTRLEN", k, g.field()}, keys: []string{k}} // answered on the plaintext
	},
	func(g *gen) doCmd {
		k := g.key(bandList)
		return doCmd{args: []any{"LPOS", k, g.elem()}, keys: []string{k}, refuse: famLists}
	},
	func(g *gen) doCmd {
		k := g.key(bandStr)
		return doCmd{args: []any{pick(g, "INCRBY", "DECRBY"), k, g.incr()}, keys: []string{k}}
	},
	func(g *gen) doCmd {
		k, f := g.key(bandHash), g.field()
		return doCmd{args: []any{"HINCRBYFLOAT", k, f, pick(g, "1.5", "-0.25", "1e3")}, keys: []string{k}}
	},
}

// sortForm is a SORT: GET of string values (expanded at any depth) is
// allowed; a sort is refused when it would compare stored values that may
// be compressed (compression_plan.go, sortRefusal): BY a pattern whenever
// compression is on, and list elements (no BY) with the Lists family. The
// server reads a compressed value as the number 0, so numeric sorts are
// refused too. GET of stored values with STORE is refused unless lists are
// compressed: the stored list would keep them compressed.
func sortForm(g *gen) doCmd {
	k := g.key(pick(g, bandList, bandSet, bandZset))
	args := []any{"SORT", k}
	keys := []string{k, "k1", "k2", "k3"}
	by := pick(g, "", "", "nosort", "*")
	if by != "" {
		args = append(args, "BY", by)
	}
	alpha := g.intn(2) == 0
	// BY nosort returns a set in its own order, which differs between
	// servers (hash seeds, encodings); so does BY a pattern with ALPHA,
	// which leaves ties (weights missing or equal) in the order it found
	// them, where a numeric sort breaks them by the elements. Such sorts
	// are compared in any order, and neither cut by LIMIT nor stored.
	nosort := by == "nosort" || by == "*" && alpha
	if !nosort && g.intn(2) == 0 {
		args = append(args, "LIMIT", 0, 3)
	}
	if alpha {
		args = append(args, "ALPHA")
	}
	var gets []string
	for range g.intn(3) {
		p := pick(g, "#", "*")
		gets = append(gets, p)
		args = append(args, "GET", p)
	}
	d := doCmd{keys: keys, unordered: nosort, alphaTies: alpha && by == "", refuseAlways: true}
	if by == "*" {
		d.refuse = famStrings
	}
	if by == "" {
		d.refuse = famLists
	}
	if !nosort && g.intn(4) == 0 {
		dst := g.key(bandList)
		args = append(args, "STORE", dst)
		d.keys = append(d.keys, dst)
		d.refuse = storeRefusal(d.refuse, by, gets)
	}
	d.args = args
	return d
}
