package zipline

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/internal/testkit"
)

// Do routes every command the server lists by its keys, found as the server
// finds them (key specs: numkeys, keywords, container subcommands): these
// failed after about 9 s with "too many cluster redirects and retries",
// their keys unmarked. A command whose keys cannot be found in its
// arguments fails at once, with the server's own error.
func TestClusterDoFindsKeysByKeySpecs(t *testing.T) {
	for _, kind := range []testkit.Kind{testkit.Redis, testkit.Valkey} {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			c, _ := clusterClient(t, kind, Options{})
			ctx := context.Background()
			// Three tags, so the keys of each command share a slot that is
			// on one node or another.
			for _, tag := range []string{"{a}", "{b}", "{c}"} {
				mustOK(t, c.Set(ctx, tag+"str", []byte("v")))
				must(c.SAdd(ctx, tag+"s1", "x", "y"))(t)
				must(c.SAdd(ctx, tag+"s2", "y"))(t)
				must(c.ZAdd(ctx, tag+"z1", Z{"x", 1}, Z{"y", 2}))(t)
				must(c.ZAdd(ctx, tag+"z2", Z{"y", 3}))(t)
				must(c.RPush(ctx, tag+"l1", []byte("a"), []byte("b")))(t)
				if _, err := c.Do(ctx, "XADD", tag+"st", "1-1", "f", "v"); err != nil {
					t.Fatal(err)
				}
				if _, err := c.Do(ctx, "XGROUP", "CREATE", tag+"st", "g", "0"); err != nil {
					t.Fatal(err)
				}
				for _, tc := range []struct {
					args []any
					want string // Value.String() of the reply
				}{
					{[]any{"SINTERCARD", 2, tag + "s1", tag + "s2"}, "1"},
					{[]any{"ZINTERCARD", 2, tag + "z1", tag + "z2"}, "1"},
					{[]any{"ZUNION", 2, tag + "z1", tag + "z2"}, `["x" "y"]`},
					{[]any{"ZINTER", 2, tag + "z1", tag + "z2"}, `["y"]`},
					{[]any{"ZDIFF", 2, tag + "z1", tag + "z2"}, `["x"]`},
					{[]any{"LMPOP", 2, tag + "missing", tag + "l1", "LEFT"}, `["` + tag + `l1" ["a"]]`},
					{[]any{"BLMPOP", 1, 2, tag + "missing", tag + "l1", "LEFT"}, `["` + tag + `l1" ["b"]]`},
					{[]any{"ZMPOP", 1, tag + "z2", "MAX"}, `["` + tag + `z2" [["y" 3]]]`},
					{[]any{"XREAD", "COUNT", 1, "STREAMS", tag + "st", "0"}, "f"},
					{[]any{"XREADGROUP", "GROUP", "g", "c1", "COUNT", 1, "STREAMS", tag + "st", ">"}, "f"},
					{[]any{"OBJECT", "ENCODING", tag + "str"}, `"embstr"`},
					{[]any{"MEMORY", "USAGE", tag + "str"}, ""},
					{[]any{"EVAL", "return redis.call('GET', KEYS[1])", 1, tag + "str"}, `"v"`},
				} {
					cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
					start := time.Now()
					v, err := c.Do(cctx, tc.args...)
					cancel()
					if err != nil {
						t.Errorf("%v: %v after %v", tc.args, err, time.Since(start).Round(time.Millisecond))
						continue
					}
					if got := v.String(); tc.want != "" && !strings.Contains(strings.ReplaceAll(got, "[[", "["), strings.ReplaceAll(tc.want, "[[", "[")) {
						t.Errorf("%v = %s, want %s", tc.args, got, tc.want)
					}
				}
			}
			// Keys that cannot be found: the server's error, at once.
			for _, args := range [][]any{{"SINTERCARD", "two", "{a}s1"}, {"ZUNION", 5, "{a}z1"}, {"XREAD", "COUNT", 1}} {
				cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
				start := time.Now()
				_, err := c.Do(cctx, args...)
				cancel()
				var se *ServerError
				if !errors.As(err, &se) || time.Since(start) > time.Second {
					t.Errorf("%v: %v after %v, want the server's error at once", args, err, time.Since(start))
				}
			}
		})
	}
}
