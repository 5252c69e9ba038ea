package difftest

// Scripts and functions through the typed calls (Eval, EvalRO, EvalSha,
// EvalShaRO, FCall, FCallRO), and the server commands whose replies do not
// depend on the server's state or clock.

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/ziplinekv/zipline"
)

// scriptLoaded is loaded into both servers' script caches when a mode
// starts (newRunner), so that EVALSHA finds it; the scripts of the EVAL
// row are not (Script.Run's fallback from EVALSHA to EVAL is tested
// there), and may or may not be cached by the time EVALSHA names them, on
// both servers alike.
const scriptLoaded = `return {KEYS[1], ARGV[1], redis.call('EXISTS', KEYS[1]), redis.call('TYPE', KEYS[1])['ok']}`

// scriptReadOnly reads a value back: EVAL_RO may run it.
const scriptReadOnly = "return redis.call('GET', KEYS[1])"

// functionLibrary is loaded into both servers with FUNCTION LOAD REPLACE
// when a mode starts: one function that writes, two flagged no-writes
// (FCALL_RO may call those; the writing one it refuses).
const functionLibrary = `#!lua name=difftest
redis.register_function('dt_set', function(keys, args)
  redis.call('SET', keys[1], args[1])
  return redis.call('GET', keys[1])
end)
redis.register_function{function_name='dt_get', flags={'no-writes'}, callback=function(keys, args)
  return redis.call('GET', keys[1])
end}
redis.register_function{function_name='dt_type', flags={'no-writes'}, callback=function(keys, args)
  local t = redis.call('TYPE', keys[1])['ok']
  return {t, redis.call('EXISTS', keys[1]), {args[1] or 'none'}}
end}`

var shaLoaded = zipline.NewScript(scriptLoaded).SHA1()

// loadScripts loads scriptLoaded and functionLibrary on both servers, each
// through its own client.
func loadScripts(ctx context.Context, zc *zipline.Client, rc *redis.Client) error {
	if _, err := zc.ScriptLoad(ctx, scriptLoaded); err != nil {
		return err
	}
	if _, err := zc.FunctionLoadReplace(ctx, functionLibrary); err != nil {
		return err
	}
	if err := rc.ScriptLoad(ctx, scriptLoaded).Err(); err != nil {
		return err
	}
	return rc.FunctionLoadReplace(ctx, functionLibrary).Err()
}

// scriptOp is a script or function call through both clients' typed
// calls: the reply is any Value, rendered as the EVAL row renders it.
func scriptOp(name, desc string, keys []string,
	z func(ctx ctxT, c zcli) (zipline.Value, error), q func(b zbat) fut[zipline.Value], g func(ctx ctxT, c gcli) gcmd) *op {
	o := &op{name: name, desc: desc, keys: keys, g: g, refuse: famStrings} // refused on a key in the compressed scope
	return typed(o, zValue(false, false), z, q)
}

