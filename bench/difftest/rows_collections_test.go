package difftest

// Hashes, lists, sets and sorted sets: the commands beyond the core ones.
// Random replies are compared only where they are not random: a count at
// least the collection's size returns all of it; a negative count, checked
// member by member against go-redis's server.

import (
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/ziplinekv/zipline"
)

// hexpireArgs is an ExpireCond as go-redis's HExpireArgs.
func hexpireArgs(cond zipline.ExpireCond) redis.HExpireArgs {
	return redis.HExpireArgs{NX: cond == zipline.IfNoExpiry, XX: cond == zipline.IfExpiry,
		GT: cond == zipline.IfLater, LT: cond == zipline.IfSooner}
}

func (g *gen) hcond() zipline.ExpireCond {
	return pick(g, "", "", zipline.IfNoExpiry, zipline.IfExpiry, zipline.IfLater, zipline.IfSooner)
}

// fieldsDesc renders a hash field expiration command's tail.
func fieldsDesc(cond zipline.ExpireCond, fs []string) string {
	s := ""
	if cond != "" {
		s = " " + string(cond)
	}
	return s + cmdline(" FIELDS", len(fs), fs)
}

// vfieldTTLs renders HTTL's, HPTTL's and HPEXPIRETIME's answers by
// presence: -2 no such field, -1 no expiry, else set (the servers' clocks
// differ).
func vfieldTTL(n int64) string {
	switch n {
	case -2:
		return "(field ttl) no field"
	case -1:
		return "(field ttl) none"
	}
	if n < 0 {
		return fmt.Sprintf("(field ttl) %d", n)
	}
	return "(field ttl) set"
}

func zFieldTTLs(ds []time.Duration) string {
	out := make([]string, len(ds))
	for i, d := range ds {
		n := int64(d)
		if d >= 0 {
			n = 0
		}
		out[i] = vfieldTTL(n)
	}
	return vlist(out, false)
}

func zFieldTimes(ns []int64) string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = vfieldTTL(n)
	}
	return vlist(out, false)
}

func gFieldTTLs(c *redis.IntSliceCmd) string { return zFieldTimes(c.Val()) }

// gBytesOrNil renders a go-redis Do whose reply is an array of values or
// nulls (HGETEX, HGETDEL): go-redis's typed HGetEX and HGetDel read into
// a StringSliceCmd, where a missing field's null reads as "".
func gBytesOrNil(c gcmd) reply { return gReply(c, false, false) }

// hashFields returns 1..3 fields and values.
func (g *gen) fieldValues() ([]zipline.FieldValue, []string, string) {
	fs := g.fields(1, 3)
	fvs := make([]zipline.FieldValue, len(fs))
	flat := make([]string, 0, 2*len(fs))
	desc := ""
	for i, f := range fs {
		v := g.elem()
		fvs[i] = zipline.FieldValue{Field: f, Value: v}
		flat = append(flat, f, string(v))
		desc += cmdline("", f, v)
	}
	return fvs, flat, desc
}

// sameRandom compares a random selection with a negative count: as many
// as asked for on both sides, each one (with values, each pair) in the
// collection on go-redis's server. Rows that use it are solo (run
// directly), so the server's state is the one the command saw.
func sameRandom(has func(ctx ctxT, r *runner, item string) bool, zItems func() []string, gLen func() int) func(ctx ctxT, r *runner, z, g reply) bool {
	return func(ctx ctxT, r *runner, z, g reply) bool {
		if z.kind != kVal || g.kind != kVal {
			return sameReply(z, g)
		}
		zs := zItems()
		if len(zs) != gLen() {
			return false
		}
		for _, it := range zs {
			if !has(ctx, r, it) {
				return false
			}
		}
		return true
	}
}

