package cache

import (
	"context"
	"errors"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/internal/testkit"
)

// tieredClients returns a Client with the client-side cache on (a) and one
// without (b), another process's, on a new server.
func tieredClients(t *testing.T) (a, b *zipline.Client, srv *testkit.Server) {
	srv = newServer(t)
	local := func(o *zipline.Options) { o.ClientCache = zipline.ClientCache{MaxBytes: 1 << 20} }
	return newClient(t, srv.Addr, local), newClient(t, srv.Addr), srv
}

// With the client-side cache as its store, hits are served in the process
// (no GET reaches the server), and a write through another process's cache
// invalidates the local copy: the next Fetch returns the new value.
func TestClientSideTier(t *testing.T) {
	a, b, srv := tieredClients(t)
	ctx := context.Background()
	type user struct{ Name string }
	ua := New[user](a, Options{TTL: time.Minute, Store: a.Cached(time.Minute)})
	ub := New[user](b, Options{TTL: time.Minute})
	var loads atomic.Int64
	load := func(name string) func(context.Context) (user, error) {
		return func(context.Context) (user, error) { loads.Add(1); return user{name}, nil }
	}
	if u, err := ua.Fetch(ctx, "user:1", load("ada")); err != nil || u.Name != "ada" {
		t.Fatalf("first Fetch: %+v %v", u, err)
	}
	gets := func() int64 {
		info, err := srv.Info(ctx, "commandstats")
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		fmtSscan(info["cmdstat_get"], &n)
		return n
	}
	// Storing the loaded value invalidated the miss the first Fetch read
	// through the tier: the next Fetch reads the value once.
	if _, err := ua.Fetch(ctx, "user:1", load("never")); err != nil {
		t.Fatal(err)
	}
	before := gets()
	for range 50 {
		if u, err := ua.Fetch(ctx, "user:1", load("never")); err != nil || u.Name != "ada" {
			t.Fatalf("hit: %+v %v", u, err)
		}
	}
	if n := gets() - before; n != 0 {
		t.Fatalf("50 hits sent %d GETs to the server", n)
	}
	if err := ub.Set(ctx, "user:1", user{"grace"}); err != nil {
		t.Fatal(err)
	}
	if err := a.Ping(ctx); err != nil { // the invalidation arrives before this reply
		t.Fatal(err)
	}
	if u, err := ua.Fetch(ctx, "user:1", load("never")); err != nil || u.Name != "grace" {
		t.Fatalf("after another process's write: %+v %v", u, err)
	}
	if loads.Load() != 1 {
		t.Fatalf("%d loads, want 1", loads.Load())
	}
	if st := a.Stats().Cache; st.Hits < 50 || st.Invalidations == 0 {
		t.Fatalf("client cache stats %+v", st)
	}
}

// fmtSscan reads the calls= count of an INFO commandstats line.
func fmtSscan(line string, n *int64) {
	for i := len("calls="); i < len(line) && line[i] >= '0' && line[i] <= '9'; i++ {
		*n = *n*10 + int64(line[i]-'0')
	}
}

// countingJSON is the JSON codec, counting the values it decodes.
type countingJSON struct{ decodes *atomic.Int64 }

func (c countingJSON) Marshal(v any) ([]byte, error) { return JSON{}.Marshal(v) }

func (c countingJSON) Unmarshal(b []byte, v any) error {
	c.decodes.Add(1)
	return JSON{}.Unmarshal(b, v)
}

// Through the client-side tier, a value that shares nothing mutable is
// decoded once per cached copy: hits return the kept value, and a write
// elsewhere brings the new one, decoded once more. A value with a slice is
// decoded on every hit, so that a caller's change to it reaches nobody.
func TestClientSideTierDecodesOncePerCopy(t *testing.T) {
	a, b, _ := tieredClients(t)
	ctx := context.Background()
	var decodes atomic.Int64
	codec := countingJSON{&decodes}

	type profile struct {
		Name  string
		Level int
		Since time.Time
		Codes [2]uint16
	}
	since := time.Date(2026, 12, 8, 0, 0, 0, 0, time.UTC)
	profiles := New[profile](a, Options{TTL: time.Minute, Codec: codec, Store: a.Cached(time.Minute).IgnoringKeyTTL()})
	if profiles.decoding == nil {
		t.Fatal("a value of numbers, strings and a time is not kept decoded")
	}
	other := New[profile](b, Options{TTL: time.Minute})
	never := func(context.Context) (profile, error) { return profile{}, errors.New("loaded") }
	if err := other.Set(ctx, "p:1", profile{Name: "ada", Level: 1, Since: since}); err != nil {
		t.Fatal(err)
	}
	fetch := func(want string) {
		t.Helper()
		p, err := profiles.Fetch(ctx, "p:1", never)
		if err != nil || p.Name != want || !p.Since.Equal(since) {
			t.Fatalf("Fetch: %+v %v, want %s", p, err, want)
		}
	}
	fetch("ada") // a miss
	fetch("ada") // the copy's first hit
	before := decodes.Load()
	for range 100 {
		fetch("ada")
	}
	if n := decodes.Load() - before; n != 0 {
		t.Fatalf("100 hits on one cached copy decoded %d times", n)
	}
	if err := other.Set(ctx, "p:1", profile{Name: "grace", Level: 2, Since: since}); err != nil {
		t.Fatal(err)
	}
	if err := a.Ping(ctx); err != nil { // the invalidation is read before this reply
		t.Fatal(err)
	}
	before = decodes.Load()
	for range 50 {
		fetch("grace")
	}
	if n := decodes.Load() - before; n > 2 {
		t.Fatalf("50 reads after a write decoded %d times, want at most 2 (the miss, the new copy)", n)
	}

	type tagged struct{ Tags []string }
	tags := New[tagged](a, Options{TTL: time.Minute, Codec: codec, Store: a.Cached(time.Minute).IgnoringKeyTTL()})
	if tags.decoding != nil {
		t.Fatal("a value with a slice is kept decoded, shared between callers")
	}
	if err := tags.Set(ctx, "t:1", tagged{Tags: []string{"go"}}); err != nil {
		t.Fatal(err)
	}
	before = decodes.Load()
	for range 10 {
		v, err := tags.Fetch(ctx, "t:1", func(context.Context) (tagged, error) { return tagged{}, errors.New("loaded") })
		if err != nil || len(v.Tags) != 1 || v.Tags[0] != "go" {
			t.Fatalf("Fetch saw %+v %v: another caller's change reached it", v, err)
		}
		v.Tags[0] = "changed by a caller"
	}
	if n := decodes.Load() - before; n != 10 {
		t.Fatalf("10 reads of a value with a slice decoded %d times, want 10", n)
	}
}

func TestKeeps(t *testing.T) {
	type flat struct {
		A int
		B string
		C time.Time
		D [3]float64
		e bool
	}
	for _, c := range []struct {
		t    reflect.Type
		want bool
	}{
		{reflect.TypeFor[string](), true},
		{reflect.TypeFor[flat](), true},
		{reflect.TypeFor[struct{ F flat }](), true},
		{reflect.TypeFor[*flat](), false},
		{reflect.TypeFor[[]byte](), false},
		{reflect.TypeFor[map[string]int](), false},
		{reflect.TypeFor[struct{ X any }](), false},
		{reflect.TypeFor[[2]*int](), false},
		{reflect.TypeFor[struct{ F func() }](), false},
	} {
		if got := keeps(c.t); got != c.want {
			t.Errorf("keeps(%v) = %v, want %v", c.t, got, c.want)
		}
	}
}
