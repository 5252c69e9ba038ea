// Package porting_test checks that what a go-redis service stores, a
// zipline service reads as go-redis did, and the other way round, where
// the two clients' APIs meet: struct hashes, and the typed slices of
// script replies.
package porting_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/testbed"
	"github.com/ziplinekv/zipline/testbed/servertest"
)

// profile has a field of every kind go-redis's struct hashes handle.
type profile struct {
	Name    string    `redis:"name"`
	Age     int       `redis:"age"`
	Score   float64   `redis:"score"`
	Admin   bool      `redis:"admin"`
	Visits  uint32    `redis:"visits"`
	Avatar  []byte    `redis:"avatar"`
	Joined  time.Time `redis:"joined"`
	Nick    string    `redis:"nick,omitempty"`
	Secret  string    `redis:"-"`
	Ignored string
}

// A struct written by either client reads back equal through the other:
// go-redis's HSet(ctx, key, struct) and HGetAll(...).Scan(&s), zipline's
// HSetStruct and HGetAll(...).Scan(&s) or HGetStruct; the stored fields
// are the same, byte for byte.
func TestStructHashesBetweenClients(t *testing.T) {
	srv := servertest.NewServer(t, testbed.Config{})
	ctx := context.Background()
	zc, err := zipline.New(zipline.Options{Addr: srv.Addr})
	if err != nil {
		t.Fatal(err)
	}
	defer zc.Close()
	gc := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer gc.Close()

	in := profile{Name: "Ada", Age: 36, Score: 98.25, Admin: true, Visits: 7, Avatar: []byte{0, 1, 2},
		Joined: time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.UTC), Secret: "s3cret", Ignored: "x"}
	want := in
	want.Secret, want.Ignored = "", ""

	if err := gc.HSet(ctx, "go:1", in).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := zc.HSetStruct(ctx, "zl:1", in); err != nil {
		t.Fatal(err)
	}
	goFields, _ := gc.HGetAll(ctx, "go:1").Result()
	zlFields, _ := gc.HGetAll(ctx, "zl:1").Result()
	if !reflect.DeepEqual(goFields, zlFields) {
		t.Fatalf("stored fields differ:\ngo-redis %q\nzipline  %q", goFields, zlFields)
	}
	for _, key := range []string{"go:1", "zl:1"} {
		var viaGo, viaMap, viaHMGet profile
		if err := gc.HGetAll(ctx, key).Scan(&viaGo); err != nil {
			t.Fatal(err)
		}
		m, err := zc.HGetAll(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Scan(&viaMap); err != nil {
			t.Fatal(err)
		}
		if err := zc.HGetStruct(ctx, key, &viaHMGet); err != nil {
			t.Fatal(err)
		}
		for name, got := range map[string]profile{"go-redis Scan": viaGo, "zipline FieldMap.Scan": viaMap, "zipline HGetStruct": viaHMGet} {
			if !got.Joined.Equal(want.Joined) {
				t.Errorf("%s of %s: joined %v, want %v", name, key, got.Joined, want.Joined)
			}
			got.Joined = want.Joined
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s of %s = %+v, want %+v", name, key, got, want)
			}
		}
	}
	var none profile
	if err := zc.HGetStruct(ctx, "missing", &none); err != zipline.Nil {
		t.Errorf("HGetStruct of a missing hash: %v, want Nil", err)
	}
}

// Typed slices of a script's reply read as go-redis's Int64Slice,
// StringSlice, Float64Slice and BoolSlice read them.
func TestScriptReplySlices(t *testing.T) {
	srv := servertest.NewServer(t, testbed.Config{})
	ctx := context.Background()
	zc, err := zipline.New(zipline.Options{Addr: srv.Addr})
	if err != nil {
		t.Fatal(err)
	}
	defer zc.Close()
	gc := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer gc.Close()
	const ints, strs, bools = "return {1, 2, -3}", "return {'a', 'b', 'c'}", "return {1, 0, 1}"
	zi, _ := zc.Eval(ctx, ints, nil)
	gi, _ := gc.Eval(ctx, ints, nil).Int64Slice()
	if got, err := zi.AsInt64s(); err != nil || !reflect.DeepEqual(got, gi) {
		t.Errorf("AsInt64s = %v %v, go-redis %v", got, err, gi)
	}
	zs, _ := zc.Eval(ctx, strs, nil)
	gs, _ := gc.Eval(ctx, strs, nil).StringSlice()
	if got, err := zs.AsStrings(); err != nil || !reflect.DeepEqual(got, gs) {
		t.Errorf("AsStrings = %v %v, go-redis %v", got, err, gs)
	}
	zb, _ := zc.Eval(ctx, bools, nil)
	gb, _ := gc.Eval(ctx, bools, nil).BoolSlice()
	if got, err := zb.AsBools(); err != nil || !reflect.DeepEqual(got, gb) {
		t.Errorf("AsBools = %v %v, go-redis %v", got, err, gb)
	}
	zf, _ := zc.Eval(ctx, "return {'1.5', '2', '-0.25'}", nil)
	gf, _ := gc.Eval(ctx, "return {'1.5', '2', '-0.25'}", nil).Float64Slice()
	if got, err := zf.AsFloat64s(); err != nil || !reflect.DeepEqual(got, gf) {
		t.Errorf("AsFloat64s = %v %v, go-redis %v", got, err, gf)
	}
}
