package layout

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/codec"
	"github.com/ziplinekv/zipline/internal/testkit"
)

var zstdUsers = Namespace{Prefix: "user:", ZipAs: "u:", Buckets: Dense(100), Codec: zipline.Compression{Backend: codec.Zstd}}

// bigValue2 is another oversize value, to tell two of them apart.
var bigValue2 = append(randomBytes(150), "second"...)

// waitGone polls until Get reports key missing and, for a bucketed key,
// its oversize value's key and its legacy plain key are gone too: a TTL of
// a few milliseconds has passed on the server. The two share a deadline to
// the millisecond (TestOversizeKeyTakesItsMarkersDeadline), but the server
// can report the field expired while the key is still live within that
// millisecond, so an accounting straight after the field is gone could find
// the key unreferenced. EXISTS deletes an expired key, so once it reports
// the legacy key gone, DBSIZE no longer counts it (an expired key the
// server has not reached yet is counted until active expiry runs). Bounded.
func waitGone(t *testing.T, s *Store, key string) {
	t.Helper()
	ctx := context.Background()
	l, err := s.locate(key)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := s.Get(ctx, key)
		if err != nil && !errors.Is(err, zipline.Nil) {
			t.Fatal(err)
		}
		gone := err != nil
		if gone && l.bucket != "" {
			for _, k := range []string{s.oversizeKey(l), l.plain} { // apart: two slots on a cluster
				n, err := s.c.Exists(ctx, k)
				if err != nil {
					t.Fatal(err)
				}
				gone = gone && n == 0
			}
		}
		if gone {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never expired", key)
		}
		time.Sleep(2 * time.Millisecond) // waiting for the server's expiry, bounded
	}
}

// wantAccount fails unless s's layout holds exactly n oversize values, each
// a marker with its key, and no other oversize key.
func wantAccount(t *testing.T, srv *testkit.Server, s *Store, n int) {
	t.Helper()
	a := account(t, serverBed{srv}, s)
	if a.Markers != n || a.OversizeKeys != n || a.Orphans != 0 || a.Dangling != 0 {
		t.Fatalf("stored state %+v, want %d oversize values and nothing else", a, n)
	}
}

