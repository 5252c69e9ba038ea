package layout

import (
	"bytes"
	"context"
	"errors"
	stdflag "flag"
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
// it); in between, whatever the server answers decides. A key whose last
// operation failed (during a failover) is unknown: any answer is right
// until an operation that succeeds sets it again.
type model map[string]entry

type entry struct {
	v       []byte
	lo, hi  time.Time // zero: no TTL
	unknown bool
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
	case e.unknown:
		return e, maybe
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
		for seed := uint64(1); seed <= *propertySeeds; seed++ {
			t.Run(fmt.Sprintf("%s/seed%d", kind, seed), func(t *testing.T) {
				c, srv := newClient(t, kind)
				migrationProperty(t, propertyBed{c: c, b: serverBed{srv}, kind: kind}, seed, 3000)
			})
		}
	}
}

// withoutMigration is ns once its migration is over.
func withoutMigration(ns Namespace) Namespace {
	ns.MigrateFrom = nil
	return ns
}

// propertySeeds is how many seeds the migration property tests run, each
// on Redis and Valkey, on a server and on a cluster.
var propertySeeds = stdflag.Uint64("property-seeds", 3, "seeds of the migration property tests")

// propertyBed is where migrationProperty runs.
type propertyBed struct {
	c    *zipline.Client
	b    bed
	kind testkit.Kind
	// during, if set, runs once while the operations run, concurrently
	// (a failover, a resharding); operations that fail meanwhile leave
	// their keys unknown to the model.
	during func(ctx context.Context) error
}

// topologyError reports whether err is one a change of a cluster's
// topology explains: a connection lost, a request not sent, or the cluster
// still redirecting or down when the client stopped retrying.
func topologyError(err error) bool {
	var se *zipline.ServerError
	if errors.As(err, &se) {
		switch se.Prefix {
		case "MOVED", "ASK", "TRYAGAIN", "CLUSTERDOWN", "MASTERDOWN", "LOADING", "READONLY":
			return true
		}
		return false
	}
	return errors.Is(err, zipline.ErrConnLost) || errors.Is(err, zipline.ErrNotSent)
}

// propertyCounts is what a run of migrationProperty did.
type propertyCounts struct {
	ops, failed      int // operations, and those that failed (during a topology change)
	during           int // operations that ran while the topology changed
	passes, moved    int64
	staleMoves       int // moves held across other operations (cluster)
	staleDied        int // of which stopped between two steps
	tombstones, sets int // left by the migration, before the sweep
	keys, oversize   int // at the end
	kept             int // keys kept in the old layout for their TTL
}