var hashRows = []row{
	{"HSTRLEN", 2, func(g *gen) *op {
		k, f := g.key(bandHash), g.field()
		o := &op{name: "HSTRLEN", desc: cmdline("HSTRLEN", k, f), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.HStrLen(ctx, k, f) }}
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) { return c.HStrLen(ctx, k, f) },
			func(b zbat) fut[int64] { return b.HStrLen(k, f) })
	}},
	{"HRANDFIELD", 3, func(g *gen) *op {
		k := g.key(bandHash)
		withValues := g.intn(2) == 0
		// 100 is more than any hash has (9 fields): all of it, in any
		// order. A negative count picks at random, with repeats.
		count := pick[int64](g, 100, 100, 0, -3)
		name, desc := "HRANDFIELD", cmdline("HRANDFIELD", k, count)
		if withValues {
			name, desc = name+" WITHVALUES", desc+" WITHVALUES"
		}
		o := &op{name: name, desc: desc, keys: []string{k}, unordered: true, solo: count < 0}
		if !withValues {
			var zfs []string
			var gn int
			o.g = func(ctx ctxT, c gcli) gcmd {
				cmd := c.HRandField(ctx, k, int(count))
				if count < 0 {
					gn = len(cmd.Val())
				}
				return cmd
			}
			if count < 0 {
				o.same = sameRandom(func(ctx ctxT, r *runner, f string) bool { return r.rc.HExists(ctx, k, f).Val() },
					func() []string { return zfs }, func() int { return gn })
			}
			return typed(o, zStrings(true),
				func(ctx ctxT, c zcli) ([]string, error) {
					fs, err := c.HRandField(ctx, k, count)
					zfs = fs
					return fs, err
				},
				func(b zbat) fut[[]string] { return b.HRandField(k, count) })
		}
		var zfvs []zipline.FieldValue
		render := func(f, v string) string { return vstr(f) + "=" + vstr(v) }
		o.gr = gRender(func(c *redis.KeyValueSliceCmd) string {
			out := make([]string, len(c.Val()))
			for i, kv := range c.Val() {
				out[i] = render(kv.Key, kv.Value)
			}
			return vlist(out, true)
		})
		var gn int
		o.g = func(ctx ctxT, c gcli) gcmd {
			cmd := c.HRandFieldWithValues(ctx, k, int(count))
			if count < 0 {
				gn = len(cmd.Val())
			}
			return cmd
		}
		if count < 0 {
			o.same = sameRandom(func(ctx ctxT, r *runner, fv string) bool {
				f, v, _ := strings.Cut(fv, "\x00")
				got, err := r.rc.HGet(ctx, k, f).Result()
				return err == nil && got == v
			}, func() []string {
				out := make([]string, len(zfvs))
				for i, fv := range zfvs {
					out[i] = fv.Field + "\x00" + string(fv.Value)
				}
				return out
			}, func() int { return gn })
		}
		conv := func(fvs []zipline.FieldValue) string {
			out := make([]string, len(fvs))
			for i, fv := range fvs {
				out[i] = render(fv.Field, string(fv.Value))
			}
			return vlist(out, true)
		}
		return typed(o, conv,
			func(ctx ctxT, c zcli) ([]zipline.FieldValue, error) {
				fvs, err := c.HRandFieldWithValues(ctx, k, count)
				zfvs = fvs
				return fvs, err
			},
			func(b zbat) fut[[]zipline.FieldValue] { return b.HRandFieldWithValues(k, count) })
	}},

	// Hash field expiration: Valkey 9.0 (Redis 7.4, not installed). On
	// Redis 7.0 zipline refuses these before sending, naming the servers
	// that have them (client.go, notOnServer), where go-redis's server
	// answers "unknown command": the harness takes the two as the same
	// outcome (difftest_test.go, missingCommand).
	{"HEXPIRE", 3, func(g *gen) *op {
		k, d, cond, fs := g.key(bandHash), g.condExpiry(), g.hcond(), g.fields(1, 3)
		name, n := "HEXPIRE", int64(d/time.Second)
		if d%time.Second != 0 {
			name, n = "HPEXPIRE", d.Milliseconds()
		}
		o := &op{name: name, desc: cmdline(name, k, n) + fieldsDesc(cond, fs), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd {
				if d%time.Second != 0 {
					return c.HPExpireWithArgs(ctx, k, d, hexpireArgs(cond), fs...)
				}
				return c.HExpireWithArgs(ctx, k, d, hexpireArgs(cond), fs...)
			}}
		o.gr = gRender(func(c *redis.IntSliceCmd) string { return zInts(c.Val()) })
		return typed(o, zInts,
			func(ctx ctxT, c zcli) ([]int64, error) { return c.HExpire(ctx, k, d, cond, fs...) },
			func(b zbat) fut[[]int64] { return b.HExpire(k, d, cond, fs...) })
	}},
	{"HPEXPIRE", 1, func(g *gen) *op {
		k, d, cond, fs := g.key(bandHash), g.condExpiry(), g.hcond(), g.fields(1, 2)
		o := &op{name: "HPEXPIRE", desc: cmdline("HPEXPIRE", k, d.Milliseconds()) + fieldsDesc(cond, fs), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.HPExpireWithArgs(ctx, k, d, hexpireArgs(cond), fs...) }}
		o.gr = gRender(func(c *redis.IntSliceCmd) string { return zInts(c.Val()) })
		return typed(o, zInts,
			func(ctx ctxT, c zcli) ([]int64, error) { return c.HPExpire(ctx, k, d, cond, fs...) },
			func(b zbat) fut[[]int64] { return b.HPExpire(k, d, cond, fs...) })
	}},
	{"HPEXPIREAT", 1, func(g *gen) *op {
		k, t, cond, fs := g.key(bandHash), g.condExpireAt(), g.hcond(), g.fields(1, 2)
		o := &op{name: "HPEXPIREAT", desc: cmdline("HPEXPIREAT", k, t.UnixMilli()) + fieldsDesc(cond, fs), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.HPExpireAtWithArgs(ctx, k, t, hexpireArgs(cond), fs...) }}
		o.gr = gRender(func(c *redis.IntSliceCmd) string { return zInts(c.Val()) })
		return typed(o, zInts,
			func(ctx ctxT, c zcli) ([]int64, error) { return c.HExpireAt(ctx, k, t, cond, fs...) },
			func(b zbat) fut[[]int64] { return b.HExpireAt(k, t, cond, fs...) })
	}},
	{"HTTL", 2, func(g *gen) *op {
		k, fs, ms := g.key(bandHash), g.fields(1, 3), g.intn(2) == 0
		name := "HTTL"
		if ms {
			name = "HPTTL"
		}
		o := &op{name: name, desc: cmdline(name, k) + fieldsDesc("", fs), keys: []string{k}, gr: gRender(gFieldTTLs),
			g: func(ctx ctxT, c gcli) gcmd {
				if ms {
					return c.HPTTL(ctx, k, fs...)
				}
				return c.HTTL(ctx, k, fs...)
			}}
		return typed(o, zFieldTTLs,
			func(ctx ctxT, c zcli) ([]time.Duration, error) {
				if ms {
					return c.HPTTL(ctx, k, fs...)
				}
				return c.HTTL(ctx, k, fs...)
			},
			func(b zbat) fut[[]time.Duration] {
				if ms {
					return b.HPTTL(k, fs...)
				}
				return b.HTTL(k, fs...)
			})
	}},
	{"HPEXPIRETIME", 1, func(g *gen) *op {
		k, fs := g.key(bandHash), g.fields(1, 3)
		o := &op{name: "HPEXPIRETIME", desc: cmdline("HPEXPIRETIME", k) + fieldsDesc("", fs), keys: []string{k}, gr: gRender(gFieldTTLs),
			g: func(ctx ctxT, c gcli) gcmd { return c.HPExpireTime(ctx, k, fs...) }}
		return typed(o, zFieldTimes,
			func(ctx ctxT, c zcli) ([]int64, error) { return c.HExpireTime(ctx, k, fs...) },
			func(b zbat) fut[[]int64] { return b.HExpireTime(k, fs...) })
	}},
	{"HPERSIST", 1, func(g *gen) *op {
		k, fs := g.key(bandHash), g.fields(1, 3)
		o := &op{name: "HPERSIST", desc: cmdline("HPERSIST", k) + fieldsDesc("", fs), keys: []string{k},
			gr: gRender(func(c *redis.IntSliceCmd) string { return zInts(c.Val()) }),
			g:  func(ctx ctxT, c gcli) gcmd { return c.HPersist(ctx, k, fs...) }}
		return typed(o, zInts,
			func(ctx ctxT, c zcli) ([]int64, error) { return c.HPersist(ctx, k, fs...) },
			func(b zbat) fut[[]int64] { return b.HPersist(k, fs...) })
	}},
	{"HGETEX", 2, func(g *gen) *op {
		k, fs := g.key(bandHash), g.fields(1, 3)
		e := g.getExExpiry()
		args := []any{"HGETEX", k}
		if mode, n := expiryOption(e); mode == "PERSIST" {
			args = append(args, mode)
		} else if mode != "" {
			args = append(args, mode, n)
		}
		args = append(args, "FIELDS", len(fs))
		args = append(args, anys(fs)...)
		o := &op{name: "HGETEX", desc: cmdline(args[0].(string), args[1:]...), keys: []string{k}, gr: gBytesOrNil,
			g: func(ctx ctxT, c gcli) gcmd { return goDo(ctx, c, args...) }}
		return typed(o, zBytesOrNil,
			func(ctx ctxT, c zcli) ([][]byte, error) { return c.HGetEx(ctx, k, zExpOne(e), fs...) },
			func(b zbat) fut[[][]byte] { return b.HGetEx(k, zExpOne(e), fs...) })
	}},
	{"HSETEX", 3, func(g *gen) *op {
		k := g.key(bandHash)
		fvs, flat, fdesc := g.fieldValues()
		e := g.setExpiry()
		var opts redis.HSetEXOptions
		if mode, n := expiryOption(e); mode != "" {
			opts.ExpirationType, opts.ExpirationVal = redis.HSetEXExpirationType(mode), n
		}
		o := &op{name: "HSETEX", desc: cmdline("HSETEX", k) + e.String() + cmdline(" FIELDS", len(fvs)) + fdesc, keys: []string{k}, gr: gIntBool,
			g: func(ctx ctxT, c gcli) gcmd { return c.HSetEXWithArgs(ctx, k, &opts, flat...) }}
		return typed(o, vbool,
			func(ctx ctxT, c zcli) (bool, error) { return c.HSetEx(ctx, k, zExpOne(e), fvs...) },
			func(b zbat) fut[bool] { return b.HSetEx(k, zExpOne(e), fvs...) })
	}},
	{"HGETDEL", 2, func(g *gen) *op {
		k, fs := g.key(bandHash), g.fields(1, 3)
		args := append([]any{"HGETDEL", k, "FIELDS", len(fs)}, anys(fs)...)
		o := &op{name: "HGETDEL", desc: cmdline("HGETDEL", args[1:]...), keys: []string{k}, gr: gBytesOrNil,
			g: func(ctx ctxT, c gcli) gcmd { return goDo(ctx, c, args...) }}
		return typed(o, zBytesOrNil,
			func(ctx ctxT, c zcli) ([][]byte, error) { return c.HGetDel(ctx, k, fs...) },
			func(b zbat) fut[[][]byte] { return b.HGetDel(k, fs...) })
	}},
}