// Defect 13: an oversize value's key and its marker expire together, so an
// expired value is gone for Exists and SetNX too, and SetNX stores a value
// exactly when it reports true.
func TestOversizeValueExpiresWithItsMarker(t *testing.T) {
	ctx := context.Background()
	// shortTTL is how long the values that expireAndReuse reads back once
	// live: long enough for that read on a loaded machine under -race (at
	// 5 ms, a run on a busy CI machine read nil), short for the waits.
	const shortTTL = 200 * time.Millisecond
	expireAndReuse := func(t *testing.T, srv *testkit.Server, s *Store, setex func(key string, v []byte) error) {
		t.Helper()
		if err := setex("user:1", bigValue); err != nil {
			t.Fatal(err)
		}
		if v, err := s.Get(ctx, "user:1"); err != nil || !bytes.Equal(v, bigValue) {
			t.Fatalf("before expiry: %d bytes, %v", len(v), err)
		}
		waitGone(t, s, "user:1")
		if n, err := s.Exists(ctx, "user:1"); err != nil || n != 0 {
			t.Fatalf("Exists after expiry = %d, %v", n, err)
		}
		wantAccount(t, srv, s, 0)
		if ok, err := s.SetNX(ctx, "user:1", []byte("small")); err != nil || !ok {
			t.Fatalf("SetNX of a small value after expiry = %v, %v", ok, err)
		}
		if v, err := s.Get(ctx, "user:1"); err != nil || string(v) != "small" {
			t.Fatalf("after SetNX: %q, %v", v, err)
		}
		// SetNX of an oversize value: stored when, and only when, it says so.
		if err := setex("user:2", bigValue); err != nil {
			t.Fatal(err)
		}
		waitGone(t, s, "user:2")
		if ok, err := s.SetNX(ctx, "user:2", bigValue2); err != nil || !ok {
			t.Fatalf("SetNX of an oversize value after expiry = %v, %v", ok, err)
		}
		if ok, err := s.SetNX(ctx, "user:2", bigValue); err != nil || ok {
			t.Fatalf("SetNX over an existing value = %v, %v", ok, err)
		}
		if v, err := s.Get(ctx, "user:2"); err != nil || !bytes.Equal(v, bigValue2) {
			t.Fatalf("after SetNX: %d bytes, %v; want the first SetNX's value", len(v), err)
		}
		wantAccount(t, srv, s, 1)
	}
	t.Run("valkey field TTL", func(t *testing.T) {
		c, srv := newClient(t, testkit.Valkey)
		s := openStore(t, c, zstdUsers)
		expireAndReuse(t, srv, s, func(key string, v []byte) error { return s.SetEX(ctx, key, v, shortTTL) })
		// Expire ties the value's key to its field too.
		if err := s.Set(ctx, "user:3", bigValue); err != nil {
			t.Fatal(err)
		}
		if ok, err := s.Expire(ctx, "user:3", 5*time.Millisecond); err != nil || !ok {
			t.Fatalf("Expire = %v, %v", ok, err)
		}
		waitGone(t, s, "user:3")
		if n, _ := s.Exists(ctx, "user:3"); n != 0 {
			t.Fatal("an expired oversize value exists")
		}
		wantAccount(t, srv, s, 1) // user:2
		// An oversize value's expiry is bounded by its bucket key's own.
		if err := s.Set(ctx, "user:105", []byte("small")); err != nil {
			t.Fatal(err)
		}
		// The bucket's TTL is 2 s, not 100 ms: the SetEX must land while the
		// bucket still lives (a bucket expired under a loaded scheduler is
		// made again without a TTL), and 2 s is still far below the hour.
		l, _ := s.locate("user:105")
		if _, err := srv.Do(ctx, "PEXPIRE", l.bucket, 2000); err != nil {
			t.Fatal(err)
		}
		if err := s.SetEX(ctx, "user:104", bigValue, time.Hour); err != nil {
			t.Fatal(err)
		}
		if d, err := s.TTL(ctx, "user:104"); err != nil || d > 2*time.Second {
			t.Fatalf("TTL %v %v, want the bucket's", d, err)
		}
		waitGone(t, s, "user:104")
		wantAccount(t, srv, s, 1) // user:2
	})
	t.Run("redis 7.0 bucket TTL", func(t *testing.T) {
		c, srv := newClient(t, testkit.Redis)
		ns := zstdUsers
		ns.BucketTTL = shortTTL
		s := openStore(t, c, ns)
		expireAndReuse(t, srv, s, func(key string, v []byte) error { return s.SetEX(ctx, key, v, time.Hour) })
		// Oversize values written before their bucket got its TTL get it
		// when it does.
		// A second, not 20 ms: the deadlines below are read while both keys
		// live, not after a loaded scheduler let the bucket expire first.
		ns.BucketTTL = time.Second
		s = openStore(t, c, ns)
		if err := s.MSet(ctx, zipline.KeyValue{Key: "user:201", Value: bigValue}, zipline.KeyValue{Key: "user:202", Value: bigValue2}); err != nil {
			t.Fatal(err)
		}
		if err := s.SetEX(ctx, "user:203", []byte("small"), time.Hour); err != nil {
			t.Fatal(err)
		}
		// Each value's key expires in the very millisecond its bucket does:
		// never after (an orphan, however briefly), never before. Both
		// deadlines are read in one script, so that neither key can expire
		// between the two reads.
		const bothDeadlines = "return {redis.call('PEXPIRETIME', KEYS[1]), redis.call('PEXPIRETIME', KEYS[2])}"
		for _, key := range []string{"user:201", "user:202"} {
			l, _ := s.locate(key)
			v, err := srv.Do(ctx, "EVAL", bothDeadlines, 2, l.bucket, s.oversizeKey(l))
			if err != nil || len(v.Elems()) != 2 {
				t.Fatalf("%s: PEXPIRETIME of its bucket and value's key: %v, %v", key, v, err)
			}
			bucket, value := v.Elems()[0], v.Elems()[1]
			if bucket.Int() != value.Int() {
				t.Fatalf("%s: its value's key expires at %d, its bucket at %d", key, value.Int(), bucket.Int())
			}
		}
		waitGone(t, s, "user:201")
		waitGone(t, s, "user:202")
		wantAccount(t, srv, s, 1) // user:2
	})
	t.Run("redis 7.0 without field expiry", func(t *testing.T) {
		c, srv := newClient(t, testkit.Redis)
		s := openStore(t, c, zstdUsers)
		if err := s.SetEX(ctx, "user:1", bigValue, time.Hour); !errors.Is(err, ErrNoFieldTTL) {
			t.Fatalf("SetEX of an oversize value: %v, want ErrNoFieldTTL (its marker could not expire)", err)
		}
		wantAccount(t, srv, s, 0)
		if n, _ := c.DBSize(ctx); n != 0 {
			t.Fatalf("a refused SetEX left %d keys", n)
		}
	})
}

