package zipline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"
)

func mustOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// must(call)(t) returns call's value, failing the test on its error.
func must[T any](v T, err error) func(*testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func eq[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

// TestCommands runs every command against a real server in RESP3 and in
// RESP2: each reply must fit the types its command accepts in both (a
// mismatch would drop the connection as out of step).
func TestCommands(t *testing.T) {
	tests := []struct {
		name string
		fn   func(*testing.T, Options)
	}{
		{"StringCommands", testStringCommands},
		{"KeyCommands", testKeyCommands},
		{"Scan", testScan},
		{"HashCommands", testHashCommands},
		{"ListCommands", testListCommands},
		{"SetCommands", testSetCommands},
		{"SortedSetCommands", testSortedSetCommands},
		{"Script", testScript},
		{"ServerCommands", testServerCommands},
	}
	for _, proto := range []int{3, 2} {
		for _, tc := range tests {
			t.Run(fmt.Sprintf("RESP%d/%s", proto, tc.name), func(t *testing.T) {
				tc.fn(t, Options{Protocol: proto})
			})
		}
	}
}

func testStringCommands(t *testing.T, opts Options) {
	c, _ := newTestClient(t, opts)
	ctx := context.Background()
	eq(t, "SetNX new", must(c.SetNX(ctx, "s", []byte("a")))(t), true)
	eq(t, "SetNX existing", must(c.SetNX(ctx, "s", []byte("b")))(t), false)
	// 15 s, not 1.5: the key must outlive the reads of its TTL below (and
	// KEEPTTL's), which a loaded machine can delay past a second.
	eq(t, "SetXX existing", must(c.SetXX(ctx, "s", []byte("c"), PX(15*time.Second)))(t), true)
	eq(t, "SetXX missing", must(c.SetXX(ctx, "nope", []byte("c")))(t), false)
	if ttl := must(c.PTTL(ctx, "s"))(t); ttl <= 0 || ttl > 15*time.Second {
		t.Errorf("PX expiry: PTTL %v", ttl)
	}
	eq(t, "SetGet old", string(must(c.SetGet(ctx, "s", []byte("d"), KeepTTL()))(t)), "c")
	if ttl := must(c.PTTL(ctx, "s"))(t); ttl <= 0 {
		t.Errorf("KEEPTTL lost the expiry: %v", ttl)
	}
	if _, err := c.SetGet(ctx, "fresh", []byte("x")); !errors.Is(err, Nil) {
		t.Errorf("SetGet on a new key: %v", err)
	}
	eq(t, "GetSet", string(must(c.GetSet(ctx, "s", []byte("e")))(t)), "d")
	if ttl := must(c.TTL(ctx, "s"))(t); ttl != NoExpiry {
		t.Errorf("GETSET keeps no TTL; TTL = %v", ttl)
	}
	mustOK(t, c.MSet(ctx, KeyValue{"m1", []byte("1")}, KeyValue{"m2", []byte("2")}))
	got := must(c.MGet(ctx, "m1", "missing", "m2"))(t)
	if len(got) != 3 || string(got[0]) != "1" || got[1] != nil || string(got[2]) != "2" {
		t.Errorf("MGet = %q", got)
	}
	eq(t, "MSetNX blocked", must(c.MSetNX(ctx, KeyValue{"m1", []byte("x")}, KeyValue{"m3", []byte("3")}))(t), false)
	eq(t, "MSetNX", must(c.MSetNX(ctx, KeyValue{"m4", []byte("4")}, KeyValue{"m5", []byte("5")}))(t), true)
	eq(t, "GetEx", string(must(c.GetEx(ctx, "m4", EX(100*time.Second)))(t)), "4")
	if ttl := must(c.TTL(ctx, "m4"))(t); ttl <= 90*time.Second {
		t.Errorf("GETEX EX: TTL %v", ttl)
	}
	eq(t, "GetEx persist", string(must(c.GetEx(ctx, "m4", Persist()))(t)), "4")
	eq(t, "TTL after persist", must(c.TTL(ctx, "m4"))(t), NoExpiry)
	mustOK(t, c.Set(ctx, "at", []byte("x"), ExpireAt(time.Now().Add(time.Hour))))
	if ttl := must(c.TTL(ctx, "at"))(t); ttl < 59*time.Minute {
		t.Errorf("PXAT: TTL %v", ttl)
	}
	eq(t, "GetDel", string(must(c.GetDel(ctx, "m5"))(t)), "5")
	if _, err := c.Get(ctx, "m5"); !errors.Is(err, Nil) {
		t.Errorf("GETDEL left the key: %v", err)
	}
	eq(t, "Incr", must(c.Incr(ctx, "n"))(t), int64(1))
	eq(t, "IncrBy", must(c.IncrBy(ctx, "n", 10))(t), int64(11))
	eq(t, "Decr", must(c.Decr(ctx, "n"))(t), int64(10))
	eq(t, "DecrBy", must(c.DecrBy(ctx, "n", 4))(t), int64(6))
	eq(t, "IncrByFloat", must(c.IncrByFloat(ctx, "n", 0.5))(t), 6.5)
	eq(t, "Append", must(c.Append(ctx, "ap", []byte("ab")))(t), int64(2))
	eq(t, "Append again", must(c.Append(ctx, "ap", []byte("cd")))(t), int64(4))
	eq(t, "after append", string(must(c.Get(ctx, "ap"))(t)), "abcd")
}

func testKeyCommands(t *testing.T, opts Options) {
	c, _ := newTestClient(t, opts)
	ctx := context.Background()
	for _, k := range []string{"a", "b", "c"} {
		mustOK(t, c.Set(ctx, k, []byte(k)))
	}
	eq(t, "Exists", must(c.Exists(ctx, "a", "b", "zz", "a"))(t), int64(3))
	eq(t, "Type", must(c.Type(ctx, "a"))(t), "string")
	eq(t, "Type none", must(c.Type(ctx, "zz"))(t), "none")
	eq(t, "Expire", must(c.Expire(ctx, "a", time.Minute))(t), true)
	eq(t, "Expire missing", must(c.Expire(ctx, "zz", time.Minute))(t), false)
	if ttl := must(c.TTL(ctx, "a"))(t); ttl <= 55*time.Second {
		t.Errorf("TTL %v", ttl)
	}
	// A TTL of 20.5 s, so that the key outlives the test (Unlink counts
	// it). The PTTL may be below it by no more than the time the EXPIRE
	// and the PTTL took, measured, rather than a fixed 500 ms a loaded
	// machine can exceed; a lost sub-second part (EXPIRE 20) still shows
	// whenever the two took under half a second.
	const sub = 20500 * time.Millisecond
	sent := time.Now()
	eq(t, "PExpire", must(c.Expire(ctx, "b", sub))(t), true)
	if ttl, took := must(c.PTTL(ctx, "b"))(t), time.Since(sent); ttl > sub || ttl < sub-took-time.Millisecond {
		t.Errorf("PTTL after sub-second expire: %v, %v after the EXPIRE was sent", ttl, took)
	}
	eq(t, "ExpireAt", must(c.ExpireAt(ctx, "c", time.Now().Add(time.Hour)))(t), true)
	eq(t, "Persist", must(c.Persist(ctx, "c"))(t), true)
	eq(t, "TTL persisted", must(c.TTL(ctx, "c"))(t), NoExpiry)
	if ttl, err := c.TTL(ctx, "zz"); err != nil || ttl != NoKey {
		t.Errorf("TTL of missing key: %v %v, want NoKey (-2) as go-redis", ttl, err)
	}
	if ttl, err := c.PTTL(ctx, "zz"); err != nil || ttl != NoKey {
		t.Errorf("PTTL of missing key: %v %v, want NoKey (-2) as go-redis", ttl, err)
	}
	mustOK(t, c.Rename(ctx, "c", "c2"))
	eq(t, "Del", must(c.Del(ctx, "a", "zz"))(t), int64(1))
	eq(t, "Unlink", must(c.Unlink(ctx, "b", "c2"))(t), int64(2))
	eq(t, "DBSize", must(c.DBSize(ctx))(t), int64(0))
}

func testScan(t *testing.T, opts Options) {
	c, _ := newTestClient(t, opts)
	ctx := context.Background()
	b := c.Batch()
	var want []string
	for i := range 500 {
		k := "user:" + itoa(i)
		want = append(want, k)
		b.Set(k, []byte("x"))
		b.Set("other:"+itoa(i), []byte("x"))
	}
	b.HSet("hash:1", FieldValue{"f", []byte("v")})
	if err := b.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	var got []string
	for k, err := range c.Scan(ctx, ScanOptions{Match: "user:*", Count: 50}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, k)
	}
	sort.Strings(got)
	got = slices.Compact(got) // SCAN may return a key twice
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Fatalf("Scan returned %d keys, want %d", len(got), len(want))
	}
	var hashes []string
	for k, err := range c.Scan(ctx, ScanOptions{Type: "hash"}) {
		if err != nil {
			t.Fatal(err)
		}
		hashes = append(hashes, k)
	}
	if !slices.Equal(hashes, []string{"hash:1"}) {
		t.Fatalf("Scan TYPE hash = %v", hashes)
	}
	// Breaking out of the loop stops the iteration.
	n := 0
	for range c.Scan(ctx, ScanOptions{}) {
		n++
		if n == 3 {
			break
		}
	}
	eq(t, "early break", n, 3)
	// An error is yielded.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	for _, err := range c.Scan(cctx, ScanOptions{}) {
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("scan with cancelled ctx: %v", err)
		}
	}
}