func migrationProperty(t testing.TB, pb propertyBed, seed uint64, ops int) propertyCounts {
	c, kind := pb.c, pb.kind
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 99))
	const ids, named = 300, 40
	// On a cluster, a mover of the test's own is held between its steps
	// across other operations, as a slow mover would be, and half the
	// operations go to the keys it holds: it read old copies, then the
	// application writes or deletes them, then it writes into the new
	// layout, then deletes the old copies.
	var stale *splitMoving
	key := func() string {
		if stale != nil && rng.IntN(2) == 0 {
			return stale.keys[rng.IntN(len(stale.keys))]
		}
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
	var counts propertyCounts
	old := openStore(t, c, plainUsers)
	for i := range ids + named {
		k, v := "user:"+strconv.Itoa(i), value()
		if i >= ids {
			k = "user:a" + strconv.Itoa(i-ids)
		}
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

	// The migration runs in passes alongside the operations, slowly enough
	// that the old layout keeps keys for most of the run, and so does a
	// topology change if asked. The migration is stopped in the middle of
	// whatever it does (its context cancelled) before the client closes,
	// also when the test fails.
	mctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	halt := func() {
		stop()
		wg.Wait()
	}
	t.Cleanup(halt)
	var moved, changed, passes atomic.Int64
	var changing atomic.Bool // a topology change is under way
	wg.Add(1)
	go func() {
		defer wg.Done()
		for failures := 0; ; {
			p, err := s.Migrate(mctx, MigrateOptions{Batch: 7, Rate: 100})
			if mctx.Err() != nil {
				return
			}
			if err != nil && (pb.during == nil || failures == 100) {
				t.Error(err)
				return
			}
			if err != nil {
				failures++ // a topology change: the pass starts again
				continue
			}
			moved.Add(int64(p.Moved))
			changed.Add(int64(p.Changed))
			passes.Add(1)
		}
	}()
	var during chan error
	startDuring := func() {
		if pb.during == nil || during != nil {
			return
		}
		during = make(chan error, 1)
		changing.Store(true)
		go func() { during <- pb.during(ctx) }()
	}

	staleStep := 0
	advanceStale := func() error {
		var err error
		switch {
		case stale == nil:
			keys := make([]string, 1+rng.IntN(4))
			for i := range keys {
				keys[i] = key()
			}
			stale, err = s.startMove(ctx, keys)
			counts.staleMoves++
		case rng.IntN(5) == 0:
			// The mover dies between two steps: what it wrote stays, and
			// the old copies it would have deleted too.
			stale, staleStep = nil, 0
			counts.staleDied++
		case staleStep == 0:
			err = stale.adopt(ctx)
			staleStep = 1
		default:
			_, err = stale.finish(ctx)
			stale, staleStep = nil, 0
		}
		return err
	}

	// failed reports whether an operation's error is one a topology change
	// explains (a lost connection, or the cluster not serving a slot for
	// longer than the client retries): then its keys become unknown.
	failed := func(err error, keys ...string) bool {
		if !changing.Load() || !topologyError(err) {
			return false
		}
		counts.failed++
		t.Logf("during the topology change: %v", err)
		for _, k := range keys {
			m[k] = entry{unknown: true}
		}
		return true
	}
	// check compares a read of k, made between t0 and t1, with the model.
	check := func(i int, op, k string, got []byte, err error, t0, t1 time.Time) {
		t.Helper()
		if err != nil && !errors.Is(err, zipline.Nil) {
			t.Fatalf("op %d: %s %s: %v", i, op, k, err)
		}
		e, st := m.at(k, t0, t1)
		switch {
		case e.unknown:
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
	ops_ := map[string]int{}
	for i := range ops {
		if i == ops/3 {
			startDuring()
		}
		if during != nil && changing.Load() {
			select {
			case err := <-during:
				if err != nil {
					t.Fatal(err)
				}
				changing.Store(false)
			default:
			}
		}
		if changing.Load() {
			counts.during++
		}
		if s.cluster && rng.IntN(3) == 0 {
			if err := advanceStale(); err != nil && !failed(err) {
				t.Fatal(err)
			}
		}
		op := rng.IntN(14)
		t0 := time.Now()
		switch op {
		case 0, 1:
			ops_["get"]++
			k := key()
			v, err := s.Get(ctx, k)
			if failed(err) {
				break
			}
			check(i, "get", k, v, err, t0, time.Now())
		case 2, 3:
			ops_["set"]++
			k, v := key(), value()
			if err := s.Set(ctx, k, v); failed(err, k) {
				break
			} else if err != nil {
				t.Fatal(err)
			}
			m[k] = entry{v: v}
		case 4:
			ops_["del"]++
			ks := []string{key(), key(), key()}
			n, err := s.Del(ctx, ks...)
			if failed(err, ks...) {
				break
			} else if err != nil {
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
			ops_["incr"]++
			k := key()
			n, err := s.Incr(ctx, k)
			if failed(err, k) {
				break
			}
			e, st := m.at(k, t0, time.Now())
			cur, perr := strconv.ParseInt(string(e.v), 10, 64)
			switch {
			case e.unknown:
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
			ops_["mset"]++
			pairs := []zipline.KeyValue{{Key: key(), Value: value()}, {Key: key(), Value: value()}}
			if err := s.MSet(ctx, pairs...); failed(err, pairs[0].Key, pairs[1].Key) {
				break
			} else if err != nil {
				t.Fatal(err)
			}
			for _, p := range pairs {
				m[p.Key] = entry{v: p.Value}
			}
		case 7:
			ops_["mget"]++
			ks := []string{key(), key(), key(), key()}
			vs, err := s.MGet(ctx, ks...)
			if failed(err) {
				break
			} else if err != nil {
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
			ops_["exists"]++
			k := key()
			n, err := s.Exists(ctx, k)
			if failed(err) {
				break
			} else if err != nil {
				t.Fatal(err)
			}
			switch e, st := m.at(k, t0, time.Now()); {
			case e.unknown:
			case st == maybe && n == 0:
				delete(m, k)
			case st != maybe && (n == 1) != (st == present):
				t.Fatalf("op %d: Exists %s = %d; model presence %d", i, k, n, st)
			}
		case 9:
			ops_["setnx"]++
			k, v := key(), value()
			ok, err := s.SetNX(ctx, k, v)
			if failed(err, k) {
				break
			} else if err != nil {
				t.Fatal(err)
			}
			switch e, st := m.at(k, t0, time.Now()); {
			case ok && (st != present || e.unknown):
				m[k] = entry{v: v}
			case !ok && st != absent:
			default:
				t.Fatalf("op %d: SetNX %s = %v; model presence %d", i, k, ok, st)
			}
		case 10:
			ops_["setex"]++
			k, v, d := key(), value(), ttl()
			err := s.SetEX(ctx, k, v, d)
			switch {
			case !fieldTTL && bucketed(k):
				if !errors.Is(err, ErrNoFieldTTL) {
					t.Fatalf("op %d: SetEX %s on Redis 7.0: %v, want ErrNoFieldTTL", i, k, err)
				}
			case failed(err, k):
			case err != nil:
				t.Fatal(err)
			default:
				m.setTTL(k, v, d, t0, time.Now())
			}
		case 11:
			ops_["expire"]++
			k, d := key(), ttl()
			ok, err := s.Expire(ctx, k, d)
			t1 := time.Now()
			if errors.Is(err, ErrNoFieldTTL) && !fieldTTL && bucketed(k) {
				break // unchanged; a key kept in the old layout for its TTL takes Expire there
			}
			if failed(err, k) {
				break
			} else if err != nil {
				t.Fatal(err)
			}
			switch e, st := m.at(k, t0, t1); {
			case e.unknown:
			case ok && st != absent:
				m.setTTL(k, e.v, d, t0, t1)
			case !ok && st != present:
				delete(m, k)
			default:
				t.Fatalf("op %d: Expire %s = %v; model presence %d", i, k, ok, st)
			}
		case 12:
			ops_["ttl"]++
			k := key()
			d, err := s.TTL(ctx, k)
			if failed(err) {
				break
			} else if err != nil {
				t.Fatal(err)
			}
			if d == zipline.NoKey {
				err = zipline.Nil // what the model's checks below expect of a missing key
			}
			switch e, st := m.at(k, t0, time.Now()); {
			case e.unknown:
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
			ops_["getset"]++
			k, v := key(), value()
			got, err := s.GetSet(ctx, k, v)
			if failed(err, k) {
				break
			}
			check(i, "getset", k, got, err, t0, time.Now())
			m[k] = entry{v: v}
		}
	}
	if during != nil && changing.Load() {
		if err := <-during; err != nil {
			t.Fatal(err)
		}
		changing.Store(false)
	}
	for stale != nil {
		if err := advanceStale(); err != nil {
			t.Fatal(err)
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
		if p.Moved+p.Changed+p.Replaced == 0 {
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
	final := func(s *Store, which string, skip func(k string) bool) {
		t.Helper()
		for _, k := range all {
			if skip != nil && skip(k) {
				continue
			}
			v, err := s.Get(ctx, k)
			if e := m[k]; e.unknown { // settled by what the store answers
				if err == nil {
					m[k] = entry{v: v}
				} else if errors.Is(err, zipline.Nil) {
					delete(m, k)
				}
				continue
			}
			check(-1, which, k, v, err, now, time.Now())
		}
	}
	final(s, "final get", nil)
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
	a := account(t, pb.b, s)
	if a.Orphans != 0 || a.Dangling != 0 || a.Markers != a.OversizeKeys {
		t.Fatalf("new layout: %+v", a)
	}
	if !s.cluster && a.TombSets != 0 {
		t.Fatalf("tombstones on a single server: %+v", a)
	}
	counts.tombstones, counts.sets = a.Tombstones, a.TombSets
	kept := map[string]bool{}
	for _, k := range pb.b.keys(t, "user:*") {
		if me, ok := m[k]; !ok || me.lo.IsZero() || fieldTTL || !bucketed(k) {
			t.Fatalf("%s is still in the old layout", k)
		}
		kept[k] = true
	}
	if n, _ := c.DBSize(ctx); n != int64(a.Buckets+a.OversizeKeys+a.PlainKeys+a.TombSets+len(kept)) {
		t.Fatalf("%d keys on the server, accounted for %d: %+v, %d kept", n, a.Buckets+a.OversizeKeys+a.PlainKeys+a.TombSets+len(kept), a, len(kept))
	}
	// The migration is complete: the tombstones go, and a Store without
	// MigrateFrom reads the same (but for keys kept in the old layout).
	done := openStore(t, c, withoutMigration(bucketUsers))
	swept, err := done.Sweep(ctx)
	if err != nil || swept != a.TombSets {
		t.Fatalf("Sweep deleted %d sets, %v; want %d", swept, err, a.TombSets)
	}
	if a := account(t, pb.b, s); a.Tombstones+a.TombSets != 0 || a.Orphans+a.Dangling != 0 {
		t.Fatalf("after the sweep: %+v", a)
	}
	final(done, "get after the sweep", func(k string) bool { return kept[k] })
	final(s, "migrating get after the sweep", nil)
	counts.ops, counts.passes, counts.moved = ops, passes.Load(), moved.Load()
	counts.keys, counts.oversize, counts.kept = len(m), a.Markers, len(kept)
	t.Logf("%d ops %v, %d during a topology change, of which %d failed; %d migration passes moved %d keys (%d retried after concurrent changes), "+
		"%d stale moves (%d stopped part-way); at the end %d keys, %d oversize values, %d orphans, %d dangling, %d kept in the old layout, "+
		"%d tombstones in %d sets swept", ops, ops_, counts.during, counts.failed, passes.Load(), moved.Load(), changed.Load(),
		counts.staleMoves, counts.staleDied, len(m), a.Markers, a.Orphans, a.Dangling, len(kept), a.Tombstones, a.TombSets)
	return counts
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
	a := account(t, serverBed{srv}, s)
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
