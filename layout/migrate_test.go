package layout

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/codec"
	"github.com/ziplinekv/zipline/internal/testkit"
)

var (
	plainUsers  = Namespace{Prefix: "user:"}
	bucketUsers = Namespace{Prefix: "user:", ZipAs: "u:", Buckets: Dense(100),
		Codec: zipline.Compression{Backend: codec.Zstd}, MigrateFrom: &plainUsers}
)

func TestMigrationReadsWritesAndDeletes(t *testing.T) {
	c, _ := newClient(t, testkit.Redis)
	ctx := context.Background()
	old := openStore(t, c, plainUsers)
	for i := range 10 {
		old.Set(ctx, "user:"+strconv.Itoa(i), []byte("old-"+strconv.Itoa(i)))
	}
	c.Expire(ctx, "user:3", time.Hour)
	s := openStore(t, c, bucketUsers)
	// Reads fall back to the old layout in the same round trip.
	if v, err := s.Get(ctx, "user:1"); err != nil || string(v) != "old-1" {
		t.Fatalf("fallback read: %q %v", v, err)
	}
	vs, err := s.MGet(ctx, "user:1", "user:404", "user:2")
	if err != nil || string(vs[0]) != "old-1" || vs[1] != nil || string(vs[2]) != "old-2" {
		t.Fatalf("fallback MGet %s %v", short(vs), err)
	}
	// A write goes to the new layout and removes the old copy.
	s.Set(ctx, "user:1", []byte("new-1"))
	if n, _ := c.Exists(ctx, "user:1"); n != 0 {
		t.Fatal("old copy survived a write")
	}
	// A delete removes both, so the old value cannot come back.
	if n, err := s.Del(ctx, "user:2", "user:404"); err != nil || n != 1 {
		t.Fatalf("Del %d %v", n, err)
	}
	if _, err := s.Get(ctx, "user:2"); !errors.Is(err, zipline.Nil) {
		t.Fatalf("deleted value came back: %v", err)
	}
	// The background move carries TTLs and leaves nothing behind.
	var progress []Progress
	p, err := s.Migrate(ctx, MigrateOptions{Batch: 3, OnProgress: func(p Progress) { progress = append(progress, p) }})
	if err != nil {
		t.Fatal(err)
	}
	// user:3 has a TTL, which Redis 7.0 cannot put on a bucket field: it is
	// kept in the old layout, where it still reads (see TestMigrationCarriesTTL
	// for Valkey, which moves it).
	if p.Moved != 7 || p.Kept != 1 || p.Cursor != "0" || len(progress) == 0 {
		t.Fatalf("migrate: %+v (%d progress reports)", p, len(progress))
	}
	if keys, _ := c.Do(ctx, "KEYS", "user:*"); keys.String() != `["user:3"]` {
		t.Fatalf("old keys left: %v", keys)
	}
	for i := range 10 {
		v, err := s.Get(ctx, "user:"+strconv.Itoa(i))
		want := "old-" + strconv.Itoa(i)
		switch i {
		case 1:
			want = "new-1"
		case 2:
			if !errors.Is(err, zipline.Nil) {
				t.Fatalf("user:2 resurrected by the move: %q", v)
			}
			continue
		}
		if err != nil || string(v) != want {
			t.Fatalf("user:%d = %q %v after the move", i, v, err)
		}
	}
	// A second pass finds nothing to do.
	if p, err := s.Migrate(ctx, MigrateOptions{}); err != nil || p.Moved+p.Changed != 0 || p.Kept != 1 {
		t.Fatalf("second pass: %+v %v", p, err)
	}
}

// On Valkey 9 a moved key keeps its TTL as a field TTL.
func TestMigrationCarriesTTL(t *testing.T) {
	c, _ := newClient(t, testkit.Valkey)
	ctx := context.Background()
	old := openStore(t, c, plainUsers)
	old.SetEX(ctx, "user:5", []byte("v"), time.Hour)
	old.Set(ctx, "user:6", []byte("w"))
	s := openStore(t, c, bucketUsers)
	if p, err := s.Migrate(ctx, MigrateOptions{}); err != nil || p.Moved != 2 {
		t.Fatalf("migrate %+v %v", p, err)
	}
	if d, err := s.TTL(ctx, "user:5"); err != nil || d < 59*time.Minute {
		t.Fatalf("TTL after move: %v %v", d, err)
	}
	if d, err := s.TTL(ctx, "user:6"); err != nil || d != zipline.NoExpiry {
		t.Fatalf("TTL after move of a persistent key: %v %v", d, err)
	}
	// Redis 7.0 cannot expire fields: a key with a TTL stays in the old
	// layout (and still reads), rather than lose its TTL.
	c7, _ := newClient(t, testkit.Redis)
	old7 := openStore(t, c7, plainUsers)
	old7.SetEX(ctx, "user:5", []byte("v"), time.Hour)
	s7 := openStore(t, c7, bucketUsers)
	if p, err := s7.Migrate(ctx, MigrateOptions{}); err != nil || p.Kept != 1 || p.Moved != 0 {
		t.Fatalf("migrate on 7.0: %+v %v", p, err)
	}
	if v, err := s7.Get(ctx, "user:5"); err != nil || string(v) != "v" {
		t.Fatalf("kept key: %q %v", v, err)
	}
}

