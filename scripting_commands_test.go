package zipline

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/ziplinekv/zipline/internal/testkit"
)

func TestScriptingAndFunctions(t *testing.T) {
	onEveryServer(t, func(t *testing.T, c *Client, _ testkit.Kind) {
		ctx := context.Background()
		mustOK(t, c.Set(ctx, "k", []byte("v")))
		const get = "return redis.call('GET', KEYS[1])"
		if v := must(c.Eval(ctx, get, []string{"k"}))(t); v.String() != `"v"` {
			t.Errorf("Eval = %v", v)
		}
		if v := must(c.Eval(ctx, "return ARGV[1] .. ARGV[2]", nil, 1, "x"))(t); v.String() != `"1x"` {
			t.Errorf("Eval with args = %v", v)
		}
		if v := must(c.EvalRO(ctx, get, []string{"k"}))(t); v.String() != `"v"` {
			t.Errorf("EvalRO = %v", v)
		}
		sha := must(c.ScriptLoad(ctx, get))(t)
		eq(t, "ScriptLoad SHA1", sha, NewScript(get).SHA1())
		eq(t, "ScriptExists", slices.Equal(must(c.ScriptExists(ctx, sha, "ffff"))(t), []bool{true, false}), true)
		if v := must(c.EvalSha(ctx, sha, []string{"k"}))(t); v.String() != `"v"` {
			t.Errorf("EvalSha = %v", v)
		}
		if v := must(c.EvalShaRO(ctx, sha, []string{"k"}))(t); v.String() != `"v"` {
			t.Errorf("EvalShaRO = %v", v)
		}
		mustOK(t, c.ScriptFlush(ctx))
		if _, err := c.EvalSha(ctx, sha, []string{"k"}); !isServerError(err, "NOSCRIPT") {
			t.Errorf("EvalSha after ScriptFlush: %v", err)
		}
		if err := c.ScriptKill(ctx); err == nil {
			t.Error("ScriptKill with nothing running: no error")
		}
		if _, err := c.Eval(ctx, get, []string{"k"}, struct{}{}); err == nil {
			t.Error("Eval with an argument Do cannot encode: no error")
		}

		lib := "#!lua name=zlib\nredis.register_function{function_name='zget', callback=function(keys) return redis.call('GET', keys[1]) end, flags={'no-writes'}, description='get'}"
		eq(t, "FunctionLoad", must(c.FunctionLoad(ctx, lib))(t), "zlib")
		if _, err := c.FunctionLoad(ctx, lib); err == nil {
			t.Error("FunctionLoad of a library already there: no error")
		}
		eq(t, "FunctionLoadReplace", must(c.FunctionLoadReplace(ctx, lib))(t), "zlib")
		if v := must(c.FCall(ctx, "zget", []string{"k"}))(t); v.String() != `"v"` {
			t.Errorf("FCall = %v", v)
		}
		if v := must(c.FCallRO(ctx, "zget", []string{"k"}))(t); v.String() != `"v"` {
			t.Errorf("FCallRO = %v", v)
		}
		libs := must(c.FunctionList(ctx, "", true))(t)
		if len(libs) != 1 || libs[0].Name != "zlib" || libs[0].Engine != "LUA" || len(libs[0].Functions) != 1 ||
			libs[0].Functions[0].Name != "zget" || libs[0].Functions[0].Description != "get" ||
			!slices.Equal(libs[0].Functions[0].Flags, []string{"no-writes"}) || libs[0].Code != lib {
			t.Errorf("FunctionList = %+v", libs)
		}
		eq(t, "FunctionList of no match", len(must(c.FunctionList(ctx, "nope*", false))(t)), 0)
		dump := must(c.FunctionDump(ctx))(t)
		mustOK(t, c.FunctionDelete(ctx, "zlib"))
		if _, err := c.FCall(ctx, "zget", []string{"k"}); err == nil {
			t.Error("FCall after FunctionDelete: no error")
		}
		mustOK(t, c.FunctionRestore(ctx, dump))
		if v := must(c.FCall(ctx, "zget", []string{"k"}))(t); v.String() != `"v"` {
			t.Errorf("FCall after FunctionRestore = %v", v)
		}
		mustOK(t, c.FunctionFlush(ctx))
		eq(t, "libraries after FunctionFlush", len(must(c.FunctionList(ctx, "", false))(t)), 0)
		if err := c.FunctionKill(ctx); err == nil {
			t.Error("FunctionKill with nothing running: no error")
		}
		var se *ServerError
		if _, err := c.FCall(ctx, "nope", nil); !errors.As(err, &se) {
			t.Errorf("FCall of no function: %v", err)
		}
	})
}
