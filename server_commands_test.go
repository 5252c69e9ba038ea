package zipline

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/internal/testkit"
)

func TestServerCommandsFromTheSpec(t *testing.T) {
	onEveryServer(t, func(t *testing.T, c *Client, kind testkit.Kind) {
		ctx := context.Background()
		if d := time.Since(must(c.Time(ctx))(t)); d < -time.Minute || d > time.Minute {
			t.Errorf("Time is %v away from this clock", d)
		}
		if ls := must(c.LastSave(ctx))(t); ls.Before(time.Unix(1, 0)) || ls.After(time.Now().Add(time.Minute)) {
			t.Errorf("LastSave = %v", ls)
		}
		mustOK(t, c.Set(ctx, "k", []byte("v")))
		if n := must(c.MemoryUsage(ctx, "k", 0))(t); n <= 0 {
			t.Errorf("MemoryUsage = %d", n)
		}
		if n := must(c.MemoryUsage(ctx, "k", -1))(t); n <= 0 {
			t.Errorf("MemoryUsage SAMPLES 0 = %d", n)
		}
		mustOK(t, c.ConfigSet(ctx, "slowlog-log-slower-than", "0"))
		eq(t, "ConfigGet after ConfigSet", must(c.ConfigGet(ctx, "slowlog-log-slower-than"))(t)["slowlog-log-slower-than"], "0")
		must(c.Get(ctx, "k"))(t)
		logs := must(c.SlowLogGet(ctx, 10))(t)
		if len(logs) == 0 || len(logs[0].Args) == 0 || logs[0].Time.IsZero() {
			t.Errorf("SlowLogGet = %+v", logs)
		}
		if n := must(c.SlowLogLen(ctx))(t); n == 0 {
			t.Error("SlowLogLen = 0")
		}
		mustOK(t, c.SlowLogReset(ctx))
		mustOK(t, c.ConfigSet(ctx, "slowlog-log-slower-than", "10000"))
		mustOK(t, c.ConfigResetStat(ctx))

		id := must(c.ClientID(ctx))(t)
		info := must(c.ClientInfo(ctx))(t)
		eq(t, "ClientInfo id", info["id"], strconv.FormatInt(id, 10))
		list := must(c.ClientList(ctx))(t)
		if !slices.ContainsFunc(list, func(m map[string]string) bool { return m["id"] == info["id"] }) {
			t.Errorf("ClientList lacks this connection: %v", list)
		}
		if _, err := c.ClientGetName(ctx); err != nil && !isNil(err) {
			t.Errorf("ClientGetName: %v", err)
		}
		eq(t, "ClientKill of nobody", must(c.ClientKillByFilter(ctx, "ID", "999999"))(t), int64(0))
		eq(t, "ClientUnblock of nobody", must(c.ClientUnblock(ctx, 999999))(t), false)
		if n := must(c.CommandCount(ctx))(t); n < 200 {
			t.Errorf("CommandCount = %d", n)
		}
		if names := must(c.CommandList(ctx))(t); !slices.Contains(names, "get") {
			t.Errorf("CommandList lacks get")
		}
		eq(t, "CommandGetKeys", slices.Equal(must(c.CommandGetKeys(ctx, "MSET", "a", "1", "b", "2"))(t), []string{"a", "b"}), true)
		if _, err := c.LatencyLatest(ctx); err != nil {
			t.Errorf("LatencyLatest: %v", err)
		}
		must(c.LatencyReset(ctx))(t)

		eq(t, "PubSubChannels", len(must(c.PubSubChannels(ctx, ""))(t)), 0)
		if m := must(c.PubSubNumSub(ctx, "a", "b"))(t); len(m) != 2 || m["a"] != 0 {
			t.Errorf("PubSubNumSub = %v", m)
		}
		eq(t, "PubSubNumPat", must(c.PubSubNumPat(ctx))(t), int64(0))
		eq(t, "PubSubShardChannels", len(must(c.PubSubShardChannels(ctx, "x*"))(t)), 0)
		if m := must(c.PubSubShardNumSub(ctx, "a"))(t); len(m) != 1 {
			t.Errorf("PubSubShardNumSub = %v", m)
		}
		eq(t, "SPublish", must(c.SPublish(ctx, "a", []byte("m")))(t), int64(0))

		eq(t, "ACLWhoAmI", must(c.ACLWhoAmI(ctx))(t), "default")
		mustOK(t, c.ACLSetUser(ctx, "alice", "on", ">pw", "~k*", "+get"))
		if users := must(c.ACLUsers(ctx))(t); !slices.Contains(users, "alice") {
			t.Errorf("ACLUsers = %v", users)
		}
		if rules := must(c.ACLList(ctx))(t); len(rules) != 2 {
			t.Errorf("ACLList = %v", rules)
		}
		eq(t, "ACLDryRun allowed", must(c.ACLDryRun(ctx, "alice", "GET", "k1"))(t), "OK")
		if r := must(c.ACLDryRun(ctx, "alice", "SET", "k1", "v"))(t); r == "OK" {
			t.Error("ACLDryRun of a denied command: OK")
		}
		if p := must(c.ACLGenPass(ctx, 128))(t); len(p) != 32 {
			t.Errorf("ACLGenPass 128 = %q", p)
		}
		if cats := must(c.ACLCat(ctx))(t); !slices.Contains(cats, "read") {
			t.Errorf("ACLCat = %v", cats)
		}
		if cmds := must(c.ACLCat(ctx, "hyperloglog"))(t); !slices.Contains(cmds, "pfadd") {
			t.Errorf("ACLCat hyperloglog = %v", cmds)
		}
		mustOK(t, c.ACLLogReset(ctx))
		if _, err := c.ACLLog(ctx, 10); err != nil {
			t.Errorf("ACLLog: %v", err)
		}
		eq(t, "ACLDelUser", must(c.ACLDelUser(ctx, "alice", "nobody"))(t), int64(1))
		if kind == testkit.Redis {
			_, err := c.WaitAOF(ctx, 0, 0, time.Second)
			notOnServer(t, "WaitAOF", err)
		} else if got := must(c.WaitAOF(ctx, 0, 0, time.Second))(t); len(got) != 2 {
			t.Errorf("WaitAOF = %v", got)
		}
		d, err := c.Dedicated(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		mustOK(t, d.Set(ctx, "w", []byte("x")))
		eq(t, "Wait with no replicas", must(d.Wait(ctx, 0, 100*time.Millisecond))(t), int64(0))
	})
}

func isNil(err error) bool { return errors.Is(err, Nil) }

func TestMoreCommandsFromTheSpec(t *testing.T) {
	onEveryServer(t, func(t *testing.T, c *Client, kind testkit.Kind) {
		ctx := context.Background()
		var get, set *Future[bool]
		err := c.Pipelined(ctx, func(b *Batch) error {
			set = b.Set("p", []byte("1"))
			b.Incr("p")
			return nil
		})
		if err != nil || !set.Val() {
			t.Errorf("Pipelined: %v %v", err, set.Err())
		}
		err = c.TxPipelined(ctx, func(tx *Batch) error {
			get = tx.SetNX("p", []byte("x"))
			return nil
		})
		if err != nil || get.Val() {
			t.Errorf("TxPipelined: %v %v %v", err, get.Val(), get.Err())
		}
		if err := c.Pipelined(ctx, func(*Batch) error { return errors.New("no") }); err == nil || err.Error() != "no" {
			t.Errorf("Pipelined with fn failing: %v", err)
		}
		infos := must(c.Command(ctx))(t)
		if g := infos["get"]; g.Arity != 2 || g.FirstKey != 1 || !slices.Contains(g.Flags, "readonly") {
			t.Errorf("Command[get] = %+v", g)
		}
		kf := must(c.CommandGetKeysAndFlags(ctx, "SET", "a", "b"))(t)
		if len(kf) != 1 || kf[0].Key != "a" || len(kf[0].Flags) == 0 {
			t.Errorf("CommandGetKeysAndFlags = %+v", kf)
		}
		st := must(c.FunctionStats(ctx))(t)
		if st.Running != nil || st.Engines["LUA"] != (EngineStats{}) {
			t.Errorf("FunctionStats = %+v", st)
		}
		mustOK(t, c.FunctionFlushAsync(ctx))
		if err := c.ReadOnly(ctx); !errors.Is(err, ErrNotAllowed) {
			t.Errorf("ReadOnly on the shared connection: %v, want a refusal", err)
		}
		d, err := c.Dedicated(ctx)
		if err != nil {
			t.Fatal(err)
		}
		mustOK(t, d.ClientTracking(ctx, true, ClientTrackingArgs{BCast: true, Prefixes: []string{"x"}}))
		if info := must(d.ClientInfo(ctx))(t); !strings.Contains(info["flags"], "t") {
			t.Errorf("ClientTracking ON: flags %q", info["flags"])
		}
		mustOK(t, d.ClientTracking(ctx, false, ClientTrackingArgs{}))
		d.Close()
		if _, err := c.DebugObject(ctx, "p"); err == nil {
			t.Log("DEBUG is enabled on this server")
		}
		must(c.XAdd(ctx, XAddArgs{Stream: "xs", ID: "1-1", Values: fv("a", "1")}))(t)
		if full := must(c.XInfoStreamFull(ctx, "xs", 10))(t); !strings.Contains(full.String(), "1-1") {
			t.Errorf("XInfoStreamFull = %v", full)
		}
		must(c.HSet(ctx, "h", FieldValue{"f1", []byte("v")}, FieldValue{"f2", []byte("v")}))(t)
		var fields []string
		for f, err := range c.HScanFields(ctx, "h", ScanOptions{}) {
			if err != nil {
				if kind == testkit.Redis { // NOVALUES: Redis 7.4
					break
				}
				t.Fatal(err)
			}
			fields = append(fields, f)
		}
		if slices.Sort(fields); kind == testkit.Valkey && !slices.Equal(fields, []string{"f1", "f2"}) {
			t.Errorf("HScanFields = %q", fields)
		}
		if kind == testkit.Valkey {
			mustOK(t, c.Set(ctx, "e", []byte("v")))
			old := must(c.SetIfEqGet(ctx, "e", []byte("w"), []byte("v")))(t)
			eq(t, "SetIfEqGet", string(old)+string(must(c.Get(ctx, "e"))(t)), "vw")
			old = must(c.SetIfEqGet(ctx, "e", []byte("x"), []byte("nope")))(t)
			eq(t, "SetIfEqGet mismatch", string(old)+string(must(c.Get(ctx, "e"))(t)), "ww")
		}
		other := testkit.NewServer(t, testkit.Config{Kind: kind})
		host, port, _ := strings.Cut(other.Addr, ":")
		eq(t, "Migrate", must(c.Migrate(ctx, host, port, "p", 0, time.Second))(t), "OK")
		eq(t, "Migrate of nothing", must(c.Migrate(ctx, host, port, "p", 0, time.Second))(t), "NOKEY")
		if v, err := other.Do(ctx, "GET", "p"); err != nil || string(v.Bytes()) != "2" {
			t.Errorf("migrated value: %v %v", v, err)
		}
	})
}