// model is the reference: a Go map applied the same operations.
type model map[string][]byte

// Random operations through a migrating namespace and on a plain Go map
// observe the same results, while a migration runs concurrently. No value
// is lost, and none comes back after a delete.
func TestMigrationProperty(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		t.Run("seed"+strconv.FormatUint(seed, 10), func(t *testing.T) { migrationProperty(t, seed) })
	}
}

func migrationProperty(t *testing.T, seed uint64) {
	c, _ := newClient(t, testkit.Redis)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 99))
	const ids = 300
	key := func() string { return "user:" + strconv.Itoa(rng.IntN(ids)) }
	value := func() []byte {
		switch rng.IntN(4) {
		case 0:
			return []byte(strconv.Itoa(rng.IntN(1e9)))
		case 1:
			return randomBytes(80 + rng.IntN(200)) // oversize
		default:
			return bytes.Repeat([]byte("abc"), 1+rng.IntN(60))
		}
	}
	m := model{}
	old := openStore(t, c, plainUsers)
	for range ids / 2 {
		k, v := key(), value()
		if err := old.Set(ctx, k, v); err != nil {
			t.Fatal(err)
		}
		m[k] = v
	}
	s := openStore(t, c, bucketUsers)

	// The migration runs in passes alongside the operations.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var moved, changed atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			p, err := s.Migrate(ctx, MigrateOptions{Batch: 7})
			if err != nil {
				t.Error(err)
				return
			}
			moved.Add(int64(p.Moved))
			changed.Add(int64(p.Changed))
		}
	}()

	check := func(op string, k string, got []byte, err error) {
		t.Helper()
		want, ok := m[k]
		if !ok {
			if !errors.Is(err, zipline.Nil) {
				t.Fatalf("%s %s: got %q, %v; want Nil", op, k, got, err)
			}
			return
		}
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s %s: got %d bytes, %v; want %d bytes", op, k, len(got), err, len(want))
		}
	}
	for i := range 3000 {
		switch op := rng.IntN(10); op {
		case 0, 1:
			k := key()
			v, err := s.Get(ctx, k)
			check("get", k, v, err)
		case 2, 3:
			k, v := key(), value()
			if err := s.Set(ctx, k, v); err != nil {
				t.Fatal(err)
			}
			m[k] = v
		case 4:
			ks := []string{key(), key(), key()}
			n, err := s.Del(ctx, ks...)
			if err != nil {
				t.Fatal(err)
			}
			want := 0
			seen := map[string]bool{}
			for _, k := range ks {
				if _, ok := m[k]; ok && !seen[k] {
					want++
				}
				seen[k] = true
				delete(m, k)
			}
			if int(n) != want {
				t.Fatalf("op %d: Del %v = %d, want %d", i, ks, n, want)
			}
		case 5:
			k := key()
			n, err := s.Incr(ctx, k)
			cur, ok := m[k]
			want, perr := strconv.ParseInt(string(cur), 10, 64)
			if ok && perr != nil {
				if err == nil {
					t.Fatalf("Incr of %q succeeded", cur)
				}
				continue
			}
			want++
			if err != nil || n != want {
				t.Fatalf("op %d: Incr %s = %d, %v; want %d", i, k, n, err, want)
			}
			m[k] = []byte(strconv.FormatInt(want, 10))
		case 6:
			pairs := []zipline.KeyValue{{Key: key(), Value: value()}, {Key: key(), Value: value()}}
			if err := s.MSet(ctx, pairs...); err != nil {
				t.Fatal(err)
			}
			for _, p := range pairs {
				m[p.Key] = p.Value
			}
		case 7:
			ks := []string{key(), key(), key(), key()}
			vs, err := s.MGet(ctx, ks...)
			if err != nil {
				t.Fatal(err)
			}
			for j, k := range ks {
				err := error(nil)
				if vs[j] == nil {
					err = zipline.Nil
				}
				check("mget", k, vs[j], err)
			}
		case 8:
			k := key()
			n, err := s.Exists(ctx, k)
			_, ok := m[k]
			if err != nil || (n == 1) != ok {
				t.Fatalf("op %d: Exists %s = %d, %v; model has it: %v", i, k, n, err, ok)
			}
		case 9:
			k, v := key(), value()
			ok, err := s.SetNX(ctx, k, v)
			_, had := m[k]
			if err != nil || ok == had {
				t.Fatalf("op %d: SetNX %s = %v, %v; model had it: %v", i, k, ok, err, had)
			}
			if ok {
				m[k] = v
			}
		}
	}
	close(stop)
	wg.Wait()
	// Finish the migration, then everything must match the model exactly.
	if _, err := s.Migrate(ctx, MigrateOptions{}); err != nil {
		t.Fatal(err)
	}
	for id := range ids {
		k := "user:" + strconv.Itoa(id)
		v, err := s.Get(ctx, k)
		check("final get", k, v, err)
	}
	listed := map[string]bool{}
	for k, err := range s.Scan(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		listed[k] = true
	}
	if len(listed) != len(m) {
		t.Fatalf("Scan lists %d keys, the model has %d", len(listed), len(m))
	}
	t.Logf("moved %d keys in the background (%d retried after concurrent changes); %d keys at the end",
		moved.Load(), changed.Load(), len(m))
	if moved.Load() == 0 {
		t.Log("the background migration moved nothing: the operations moved every key first")
	}
}
