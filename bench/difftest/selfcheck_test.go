package difftest

// The harness itself: that its renderings keep apart what the test must
// tell apart, and that its key space comparison sees a planted difference
// and none between a compressed value and its plaintext.

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/internal/localserver"
)

func TestRenderings(t *testing.T) {
	missing := val(zBytesOrNil([][]byte{nil}))
	empty := val(zBytesOrNil([][]byte{{}}))
	if sameReply(missing, empty) {
		t.Errorf("MGET: a missing key and an empty value render alike: %s", missing)
	}
	if g := gReply(redis.NewSliceResult([]any{""}, nil), false, false); !sameReply(g, empty) {
		t.Errorf("MGET of \"\": go-redis %s, zipline %s", g, empty)
	}
	if g := gReply(redis.NewSliceResult([]any{nil}, nil), false, false); !sameReply(g, missing) {
		t.Errorf("MGET of a missing key: go-redis %s, zipline %s", g, missing)
	}
	if z, g := zResult([]byte(nil), zipline.Nil, zBytes), gReply(redis.NewStringResult("", redis.Nil), false, false); !sameReply(z, g) || z.kind != kNil {
		t.Errorf("GET of a missing key: zipline %s, go-redis %s", z, g)
	}
	if z := zResult([]byte(nil), nil, zBytes); z.kind != kVal || z.text != `""` {
		t.Errorf("GET of \"\" renders as %s", z)
	}
	if z, g := val(vfloat(1.5)), gReply(redis.NewFloatResult(1.5, nil), false, false); !sameReply(z, g) {
		t.Errorf("floats: zipline %s, go-redis %s", z, g)
	}
	if a, b := val(zStrings(true)([]string{"a", "b"})), gReply(redis.NewStringSliceResult([]string{"b", "a"}, nil), true, false); !sameReply(a, b) {
		t.Errorf("sets compare in any order: %s vs %s", a, b)
	}
	if a, b := val(zStrings(false)([]string{"a", "b"})), gReply(redis.NewStringSliceResult([]string{"b", "a"}, nil), false, false); sameReply(a, b) {
		t.Errorf("lists compare in order: %s vs %s", a, b)
	}
	wrong := zErr(&zipline.ServerError{Prefix: "WRONGTYPE", Message: "WRONGTYPE Operation against a key holding the wrong kind of value"})
	if sameReply(wrong, reply{kErr, "ERR syntax error"}) || wrong.class() != "WRONGTYPE" {
		t.Errorf("error classes: %s", wrong)
	}
	if sameReply(reply{kind: kClient, text: "x"}, reply{kind: kClient, text: "x"}) {
		t.Error("client errors must never compare equal")
	}
}

func TestKeyspaceCheck(t *testing.T) {
	if _, err := localserver.Binary(localserver.Redis); err != nil {
		t.Skip(err)
	}
	pair := startPair(t, localserver.Redis)
	ctx := context.Background()
	m := mode{proto: 3, comp: "zstd", families: zipline.Hashes | zipline.Lists, minSize: 8}
	r := newRunner(t, pair, m, 0, 0)
	long := []byte(strings.Repeat(record(1), 20))
	if err := r.zc.Set(ctx, "k1", long); err != nil {
		t.Fatal(err)
	}
	r.rc.Set(ctx, "k1", long, 0)
	r.zc.RPush(ctx, "k2", long, []byte(""))
	r.rc.RPush(ctx, "k2", long, "")
	if raw, _ := r.zc.Raw().Get(ctx, "k1"); string(raw) == string(long) {
		t.Fatal("the value was not stored compressed: the check would prove nothing")
	}
	r.checkKeyspace(ctx, "with equal contents")
	if r.ndiff != 0 {
		t.Fatalf("a compressed value and its plaintext compare as different:\n%s", r.diffs[r.order[0]].report)
	}
	r.zc.Raw().Set(ctx, "k1", []byte("planted"))
	r.zc.Expire(ctx, "k2", 0)
	r.checkKeyspace(ctx, "with planted differences")
	if r.ndiff != 2 {
		t.Fatalf("found %d differences, want 2", r.ndiff)
	}
	if z, g := r.zState(ctx, "k1").String(), r.gState(ctx, "k1").String(); z != g {
		t.Errorf("k1 not restored after the difference: %s vs %s", z, g)
	}
}