// Defect 14: a write that replaces an oversize value removes its key in the
// same script, whichever way it is written; so no key is left behind, and
// none can come back.
func TestOverwriteRemovesOversizeValue(t *testing.T) {
	ctx := context.Background()
	for name, ns := range map[string]Namespace{
		"dense zipped zstd": zstdUsers,
		"dense":             {Prefix: "user:", Buckets: Dense(100)},
		"hashed lz4":        {Prefix: "user:", ZipAs: "h:", Buckets: Hashed(4), Codec: zipline.Compression{Backend: codec.LZ4}},
	} {
		t.Run(name, func(t *testing.T) {
			c, srv := newClient(t, testkit.Redis)
			s := openStore(t, c, ns)
			const k = "user:7"
			l, _ := s.locate(k)
			// The reported repro: Set big, Set small, the bucket expires,
			// SetNX big: the first value must not come back.
			if err := s.Set(ctx, k, bigValue); err != nil {
				t.Fatal(err)
			}
			wantAccount(t, srv, s, 1)
			if err := s.Set(ctx, k, []byte("small")); err != nil {
				t.Fatal(err)
			}
			wantAccount(t, srv, s, 0)
			if _, err := srv.Do(ctx, "PEXPIRE", l.bucket, 1); err != nil {
				t.Fatal(err)
			}
			waitGone(t, s, k)
			if ok, err := s.SetNX(ctx, k, bigValue2); err != nil || !ok {
				t.Fatalf("SetNX after the bucket expired = %v, %v", ok, err)
			}
			if v, err := s.Get(ctx, k); err != nil || !bytes.Equal(v, bigValue2) {
				t.Fatalf("Get after SetNX: %d bytes, %v: an old value came back", len(v), err)
			}
			wantAccount(t, srv, s, 1)

			// Every other way of replacing it.
			small := []byte("tiny")
			for _, w := range []struct {
				name  string
				write func() error
			}{
				{"Set big", func() error { return s.Set(ctx, k, bigValue2) }},
				{"MSet", func() error {
					return s.MSet(ctx, zipline.KeyValue{Key: k, Value: small}, zipline.KeyValue{Key: "user:8", Value: small})
				}},
				{"MSet of the key twice", func() error {
					return s.MSet(ctx, zipline.KeyValue{Key: k, Value: bigValue2}, zipline.KeyValue{Key: k, Value: small})
				}},
				{"GetSet", func() error {
					old, err := s.GetSet(ctx, k, small)
					if err == nil && !bytes.Equal(old, bigValue) {
						t.Errorf("GetSet returned %d bytes", len(old))
					}
					return err
				}},
				{"queued Set in a Tx", func() error {
					tx := c.Tx()
					r := s.In(tx).Set(k, small)
					if err := tx.Exec(ctx); err != nil {
						return err
					}
					return r.Err()
				}},
				{"queued MSet in a batch", func() error {
					b := c.Batch()
					r := s.In(b).MSet(zipline.KeyValue{Key: k, Value: small})
					if err := b.Exec(ctx); err != nil {
						return err
					}
					return r.Err()
				}},
			} {
				if err := s.Set(ctx, k, bigValue); err != nil {
					t.Fatal(err)
				}
				if err := w.write(); err != nil {
					t.Fatalf("%s: %v", w.name, err)
				}
				v, err := s.Get(ctx, k)
				want := small
				if w.name == "Set big" {
					want = bigValue2
				}
				if err != nil || !bytes.Equal(v, want) {
					t.Fatalf("%s: Get = %d bytes, %v", w.name, len(v), err)
				}
				n := 0
				if w.name == "Set big" {
					n = 1
				}
				wantAccount(t, srv, s, n)
			}
			if n, err := s.Del(ctx, k, "user:8"); err != nil || n != 2 {
				t.Fatalf("Del = %d, %v", n, err)
			}
			if err := s.Set(ctx, k, bigValue); err != nil {
				t.Fatal(err)
			}
			q := c.Batch()
			del := s.In(q).Del(k)
			if err := q.Exec(ctx); err != nil || del.Val() != 1 {
				t.Fatalf("queued Del = %d, %v", del.Val(), err)
			}
			wantAccount(t, srv, s, 0)
			if n, _ := c.DBSize(ctx); n != 0 {
				t.Fatalf("%d keys left after deleting everything", n)
			}
		})
	}
	// With field expiry, a small SetEX replaces an oversize value too.
	t.Run("valkey SetEX", func(t *testing.T) {
		c, srv := newClient(t, testkit.Valkey)
		s := openStore(t, c, zstdUsers)
		if err := s.Set(ctx, "user:7", bigValue); err != nil {
			t.Fatal(err)
		}
		if err := s.SetEX(ctx, "user:7", []byte("small"), time.Hour); err != nil {
			t.Fatal(err)
		}
		wantAccount(t, srv, s, 0)
		if err := s.SetEX(ctx, "user:7", bigValue, time.Hour); err != nil {
			t.Fatal(err)
		}
		if d, err := s.TTL(ctx, "user:7"); err != nil || d < 59*time.Minute {
			t.Fatalf("TTL = %v, %v", d, err)
		}
		if err := s.Set(ctx, "user:7", bigValue2); err != nil {
			t.Fatal(err)
		}
		if d, err := s.TTL(ctx, "user:7"); err != nil || d != zipline.NoExpiry {
			t.Fatalf("Set kept the oversize value's TTL: %v, %v", d, err)
		}
		wantAccount(t, srv, s, 1)
	})
}

