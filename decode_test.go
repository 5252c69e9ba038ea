package zipline

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/codec"
)

// An empty string is a value, not a missing one: every read that returns
// bytes keeps "" (non-nil, empty) apart from a missing key or field (nil),
// on RESP2 and RESP3, compressed or not, whichever way the command is sent.
func TestEmptyStringIsNotMissing(t *testing.T) {
	for _, proto := range []int{2, 3} {
		for _, comp := range []Compression{{}, {Backend: codec.Zstd, MinSize: 6, Families: Hashes | Lists}} {
			t.Run(fmt.Sprintf("resp%d/%v", proto, comp.Backend), func(t *testing.T) {
				opts := Options{Protocol: proto, Compression: comp}
				if proto == 3 { // the client-side cache needs RESP3
					opts.ClientCache = ClientCache{MaxBytes: 1 << 20}
				}
				c, _ := newTestClient(t, opts)
				testEmptyStringIsNotMissing(t, c)
			})
		}
	}
}

func testEmptyStringIsNotMissing(t *testing.T, c *Client) {
	ctx := context.Background()
	mustOK(t, c.Set(ctx, "s", []byte("v")))
	mustOK(t, c.Set(ctx, "e", []byte("")))
	must(c.HSet(ctx, "h", FieldValue{"f", []byte("v")}, FieldValue{"empty", nil}))(t)
	must(c.RPush(ctx, "l", []byte(""), []byte("v")))(t)

	// want describes a reply: "-" for nil, anything else for those bytes.
	check := func(what string, got [][]byte, err error, want ...string) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d elements, want %d", what, len(got), len(want))
		}
		for i, w := range want {
			switch {
			case w == "-" && got[i] != nil:
				t.Errorf("%s[%d] = %q, want nil (missing)", what, i, got[i])
			case w != "-" && (got[i] == nil || string(got[i]) != w):
				t.Errorf("%s[%d] = %q (nil %v), want %q", what, i, got[i], got[i] == nil, w)
			}
		}
	}
	one := func(what string, b []byte, err error) {
		t.Helper()
		check(what, [][]byte{b}, err, "")
	}

	v, err := c.Get(ctx, "e")
	one("Get", v, err)
	if _, err := c.Get(ctx, "missing"); !errors.Is(err, Nil) {
		t.Fatalf("Get(missing): %v, want Nil", err)
	}
	vs, err := c.MGet(ctx, "s", "e", "missing")
	check("MGet", vs, err, "v", "", "-")
	vs, err = c.MGet(ctx, "e")
	check("MGet(e)", vs, err, "")
	v, err = c.HGet(ctx, "h", "empty")
	one("HGet", v, err)
	vs, err = c.HMGet(ctx, "h", "f", "empty", "missing")
	check("HMGet", vs, err, "v", "", "-")
	m, err := c.HGetAll(ctx, "h")
	if err != nil || m["empty"] == nil || len(m["empty"]) != 0 {
		t.Errorf("HGetAll[empty] = %q (nil %v), %v", m["empty"], m["empty"] == nil, err)
	}
	vs, err = c.LRange(ctx, "l", 0, -1)
	check("LRange", vs, err, "", "v")
	v, err = c.LIndex(ctx, "l", 0)
	one("LIndex", v, err)

	b := c.Batch()
	fm := b.MGet("s", "e", "missing")
	fh := b.HMGet("h", "empty", "missing")
	fg := b.Get("e")
	mustOK(t, b.Exec(ctx))
	vs, err = fm.Result()
	check("Batch.MGet", vs, err, "v", "", "-")
	vs, err = fh.Result()
	check("Batch.HMGet", vs, err, "", "-")
	v, err = fg.Result()
	one("Batch.Get", v, err)

	tx := c.Tx()
	fm = tx.MGet("s", "e", "missing")
	mustOK(t, tx.Exec(ctx))
	vs, err = fm.Result()
	check("Tx.MGet", vs, err, "v", "", "-")

	for round := range 2 { // the second round is served from the cache
		vs, err = c.Cached(time.Minute).MGet(ctx, "s", "e", "missing")
		check(fmt.Sprintf("Cached.MGet round %d", round), vs, err, "v", "", "-")
		v, err = c.Cached(time.Minute).Get(ctx, "e")
		one(fmt.Sprintf("Cached.Get round %d", round), v, err)
	}

	dv, err := c.Do(ctx, "MGET", "s", "e", "missing")
	if err != nil {
		t.Fatal(err)
	}
	elems, _ := dv.AsSlice()
	if len(elems) != 3 || elems[1].IsNil() || !elems[2].IsNil() {
		t.Errorf("Do MGET = %v", dv)
	}
	if b, err := elems[1].AsBytes(); err != nil || b == nil || len(b) != 0 {
		t.Errorf("Do MGET element 1 = %q (nil %v), %v", b, b == nil, err)
	}
}
