package layout

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
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

// model is the reference: a Go map applied the same operations. A key with
// a TTL has a window: it certainly exists before lo and is certainly gone
// after hi (the server set its expiry somewhere within the call that gave
// it); in between, whatever the server answers decides.
type model map[string]entry

type entry struct {
	v      []byte
	lo, hi time.Time // zero: no TTL
}

type presence int

const (
	absent presence = iota
	present
	maybe // expiring: either answer is right, and the answer settles it
)

// ttlSlack covers the millisecond rounding of server expiry times.
const ttlSlack = 3 * time.Millisecond

// at says whether k exists for an operation that ran between t0 and t1.
func (m model) at(k string, t0, t1 time.Time) (entry, presence) {
	e, ok := m[k]
	switch {
	case !ok:
		return e, absent
	case e.lo.IsZero() || t1.Before(e.lo):
		return e, present
	case t0.After(e.hi):
		delete(m, k)
		return e, absent
	}
	return e, maybe
}

// setTTL records v at k with a TTL of d, given by a call between t0 and t1.
func (m model) setTTL(k string, v []byte, d time.Duration, t0, t1 time.Time) {
	m[k] = entry{v: v, lo: t0.Add(d - ttlSlack), hi: t1.Add(d + ttlSlack)}
}

// Random operations through a migrating namespace and on a Go map observe
// the same results, while a migration runs concurrently, on Redis 7.0 and
// Valkey 9.1: values that fit a bucket and oversize ones, TTLs of an hour
// and of a few milliseconds (which expire during the run), SetNX, Expire,
// TTL and GetSet among the rest. No value is lost, none comes back after a
// delete, an overwrite or an expiry, and at the end every oversize value's
// key belongs to a marker and every marker has its key.
func TestMigrationProperty(t *testing.T) {
	for _, kind := range []testkit.Kind{testkit.Redis, testkit.Valkey} {
		for _, seed := range []uint64{1, 2, 3} {
			t.Run(fmt.Sprintf("%s/seed%d", kind, seed), func(t *testing.T) { migrationProperty(t, kind, seed, 3000) })
		}
	}
}