// Oversize values written by earlier versions (legacy marker, value under
// the key's plain name) still read, and every write or delete of their key
// removes that plain key. A legacy marker whose key expired alone (defect
// 13 before the fix) is a missing key.
func TestLegacyOversizeValues(t *testing.T) {
	ctx := context.Background()
	c, srv := newClient(t, testkit.Valkey)
	s := openStore(t, c, zstdUsers)
	enc := s.encode(bigValue)
	writeLegacy := func(key string, withValue bool) location {
		t.Helper()
		l, _ := s.locate(key)
		if _, err := srv.Do(ctx, "HSET", l.bucket, l.field, "\x00~"); err != nil {
			t.Fatal(err)
		}
		if withValue {
			if _, err := srv.Do(ctx, "SET", l.plain, enc); err != nil {
				t.Fatal(err)
			}
		}
		return l
	}
	exists := func(name string) bool {
		t.Helper()
		v, err := srv.Do(ctx, "EXISTS", name)
		if err != nil {
			t.Fatal(err)
		}
		return v.Int() == 1
	}
	l := writeLegacy("user:1", true)
	if v, err := s.Get(ctx, "user:1"); err != nil || !bytes.Equal(v, bigValue) {
		t.Fatalf("Get of a legacy value: %d bytes, %v", len(v), err)
	}
	if vs, err := s.MGet(ctx, "user:1", "user:2"); err != nil || !bytes.Equal(vs[0], bigValue) || vs[1] != nil {
		t.Fatalf("MGet: %s, %v", short(vs), err)
	}
	b := c.Batch()
	qg, qm, qe := s.In(b).Get("user:1"), s.In(b).MGet("user:1"), s.In(b).Exists("user:1")
	if err := b.Exec(ctx); err != nil || !bytes.Equal(qg.Val(), bigValue) || !bytes.Equal(qm.Val()[0], bigValue) || qe.Val() != 1 {
		t.Fatalf("queued reads: %d bytes, %s, exists %d, %v", len(qg.Val()), short(qm.Val()), qe.Val(), err)
	}
	if n, err := s.Exists(ctx, "user:1"); err != nil || n != 1 {
		t.Fatalf("Exists = %d, %v", n, err)
	}
	if d, err := s.TTL(ctx, "user:1"); err != nil || d != zipline.NoExpiry {
		t.Fatalf("TTL = %v, %v", d, err)
	}
	wantAccount(t, srv, s, 1)
	// Overwrites and deletes remove the legacy key.
	if err := s.Set(ctx, "user:1", []byte("small")); err != nil {
		t.Fatal(err)
	}
	if exists(l.plain) {
		t.Fatal("a small Set left the legacy key")
	}
	writeLegacy("user:1", true)
	if err := s.Set(ctx, "user:1", bigValue2); err != nil {
		t.Fatal(err)
	}
	if exists(l.plain) || !exists(s.oversizeKey(l)) {
		t.Fatal("an oversize Set did not move the value to its tagged key")
	}
	writeLegacy("user:1", true)
	if n, err := s.Del(ctx, "user:1"); err != nil || n != 1 || exists(l.plain) {
		t.Fatalf("Del = %d, %v; legacy key left: %v", n, err, exists(l.plain))
	}
	// A legacy value with its own TTL keeps it, and Expire reaches it.
	writeLegacy("user:3", true)
	if ok, err := s.Expire(ctx, "user:3", 5*time.Millisecond); err != nil || !ok {
		t.Fatalf("Expire = %v, %v", ok, err)
	}
	waitGone(t, s, "user:3")
	// A dangling legacy marker is a missing key.
	writeLegacy("user:4", false)
	if _, err := s.Get(ctx, "user:4"); !errors.Is(err, zipline.Nil) {
		t.Fatalf("Get of a dangling marker: %v", err)
	}
	if n, _ := s.Exists(ctx, "user:4"); n != 0 {
		t.Fatal("a dangling legacy marker exists")
	}
	if n, err := s.Del(ctx, "user:4"); err != nil || n != 0 {
		t.Fatalf("Del of a dangling marker = %d, %v", n, err)
	}
	writeLegacy("user:4", false)
	if ok, err := s.SetNX(ctx, "user:4", []byte("x")); err != nil || !ok {
		t.Fatalf("SetNX over a dangling marker = %v, %v", ok, err)
	}
	wantAccount(t, srv, s, 0)

	// A migration from a layout that holds legacy values moves them and
	// removes their keys.
	writeLegacy("user:5", true)
	next := openStore(t, c, Namespace{Prefix: "user:", ZipAs: "n:", Buckets: Dense(50), MigrateFrom: &zstdUsers})
	if v, err := next.Get(ctx, "user:5"); err != nil || !bytes.Equal(v, bigValue) {
		t.Fatalf("migrating read of a legacy value: %d bytes, %v", len(v), err)
	}
	if p, err := next.Migrate(ctx, MigrateOptions{}); err != nil || p.Moved != 2 { // user:4 and user:5
		t.Fatalf("Migrate = %+v, %v", p, err)
	}
	if v, err := next.Get(ctx, "user:5"); err != nil || !bytes.Equal(v, bigValue) {
		t.Fatalf("moved legacy value: %d bytes, %v", len(v), err)
	}
	wantAccount(t, srv, s, 0)
	wantAccount(t, srv, next, 1)
	// Dense(50) puts user:4 and user:5 in one bucket: n:'s bucket and
	// user:5's oversize key are the live keys. u:'s bucket lives on while
	// user:3's expired field does, until the server's active expiry reaches
	// it, so DBSIZE is polled, bounded, rather than read once at a moment the
	// server's expiry cycle decides.
	deadline := time.Now().Add(5 * time.Second)
	for {
		n, err := c.DBSize(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n == 2 {
			break
		}
		if n < 2 || time.Now().After(deadline) {
			keys, _ := srv.Do(ctx, "KEYS", "*")
			t.Fatalf("%d keys after the move, want 2: %v", n, keys)
		}
		time.Sleep(10 * time.Millisecond) // waiting for the server's active expiry, bounded
	}
}

// Defect 15: TTL returns a broken connection's error, never Nil.
func TestTTLReportsConnectionErrors(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		kind    testkit.Kind
		ns      Namespace
		trigger string // a stored name the TTL's first command carries
	}{
		{"redis bucket", testkit.Redis, zstdUsers, "u:#0"},
		{"valkey bucket", testkit.Valkey, zstdUsers, "u:#0"},
		{"redis plain", testkit.Redis, Namespace{Prefix: "user:", ZipAs: "u:"}, "u:5"},
		{"redis migrating", testkit.Redis, bucketUsers, "user:5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _, cut := newCutClient(t, tc.kind)
			s := openStore(t, c, tc.ns)
			set := func() error { return s.Set(ctx, "user:5", []byte("v")) }
			if tc.ns.MigrateFrom != nil { // the key is still in the old layout
				set = func() error { return c.Set(ctx, "user:5", []byte("v")) }
			}
			if err := set(); err != nil {
				t.Fatal(err)
			}
			cut.arm(tc.trigger)
			d, err := s.TTL(ctx, "user:5")
			if cut.fired() != 1 {
				t.Fatalf("the connection was not cut (TTL = %v, %v)", d, err)
			}
			if !errors.Is(err, zipline.ErrConnLost) || errors.Is(err, zipline.Nil) {
				t.Fatalf("TTL over a lost connection = %v, %v; want ErrConnLost and not Nil", d, err)
			}
			// Once reconnected, the same call answers.
			if d, err := s.TTL(ctx, "user:5"); err != nil || d != zipline.NoExpiry {
				t.Fatalf("TTL after reconnecting = %v, %v", d, err)
			}
			if d, err := s.TTL(ctx, "user:6"); err != nil || d != zipline.NoKey {
				t.Fatalf("TTL of a missing key: %v, %v; want NoKey", d, err)
			}
		})
	}
}

