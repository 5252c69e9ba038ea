package zipline

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/internal/testkit"
)

// On a cluster, the commands the servers send to every shard or node go to
// each and their replies merge as the servers' response policy says: a
// case per policy, each checked against what every node answers on its
// own. Typed methods and Do alike; a Batch refuses them. On Redis 7.0 and
// Valkey 9.1.
func TestPolicyFanOutOnCluster(t *testing.T) {
	for _, kind := range []testkit.Kind{testkit.Redis, testkit.Valkey} {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			// Replica reads: the Client holds connections to the replicas,
			// which all_nodes commands reach too.
			c, cl := clusterClient(t, kind, Options{ReadFrom: ReadReplicaRoundRobin})
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			top := must(cl.Settle(ctx))(t)
			var primaries []*testkit.Server
			for _, p := range top.Primaries() {
				primaries = append(primaries, p.Server)
			}
			nodes := cl.Nodes()
			if len(primaries) != 3 || len(nodes) != 6 {
				t.Fatalf("%d primaries of %d nodes, want 3 of 6", len(primaries), len(nodes))
			}
			each := func(n *testkit.Server, args ...any) testkit.Value {
				t.Helper()
				return must(n.Do(ctx, args...))(t)
			}
			for i := range 60 {
				mustOK(t, c.Set(ctx, "pol:"+strconv.Itoa(i), []byte("v")))
			}

			// all_shards, agg_sum: DBSIZE is the sum of the primaries'.
			var sum int64
			for _, p := range primaries {
				n := each(p, "DBSIZE").Int()
				if n == 0 {
					t.Fatalf("primary %s holds none of the 60 keys: the test needs keys on every shard", p.Addr)
				}
				sum += n
			}
			eq(t, "DBSize", must(c.DBSize(ctx))(t), sum)
			eq(t, "Do DBSIZE", must(must(c.Do(ctx, "DBSIZE"))(t).AsInt64())(t), sum)

			// all_shards, no response policy: KEYS' arrays concatenated.
			eq(t, "Keys", len(must(c.Keys(ctx, "pol:*"))(t)), 60)
			eq(t, "Do KEYS", len(must(must(c.Do(ctx, "KEYS", "pol:*"))(t).AsSlice())(t)), 60)

			// all_shards, agg_logical_and: SCRIPT EXISTS is true only where
			// every primary has the script.
			src := fmt.Sprintf("return %d", time.Now().UnixNano())
			sha := string(each(primaries[0], "SCRIPT", "LOAD", src).Bytes())
			eq(t, "ScriptExists, one primary has it", fmt.Sprint(must(c.ScriptExists(ctx, sha))(t)), "[false]")

			// all_nodes, all_succeeded: SCRIPT LOAD reaches every node,
			// replicas included; then SCRIPT EXISTS is true.
			eq(t, "ScriptLoad", must(c.ScriptLoad(ctx, src))(t), sha)
			for _, n := range nodes {
				if got := each(n, "SCRIPT", "EXISTS", sha).Elems()[0].Int(); got != 1 {
					t.Errorf("SCRIPT EXISTS on %s = %d after ScriptLoad, want 1", n.Addr, got)
				}
			}
			eq(t, "ScriptExists, every primary has it", fmt.Sprint(must(c.ScriptExists(ctx, sha))(t)), "[true]")
			mustOK(t, c.ConfigSet(ctx, "maxmemory-samples", "7"))
			must(c.Do(ctx, "CONFIG", "SET", "lfu-log-factor", "11"))(t)
			for _, n := range nodes {
				got := each(n, "CONFIG", "GET", "maxmemory-samples").Elems()
				got2 := each(n, "CONFIG", "GET", "lfu-log-factor").Elems()
				if string(got[1].Bytes()) != "7" || string(got2[1].Bytes()) != "11" {
					t.Errorf("%s: maxmemory-samples %s, lfu-log-factor %s after CONFIG SET through the Client, want 7 and 11",
						n.Addr, got[1].Bytes(), got2[1].Bytes())
				}
			}

			// all_shards, one_succeeded: SCRIPT KILL fails only where no
			// primary runs a script (each answers NOTBUSY)...
			if err := c.ScriptKill(ctx); !isServerError(err, "NOTBUSY") {
				t.Fatalf("ScriptKill with no script running: %v, want NOTBUSY", err)
			}
			// ...and succeeds when one does.
			busy := primaries[1]
			each(busy, "CONFIG", "SET", "busy-reply-threshold", "50")
			looped := make(chan error, 1)
			go func() {
				_, err := busy.Do(ctx, "EVAL", "while true do end", "0")
				looped <- err
			}()
			for {
				_, err := busy.Do(ctx, "PING")
				if err != nil && strings.Contains(err.Error(), "BUSY") {
					break
				}
				if ctx.Err() != nil {
					t.Fatalf("the looping script never made %s answer BUSY", busy.Addr)
				}
			}
			if err := c.ScriptKill(ctx); err != nil {
				t.Fatalf("ScriptKill with a script running on one primary: %v", err)
			}
			if err := <-looped; err == nil {
				t.Fatal("the looping script returned without an error after ScriptKill")
			}

			// all_shards, agg_min: WAIT is the fewest replicas any shard's
			// connection reached (one each here).
			eq(t, "Do WAIT", must(must(c.Do(ctx, "WAIT", 1, 5000))(t).AsInt64())(t), int64(1))

			// all_shards, all_succeeded: FLUSHALL empties every primary.
			mustOK(t, c.FlushAll(ctx))
			for _, p := range primaries {
				eq(t, "DBSIZE of "+p.Addr+" after FlushAll", each(p, "DBSIZE").Int(), int64(0))
			}

			// multi_shard: split by slot where each key stands alone (DEL,
			// MSET), refused where the keys are set all or none (MSETNX).
			mustOK(t, c.MSet(ctx, KeyValue{"pol:a", []byte("1")}, KeyValue{"pol:b", []byte("2")}, KeyValue{"pol:c", []byte("3")}))
			eq(t, "Del across slots", must(c.Del(ctx, "pol:a", "pol:b", "pol:c", "pol:none"))(t), int64(3))
			var cross *CrossSlotError
			if _, err := c.MSetNX(ctx, KeyValue{"pol:a", []byte("1")}, KeyValue{"pol:b", []byte("2")}); !errors.As(err, &cross) {
				t.Fatalf("MSetNX across slots: %v, want a *CrossSlotError", err)
			}

			// A Batch is routed by slot: it refuses what fans out.
			b := c.Batch()
			size := b.DBSize()
			get := b.Get("pol:x")
			if err := b.Exec(ctx); err == nil {
				t.Fatal("Exec of a Batch holding DBSIZE on a cluster: no error")
			}
			var ce *CommandError
			if _, err := size.Result(); !errors.As(err, &ce) {
				t.Fatalf("DBSIZE in a Batch on a cluster: %v, want a *CommandError", err)
			}
			if _, err := get.Result(); !errors.Is(err, Nil) {
				t.Fatalf("GET beside it: %v, want Nil", err)
			}

			// all_nodes with a replica down, as in a rolling restart: the
			// replica is left out, and the primaries' success is the
			// command's (a layout's scripts failed through every restart
			// of a replica without that).
			replica := top.Replicas(top.Primaries()[0].ID)[0].Server
			must(cl.Kill(ctx, replica))(t)
			src2 := fmt.Sprintf("return %d", time.Now().UnixNano()+1)
			sha2, err := c.ScriptLoad(ctx, src2)
			if err != nil {
				t.Fatalf("ScriptLoad with replica %s down: %v", replica.Addr, err)
			}
			for _, p := range primaries {
				if got := each(p, "SCRIPT", "EXISTS", sha2).Elems()[0].Int(); got != 1 {
					t.Errorf("SCRIPT EXISTS on %s = %d after ScriptLoad with a replica down, want 1", p.Addr, got)
				}
			}
		})
	}
}
