package zipline

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/internal/testkit"
)

// The commands typed since the spec, on a cluster: each goes to the owner
// of its keys' slot (multi-key commands with hash tags), slot commands to
// the slot's owner, and keyless ones anywhere. On Redis 7.0 and Valkey 9.1.
func TestClusterCommandsFromTheSpec(t *testing.T) {
	for _, kind := range []testkit.Kind{testkit.Redis, testkit.Valkey} {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			c, _ := clusterClient(t, kind, Options{})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			// Single-key commands on keys spread over every node.
			for i := range 30 {
				k := "st:" + strconv.Itoa(i)
				must(c.XAdd(ctx, XAddArgs{Stream: k, ID: "1-1", Values: fv("f", k)}))(t)
				if got := must(c.XRange(ctx, k, "-", "+"))(t); len(got) != 1 {
					t.Fatalf("XRange %s = %+v", k, got)
				}
				must(c.GeoAdd(ctx, "geo:"+strconv.Itoa(i), GeoLocation{Name: "m", Longitude: 1, Latitude: 1}))(t)
				must(c.PFAdd(ctx, "hll:"+strconv.Itoa(i), "a"))(t)
				must(c.SetBit(ctx, "bits:"+strconv.Itoa(i), 3, 1))(t)
				eq(t, "ObjectEncoding", must(c.ObjectEncoding(ctx, k))(t), "stream")
			}
			// Multi-key commands in one slot.
			must(c.ZAdd(ctx, "{t}z1", Z{"a", 1}, Z{"b", 2}))(t)
			must(c.ZAdd(ctx, "{t}z2", Z{"b", 3}))(t)
			eq(t, "ZUnionStore", must(c.ZUnionStore(ctx, "{t}zu", ZStore{Keys: []string{"{t}z1", "{t}z2"}}))(t), int64(2))
			eq(t, "ZInterCard", must(c.ZInterCard(ctx, 0, "{t}z1", "{t}z2"))(t), int64(1))
			eq(t, "ZRangeStore", must(c.ZRangeStore(ctx, "{t}zr", ZRangeArgs{Key: "{t}z1", Start: "0", Stop: "-1"}))(t), int64(2))
			kz := must(c.ZMPop(ctx, MaxScore, 1, "{t}none", "{t}z2"))(t)
			eq(t, "ZMPop key", kz.Key, "{t}z2")
			must(c.SAdd(ctx, "{t}s1", "x", "y"))(t)
			must(c.SAdd(ctx, "{t}s2", "y"))(t)
			eq(t, "SInterStore", must(c.SInterStore(ctx, "{t}si", "{t}s1", "{t}s2"))(t), int64(1))
			eq(t, "SMove", must(c.SMove(ctx, "{t}s1", "{t}s2", "x"))(t), true)
			must(c.RPush(ctx, "{t}l", []byte("1"), []byte("2")))(t)
			eq(t, "RPopLPush", string(must(c.RPopLPush(ctx, "{t}l", "{t}l2"))(t)), "2")
			kv := must(c.LMPop(ctx, Left, 5, "{t}none", "{t}l"))(t)
			eq(t, "LMPop key", kv.Key, "{t}l")
			eq(t, "SortStore", must(c.SortStore(ctx, "{t}l2", "{t}sorted", SortArgs{}))(t), int64(1))
			mustOK(t, c.PFMerge(ctx, "{t}hll", "{t}h1", "{t}h2"))
			must(c.SetBit(ctx, "{t}b1", 1, 1))(t)
			eq(t, "BitOp", must(c.BitOp(ctx, "OR", "{t}b3", "{t}b1", "{t}b2"))(t), int64(1))
			mustOK(t, c.Set(ctx, "{t}str", []byte("v")))
			eq(t, "Copy", must(c.Copy(ctx, "{t}str", "{t}str2", false))(t), true)
			eq(t, "RenameNX", must(c.RenameNX(ctx, "{t}str2", "{t}str3"))(t), true)
			must(c.GeoAdd(ctx, "{t}geo", GeoLocation{Name: "m", Longitude: 1, Latitude: 1}))(t)
			eq(t, "GeoSearchStore", must(c.GeoSearchStore(ctx, "{t}geo2", "{t}geo", GeoSearchQuery{Member: "m", Radius: 10}, false))(t), int64(1))
			must(c.XAdd(ctx, XAddArgs{Stream: "{t}x1", ID: "1-1", Values: fv("a", "1")}))(t)
			must(c.XAdd(ctx, XAddArgs{Stream: "{t}x2", ID: "1-1", Values: fv("a", "2")}))(t)
			xs := must(c.XRead(ctx, XReadArgs{Streams: []string{"{t}x1", "{t}x2"}, IDs: []string{"0", "0"}}))(t)
			eq(t, "XRead of two streams", len(xs), 2)
			if _, err := c.XRead(ctx, XReadArgs{Streams: []string{"x1", "x2"}, IDs: []string{"0", "0"}}); err == nil {
				t.Error("XRead of two slots: no error")
			}
			mustOK(t, c.XGroupCreate(ctx, "{t}x1", "g", "0"))
			got := must(c.XReadGroup(ctx, XReadGroupArgs{Group: "g", Consumer: "c", Streams: []string{"{t}x1"}, IDs: []string{">"}}))(t)
			eq(t, "XReadGroup", len(got), 1)
			eq(t, "XAck", must(c.XAck(ctx, "{t}x1", "g", "1-1"))(t), int64(1))
			if v := must(c.Eval(ctx, "return redis.call('GET', KEYS[1])", []string{"{t}str"}))(t); v.String() != `"v"` {
				t.Errorf("Eval = %v", v)
			}
			lib := "#!lua name=cl\nredis.register_function('cget', function(keys) return redis.call('GET', keys[1]) end)"
			must(c.FunctionLoad(ctx, lib))(t) // on every primary
			for i := range 20 {
				k := "fk:" + strconv.Itoa(i)
				mustOK(t, c.Set(ctx, k, []byte(k)))
				if v := must(c.FCall(ctx, "cget", []string{k}))(t); v.String() != strconv.Quote(k) {
					t.Errorf("FCall on %s = %v", k, v)
				}
			}
			// Slot commands go to the slot's owner, wherever it is.
			for _, tag := range []string{"{a}", "{b}", "{c}", "{d}"} {
				for i := range 3 {
					mustOK(t, c.Set(ctx, tag+strconv.Itoa(i), []byte("x")))
				}
				slot := int64(keySlot(tag))
				eq(t, "ClusterKeySlot", must(c.ClusterKeySlot(ctx, tag))(t), slot)
				eq(t, "ClusterCountKeysInSlot "+tag, must(c.ClusterCountKeysInSlot(ctx, slot))(t), int64(3))
				keys := must(c.ClusterGetKeysInSlot(ctx, slot, 10))(t)
				slices.Sort(keys)
				eq(t, "ClusterGetKeysInSlot "+tag, slices.Equal(keys, []string{tag + "0", tag + "1", tag + "2"}), true)
			}
			shards := must(c.ClusterShards(ctx))(t)
			if len(shards) != 3 || len(shards[0].Slots) == 0 || len(shards[0].Nodes) == 0 || shards[0].Nodes[0].ID == "" {
				t.Errorf("ClusterShards = %+v", shards)
			}
			slots := must(c.ClusterSlots(ctx))(t)
			if len(slots) < 3 || len(slots[0].Nodes) == 0 || slots[0].Nodes[0].Addr == "" {
				t.Errorf("ClusterSlots = %+v", slots)
			}
			if info := must(c.ClusterInfo(ctx))(t); info["cluster_state"] != "ok" {
				t.Errorf("ClusterInfo = %v", info)
			}
			if id := must(c.ClusterMyID(ctx))(t); len(id) != 40 {
				t.Errorf("ClusterMyID = %q", id)
			}
			if nodes := must(c.ClusterNodes(ctx))(t); nodes == "" {
				t.Error("ClusterNodes is empty")
			}
		})
	}
}