var listRows = []row{
	{"LPUSHX", 3, func(g *gen) *op {
		k, vs, left := g.key(bandList), g.elems(1, 3), g.intn(2) == 0
		name := "RPUSHX"
		if left {
			name = "LPUSHX"
		}
		o := &op{name: name, desc: cmdline(name, k, vs), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd {
				if left {
					return c.LPushX(ctx, k, anys(vs)...)
				}
				return c.RPushX(ctx, k, anys(vs)...)
			}}
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) {
				if left {
					return c.LPushX(ctx, k, vs...)
				}
				return c.RPushX(ctx, k, vs...)
			},
			func(b zbat) fut[int64] {
				if left {
					return b.LPushX(k, vs...)
				}
				return b.RPushX(k, vs...)
			})
	}},
	{"LPOP count", 3, func(g *gen) *op {
		k, n, left := g.key(bandList), pick[int64](g, 0, 1, 2, 5), g.intn(2) == 0
		name := "RPOP"
		if left {
			name = "LPOP"
		}
		o := &op{name: name + " count", desc: cmdline(name, k, n), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd {
				if left {
					return c.LPopCount(ctx, k, int(n))
				}
				return c.RPopCount(ctx, k, int(n))
			}}
		return typed(o, zBytesList(false),
			func(ctx ctxT, c zcli) ([][]byte, error) {
				if left {
					return c.LPopCount(ctx, k, n)
				}
				return c.RPopCount(ctx, k, n)
			},
			func(b zbat) fut[[][]byte] {
				if left {
					return b.LPopCount(k, n)
				}
				return b.RPopCount(k, n)
			})
	}},
	{"LPOS", 3, func(g *gen) *op {
		k, v := g.key(bandList), g.elem()
		a := zipline.LPosArgs{Rank: pick[int64](g, 0, 0, 1, 2, -1, -2), MaxLen: pick[int64](g, 0, 0, 2, 10)}
		ga := redis.LPosArgs{Rank: a.Rank, MaxLen: a.MaxLen}
		opts := ""
		if a.Rank != 0 {
			opts += fmt.Sprintf(" RANK %d", a.Rank)
		}
		if a.MaxLen != 0 {
			opts += fmt.Sprintf(" MAXLEN %d", a.MaxLen)
		}
		if g.intn(3) == 0 {
			n := pick[int64](g, 0, 1, 2)
			o := &op{name: "LPOS COUNT", desc: cmdline("LPOS", k, v) + fmt.Sprintf(" COUNT %d", n) + opts, keys: []string{k}, refuse: famLists,
				gr: gRender(func(c *redis.IntSliceCmd) string { return zInts(c.Val()) }),
				g:  func(ctx ctxT, c gcli) gcmd { return c.LPosCount(ctx, k, string(v), n, ga) }}
			return typed(o, zInts,
				func(ctx ctxT, c zcli) ([]int64, error) { return c.LPosCount(ctx, k, v, n, a) },
				func(b zbat) fut[[]int64] { return b.LPosCount(k, v, n, a) })
		}
		o := &op{name: "LPOS", desc: cmdline("LPOS", k, v) + opts, keys: []string{k}, refuse: famLists,
			g: func(ctx ctxT, c gcli) gcmd { return c.LPos(ctx, k, string(v), ga) }}
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) { return c.LPos(ctx, k, v, a) },
			func(b zbat) fut[int64] { return b.LPos(k, v, a) })
	}},
	{"LMPOP", 3, func(g *gen) *op {
		// count is at least 1: zipline's LMPop "pops up to count elements
		// (at least one)" and sends COUNT only above one, where go-redis
		// sends COUNT as given (0 is an error).
		// A count under 1 (go-redis sends it, the server refuses it) is
		// refused by zipline before sending.
		ks, from, n := g.keys(bandList, 1, 2), pick(g, zipline.Left, zipline.Right), pick[int64](g, 1, 2, 5, 1, 2, 5, 0, -1)
		o := &op{name: "LMPOP", desc: cmdline("LMPOP", len(ks), ks, string(from)) + fmt.Sprintf(" COUNT %d", n), keys: ks,
			invalid: n < 1,
			gr: gRender(func(c *redis.KeyValuesCmd) string {
				k, vs, _ := c.Result()
				return vstr(k) + ": " + zStrings(false)(vs)
			}),
			g: func(ctx ctxT, c gcli) gcmd { return c.LMPop(ctx, string(from), n, ks...) }}
		return typed(o, func(kv zipline.KeyValues) string { return vstr(kv.Key) + ": " + zBytesList(false)(kv.Values) },
			func(ctx ctxT, c zcli) (zipline.KeyValues, error) { return c.LMPop(ctx, from, n, ks...) },
			func(b zbat) fut[zipline.KeyValues] { return b.LMPop(from, n, ks...) })
	}},
	{"RPOPLPUSH", 3, func(g *gen) *op {
		src, dst := g.key(bandList), g.key(bandList)
		o := &op{name: "RPOPLPUSH", desc: cmdline("RPOPLPUSH", src, dst), keys: []string{src, dst}, moves: famLists,
			g: func(ctx ctxT, c gcli) gcmd { return c.RPopLPush(ctx, src, dst) }}
		return typed(o, zBytes,
			func(ctx ctxT, c zcli) ([]byte, error) { return c.RPopLPush(ctx, src, dst) },
			func(b zbat) fut[[]byte] { return b.RPopLPush(src, dst) })
	}},
}

