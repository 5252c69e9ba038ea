package layout

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/codec"
	"github.com/ziplinekv/zipline/internal/testkit"
	"github.com/ziplinekv/zipline/testbed"
)

// TestMain starts the server the examples run against, and checks that
// no test leaves a goroutine behind.
func TestMain(m *testing.M) {
	srv, err := testbed.Start(testbed.Config{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "TestMain: the examples' server:", err)
		os.Exit(1)
	}
	os.Setenv("ZIPLINE_EXAMPLE_ADDR", srv.Addr)
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) { srv.Stop() }),
		goleak.IgnoreAnyFunction("github.com/ziplinekv/zipline/testbed.(*Server).start.func1")) // the examples' server, until Cleanup
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func newClient(t *testing.T, kind testkit.Kind) (*zipline.Client, *testkit.Server) {
	t.Helper()
	srv := testkit.NewServer(t, testkit.Config{Kind: kind})
	c, err := zipline.New(zipline.Options{Addr: srv.Addr, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, srv
}

func openStore(t testing.TB, c *zipline.Client, ns Namespace) *Store {
	t.Helper()
	s, err := New(context.Background(), c, ns)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// namespaces covers each layout the package offers.
func namespaces() map[string]Namespace {
	return map[string]Namespace{
		"plain":             {Prefix: "user:"},
		"zipped":            {Prefix: "user:", ZipAs: "u:"},
		"dense":             {Prefix: "user:", Buckets: Dense(100)},
		"dense zipped zstd": {Prefix: "user:", ZipAs: "u:", Buckets: Dense(100), Codec: zipline.Compression{Backend: codec.Zstd}},
		"hashed lz4":        {Prefix: "user:", ZipAs: "h:", Buckets: Hashed(16), Codec: zipline.Compression{Backend: codec.LZ4}},
	}
}

// bigValue is too large for a listpack bucket even compressed: its tail is
// random bytes.
var bigValue = append(bytes.Repeat([]byte(`{"name":"Ada","city":"London"},`), 10), randomBytes(200)...)

func randomBytes(n int) []byte {
	b := make([]byte, n)
	x := uint64(88172645463325252)
	for i := range b {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b[i] = byte(x)
	}
	return b
}

// short formats values for failure messages.
func short(vs [][]byte) string {
	var parts []string
	for _, v := range vs {
		if len(v) > 20 {
			parts = append(parts, fmt.Sprintf("<%d bytes>", len(v)))
		} else {
			parts = append(parts, fmt.Sprintf("%q", v))
		}
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func TestStoreOperations(t *testing.T) {
	for name, ns := range namespaces() {
		t.Run(name, func(t *testing.T) {
			c, _ := newClient(t, testkit.Redis)
			storeOperations(t, c, ns)
		})
	}
}

// storeOperations runs every operation of a Store for ns on an empty
// database (a server or a cluster) and checks the results.
func storeOperations(t *testing.T, c *zipline.Client, ns Namespace) {
	ctx := context.Background()
	s := openStore(t, c, ns)
	keys := []string{"user:1", "user:12345", "user:007", "user:alice", "user:a:b:7", "user:"}
	for i, k := range keys {
		v := []byte("v" + strconv.Itoa(i))
		if i%2 == 1 {
			v = bigValue // oversize in a bucket; compressed or not
		}
		if err := s.Set(ctx, k, v); err != nil {
			t.Fatalf("Set %s: %v", k, err)
		}
		got, err := s.Get(ctx, k)
		if err != nil || !bytes.Equal(got, v) {
			t.Fatalf("Get %s = %q, %v", k, got, err)
		}
	}
	// 007 and 7 are different keys.
	if err := s.Set(ctx, "user:7", []byte("seven")); err != nil {
		t.Fatal(err)
	}
	if v, _ := s.Get(ctx, "user:007"); string(v) != "v2" {
		t.Fatalf("user:007 clobbered by user:7: %q", v)
	}
	if _, err := s.Get(ctx, "user:999"); !errors.Is(err, zipline.Nil) {
		t.Fatalf("missing key: %v", err)
	}
	if _, err := s.Get(ctx, "other:1"); !errors.Is(err, ErrNotInNamespace) {
		t.Fatalf("foreign key: %v", err)
	}
	got, err := s.MGet(ctx, "user:1", "user:999", "user:12345", "user:007")
	if err != nil || string(got[0]) != "v0" || got[1] != nil || !bytes.Equal(got[2], bigValue) || string(got[3]) != "v2" {
		t.Fatalf("MGet = %s, %v", short(got), err)
	}
	if err := s.MSet(ctx, zipline.KeyValue{Key: "user:101", Value: []byte("a")}, zipline.KeyValue{Key: "user:102", Value: bigValue},
		zipline.KeyValue{Key: "user:103", Value: []byte("c")}); err != nil {
		t.Fatal(err)
	}
	if v, _ := s.Get(ctx, "user:102"); !bytes.Equal(v, bigValue) {
		t.Fatal("MSet oversize value")
	}
	if n, err := s.Exists(ctx, "user:101", "user:102", "user:nope", "user:alice"); err != nil || n != 3 {
		t.Fatalf("Exists = %d, %v", n, err)
	}
	if n, err := s.Incr(ctx, "user:500"); err != nil || n != 1 {
		t.Fatalf("Incr = %d, %v", n, err)
	}
	if n, err := s.IncrBy(ctx, "user:500", 41); err != nil || n != 42 {
		t.Fatalf("IncrBy = %d, %v", n, err)
	}
	if v, _ := s.Get(ctx, "user:500"); string(v) != "42" {
		t.Fatalf("counter reads %q", v)
	}
	if ok, err := s.SetNX(ctx, "user:101", []byte("x")); err != nil || ok {
		t.Fatalf("SetNX existing: %v %v", ok, err)
	}
	if ok, err := s.SetNX(ctx, "user:600", bigValue); err != nil || !ok {
		t.Fatalf("SetNX new oversize: %v %v", ok, err)
	}
	if old, err := s.GetSet(ctx, "user:600", []byte("small")); err != nil || !bytes.Equal(old, bigValue) {
		t.Fatalf("GetSet old = %q, %v", old, err)
	}
	if v, _ := s.Get(ctx, "user:600"); string(v) != "small" {
		t.Fatalf("after GetSet: %q", v)
	}
	if n, err := s.Del(ctx, "user:101", "user:102", "user:nope", "user:alice"); err != nil || n != 3 {
		t.Fatalf("Del = %d, %v", n, err)
	}
	if n, _ := s.Exists(ctx, "user:101", "user:102", "user:alice"); n != 0 {
		t.Fatalf("%d keys survived Del", n)
	}
	// Scan lists the application's names, each once.
	var listed []string
	for k, err := range s.Scan(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		listed = append(listed, k)
	}
	sort.Strings(listed)
	want := []string{"user:", "user:007", "user:1", "user:103", "user:12345", "user:500", "user:600", "user:7", "user:a:b:7"}
	if !slices.Equal(listed, want) {
		t.Fatalf("Scan = %v, want %v", listed, want)
	}
}

// Zipped and bucketed key names: short, and never clashing with keys of
// the application outside the namespace.
func TestStoredNames(t *testing.T) {
	c, srv := newClient(t, testkit.Redis)
	ctx := context.Background()
	s := openStore(t, c, Namespace{Prefix: "user:", ZipAs: "u:"})
	s.Set(ctx, "user:12345", []byte("x"))
	s.Set(ctx, "user:12345:profile", []byte("x"))
	b := openStore(t, c, Namespace{Prefix: "set-allBooksBelongToUser:", ZipAs: "b:", Buckets: Dense(100)})
	b.Set(ctx, "set-allBooksBelongToUser:12345", []byte("x"))
	c.Set(ctx, "superuser:1", []byte("untouched"))
	v, err := srv.Do(ctx, "KEYS", "*")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range v.Elems() {
		names = append(names, string(e.Bytes()))
	}
	sort.Strings(names)
	if want := []string{"b:#1Z", "superuser:1", "u:3d7", "u:3d7:0profile"}; !slices.Equal(names, want) {
		t.Fatalf("stored names %v, want %v", names, want)
	}
}

// After filling buckets, every bucket is still a listpack; an oversize
// value goes to a plain key instead of converting its bucket.
func TestBucketsStayListpack(t *testing.T) {
	ctx := context.Background()
	for _, kind := range []testkit.Kind{testkit.Redis, testkit.Valkey} {
		t.Run(string(kind), func(t *testing.T) {
			c, srv := newClient(t, kind)
			s := openStore(t, c, Namespace{Prefix: "user:", ZipAs: "u:", Buckets: Dense(100),
				Codec: zipline.Compression{Backend: codec.Zstd}})
			h := openStore(t, c, Namespace{Prefix: "s:", ZipAs: "x:", Buckets: HashedFor(5000)})
			var pairs, hpairs []zipline.KeyValue
			for i := range 5000 {
				v := []byte(strconv.Itoa(i * 7919))
				if i%97 == 0 {
					v = bigValue
				}
				pairs = append(pairs, zipline.KeyValue{Key: "user:" + strconv.Itoa(i), Value: v})
				hpairs = append(hpairs, zipline.KeyValue{Key: "s:session-" + strconv.Itoa(i), Value: []byte("short")})
			}
			for i := 0; i < len(pairs); i += 500 {
				if err := s.MSet(ctx, pairs[i:i+500]...); err != nil {
					t.Fatal(err)
				}
				if err := h.MSet(ctx, hpairs[i:i+500]...); err != nil {
					t.Fatal(err)
				}
			}
			if n := s.Stats().OversizeValues; n != 52 {
				t.Fatalf("oversize values %d, want 52", n)
			}
			buckets, oversizeKeys := 0, 0
			for _, pattern := range []string{"u:#*", "x:#*"} {
				v, err := srv.Do(ctx, "KEYS", pattern)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range v.Elems() {
					// The namespace's reserved names hold its buckets and the
					// keys of its oversize values (u:#{u:#5}82).
					typ, err := srv.Do(ctx, "TYPE", string(e.Bytes()))
					if err != nil {
						t.Fatal(err)
					}
					if string(typ.Bytes()) == "string" {
						oversizeKeys++
						continue
					}
					enc, err := srv.Do(ctx, "OBJECT", "ENCODING", string(e.Bytes()))
					if err != nil {
						t.Fatal(err)
					}
					if got := string(enc.Bytes()); got != "listpack" && got != "ziplist" {
						t.Fatalf("bucket %s is %s", e.Bytes(), got)
					}
					buckets++
				}
			}
			if buckets < 50+5000/256 {
				t.Fatalf("only %d buckets", buckets)
			}
			if oversizeKeys != 52 {
				t.Fatalf("%d keys hold oversize values, want 52", oversizeKeys)
			}
			for _, p := range pairs[:300] {
				if v, err := s.Get(ctx, p.Key); err != nil || !bytes.Equal(v, p.Value) {
					t.Fatalf("%s: %q %v", p.Key, v, err)
				}
			}
		})
	}
}

func TestOverflowCheck(t *testing.T) {
	c, _ := newClient(t, testkit.Redis)
	ctx := context.Background()
	if _, err := New(ctx, c, Namespace{Prefix: "a:", Buckets: Dense(1000), Overflow: OverflowRefuse}); err == nil ||
		!strings.Contains(err.Error(), "hash-max-listpack-entries 512") {
		t.Fatalf("Dense(1000) with OverflowRefuse: %v", err)
	}
	if _, err := New(ctx, c, Namespace{Prefix: "a:", Buckets: Dense(1000)}); err != nil {
		t.Fatalf("Dense(1000) with the default (warn): %v", err)
	}
	if _, err := New(ctx, c, Namespace{}); err == nil {
		t.Fatal("empty Prefix accepted")
	}
}

func TestTTL(t *testing.T) {
	ctx := context.Background()
	t.Run("redis 7.0 has no field expiry", func(t *testing.T) {
		c, _ := newClient(t, testkit.Redis)
		s := openStore(t, c, Namespace{Prefix: "k:", ZipAs: "z:", Buckets: Dense(100)})
		if err := s.SetEX(ctx, "k:1", []byte("v"), time.Hour); !errors.Is(err, ErrNoFieldTTL) {
			t.Fatalf("SetEX: %v, want ErrNoFieldTTL", err)
		}
		if _, err := s.Get(ctx, "k:1"); !errors.Is(err, zipline.Nil) {
			t.Fatalf("a refused SetEX wrote: %v", err)
		}
		s.Set(ctx, "k:1", []byte("v"))
		if _, err := s.Expire(ctx, "k:1", time.Hour); !errors.Is(err, ErrNoFieldTTL) {
			t.Fatalf("Expire: %v", err)
		}
		// Plain namespaces have TTLs everywhere.
		p := openStore(t, c, Namespace{Prefix: "p:", ZipAs: "q:"})
		if err := p.SetEX(ctx, "p:1", []byte("v"), time.Hour); err != nil {
			t.Fatal(err)
		}
		if d, err := p.TTL(ctx, "p:1"); err != nil || d < 59*time.Minute {
			t.Fatalf("plain TTL %v %v", d, err)
		}
		// A namespace-wide bucket TTL is the documented fallback.
		bt := openStore(t, c, Namespace{Prefix: "b:", ZipAs: "bt:", Buckets: Dense(100), BucketTTL: time.Hour})
		if err := bt.SetEX(ctx, "b:1", []byte("v"), time.Minute); err != nil {
			t.Fatal(err)
		}
		if d, err := bt.TTL(ctx, "b:1"); err != nil || d < 59*time.Minute {
			t.Fatalf("bucket TTL %v %v", d, err)
		}
	})
	t.Run("valkey 9.1 expires fields", func(t *testing.T) {
		c, _ := newClient(t, testkit.Valkey)
		s := openStore(t, c, Namespace{Prefix: "k:", ZipAs: "z:", Buckets: Dense(100)})
		if !s.fieldTTL.hsetex || !s.fieldTTL.hpexpire {
			t.Fatalf("field TTL support not detected: %+v", s.fieldTTL)
		}
		if err := s.SetEX(ctx, "k:1", []byte("v"), time.Hour); err != nil {
			t.Fatal(err)
		}
		if d, err := s.TTL(ctx, "k:1"); err != nil || d < 59*time.Minute || d > time.Hour {
			t.Fatalf("TTL %v %v", d, err)
		}
		s.Set(ctx, "k:2", []byte("v"))
		if d, err := s.TTL(ctx, "k:2"); err != nil || d != zipline.NoExpiry {
			t.Fatalf("no TTL: %v %v", d, err)
		}
		// Set replaces the TTL too, as SET does.
		if err := s.SetEX(ctx, "k:4", []byte("v"), time.Hour); err != nil {
			t.Fatal(err)
		}
		s.Set(ctx, "k:4", []byte("w"))
		if d, err := s.TTL(ctx, "k:4"); err != nil || d != zipline.NoExpiry {
			t.Fatalf("Set kept the old TTL: %v %v", d, err)
		}
		if ok, err := s.Expire(ctx, "k:2", 50*time.Millisecond); err != nil || !ok {
			t.Fatalf("Expire: %v %v", ok, err)
		}
		if d, err := s.TTL(ctx, "k:404"); err != nil || d != zipline.NoKey {
			t.Fatalf("TTL of a missing key: %v, %v; want NoKey", d, err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for {
			if _, err := s.Get(ctx, "k:2"); errors.Is(err, zipline.Nil) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("field never expired")
			}
			time.Sleep(10 * time.Millisecond) // waiting for the server's expiry, bounded
		}
		if v, _ := s.Get(ctx, "k:1"); string(v) != "v" {
			t.Fatal("the other field expired too")
		}
		// An oversize value's TTL applies to its plain key.
		if err := s.SetEX(ctx, "k:3", bigValue, time.Hour); err != nil {
			t.Fatal(err)
		}
		if d, err := s.TTL(ctx, "k:3"); err != nil || d < 59*time.Minute {
			t.Fatalf("oversize TTL %v %v", d, err)
		}
	})
}

func TestQueuedInBatchAndTx(t *testing.T) {
	c, _ := newClient(t, testkit.Redis)
	queuedOperations(t, c, c.Batch(), c.Tx())
}

// queuedOperations runs a Store's queued operations in each of batches.
func queuedOperations(t *testing.T, c *zipline.Client, batches ...*zipline.Batch) {
	ctx := context.Background()
	s := openStore(t, c, Namespace{Prefix: "user:", ZipAs: "u:", Buckets: Dense(100),
		Codec: zipline.Compression{Backend: codec.LZ4}})
	for _, b := range batches {
		q := s.In(b)
		set := q.Set("user:1", []byte("one"))
		mset := q.MSet(zipline.KeyValue{Key: "user:2", Value: bigValue}, zipline.KeyValue{Key: "user:3", Value: []byte("three")})
		plainSet := b.Set("unrelated", []byte("x")) // mixed with the namespace's commands
		get := q.Get("user:2")
		mget := q.MGet("user:1", "user:404", "user:3")
		incr := q.IncrBy("user:9", 5)
		ex := q.Exists("user:1", "user:404")
		if err := b.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if set.Err() != nil || mset.Err() != nil || plainSet.Err() != nil {
			t.Fatal(set.Err(), mset.Err(), plainSet.Err())
		}
		if v := get.Val(); !bytes.Equal(v, bigValue) {
			t.Fatalf("queued Get of an oversize value: %d bytes", len(v))
		}
		if v := mget.Val(); string(v[0]) != "one" || v[1] != nil || string(v[2]) != "three" {
			t.Fatalf("queued MGet = %q", v)
		}
		if incr.Val() < 5 || ex.Val() != 1 {
			t.Fatalf("incr %d exists %d", incr.Val(), ex.Val())
		}
		del := s.In(b).Del("user:1", "user:2", "user:404")
		if err := b.Exec(ctx); err != nil || del.Val() != 2 {
			t.Fatalf("queued Del = %d, %v", del.Val(), err)
		}
	}
}

func TestPlainKeyCostMatchesMeasurements(t *testing.T) {
	redis7 := CostsFor(Server{Kind: "redis", Version: "7.0.15", Allocator: "jemalloc-5.3.0"})
	for _, tc := range []struct {
		key  int
		val  []byte
		want float64
	}{
		{10, []byte("123456789"), 74.5},            // notes a1, Debian Redis 7.0
		{10, []byte("abcdefghijkl"), 90.5},         // a5
		{10, bytes.Repeat([]byte("x"), 64), 154.5}, // g2
	} {
		if got := redis7.Key(tc.key, tc.val); got != tc.want {
			t.Errorf("Key(%d, %d bytes) = %v, want %v", tc.key, len(tc.val), got, tc.want)
		}
	}
}

func TestCountAndEstimate(t *testing.T) {
	c, _ := newClient(t, testkit.Redis)
	ctx := context.Background()
	old := openStore(t, c, plainUsers)
	for i := range 1000 {
		old.Set(ctx, "user:"+strconv.Itoa(i), []byte(strconv.Itoa(100000000+i*7919)))
	}
	s := openStore(t, c, bucketUsers)
	if n, err := s.Source().Count(ctx); err != nil || n != 1000 {
		t.Fatalf("Count = %d, %v", n, err)
	}
	e, err := s.Estimate(ctx, 200)
	if err != nil {
		t.Fatal(err)
	}
	// Integers: ~75 bytes as plain keys, ~10 in 100-field buckets.
	if e.Keys != 1000 || e.Sampled != 200 || e.OldPerKey < 60 || e.NewPerKey > 20 || e.SavedFactor < 4 {
		t.Fatalf("estimate %+v", e)
	}
	s.Migrate(ctx, MigrateOptions{})
	if n, _ := s.Count(ctx); n != 1000 {
		t.Fatalf("new layout counts %d keys after the move", n)
	}
}

// A namespace with a trained dictionary stores small records much smaller.
func TestDictionaryNamespace(t *testing.T) {
	c, _ := newClient(t, testkit.Redis)
	ctx := context.Background()
	var samples [][]byte
	record := func(i int) []byte {
		return []byte(fmt.Sprintf(`{"id":%d,"name":"user%d","email":"user%d@example.com","active":%v,"roles":["reader"]}`,
			i, i, i, i%2 == 0))
	}
	for i := range 500 {
		samples = append(samples, record(i))
	}
	dict, err := codec.TrainDictionary(samples, 4096)
	if err != nil {
		t.Fatal(err)
	}
	s := openStore(t, c, Namespace{Prefix: "r:", ZipAs: "d:", Buckets: Dense(100),
		Codec: zipline.Compression{Backend: codec.ZstdDict, Dictionary: dict}})
	for i := 1000; i < 1100; i++ {
		if err := s.Set(ctx, "r:"+strconv.Itoa(i), record(i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := 1000; i < 1100; i++ {
		if v, err := s.Get(ctx, "r:"+strconv.Itoa(i)); err != nil || !bytes.Equal(v, record(i)) {
			t.Fatalf("r:%d: %q %v", i, v, err)
		}
	}
	if n := s.Stats().OversizeValues; n != 0 {
		t.Fatalf("%d records did not fit a bucket even with the dictionary", n)
	}
}

// MGet and MSet send a command per bucket (and one MGET/MSET for plain
// keys), not a command per key.
func TestMultiKeyOperationsGroupByBucket(t *testing.T) {
	c, srv := newClient(t, testkit.Redis)
	ctx := context.Background()
	s := openStore(t, c, Namespace{Prefix: "user:", ZipAs: "u:", Buckets: Dense(100)})
	var pairs []zipline.KeyValue
	var keys []string
	for i := range 300 { // three buckets
		k := "user:" + strconv.Itoa(i)
		pairs = append(pairs, zipline.KeyValue{Key: k, Value: []byte(strconv.Itoa(i))})
		keys = append(keys, k)
	}
	pairs = append(pairs, zipline.KeyValue{Key: "user:alice", Value: []byte("a")}) // a plain key
	keys = append(keys, "user:alice")
	calls := func() map[string]int {
		info, err := srv.Info(ctx, "commandstats")
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int{}
		for k, v := range info {
			if name, ok := strings.CutPrefix(k, "cmdstat_"); ok {
				n, _ := strconv.Atoi(strings.TrimPrefix(strings.Split(v, ",")[0], "calls="))
				out[name] = n
			}
		}
		return out
	}
	srv.Do(ctx, "CONFIG", "RESETSTAT")
	if err := s.MSet(ctx, pairs...); err != nil {
		t.Fatal(err)
	}
	if got := calls(); got["hset"] != 3 || got["mset"] != 1 || got["set"] != 0 {
		t.Fatalf("MSet of 301 keys sent %v, want 3 HSET and 1 MSET", got)
	}
	srv.Do(ctx, "CONFIG", "RESETSTAT")
	vs, err := s.MGet(ctx, keys...)
	if err != nil {
		t.Fatal(err)
	}
	if got := calls(); got["hmget"] != 3 || got["mget"] != 1 || got["hget"] != 0 || got["get"] != 0 {
		t.Fatalf("MGet of 301 keys sent %v, want 3 HMGET and 1 MGET", got)
	}
	if string(vs[123]) != "123" || string(vs[300]) != "a" {
		t.Fatalf("MGet values %q %q", vs[123], vs[300])
	}
}

// An empty value reads as an empty value, not as missing, in every layout:
// nil is MGet's "missing".
func TestEmptyValueIsNotMissing(t *testing.T) {
	c, _ := newClient(t, testkit.Redis)
	ctx := context.Background()
	for name, ns := range namespaces() {
		t.Run(name, func(t *testing.T) {
			s := openStore(t, c, ns)
			if err := s.Set(ctx, "user:1", []byte("v")); err != nil {
				t.Fatal(err)
			}
			if err := s.Set(ctx, "user:2", []byte{}); err != nil {
				t.Fatal(err)
			}
			vs, err := s.MGet(ctx, "user:1", "user:2", "user:3")
			if err != nil {
				t.Fatal(err)
			}
			if string(vs[0]) != "v" || vs[1] == nil || len(vs[1]) != 0 || vs[2] != nil {
				t.Fatalf("MGet = %s (empty value nil: %v), want [v, empty, nil]", short(vs), vs[1] == nil)
			}
			v, err := s.Get(ctx, "user:2")
			if err != nil || v == nil || len(v) != 0 {
				t.Fatalf("Get = %q (nil %v), %v; want an empty value", v, v == nil, err)
			}
			b := c.Batch()
			q := s.In(b)
			r := q.MGet("user:2", "user:3")
			if err := b.Exec(ctx); err != nil {
				t.Fatal(err)
			}
			if vs, err := r.Result(); err != nil || vs[0] == nil || vs[1] != nil {
				t.Fatalf("Queued MGet = %s, %v (empty value nil: %v)", short(vs), err, vs[0] == nil)
			}
			if _, err := s.Del(ctx, "user:1", "user:2"); err != nil {
				t.Fatal(err)
			}
		})
	}
}