var scriptRows = []row{
	{"EVAL typed", 3, func(g *gen) *op {
		k, v := g.key(bandStr), g.value()
		src := pick(g, scriptNested, scriptLoaded, "redis.call('SET', KEYS[1], ARGV[1]); return redis.call('STRLEN', KEYS[1])")
		ro := g.intn(3) == 0
		keys := []string{k}
		if ro {
			src = pick(g, scriptReadOnly, scriptNested, "redis.call('DEL', KEYS[1])")
			desc := cmdline("EVAL_RO", shortScript(src), 1, k, v)
			return scriptOp("EVAL_RO", desc, keys,
				func(ctx ctxT, c zcli) (zipline.Value, error) { return c.EvalRO(ctx, src, keys, v) },
				func(b zbat) fut[zipline.Value] { return b.EvalRO(src, keys, v) },
				func(ctx ctxT, c gcli) gcmd { return c.EvalRO(ctx, src, keys, v) })
		}
		desc := cmdline("EVAL", shortScript(src), 1, k, v)
		return scriptOp("EVAL typed", desc, keys,
			func(ctx ctxT, c zcli) (zipline.Value, error) { return c.Eval(ctx, src, keys, v) },
			func(b zbat) fut[zipline.Value] { return b.Eval(src, keys, v) },
			func(ctx ctxT, c gcli) gcmd { return c.Eval(ctx, src, keys, v) })
	}},
	{"EVALSHA", 3, func(g *gen) *op {
		k, v := g.key(bandAny), g.value()
		sha := pick(g, shaLoaded, shaLoaded, shaLoaded, zScriptGet.SHA1(), "0000000000000000000000000000000000000000")
		keys := []string{k}
		if g.intn(3) == 0 {
			return scriptOp("EVALSHA_RO", cmdline("EVALSHA_RO", sha[:8], 1, k, v), keys,
				func(ctx ctxT, c zcli) (zipline.Value, error) { return c.EvalShaRO(ctx, sha, keys, v) },
				func(b zbat) fut[zipline.Value] { return b.EvalShaRO(sha, keys, v) },
				func(ctx ctxT, c gcli) gcmd { return c.EvalShaRO(ctx, sha, keys, v) })
		}
		return scriptOp("EVALSHA", cmdline("EVALSHA", sha[:8], 1, k, v), keys,
			func(ctx ctxT, c zcli) (zipline.Value, error) { return c.EvalSha(ctx, sha, keys, v) },
			func(b zbat) fut[zipline.Value] { return b.EvalSha(sha, keys, v) },
			func(ctx ctxT, c gcli) gcmd { return c.EvalSha(ctx, sha, keys, v) })
	}},
	{"FCALL", 4, func(g *gen) *op {
		k, v := g.key(bandStr), g.value()
		fn := pick(g, "dt_set", "dt_get", "dt_type", "dt_missing")
		keys := []string{k}
		if g.intn(3) == 0 {
			return scriptOp("FCALL_RO", cmdline("FCALL_RO", fn, 1, k, v), keys,
				func(ctx ctxT, c zcli) (zipline.Value, error) { return c.FCallRO(ctx, fn, keys, v) },
				func(b zbat) fut[zipline.Value] { return b.FCallRO(fn, keys, v) },
				func(ctx ctxT, c gcli) gcmd { return c.FCallRO(ctx, fn, keys, v) })
		}
		return scriptOp("FCALL", cmdline("FCALL", fn, 1, k, v), keys,
			func(ctx ctxT, c zcli) (zipline.Value, error) { return c.FCall(ctx, fn, keys, v) },
			func(b zbat) fut[zipline.Value] { return b.FCall(fn, keys, v) },
			func(ctx ctxT, c gcli) gcmd { return c.FCall(ctx, fn, keys, v) })
	}},
}

func shortScript(src string) string {
	if len(src) > 40 {
		return src[:37] + "..."
	}
	return src
}

// vtime renders TIME by plausibility only: the servers' clocks are this
// machine's, a little apart.
func vtime(t time.Time) string {
	if d := time.Since(t); d > -time.Minute && d < time.Minute {
		return "(time) now"
	}
	return "(time) " + t.String()
}

var serverRows = []row{
	{"TIME", 1, func(g *gen) *op {
		o := &op{name: "TIME", desc: "TIME", gr: gRender(func(c *redis.TimeCmd) string { return vtime(c.Val()) }),
			g: func(ctx ctxT, c gcli) gcmd { return c.Time(ctx) }}
		return typed(o, vtime,
			func(ctx ctxT, c zcli) (time.Time, error) { return c.Time(ctx) },
			func(b zbat) fut[time.Time] { return b.Time() })
	}},
	{"CONFIG GET", 1, func(g *gen) *op {
		// Parameters both servers of a kind have alike (hz is set on
		// both), a pattern, and one no server has.
		p := pick(g, "hz", "maxmemory-policy", "list-max-listpack-size", "zset-max-listpack-*", "no-such-parameter")
		o := &op{name: "CONFIG GET", desc: cmdline("CONFIG GET", p),
			g: func(ctx ctxT, c gcli) gcmd { return c.ConfigGet(ctx, p) }}
		return typed(o, func(m map[string]string) string {
			out := make(map[string]string, len(m))
			for k, v := range m {
				out[k] = vstr(v)
			}
			return vmap(out)
		},
			func(ctx ctxT, c zcli) (map[string]string, error) { return c.ConfigGet(ctx, p) },
			func(b zbat) fut[map[string]string] { return b.ConfigGet(p) })
	}},
	{"ECHO typed", 1, func(g *gen) *op {
		v := pick(g, "", "hello", "\x00\xff", string(g.value()))
		o := &op{name: "ECHO", desc: cmdline("ECHO", v),
			g: func(ctx ctxT, c gcli) gcmd { return c.Echo(ctx, v) }}
		return typed(o, vstr,
			func(ctx ctxT, c zcli) (string, error) { return c.Echo(ctx, v) },
			func(b zbat) fut[string] { return b.Echo(v) })
	}},
}