var setRows = []row{
	{"SPOP count", 2, func(g *gen) *op {
		// Only counts that are not random: none, or more than any set
		// holds (14 members), which pops all of it.
		k, n := g.key(bandSet), pick[int64](g, 0, 100)
		o := &op{name: "SPOP count", desc: cmdline("SPOP", k, n), keys: []string{k}, unordered: true,
			g: func(ctx ctxT, c gcli) gcmd { return c.SPopN(ctx, k, n) }}
		return typed(o, zStrings(true),
			func(ctx ctxT, c zcli) ([]string, error) { return c.SPopN(ctx, k, n) },
			func(b zbat) fut[[]string] { return b.SPopN(k, n) })
	}},
	{"SRANDMEMBER count", 2, func(g *gen) *op {
		k, n := g.key(bandSet), pick[int64](g, 0, 100, 100, -3)
		var zms []string
		var gn int
		o := &op{name: "SRANDMEMBER count", desc: cmdline("SRANDMEMBER", k, n), keys: []string{k}, unordered: true, solo: n < 0,
			g: func(ctx ctxT, c gcli) gcmd {
				cmd := c.SRandMemberN(ctx, k, n)
				if n < 0 {
					gn = len(cmd.Val())
				}
				return cmd
			}}
		if n < 0 {
			o.same = sameRandom(func(ctx ctxT, r *runner, m string) bool { return r.rc.SIsMember(ctx, k, m).Val() },
				func() []string { return zms }, func() int { return gn })
		}
		return typed(o, zStrings(true),
			func(ctx ctxT, c zcli) ([]string, error) {
				ms, err := c.SRandMemberN(ctx, k, n)
				zms = ms
				return ms, err
			},
			func(b zbat) fut[[]string] { return b.SRandMemberN(k, n) })
	}},
	{"SMOVE", 3, func(g *gen) *op {
		src, dst, m := g.key(bandSet), g.key(bandSet), g.member()
		o := &op{name: "SMOVE", desc: cmdline("SMOVE", src, dst, m), keys: []string{src, dst},
			g: func(ctx ctxT, c gcli) gcmd { return c.SMove(ctx, src, dst, m) }}
		return typed(o, vbool,
			func(ctx ctxT, c zcli) (bool, error) { return c.SMove(ctx, src, dst, m) },
			func(b zbat) fut[bool] { return b.SMove(src, dst, m) })
	}},
	{"SINTERCARD", 2, func(g *gen) *op {
		// go-redis always sends LIMIT (0: none); zipline only a positive one.
		ks, limit := g.keys(bandSet, 1, 3), pick[int64](g, 0, 0, 1, 2, -1)
		o := &op{name: "SINTERCARD", desc: cmdline("SINTERCARD", len(ks), ks) + fmt.Sprintf(" LIMIT %d", limit), keys: ks,
			invalid: limit < 0,
			g:       func(ctx ctxT, c gcli) gcmd { return c.SInterCard(ctx, limit, ks...) }}
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) { return c.SInterCard(ctx, limit, ks...) },
			func(b zbat) fut[int64] { return b.SInterCard(limit, ks...) })
	}},
	{"SSTORE", 4, func(g *gen) *op {
		dst, ks := g.key(bandSet), g.keys(bandSet, 1, 3)
		name := pick(g, "SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE")
		o := &op{name: name, desc: cmdline(name, dst, ks), keys: append([]string{dst}, ks...),
			g: func(ctx ctxT, c gcli) gcmd {
				switch name {
				case "SINTERSTORE":
					return c.SInterStore(ctx, dst, ks...)
				case "SUNIONSTORE":
					return c.SUnionStore(ctx, dst, ks...)
				}
				return c.SDiffStore(ctx, dst, ks...)
			}}
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) {
				switch name {
				case "SINTERSTORE":
					return c.SInterStore(ctx, dst, ks...)
				case "SUNIONSTORE":
					return c.SUnionStore(ctx, dst, ks...)
				}
				return c.SDiffStore(ctx, dst, ks...)
			},
			func(b zbat) fut[int64] {
				switch name {
				case "SINTERSTORE":
					return b.SInterStore(dst, ks...)
				case "SUNIONSTORE":
					return b.SUnionStore(dst, ks...)
				}
				return b.SDiffStore(dst, ks...)
			})
	}},
}

