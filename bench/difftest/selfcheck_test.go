package difftest

// The harness itself: that its renderings keep apart what the test must
// tell apart, and that its key space comparison sees a planted difference
// and none between a compressed value and its plaintext.

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/testbed"
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
	// The families' renderings.
	if zXMsg(zipline.XMessage{ID: "1-0"}) == zXMsg(zipline.XMessage{ID: "1-0", Values: []zipline.FieldValue{}}) {
		t.Error("streams: an entry deleted while pending and one without fields render alike")
	}
	if a, b := zXMsg(zipline.XMessage{ID: "1-0", Values: []zipline.FieldValue{{Field: "f", Value: []byte("v")}}}),
		gXMsg(redis.XMessage{ID: "1-0", Values: map[string]any{"f": "v"}}); a != b {
		t.Errorf("streams: the same entry renders as %s and %s", a, b)
	}
	if zFieldTTLs([]time.Duration{zipline.NoKey, zipline.NoExpiry, 5 * time.Second}) != zFieldTimes([]int64{-2, -1, 1700000000000}) {
		t.Error("hash field TTLs and expiry times render apart")
	}
	if vcoord(13.3613890000001, 38.1155560000001) != vcoord(13.361389, 38.115556) || vcoord(13.36, 38.11) == vcoord(13.361389, 38.115556) {
		t.Error("geo: coordinates compare beyond their tolerance, or within a wrong one")
	}
	if errText("NOSCRIPT No matching script.") != errText("NOSCRIPT No matching script. Please use EVAL.") {
		t.Error("NOSCRIPT: go-redis's text and the server's render apart")
	}
}

func TestKeyspaceCheck(t *testing.T) {
	if _, err := testbed.Binary(testbed.Redis); err != nil {
		t.Skip(err)
	}
	pair := startPair(t, testbed.Redis)
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

// TestKeyspaceCheckStreams checks the key space comparison of streams:
// the same entries, groups and pending entries read through each client
// compare equal (fields in order); a planted entry, a field out of order
// and a pending entry acknowledged on one side only are each found, and
// the stream is then restored from go-redis's server.
func TestKeyspaceCheckStreams(t *testing.T) {
	if _, err := testbed.Binary(testbed.Redis); err != nil {
		t.Skip(err)
	}
	pair := startPair(t, testbed.Redis)
	ctx := context.Background()
	for _, proto := range []int{2, 3} {
		r := newRunner(t, pair, mode{proto: proto, comp: "off"}, 0, 0)
		build := func(zFields, gFields []any) {
			for _, id := range []string{"1-0", "2-0", "3-0"} {
				zv := make([]zipline.FieldValue, 0, len(zFields)/2)
				for i := 0; i < len(zFields); i += 2 {
					zv = append(zv, zipline.FieldValue{Field: zFields[i].(string), Value: []byte(zFields[i+1].(string))})
				}
				if _, err := r.zc.XAdd(ctx, zipline.XAddArgs{Stream: "k16", ID: id, Values: zv}); err != nil {
					t.Fatal(err)
				}
				if err := r.rc.XAdd(ctx, &redis.XAddArgs{Stream: "k16", ID: id, Values: gFields}).Err(); err != nil {
					t.Fatal(err)
				}
			}
			if err := r.zc.XGroupCreate(ctx, "k16", "g1", "0"); err != nil {
				t.Fatal(err)
			}
			r.rc.XGroupCreate(ctx, "k16", "g1", "0")
			if _, err := r.zc.XReadGroup(ctx, zipline.XReadGroupArgs{Group: "g1", Consumer: "c1", Streams: []string{"k16"}, IDs: []string{">"}, Count: 2}); err != nil {
				t.Fatal(err)
			}
			r.rc.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g1", Consumer: "c1", Streams: []string{"k16", ">"}, Count: 2, Block: -1})
		}
		build([]any{"a", "1", "b", "2"}, []any{"a", "1", "b", "2"})
		r.checkKeyspace(ctx, "with equal streams")
		if r.ndiff != 0 {
			t.Fatalf("RESP%d: equal streams compare as different:\n%s", proto, r.diffs[r.order[0]].report)
		}
		plant := []func(){
			func() {
				r.zc.XAdd(ctx, zipline.XAddArgs{Stream: "k16", ID: "4-0", Values: []zipline.FieldValue{{Field: "a", Value: []byte("1")}}})
			},
			func() { r.zc.XAck(ctx, "k16", "g1", "1-0") },
		}
		for i, p := range plant {
			p()
			r.checkKeyspace(ctx, "with a planted difference")
			if r.ndiff != i+1 {
				t.Fatalf("RESP%d: planted difference %d not found", proto, i+1)
			}
			if z, g := r.zState(ctx, "k16").String(), r.gState(ctx, "k16").String(); z != g {
				t.Fatalf("RESP%d: k16 not restored after difference %d: %s vs %s", proto, i+1, z, g)
			}
		}
		r.zc.Del(ctx, "k16")
		r.rc.Del(ctx, "k16")
		r.ndiff = 0
		build([]any{"a", "1", "b", "2"}, []any{"b", "2", "a", "1"})
		r.checkKeyspace(ctx, "with fields in another order")
		if r.ndiff != 1 {
			t.Fatalf("RESP%d: fields in another order compare as equal", proto)
		}
	}
}