func migrationProperty(t *testing.T, kind testkit.Kind, seed uint64, ops int) {
	c, srv := newClient(t, kind)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 99))
	const ids, named = 300, 40
	key := func() string {
		if rng.IntN(7) == 0 { // not an integer id: a plain key in the new layout
			return "user:a" + strconv.Itoa(rng.IntN(named))
		}
		return "user:" + strconv.Itoa(rng.IntN(ids))
	}
	bucketed := func(k string) bool { return !strings.HasPrefix(k, "user:a") }
	fieldTTL := kind == testkit.Valkey // Redis 7.0 cannot expire hash fields
	value := func() []byte {
		switch rng.IntN(50) {
		case 0:
			return []byte("\x00{") // the stored bytes of the markers
		case 1:
			return []byte("\x00~")
		}
		switch rng.IntN(4) {
		case 0:
			return []byte(strconv.Itoa(rng.IntN(1e9)))
		case 1:
			return randomBytes(80 + rng.IntN(200)) // oversize
		default:
			return bytes.Repeat([]byte("abc"), 1+rng.IntN(60))
		}
	}
	ttl := func() time.Duration {
		if rng.IntN(2) == 0 {
			return time.Duration(1+rng.IntN(20)) * time.Millisecond
		}
		return time.Hour
	}
	m := model{}
	old := openStore(t, c, plainUsers)
	for range ids {
		k, v := key(), value()
		t0 := time.Now()
		if rng.IntN(3) == 0 {
			d := ttl()
			if err := old.SetEX(ctx, k, v, d); err != nil {
				t.Fatal(err)
			}
			m.setTTL(k, v, d, t0, time.Now())
			continue
		}
		if err := old.Set(ctx, k, v); err != nil {
			t.Fatal(err)
		}
		m[k] = entry{v: v}
	}
	s := openStore(t, c, bucketUsers)

	// The migration runs in passes alongside the operations. It stops
	// before the client closes, also when the test fails.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var once sync.Once
	halt := func() {
		once.Do(func() { close(stop) })
		wg.Wait()
	}
	t.Cleanup(halt)
	var moved, changed, passes atomic.Int64
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
			passes.Add(1)
		}
	}()

	// check compares a read of k, made between t0 and t1, with the model.
	check := func(i int, op, k string, got []byte, err error, t0, t1 time.Time) {
		t.Helper()
		if err != nil && !errors.Is(err, zipline.Nil) {
			t.Fatalf("op %d: %s %s: %v", i, op, k, err)
		}
		e, st := m.at(k, t0, t1)
		switch {
		case st == maybe && err != nil:
			delete(m, k) // it expired, for good
		case st == absent && err == nil:
			t.Fatalf("op %d: %s %s: got %d bytes, want Nil: a value came back", i, op, k, len(got))
		case st != absent && err != nil:
			if st == present {
				t.Fatalf("op %d: %s %s: Nil, want %d bytes: a value was lost", i, op, k, len(e.v))
			}
		case st != absent && !bytes.Equal(got, e.v):
			t.Fatalf("op %d: %s %s: got %d bytes, want %d", i, op, k, len(got), len(e.v))
		}
	}
	counts := map[string]int{}
	for i := range ops {
		op := rng.IntN(14)
		t0 := time.Now()
		switch op {
		case 0, 1:
			counts["get"]++
			k := key()
			v, err := s.Get(ctx, k)
			check(i, "get", k, v, err, t0, time.Now())
		case 2, 3:
			counts["set"]++
			k, v := key(), value()
			if err := s.Set(ctx, k, v); err != nil {
				t.Fatal(err)
			}
			m[k] = entry{v: v}
		case 4:
			counts["del"]++
			ks := []string{key(), key(), key()}
			n, err := s.Del(ctx, ks...)
			if err != nil {
				t.Fatal(err)
			}
			t1 := time.Now()
			lo, hi := 0, 0
			seen := map[string]bool{}
			for _, k := range ks {
				if seen[k] {
					continue
				}
				seen[k] = true
				switch _, st := m.at(k, t0, t1); st {
				case present:
					lo, hi = lo+1, hi+1
				case maybe:
					hi++
				}
				delete(m, k)
			}
			if int(n) < lo || int(n) > hi {
				t.Fatalf("op %d: Del %v = %d, want %d to %d", i, ks, n, lo, hi)
			}
		case 5:
			counts["incr"]++
			k := key()
			n, err := s.Incr(ctx, k)
			e, st := m.at(k, t0, time.Now())
			cur, perr := strconv.ParseInt(string(e.v), 10, 64)
			switch {
			case st != absent && err == nil && perr == nil && n == cur+1:
				e.v = []byte(strconv.FormatInt(n, 10)) // it keeps its TTL
				m[k] = e
			case st != present && err == nil && n == 1:
				m[k] = entry{v: []byte("1")}
			case st != absent && perr != nil && err != nil:
				// not an integer: refused, unchanged
			default:
				t.Fatalf("op %d: Incr %s = %d, %v; model: %d bytes, presence %d", i, k, n, err, len(e.v), st)
			}
		case 6:
			counts["mset"]++
			pairs := []zipline.KeyValue{{Key: key(), Value: value()}, {Key: key(), Value: value()}}
			if err := s.MSet(ctx, pairs...); err != nil {
				t.Fatal(err)
			}
			for _, p := range pairs {
				m[p.Key] = entry{v: p.Value}
			}
		case 7:
			counts["mget"]++
			ks := []string{key(), key(), key(), key()}
			vs, err := s.MGet(ctx, ks...)
			if err != nil {
				t.Fatal(err)
			}
			t1 := time.Now()
			for j, k := range ks {
				err := error(nil)
				if vs[j] == nil {
					err = zipline.Nil
				}
				check(i, "mget", k, vs[j], err, t0, t1)
			}
		case 8:
			counts["exists"]++
			k := key()
			n, err := s.Exists(ctx, k)
			if err != nil {
				t.Fatal(err)
			}
			switch _, st := m.at(k, t0, time.Now()); {
			case st == maybe && n == 0:
				delete(m, k)
			case st != maybe && (n == 1) != (st == present):
				t.Fatalf("op %d: Exists %s = %d; model presence %d", i, k, n, st)
			}
		case 9:
			counts["setnx"]++
			k, v := key(), value()
			ok, err := s.SetNX(ctx, k, v)
			if err != nil {
				t.Fatal(err)
			}
			switch _, st := m.at(k, t0, time.Now()); {
			case ok && st != present:
				m[k] = entry{v: v}
			case !ok && st != absent:
			default:
				t.Fatalf("op %d: SetNX %s = %v; model presence %d", i, k, ok, st)
			}
		case 10:
			counts["setex"]++
			k, v, d := key(), value(), ttl()
			err := s.SetEX(ctx, k, v, d)
			switch {
			case !fieldTTL && bucketed(k):
				if !errors.Is(err, ErrNoFieldTTL) {
					t.Fatalf("op %d: SetEX %s on Redis 7.0: %v, want ErrNoFieldTTL", i, k, err)
				}
			case err != nil:
				t.Fatal(err)
			default:
				m.setTTL(k, v, d, t0, time.Now())
			}
		case 11:
			counts["expire"]++
			k, d := key(), ttl()
			ok, err := s.Expire(ctx, k, d)
			t1 := time.Now()
			if errors.Is(err, ErrNoFieldTTL) && !fieldTTL && bucketed(k) {
				break // unchanged; a key kept in the old layout for its TTL takes Expire there
			}
			if err != nil {
				t.Fatal(err)
			}
			switch e, st := m.at(k, t0, t1); {
			case ok && st != absent:
				m.setTTL(k, e.v, d, t0, t1)
			case !ok && st != present:
				delete(m, k)
			default:
				t.Fatalf("op %d: Expire %s = %v; model presence %d", i, k, ok, st)
			}
		case 12:
			counts["ttl"]++
			k := key()
			d, err := s.TTL(ctx, k)
			if err != nil {
				t.Fatal(err)
			}
			if d == zipline.NoKey {
				err = zipline.Nil // what the model's checks below expect of a missing key
			}
			switch e, st := m.at(k, t0, time.Now()); {
			case st == maybe && err != nil:
				delete(m, k)
			case st == absent && err == nil, st == present && err != nil:
				t.Fatalf("op %d: TTL %s = %v, %v; model presence %d", i, k, d, err, st)
			case st == absent:
			case e.lo.IsZero() && d != zipline.NoExpiry:
				t.Fatalf("op %d: TTL %s = %v, want none", i, k, d)
			case !e.lo.IsZero() && (d < 0 || d > e.hi.Sub(t0)):
				t.Fatalf("op %d: TTL %s = %v, want at most %v", i, k, d, e.hi.Sub(t0))
			}
		case 13:
			counts["getset"]++
			k, v := key(), value()
			got, err := s.GetSet(ctx, k, v)
			check(i, "getset", k, got, err, t0, time.Now())
			m[k] = entry{v: v}
		}
	}
	halt()

	// Let the short TTLs pass, finish the migration, and then everything
	// must match the model exactly.
	var last time.Time
	for _, e := range m {
		if !e.lo.IsZero() && e.hi.Before(time.Now().Add(time.Minute)) && e.hi.After(last) {
			last = e.hi
		}
	}
	if wait := time.Until(last); wait > 0 {
		time.Sleep(wait) // waiting for TTLs of at most 20 ms to pass
	}
	now := time.Now()
	for k, e := range m {
		if !e.lo.IsZero() && e.hi.Before(now) {
			delete(m, k)
		}
	}
	for pass := 0; ; pass++ {
		p, err := s.Migrate(ctx, MigrateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Moved+p.Changed == 0 {
			break
		}
		if pass == 5 {
			t.Fatalf("the migration still moves keys after %d passes: %+v", pass, p)
		}
	}
	var all []string
	for id := range ids {
		all = append(all, "user:"+strconv.Itoa(id))
	}
	for id := range named {
		all = append(all, "user:a"+strconv.Itoa(id))
	}
	for _, k := range all {
		v, err := s.Get(ctx, k)
		check(-1, "final get", k, v, err, now, time.Now())
	}
	listed := map[string]bool{}
	for k, err := range s.Scan(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		listed[k] = true
	}
	for k := range m {
		if !listed[k] {
			t.Errorf("Scan does not list %s", k)
		}
	}
	if len(listed) != len(m) {
		t.Fatalf("Scan lists %d keys, the model has %d", len(listed), len(m))
	}
	// The stored state: nothing orphaned, nothing dangling, and in the old
	// layout only keys kept there for their TTL (Redis 7.0 buckets).
	a := account(t, srv, s)
	if a.Orphans != 0 || a.Dangling != 0 || a.Markers != a.OversizeKeys {
		t.Fatalf("new layout: %+v", a)
	}
	kept := 0
	oldKeys, err := srv.Do(ctx, "KEYS", "user:*")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range oldKeys.Elems() {
		k := string(e.Bytes())
		if me, ok := m[k]; !ok || me.lo.IsZero() || fieldTTL || !bucketed(k) {
			t.Fatalf("%s is still in the old layout", k)
		}
		kept++
	}
	if n, _ := c.DBSize(ctx); n != int64(a.Buckets+a.OversizeKeys+a.PlainKeys+kept) {
		keys, _ := srv.Do(ctx, "KEYS", "*")
		t.Fatalf("%d keys on the server, accounted for %d: %v", n, a.Buckets+a.OversizeKeys+a.PlainKeys+kept, keys)
	}
	t.Logf("%d ops %v; %d migration passes moved %d keys (%d retried after concurrent changes); "+
		"at the end %d keys, %d oversize values, %d orphans, %d kept in the old layout",
		ops, counts, passes.Load(), moved.Load(), changed.Load(), len(m), a.Markers, a.Orphans, kept)
}