func testHashCommands(t *testing.T, opts Options) {
	c, _ := newTestClient(t, opts)
	ctx := context.Background()
	eq(t, "HSet", must(c.HSet(ctx, "h", FieldValue{"a", []byte("1")}, FieldValue{"b", []byte("2")}))(t), int64(2))
	eq(t, "HSetNX new", must(c.HSetNX(ctx, "h", "c", []byte("3")))(t), true)
	eq(t, "HSetNX existing", must(c.HSetNX(ctx, "h", "c", []byte("x")))(t), false)
	eq(t, "HGet", string(must(c.HGet(ctx, "h", "a"))(t)), "1")
	if _, err := c.HGet(ctx, "h", "zz"); !errors.Is(err, Nil) {
		t.Errorf("HGet missing: %v", err)
	}
	vals := must(c.HMGet(ctx, "h", "a", "zz", "c"))(t)
	if string(vals[0]) != "1" || vals[1] != nil || string(vals[2]) != "3" {
		t.Errorf("HMGet = %q", vals)
	}
	all := must(c.HGetAll(ctx, "h"))(t)
	if len(all) != 3 || string(all["b"]) != "2" {
		t.Errorf("HGetAll = %q", all)
	}
	eq(t, "HExists", must(c.HExists(ctx, "h", "a"))(t), true)
	eq(t, "HIncrBy", must(c.HIncrBy(ctx, "h", "n", 5))(t), int64(5))
	eq(t, "HIncrByFloat", must(c.HIncrByFloat(ctx, "h", "n", 0.25))(t), 5.25)
	keys := must(c.HKeys(ctx, "h"))(t)
	sort.Strings(keys)
	if !slices.Equal(keys, []string{"a", "b", "c", "n"}) {
		t.Errorf("HKeys = %v", keys)
	}
	eq(t, "HVals", len(must(c.HVals(ctx, "h"))(t)), 4)
	eq(t, "HLen", must(c.HLen(ctx, "h"))(t), int64(4))
	eq(t, "HDel", must(c.HDel(ctx, "h", "a", "zz"))(t), int64(1))
	fields := map[string]string{}
	for fv, err := range c.HScan(ctx, "h", ScanOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		fields[fv.Field] = string(fv.Value)
	}
	if len(fields) != 3 || fields["b"] != "2" {
		t.Errorf("HScan = %v", fields)
	}
	// RESP2 returns HGETALL as a flat array; the decoder handles both.
	c2, err := New(Options{Addr: c.s.opts.Addr, Protocol: 2, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if all := must(c2.HGetAll(ctx, "h"))(t); len(all) != 3 || string(all["c"]) != "3" {
		t.Errorf("RESP2 HGetAll = %q", all)
	}
}

func testListCommands(t *testing.T, opts Options) {
	c, _ := newTestClient(t, opts)
	ctx := context.Background()
	eq(t, "RPush", must(c.RPush(ctx, "l", []byte("b"), []byte("c")))(t), int64(2))
	eq(t, "LPush", must(c.LPush(ctx, "l", []byte("a")))(t), int64(3))
	r := must(c.LRange(ctx, "l", 0, -1))(t)
	if len(r) != 3 || string(r[0]) != "a" || string(r[2]) != "c" {
		t.Errorf("LRange = %q", r)
	}
	eq(t, "LLen", must(c.LLen(ctx, "l"))(t), int64(3))
	eq(t, "LIndex", string(must(c.LIndex(ctx, "l", -1))(t)), "c")
	if _, err := c.LIndex(ctx, "l", 10); !errors.Is(err, Nil) {
		t.Errorf("LIndex out of range: %v", err)
	}
	mustOK(t, c.LSet(ctx, "l", 1, []byte("B")))
	eq(t, "LInsert", must(c.LInsert(ctx, "l", true, []byte("B"), []byte("ab")))(t), int64(4))
	eq(t, "LRem", must(c.LRem(ctx, "l", 0, []byte("ab")))(t), int64(1))
	eq(t, "LMove", string(must(c.LMove(ctx, "l", "l2", Right, Left))(t)), "c")
	eq(t, "LPop", string(must(c.LPop(ctx, "l"))(t)), "a")
	eq(t, "RPop", string(must(c.RPop(ctx, "l"))(t)), "B")
	if _, err := c.LPop(ctx, "l"); !errors.Is(err, Nil) {
		t.Errorf("LPop empty: %v", err)
	}
	mustOK(t, c.LTrim(ctx, "l2", 0, 0))
	kv := must(c.BLPop(ctx, time.Second, "empty", "l2"))(t)
	if kv.Key != "l2" || string(kv.Value) != "c" {
		t.Errorf("BLPop = %+v", kv)
	}
	if _, err := c.BRPop(ctx, 100*time.Millisecond, "empty"); !errors.Is(err, Nil) {
		t.Errorf("BRPop timeout: %v", err)
	}
	c.RPush(ctx, "src", []byte("x"))
	eq(t, "BLMove", string(must(c.BLMove(ctx, "src", "dst", Left, Right, time.Second))(t)), "x")
}

func testSetCommands(t *testing.T, opts Options) {
	c, _ := newTestClient(t, opts)
	ctx := context.Background()
	eq(t, "SAdd", must(c.SAdd(ctx, "s", "a", "b", "c"))(t), int64(3))
	c.SAdd(ctx, "t", "b", "c", "d")
	eq(t, "SRem", must(c.SRem(ctx, "s", "c", "zz"))(t), int64(1))
	m := must(c.SMembers(ctx, "s"))(t)
	sort.Strings(m)
	if !slices.Equal(m, []string{"a", "b"}) {
		t.Errorf("SMembers = %v", m)
	}
	eq(t, "SIsMember", must(c.SIsMember(ctx, "s", "a"))(t), true)
	if got := must(c.SMIsMember(ctx, "s", "a", "zz"))(t); !slices.Equal(got, []bool{true, false}) {
		t.Errorf("SMIsMember = %v", got)
	}
	eq(t, "SCard", must(c.SCard(ctx, "s"))(t), int64(2))
	if got := must(c.SInter(ctx, "s", "t"))(t); !slices.Equal(got, []string{"b"}) {
		t.Errorf("SInter = %v", got)
	}
	if got := must(c.SDiff(ctx, "s", "t"))(t); !slices.Equal(got, []string{"a"}) {
		t.Errorf("SDiff = %v", got)
	}
	eq(t, "SUnion", len(must(c.SUnion(ctx, "s", "t"))(t)), 4)
	if m := must(c.SRandMember(ctx, "s"))(t); m != "a" && m != "b" {
		t.Errorf("SRandMember = %q", m)
	}
	var scanned []string
	for m, err := range c.SScan(ctx, "t", ScanOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		scanned = append(scanned, m)
	}
	eq(t, "SScan", len(scanned), 3)
	c.SPop(ctx, "s")
	c.SPop(ctx, "s")
	if _, err := c.SPop(ctx, "s"); !errors.Is(err, Nil) {
		t.Errorf("SPop empty: %v", err)
	}
}

func testSortedSetCommands(t *testing.T, opts Options) {
	c, _ := newTestClient(t, opts)
	ctx := context.Background()
	eq(t, "ZAdd", must(c.ZAdd(ctx, "z", Z{"a", 1}, Z{"b", 2}, Z{"c", 3.5}))(t), int64(3))
	eq(t, "ZScore", must(c.ZScore(ctx, "z", "c"))(t), 3.5)
	if _, err := c.ZScore(ctx, "z", "zz"); !errors.Is(err, Nil) {
		t.Errorf("ZScore missing: %v", err)
	}
	eq(t, "ZIncrBy", must(c.ZIncrBy(ctx, "z", 10, "a"))(t), 11.0)
	eq(t, "ZCard", must(c.ZCard(ctx, "z"))(t), int64(3))
	eq(t, "ZCount", must(c.ZCount(ctx, "z", "(2", "+inf"))(t), int64(2))
	if got := must(c.ZRange(ctx, "z", 0, -1))(t); !slices.Equal(got, []string{"b", "c", "a"}) {
		t.Errorf("ZRange = %v", got)
	}
	if got := must(c.ZRangeWithScores(ctx, "z", 0, 0))(t); len(got) != 1 || got[0] != (Z{"b", 2}) {
		t.Errorf("ZRangeWithScores = %v", got)
	}
	if got := must(c.ZRangeByScore(ctx, "z", "3", "20"))(t); !slices.Equal(got, []string{"c", "a"}) {
		t.Errorf("ZRangeByScore = %v", got)
	}
	eq(t, "ZRank", must(c.ZRank(ctx, "z", "a"))(t), int64(2))
	eq(t, "ZRevRank", must(c.ZRevRank(ctx, "z", "a"))(t), int64(0))
	if _, err := c.ZRank(ctx, "z", "zz"); !errors.Is(err, Nil) {
		t.Errorf("ZRank missing: %v", err)
	}
	eq(t, "ZPopMin", must(c.ZPopMin(ctx, "z"))(t), Z{"b", 2})
	eq(t, "ZPopMax", must(c.ZPopMax(ctx, "z"))(t), Z{"a", 11})
	var zs []Z
	for z, err := range c.ZScan(ctx, "z", ScanOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		zs = append(zs, z)
	}
	if len(zs) != 1 || zs[0] != (Z{"c", 3.5}) {
		t.Errorf("ZScan = %v", zs)
	}
	kz := must(c.BZPopMin(ctx, time.Second, "nothing", "z"))(t)
	if kz.Key != "z" || kz.Z != (Z{"c", 3.5}) {
		t.Errorf("BZPopMin = %+v", kz)
	}
	if _, err := c.BZPopMax(ctx, 50*time.Millisecond, "z"); !errors.Is(err, Nil) {
		t.Errorf("BZPopMax timeout: %v", err)
	}
	eq(t, "ZRem", must(c.ZRem(ctx, "z", "gone"))(t), int64(0))
}

func testScript(t *testing.T, opts Options) {
	c, _ := newTestClient(t, opts)
	ctx := context.Background()
	s := NewScript(`return redis.call("INCRBY", KEYS[1], ARGV[1])`)
	// First run: NOSCRIPT, then EVAL; second run: EVALSHA succeeds.
	for want := int64(5); want <= 10; want += 5 {
		v, err := s.Run(ctx, c, []string{"counter"}, 5)
		if err != nil {
			t.Fatal(err)
		}
		eq(t, "script result", must(v.AsInt64())(t), want)
	}
	v, err := c.Do(ctx, "SCRIPT", "EXISTS", s.SHA1())
	if err != nil {
		t.Fatal(err)
	}
	if e := must(v.AsSlice())(t); must(e[0].AsInt64())(t) != 1 {
		t.Error("script not cached after Run")
	}
	bad := NewScript(`return redis.call("NOPE")`)
	_, err = bad.Run(ctx, c, nil)
	var se *ServerError
	if !errors.As(err, &se) {
		t.Errorf("failing script: %v", err)
	}
	mustOK(t, c.FlushAll(ctx))
	if err := s.Load(ctx, c); err != nil {
		t.Fatal(err)
	}
}

func testServerCommands(t *testing.T, opts Options) {
	c, _ := newTestClient(t, opts)
	ctx := context.Background()
	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	eq(t, "Echo", must(c.Echo(ctx, "hi"))(t), "hi")
	info := must(c.Info(ctx, "memory"))(t)
	if info["used_memory"] == "" {
		t.Errorf("INFO memory lacks used_memory: %v", info)
	}
	cfg := must(c.ConfigGet(ctx, "hash-max-*-entries"))(t)
	if cfg["hash-max-listpack-entries"] != "512" && cfg["hash-max-ziplist-entries"] != "512" {
		t.Errorf("CONFIG GET = %v", cfg)
	}
	eq(t, "Publish", must(c.Publish(ctx, "ch", []byte("m")))(t), int64(0))
	c.Set(ctx, "x", []byte("1"))
	mustOK(t, c.FlushDB(ctx))
	eq(t, "DBSize", must(c.DBSize(ctx))(t), int64(0))
}

func itoa(i int) string {
	var b [20]byte
	n := len(b)
	for {
		n--
		b[n] = byte('0' + i%10)
		i /= 10
		if i == 0 {
			return string(b[n:])
		}
	}
}