// lexRange makes o, a lexicographic range over the sorted set at key
// (ZRANGE BYLEX, ZLEXCOUNT, ZREMRANGEBYLEX, ZRANGESTORE BYLEX), compare
// only what is specified. Over members of different scores the servers
// call the result unspecified, and in a skiplist it depends on the
// skiplist's random levels: two servers holding the same set answer
// differently. startPair keeps sorted sets in listpacks, where the range
// is a scan in order, but GEOSEARCHSTORE and the *STORE commands make
// skiplists whatever their size. So the command runs alone, and when the
// set is such a skiplist (on go-redis's server, before it runs) the two
// replies need only be of one kind, and whatever it wrote is then copied
// from go-redis's server to zipline's.
func lexRange(o *op, key string) *op {
	o.solo = true
	var unspecified bool
	o.before = func(ctx ctxT, r *runner) {
		unspecified = false
		if enc, _ := r.rc.ObjectEncoding(ctx, key).Result(); enc != "skiplist" {
			return
		}
		zs, _ := r.rc.ZRangeWithScores(ctx, key, 0, -1).Result()
		for _, z := range zs {
			if z.Score != zs[0].Score {
				unspecified = true
				return
			}
		}
	}
	o.same = func(ctx ctxT, r *runner, z, g reply) bool {
		if unspecified {
			return z.kind == g.kind
		}
		return sameReply(z, g)
	}
	o.after = func(ctx ctxT, r *runner) {
		if unspecified {
			r.repair(ctx, o.keys)
		}
	}
	return o
}

// lexBound is a ZRANGE BYLEX bound, or one the server refuses.
func (g *gen) lexBound() string {
	return pick(g, "-", "+", "[a", "(a", "[m2", "(m3", "[", "(k1", "m1")
}

// zaddFlags returns ZADD options: mostly ones the server takes together,
// sometimes ones it refuses together. go-redis's ZAddArgs keeps only one of
// NX, GT and LT (sortedset_commands.go, zAddArgs), so for those go-redis
// sends the command through Do as zipline sends it.
func (g *gen) zaddFlags() (a zipline.ZAddArgs, valid bool) {
	switch g.intn(8) {
	case 0:
	case 1:
		a.NX = true
	case 2:
		a.XX = true
	case 3:
		a.GT = true
	case 4:
		a.LT = true
	case 5:
		a.XX, a.GT = true, true
	case 6:
		a.XX, a.LT = true, true
	default:
		switch g.intn(3) {
		case 0:
			a.NX, a.XX = true, true
		case 1:
			a.NX, a.GT = true, true
		default:
			a.GT, a.LT = true, true
		}
		a.Ch = g.intn(2) == 0
		return a, false
	}
	a.Ch = g.intn(2) == 0
	return a, true
}

func zaddWords(a zipline.ZAddArgs) []any {
	var w []any
	for _, f := range []struct {
		on   bool
		word string
	}{{a.NX, "NX"}, {a.XX, "XX"}, {a.GT, "GT"}, {a.LT, "LT"}, {a.Ch, "CH"}} {
		if f.on {
			w = append(w, f.word)
		}
	}
	return w
}

// zrangeArgs is a ZRANGE query in both clients' forms. A page needs a
// count: zipline's ZRangeArgs sends a zero Count as -1 (all), go-redis's
// as 0 (none).
func (g *gen) zrangeArgs(k string) (zipline.ZRangeArgs, redis.ZRangeArgs, string) {
	a := zipline.ZRangeArgs{Key: k}
	switch g.intn(3) {
	case 0:
		a.Start, a.Stop = pick(g, "0", "1", "-2", "-100"), pick(g, "-1", "0", "2", "100")
	case 1:
		a.ByScore = true
		a.Start, a.Stop = g.bound(), g.bound()
	default:
		a.ByLex = true
		a.Start, a.Stop = g.lexBound(), g.lexBound()
	}
	a.Rev = g.intn(3) == 0
	if (a.ByScore || a.ByLex || g.intn(10) == 0) && g.intn(3) == 0 {
		p := pick(g, [2]int64{0, 2}, [2]int64{1, 1}, [2]int64{1, -1}, [2]int64{2, 5})
		a.Offset, a.Count = p[0], p[1]
	}
	desc := cmdline("", k, a.Start, a.Stop)
	switch {
	case a.ByScore:
		desc += " BYSCORE"
	case a.ByLex:
		desc += " BYLEX"
	}
	if a.Rev {
		desc += " REV"
	}
	if a.Offset != 0 || a.Count != 0 {
		desc += fmt.Sprintf(" LIMIT %d %d", a.Offset, a.Count)
	}
	return a, redis.ZRangeArgs{Key: k, Start: a.Start, Stop: a.Stop, ByScore: a.ByScore, ByLex: a.ByLex, Rev: a.Rev,
		Offset: a.Offset, Count: a.Count}, desc
}

// zstore is a ZUNION, ZINTER or their STORE's input in both clients'
// forms: weights one per key (sometimes a wrong number of them),
// aggregates.
func (g *gen) zstore() (zipline.ZStore, redis.ZStore, string) {
	s := zipline.ZStore{Keys: g.keys(pick(g, bandZset, bandZset, bandSet), 1, 3)}
	desc := cmdline("", len(s.Keys), s.Keys)
	if g.intn(3) == 0 {
		n := len(s.Keys)
		if g.intn(10) == 0 {
			n++
		}
		for range n {
			s.Weights = append(s.Weights, pick(g, 1, 2, 0, -1, 0.5))
		}
		desc += " WEIGHTS"
		for _, w := range s.Weights {
			desc += fmt.Sprint(" ", w)
		}
	}
	s.Aggregate = pick(g, "", "", "SUM", "MIN", "MAX")
	if s.Aggregate != "" {
		desc += " AGGREGATE " + s.Aggregate
	}
	return s, redis.ZStore{Keys: s.Keys, Weights: s.Weights, Aggregate: s.Aggregate}, desc
}

func vrankScore(rank int64, score float64) string {
	return fmt.Sprintf("(rank) %d @ %s", rank, vfloat(score))
}

func zKeyZs(kz zipline.KeyZs) string { return vstr(kz.Key) + ": " + zZs(kz.Members) }