// An oversize value's key hashes to its bucket's slot, so the scripts that
// write both run on a cluster; checked with CLUSTER KEYSLOT on a cluster
// node, where New turns legacy names off.
func TestOversizeKeySharesBucketSlot(t *testing.T) {
	ctx := context.Background()
	srv := testkit.NewServer(t, testkit.Config{Kind: testkit.Valkey, Args: []string{"--cluster-enabled", "yes"}})
	if _, err := srv.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", 0, 16383); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		info, err := srv.Do(ctx, "CLUSTER", "INFO")
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(info.Bytes()), "cluster_state:ok") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cluster node never became ready: %s", info.Bytes())
		}
		time.Sleep(10 * time.Millisecond) // polling the server's state, bounded
	}
	c, err := zipline.New(zipline.Options{Addr: srv.Addr, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	slot := func(name string) int64 {
		t.Helper()
		v, err := srv.Do(ctx, "CLUSTER", "KEYSLOT", name)
		if err != nil {
			t.Fatal(err)
		}
		return v.Int()
	}
	for _, ns := range []Namespace{
		zstdUsers,
		{Prefix: "user:", Buckets: Dense(100)},
		{Prefix: "s:", ZipAs: "{s}:", Buckets: Hashed(64)},
		{Prefix: "session:", ZipAs: "se:", Buckets: HashedFor(100000)},
	} {
		s := openStore(t, c, ns)
		if s.legacy || !s.cluster {
			t.Fatalf("%s: on a cluster node: legacy names %v, cluster %v", ns.Prefix, s.legacy, s.cluster)
		}
		for i := range 200 {
			key := ns.Prefix + strconv.Itoa(i*7919)
			if i%2 == 1 {
				key = ns.Prefix + "x" + strconv.Itoa(i)
			}
			l, err := s.locate(key)
			if err != nil || l.bucket == "" {
				continue
			}
			if a, b := slot(l.bucket), slot(s.oversizeKey(l)); a != b {
				t.Fatalf("%s: bucket %s in slot %d, its oversize key %s in slot %d", key, l.bucket, a, s.oversizeKey(l), b)
			}
		}
		// Every operation on one key runs on the cluster node.
		key := ns.Prefix + "12345"
		steps := []func() error{
			func() error { return s.Set(ctx, key, bigValue) },
			func() error { _, err := s.Get(ctx, key); return err },
			func() error { return s.Set(ctx, key, []byte("small")) },
			func() error { return s.SetEX(ctx, key, bigValue, time.Hour) },
			func() error { _, err := s.TTL(ctx, key); return err },
			func() error { _, err := s.Expire(ctx, key, time.Hour); return err },
			func() error { _, err := s.GetSet(ctx, key, bigValue2); return err },
			func() error { _, err := s.Exists(ctx, key); return err },
			func() error { _, err := s.Del(ctx, key); return err },
			func() error { _, err := s.SetNX(ctx, key, bigValue); return err },
			func() error { _, err := s.MGet(ctx, key); return err },
		}
		for i, step := range steps {
			if err := step(); err != nil {
				t.Fatalf("%s: step %d on a cluster node: %v", ns.Prefix, i, err)
			}
		}
		if v, err := s.Get(ctx, key); err != nil || !bytes.Equal(v, bigValue) {
			t.Fatalf("%s: %d bytes, %v", ns.Prefix, len(v), err)
		}
		// With legacy names on, a write declares a key of another slot
		// (unless the prefix has a hash tag of its own), which the client
		// refuses on a cluster: the reason New turns them off there.
		if strings.Contains(ns.storedPrefix(), "{") {
			continue
		}
		s.legacy = true
		var ce *zipline.CrossSlotError
		if err := s.Set(ctx, key, []byte("small")); !errors.As(err, &ce) {
			t.Fatalf("%s: a write with legacy names on a cluster: %v", ns.Prefix, err)
		}
	}
}

// An oversize value's key takes its marker's deadline, to the millisecond,
// whether the TTL comes with the value (SetEX) or later (Expire): a key
// with a later deadline would outlive the marker that accounts for it, and
// one with an earlier deadline would leave the marker dangling.
func TestOversizeKeyTakesItsMarkersDeadline(t *testing.T) {
	ctx := context.Background()
	c, srv := newClient(t, testkit.Valkey)
	s := openStore(t, c, zstdUsers)
	deadlines := func(key string) (field, value int64) {
		t.Helper()
		l, err := s.locate(key)
		if err != nil {
			t.Fatal(err)
		}
		f, err := srv.Do(ctx, "HPEXPIRETIME", l.bucket, "FIELDS", 1, l.field)
		if err != nil {
			t.Fatal(err)
		}
		v, err := srv.Do(ctx, "PEXPIRETIME", s.oversizeKey(l))
		if err != nil {
			t.Fatal(err)
		}
		return f.Elems()[0].Int(), v.Int()
	}
	for i := range 20 {
		key := "user:" + strconv.Itoa(i)
		if err := s.SetEX(ctx, key, bigValue, time.Hour); err != nil {
			t.Fatal(err)
		}
		if f, v := deadlines(key); f <= 0 || f != v {
			t.Fatalf("SetEX %d: marker expires at %d, value at %d", i, f, v)
		}
		if ok, err := s.Expire(ctx, key, 2*time.Hour); err != nil || !ok {
			t.Fatalf("Expire %d = %v, %v", i, ok, err)
		}
		if f, v := deadlines(key); f <= 0 || f != v {
			t.Fatalf("Expire %d: marker expires at %d, value at %d", i, f, v)
		}
	}
}