// A migration stopped at random points (its context cancelled, also in the
// middle of a round trip) and resumed from the cursor it reported loses
// nothing and resurrects nothing, with the application writing between the
// runs, and leaves no orphaned oversize key.
func TestMigrationInterruptedAndResumed(t *testing.T) {
	for _, kind := range []testkit.Kind{testkit.Redis, testkit.Valkey} {
		for _, seed := range []uint64{1, 2} {
			t.Run(fmt.Sprintf("%s/seed%d", kind, seed), func(t *testing.T) { interruptedMigration(t, kind, seed) })
		}
	}
}

func interruptedMigration(t *testing.T, kind testkit.Kind, seed uint64) {
	c, srv := newClient(t, kind)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 7))
	const ids = 1500
	m := map[string][]byte{}
	ttls := map[string]bool{}
	old := openStore(t, c, plainUsers)
	var pairs []zipline.KeyValue
	for id := range ids {
		k := "user:" + strconv.Itoa(id)
		v := []byte(strconv.Itoa(id))
		if id%5 == 0 {
			v = append(randomBytes(100), k...) // oversize
		}
		if id%11 == 0 {
			if err := old.SetEX(ctx, k, v, time.Hour); err != nil {
				t.Fatal(err)
			}
			ttls[k] = true
		} else {
			pairs = append(pairs, zipline.KeyValue{Key: k, Value: v})
		}
		m[k] = v
	}
	if err := old.MSet(ctx, pairs...); err != nil {
		t.Fatal(err)
	}
	s := openStore(t, c, bucketUsers)
	cursor, runs, stopped := "0", 0, 0
	for ; runs < 20; runs++ {
		// The application writes between runs: overwrites (an oversize
		// value with a small one and back) and deletes.
		for range 20 {
			k := "user:" + strconv.Itoa(rng.IntN(ids))
			switch rng.IntN(3) {
			case 0:
				if _, err := s.Del(ctx, k); err != nil {
					t.Fatal(err)
				}
				delete(m, k)
			case 1:
				v := []byte("small")
				if err := s.Set(ctx, k, v); err != nil {
					t.Fatal(err)
				}
				m[k] = v
			default:
				v := append(randomBytes(90), "new"...)
				if err := s.Set(ctx, k, v); err != nil {
					t.Fatal(err)
				}
				m[k] = v
			}
			delete(ttls, k)
		}
		rctx, cancel := context.WithCancel(ctx)
		stop := time.AfterFunc(time.Duration(rng.IntN(20000))*time.Microsecond, cancel)
		p, err := s.Migrate(rctx, MigrateOptions{Batch: 1 + rng.IntN(60), Cursor: cursor})
		stop.Stop()
		cancel()
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Fatal(err)
		}
		cursor = p.Cursor
		if err == nil {
			break
		}
		stopped++
	}
	// Finish: passes from the start until one moves nothing.
	for pass := 0; ; pass++ {
		p, err := s.Migrate(ctx, MigrateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Moved+p.Changed == 0 {
			break
		}
		if pass == 5 {
			t.Fatalf("still moving after %d passes: %+v", pass, p)
		}
	}
	for id := range ids {
		k := "user:" + strconv.Itoa(id)
		v, err := s.Get(ctx, k)
		want, ok := m[k]
		switch {
		case !ok && !errors.Is(err, zipline.Nil):
			t.Fatalf("%s: %d bytes, %v: a deleted value came back", k, len(v), err)
		case ok && (err != nil || !bytes.Equal(v, want)):
			t.Fatalf("%s: %d bytes, %v; want %d bytes", k, len(v), err, len(want))
		}
	}
	a := account(t, srv, s)
	if a.Orphans != 0 || a.Dangling != 0 || a.Markers != a.OversizeKeys {
		t.Fatalf("new layout: %+v", a)
	}
	oldKeys, err := srv.Do(ctx, "KEYS", "user:*")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range oldKeys.Elems() {
		if k := string(e.Bytes()); kind == testkit.Valkey || !ttls[k] {
			t.Fatalf("%s is still in the old layout", k)
		}
	}
	if kind == testkit.Redis && len(oldKeys.Elems()) != len(ttls) {
		t.Fatalf("%d keys kept in the old layout for their TTL, want %d", len(oldKeys.Elems()), len(ttls))
	}
	t.Logf("%d runs, %d stopped part-way; %d keys, %d oversize values, %d orphans, %d kept in the old layout",
		runs+1, stopped, len(m), a.Markers, a.Orphans, len(oldKeys.Elems()))
}