var zsetRows = []row{
	{"ZADD opts", 5, func(g *gen) *op {
		k := g.key(bandZset)
		a, valid := g.zaddFlags()
		ms := g.members(1, 3)
		gz := make([]redis.Z, len(ms))
		args := append([]any{"ZADD", k}, zaddWords(a)...)
		for i, m := range ms {
			s := g.score()
			a.Members = append(a.Members, zipline.Z{Member: m, Score: s})
			gz[i] = redis.Z{Member: m, Score: s}
			args = append(args, s, m)
		}
		ga := redis.ZAddArgs{NX: a.NX, XX: a.XX, GT: a.GT, LT: a.LT, Ch: a.Ch, Members: gz}
		o := &op{name: "ZADD " + strings.TrimSpace(cmdline("", zaddWords(a)...)), desc: cmdline("ZADD", args[1:]...), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd {
				if !valid {
					return goDo(ctx, c, args...)
				}
				return c.ZAddArgs(ctx, k, ga)
			}}
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) { return c.ZAddArgs(ctx, k, a) },
			func(b zbat) fut[int64] { return b.ZAddArgs(k, a) })
	}},
	{"ZADD INCR", 3, func(g *gen) *op {
		k, m, incr := g.key(bandZset), g.member(), g.score()
		a, valid := g.zaddFlags()
		args := append(append([]any{"ZADD", k}, zaddWords(a)...), "INCR", incr, m)
		ga := redis.ZAddArgs{NX: a.NX, XX: a.XX, GT: a.GT, LT: a.LT, Ch: a.Ch, Members: []redis.Z{{Score: incr, Member: m}}}
		o := &op{name: "ZADD INCR", desc: cmdline("ZADD", args[1:]...), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd {
				if !valid {
					return goDo(ctx, c, args...)
				}
				return c.ZAddArgsIncr(ctx, k, ga)
			}}
		o.gr = func(c gcmd) reply {
			if x, ok := c.(*redis.Cmd); ok {
				if err := x.Err(); err != nil {
					return gErr(err)
				}
				return val(vfloat(parseScore(x.Val())))
			}
			return gReply(c, false, false)
		}
		return typed(o, vfloat,
			func(ctx ctxT, c zcli) (float64, error) { return c.ZAddIncr(ctx, k, a, incr, m) },
			func(b zbat) fut[float64] { return b.ZAddIncr(k, a, incr, m) })
	}},
	{"ZMSCORE", 3, func(g *gen) *op {
		// go-redis's ZMScore reads a missing member's null as 0 (its
		// FloatSliceCmd), which zipline's gives as NaN: Do keeps the null.
		k, ms := g.key(bandZset), g.members(1, 3)
		o := &op{name: "ZMSCORE", desc: cmdline("ZMSCORE", k, ms), keys: []string{k},
			gr: gRender(func(c *redis.Cmd) string {
				xs, _ := c.Val().([]any)
				out := make([]string, len(xs))
				for i, x := range xs {
					if x == nil {
						out[i] = "(nil)"
					} else {
						out[i] = vfloat(parseScore(x))
					}
				}
				return vlist(out, false)
			}),
			g: func(ctx ctxT, c gcli) gcmd { return goDo(ctx, c, append([]any{"ZMSCORE", k}, anys(ms)...)...) }}
		return typed(o, func(fs []float64) string {
			out := make([]string, len(fs))
			for i, f := range fs {
				if f != f {
					out[i] = "(nil)"
				} else {
					out[i] = vfloat(f)
				}
			}
			return vlist(out, false)
		},
			func(ctx ctxT, c zcli) ([]float64, error) { return c.ZMScore(ctx, k, ms...) },
			func(b zbat) fut[[]float64] { return b.ZMScore(k, ms...) })
	}},
	{"ZLEXCOUNT", 2, func(g *gen) *op {
		k, lo, hi := g.key(bandZset), g.lexBound(), g.lexBound()
		o := lexRange(&op{name: "ZLEXCOUNT", desc: cmdline("ZLEXCOUNT", k, lo, hi), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.ZLexCount(ctx, k, lo, hi) }}, k)
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) { return c.ZLexCount(ctx, k, lo, hi) },
			func(b zbat) fut[int64] { return b.ZLexCount(k, lo, hi) })
	}},
	{"ZRANGE args", 6, func(g *gen) *op {
		k := g.key(bandZset)
		a, ga, desc := g.zrangeArgs(k)
		lex := func(o *op) *op {
			if a.ByLex {
				return lexRange(o, k)
			}
			return o
		}
		switch g.intn(3) {
		case 0:
			o := lex(&op{name: "ZRANGE args WITHSCORES", desc: "ZRANGE" + desc + " WITHSCORES", keys: []string{k},
				g: func(ctx ctxT, c gcli) gcmd { return c.ZRangeArgsWithScores(ctx, ga) }})
			return typed(o, zZs,
				func(ctx ctxT, c zcli) ([]zipline.Z, error) { return c.ZRangeArgsWithScores(ctx, a) },
				func(b zbat) fut[[]zipline.Z] { return b.ZRangeArgsWithScores(a) })
		case 1:
			dst := g.key(bandZset)
			o := lex(&op{name: "ZRANGESTORE", desc: cmdline("ZRANGESTORE", dst) + desc, keys: []string{dst, k},
				g: func(ctx ctxT, c gcli) gcmd { return c.ZRangeStore(ctx, dst, ga) }})
			return typed(o, vint,
				func(ctx ctxT, c zcli) (int64, error) { return c.ZRangeStore(ctx, dst, a) },
				func(b zbat) fut[int64] { return b.ZRangeStore(dst, a) })
		}
		o := lex(&op{name: "ZRANGE args", desc: "ZRANGE" + desc, keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.ZRangeArgs(ctx, ga) }})
		return typed(o, zStrings(false),
			func(ctx ctxT, c zcli) ([]string, error) { return c.ZRangeArgs(ctx, a) },
			func(b zbat) fut[[]string] { return b.ZRangeArgs(a) })
	}},
	{"ZREVRANGE", 3, func(g *gen) *op {
		// zipline sends ZRANGE ... REV, go-redis ZREVRANGE.
		k, start, stop := g.key(bandZset), g.index(), g.index()
		if g.intn(2) == 0 {
			o := &op{name: "ZREVRANGE WITHSCORES", desc: cmdline("ZREVRANGE", k, start, stop) + " WITHSCORES", keys: []string{k},
				g: func(ctx ctxT, c gcli) gcmd { return c.ZRevRangeWithScores(ctx, k, start, stop) }}
			return typed(o, zZs,
				func(ctx ctxT, c zcli) ([]zipline.Z, error) { return c.ZRevRangeWithScores(ctx, k, start, stop) },
				func(b zbat) fut[[]zipline.Z] { return b.ZRevRangeWithScores(k, start, stop) })
		}
		o := &op{name: "ZREVRANGE", desc: cmdline("ZREVRANGE", k, start, stop), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.ZRevRange(ctx, k, start, stop) }}
		return typed(o, zStrings(false),
			func(ctx ctxT, c zcli) ([]string, error) { return c.ZRevRange(ctx, k, start, stop) },
			func(b zbat) fut[[]string] { return b.ZRevRange(k, start, stop) })
	}},
	{"ZRANK WITHSCORE", 3, func(g *gen) *op {
		// Redis 7.2 and Valkey 7.2: Redis 7.0 refuses WITHSCORE with an
		// error, to both clients alike.
		k, m, rev := g.key(bandZset), g.member(), g.intn(2) == 0
		name := "ZRANK"
		if rev {
			name = "ZREVRANK"
		}
		o := &op{name: name + " WITHSCORE", desc: cmdline(name, k, m) + " WITHSCORE", keys: []string{k},
			gr: gRender(func(c *redis.RankWithScoreCmd) string { return vrankScore(c.Val().Rank, c.Val().Score) }),
			g: func(ctx ctxT, c gcli) gcmd {
				if rev {
					return c.ZRevRankWithScore(ctx, k, m)
				}
				return c.ZRankWithScore(ctx, k, m)
			}}
		return typed(o, func(rs zipline.RankScore) string { return vrankScore(rs.Rank, rs.Score) },
			func(ctx ctxT, c zcli) (zipline.RankScore, error) {
				if rev {
					return c.ZRevRankWithScore(ctx, k, m)
				}
				return c.ZRankWithScore(ctx, k, m)
			},
			func(b zbat) fut[zipline.RankScore] {
				if rev {
					return b.ZRevRankWithScore(k, m)
				}
				return b.ZRankWithScore(k, m)
			})
	}},
	{"ZREMRANGEBY", 3, func(g *gen) *op {
		k := g.key(bandZset)
		switch g.intn(3) {
		case 0:
			start, stop := g.index(), g.index()
			o := &op{name: "ZREMRANGEBYRANK", desc: cmdline("ZREMRANGEBYRANK", k, start, stop), keys: []string{k},
				g: func(ctx ctxT, c gcli) gcmd { return c.ZRemRangeByRank(ctx, k, start, stop) }}
			return typed(o, vint,
				func(ctx ctxT, c zcli) (int64, error) { return c.ZRemRangeByRank(ctx, k, start, stop) },
				func(b zbat) fut[int64] { return b.ZRemRangeByRank(k, start, stop) })
		case 1:
			lo, hi := g.bound(), g.bound()
			o := &op{name: "ZREMRANGEBYSCORE", desc: cmdline("ZREMRANGEBYSCORE", k, lo, hi), keys: []string{k},
				g: func(ctx ctxT, c gcli) gcmd { return c.ZRemRangeByScore(ctx, k, lo, hi) }}
			return typed(o, vint,
				func(ctx ctxT, c zcli) (int64, error) { return c.ZRemRangeByScore(ctx, k, lo, hi) },
				func(b zbat) fut[int64] { return b.ZRemRangeByScore(k, lo, hi) })
		}
		lo, hi := g.lexBound(), g.lexBound()
		o := lexRange(&op{name: "ZREMRANGEBYLEX", desc: cmdline("ZREMRANGEBYLEX", k, lo, hi), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.ZRemRangeByLex(ctx, k, lo, hi) }}, k)
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) { return c.ZRemRangeByLex(ctx, k, lo, hi) },
			func(b zbat) fut[int64] { return b.ZRemRangeByLex(k, lo, hi) })
	}},
	{"ZPOP count", 3, func(g *gen) *op {
		k, n, max := g.key(bandZset), pick[int64](g, 0, 1, 2, 5, -1), g.intn(2) == 0
		name := "ZPOPMIN"
		if max {
			name = "ZPOPMAX"
		}
		o := &op{name: name + " count", desc: cmdline(name, k, n), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd {
				if max {
					return c.ZPopMax(ctx, k, n)
				}
				return c.ZPopMin(ctx, k, n)
			}}
		return typed(o, zZs,
			func(ctx ctxT, c zcli) ([]zipline.Z, error) {
				if max {
					return c.ZPopMaxN(ctx, k, n)
				}
				return c.ZPopMinN(ctx, k, n)
			},
			func(b zbat) fut[[]zipline.Z] {
				if max {
					return b.ZPopMaxN(k, n)
				}
				return b.ZPopMinN(k, n)
			})
	}},
	{"ZUNION/ZINTER", 5, func(g *gen) *op {
		s, gs, desc := g.zstore()
		inter := g.intn(2) == 0
		name := "ZUNION"
		if inter {
			name = "ZINTER"
		}
		switch g.intn(3) {
		case 0:
			o := &op{name: name + " WITHSCORES", desc: name + desc + " WITHSCORES", keys: s.Keys,
				g: func(ctx ctxT, c gcli) gcmd {
					if inter {
						return c.ZInterWithScores(ctx, &gs)
					}
					return c.ZUnionWithScores(ctx, gs)
				}}
			return typed(o, zZs,
				func(ctx ctxT, c zcli) ([]zipline.Z, error) {
					if inter {
						return c.ZInterWithScores(ctx, s)
					}
					return c.ZUnionWithScores(ctx, s)
				},
				func(b zbat) fut[[]zipline.Z] {
					if inter {
						return b.ZInterWithScores(s)
					}
					return b.ZUnionWithScores(s)
				})
		case 1:
			dst := g.key(bandZset)
			o := &op{name: name + "STORE", desc: cmdline(name+"STORE", dst) + desc, keys: append([]string{dst}, s.Keys...),
				g: func(ctx ctxT, c gcli) gcmd {
					if inter {
						return c.ZInterStore(ctx, dst, &gs)
					}
					return c.ZUnionStore(ctx, dst, &gs)
				}}
			return typed(o, vint,
				func(ctx ctxT, c zcli) (int64, error) {
					if inter {
						return c.ZInterStore(ctx, dst, s)
					}
					return c.ZUnionStore(ctx, dst, s)
				},
				func(b zbat) fut[int64] {
					if inter {
						return b.ZInterStore(dst, s)
					}
					return b.ZUnionStore(dst, s)
				})
		}
		o := &op{name: name, desc: name + desc, keys: s.Keys,
			g: func(ctx ctxT, c gcli) gcmd {
				if inter {
					return c.ZInter(ctx, &gs)
				}
				return c.ZUnion(ctx, gs)
			}}
		return typed(o, zStrings(false),
			func(ctx ctxT, c zcli) ([]string, error) {
				if inter {
					return c.ZInter(ctx, s)
				}
				return c.ZUnion(ctx, s)
			},
			func(b zbat) fut[[]string] {
				if inter {
					return b.ZInter(s)
				}
				return b.ZUnion(s)
			})
	}},
	{"ZDIFF", 3, func(g *gen) *op {
		ks := g.keys(pick(g, bandZset, bandZset, bandSet), 1, 3)
		switch g.intn(3) {
		case 0:
			o := &op{name: "ZDIFF WITHSCORES", desc: cmdline("ZDIFF", len(ks), ks) + " WITHSCORES", keys: ks,
				g: func(ctx ctxT, c gcli) gcmd { return c.ZDiffWithScores(ctx, ks...) }}
			return typed(o, zZs,
				func(ctx ctxT, c zcli) ([]zipline.Z, error) { return c.ZDiffWithScores(ctx, ks...) },
				func(b zbat) fut[[]zipline.Z] { return b.ZDiffWithScores(ks...) })
		case 1:
			dst := g.key(bandZset)
			o := &op{name: "ZDIFFSTORE", desc: cmdline("ZDIFFSTORE", dst, len(ks), ks), keys: append([]string{dst}, ks...),
				g: func(ctx ctxT, c gcli) gcmd { return c.ZDiffStore(ctx, dst, ks...) }}
			return typed(o, vint,
				func(ctx ctxT, c zcli) (int64, error) { return c.ZDiffStore(ctx, dst, ks...) },
				func(b zbat) fut[int64] { return b.ZDiffStore(dst, ks...) })
		}
		o := &op{name: "ZDIFF", desc: cmdline("ZDIFF", len(ks), ks), keys: ks,
			g: func(ctx ctxT, c gcli) gcmd { return c.ZDiff(ctx, ks...) }}
		return typed(o, zStrings(false),
			func(ctx ctxT, c zcli) ([]string, error) { return c.ZDiff(ctx, ks...) },
			func(b zbat) fut[[]string] { return b.ZDiff(ks...) })
	}},
	{"ZINTERCARD", 2, func(g *gen) *op {
		ks, limit := g.keys(bandZset, 1, 3), pick[int64](g, 0, 0, 1, 2, -1)
		o := &op{name: "ZINTERCARD", desc: cmdline("ZINTERCARD", len(ks), ks) + fmt.Sprintf(" LIMIT %d", limit), keys: ks,
			invalid: limit < 0,
			g:       func(ctx ctxT, c gcli) gcmd { return c.ZInterCard(ctx, limit, ks...) }}
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) { return c.ZInterCard(ctx, limit, ks...) },
			func(b zbat) fut[int64] { return b.ZInterCard(limit, ks...) })
	}},
	{"ZMPOP", 3, func(g *gen) *op {
		// count at least 1, as LMPOP's.
		ks, from, n := g.keys(bandZset, 1, 2), pick(g, zipline.MinScore, zipline.MaxScore), pick[int64](g, 1, 2, 5, 1, 2, 5, 0, -1)
		o := &op{name: "ZMPOP", desc: cmdline("ZMPOP", len(ks), ks, string(from)) + fmt.Sprintf(" COUNT %d", n), keys: ks,
			invalid: n < 1,
			gr: gRender(func(c *redis.ZSliceWithKeyCmd) string {
				k, zs, _ := c.Result()
				out := make([]zipline.Z, len(zs))
				for i, z := range zs {
					out[i] = zipline.Z{Member: fmt.Sprint(z.Member), Score: z.Score}
				}
				return zKeyZs(zipline.KeyZs{Key: k, Members: out})
			}),
			g: func(ctx ctxT, c gcli) gcmd { return c.ZMPop(ctx, string(from), n, ks...) }}
		return typed(o, zKeyZs,
			func(ctx ctxT, c zcli) (zipline.KeyZs, error) { return c.ZMPop(ctx, from, n, ks...) },
			func(b zbat) fut[zipline.KeyZs] { return b.ZMPop(from, n, ks...) })
	}},
	{"ZRANDMEMBER", 1, func(g *gen) *op {
		// A count above any sorted set's size (14 members): all of it.
		k, withScores := g.key(bandZset), g.intn(2) == 0
		if withScores {
			o := &op{name: "ZRANDMEMBER WITHSCORES", desc: cmdline("ZRANDMEMBER", k, 100) + " WITHSCORES", keys: []string{k}, unordered: true,
				g: func(ctx ctxT, c gcli) gcmd { return c.ZRandMemberWithScores(ctx, k, 100) }}
			return typed(o, func(zs []zipline.Z) string {
				out := make([]string, len(zs))
				for i, z := range zs {
					out[i] = vz(z.Member, z.Score)
				}
				return vlist(out, true)
			},
				func(ctx ctxT, c zcli) ([]zipline.Z, error) { return c.ZRandMemberWithScores(ctx, k, 100) },
				func(b zbat) fut[[]zipline.Z] { return b.ZRandMemberWithScores(k, 100) })
		}
		o := &op{name: "ZRANDMEMBER", desc: cmdline("ZRANDMEMBER", k, 100), keys: []string{k}, unordered: true,
			g: func(ctx ctxT, c gcli) gcmd { return c.ZRandMember(ctx, k, 100) }}
		return typed(o, zStrings(true),
			func(ctx ctxT, c zcli) ([]string, error) { return c.ZRandMember(ctx, k, 100) },
			func(b zbat) fut[[]string] { return b.ZRandMember(k, 100) })
	}},
}
