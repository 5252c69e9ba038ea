package zipline

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/codec"
)

// In a Batch, a command the client refuses fails alone, with its own name,
// and the others run; a Tx stays all or nothing. With compression on, a
// batch of Set, Append and Do("SETRANGE") used to send nothing, every
// future (Set's too) reporting APPEND's error.
func TestBatchRefusedCommandFailsAlone(t *testing.T) {
	ctx := context.Background()
	c, _ := newTestClient(t, Options{Compression: Compression{Backend: codec.Zstd}})
	refusedAs := func(err error, name string) bool {
		var ce *CommandError
		return errors.As(err, &ce) && ce.Command == name
	}

	b := c.Batch()
	set := b.Set("k", []byte("v"))
	app := b.Append("k", []byte("x"))
	sr := b.Do("SETRANGE", "k", 0, "x")
	bad := b.Do("GET", struct{}{}) // an argument Do cannot encode
	get := b.Get("k")
	err := b.Exec(ctx)
	if !refusedAs(err, "APPEND") {
		t.Errorf("Exec = %v, want APPEND's refusal (the first error)", err)
	}
	if ok, err := set.Result(); !ok || err != nil {
		t.Errorf("Set = %v, %v; want it run", ok, err)
	}
	if _, err := app.Result(); !refusedAs(err, "APPEND") {
		t.Errorf("Append = %v, want its own refusal", err)
	}
	if _, err := sr.Result(); !refusedAs(err, "SETRANGE") {
		t.Errorf("SETRANGE = %v, want its own refusal", err)
	}
	if _, err := bad.Result(); err == nil || !strings.Contains(err.Error(), "GET") {
		t.Errorf("Do with a bad argument = %v, want its own error", err)
	}
	if v, err := get.Result(); err != nil || string(v) != "v" {
		t.Errorf("Get = %q, %v; want the value Set stored", v, err)
	}

	// A batch of refused commands only sends nothing, and says why.
	b = c.Batch()
	app = b.Append("k", []byte("x"))
	if err := b.Exec(ctx); !refusedAs(err, "APPEND") || !refusedAs(app.Err(), "APPEND") {
		t.Errorf("all refused: Exec %v, Append %v", err, app.Err())
	}

	// A transaction is all or nothing: nothing runs.
	tx := c.Tx()
	set = tx.Set("t", []byte("v"))
	tx.Append("t", []byte("x"))
	get = tx.Get("t")
	if err := tx.Exec(ctx); !refusedAs(err, "APPEND") {
		t.Errorf("Tx Exec = %v, want APPEND's refusal", err)
	}
	if !refusedAs(set.Err(), "APPEND") || !refusedAs(get.Err(), "APPEND") {
		t.Errorf("Tx futures: Set %v, Get %v; want the refusal", set.Err(), get.Err())
	}
	if _, err := c.Get(ctx, "t"); !errors.Is(err, Nil) {
		t.Errorf("a refused Tx ran its Set: %v", err)
	}
}

// Expiry values mean what go-redis's mean where go-redis gives them one (0:
// no expiry; a zero ExpireAt: none), and the rest are refused client-side
// with an *ArgumentError instead of reaching the server.
func TestExpiryValues(t *testing.T) {
	ctx := context.Background()
	c, _ := newTestClient(t, Options{})
	ttl := func(key string) time.Duration {
		t.Helper()
		return must(c.PTTL(ctx, key))(t)
	}
	for _, exp := range [][]Expiry{{EX(0)}, {PX(0)}, {Expiry{}}, {ExpireAt(time.Time{})}, {}, {Expiry{}, EX(0)}} {
		mustOK(t, c.Set(ctx, "k", []byte("v"), EX(time.Hour)))
		if err := c.Set(ctx, "k", []byte("v"), exp...); err != nil {
			t.Fatalf("Set with %v: %v", exp, err)
		}
		if d := ttl("k"); d != NoExpiry {
			t.Errorf("Set with %v left TTL %v, want none", exp, d)
		}
		if _, err := c.GetEx(ctx, "k", exp...); err != nil {
			t.Errorf("GetEx with %v: %v", exp, err)
		}
	}
	mustOK(t, c.Set(ctx, "k", []byte("v"), EX(time.Hour)))
	mustOK(t, c.Set(ctx, "k", []byte("w"), KeepTTL()))
	if d := ttl("k"); d < 59*time.Minute {
		t.Errorf("KeepTTL: TTL %v", d)
	}
	if _, err := c.GetEx(ctx, "k", Persist()); err != nil || ttl("k") != NoExpiry {
		t.Errorf("GetEx Persist: %v, TTL %v", err, ttl("k"))
	}

	invalid := func(what string, err error) {
		t.Helper()
		var ae *ArgumentError
		if !errors.As(err, &ae) || !errors.Is(err, ErrInvalidArgument) || !errors.Is(err, ErrNotSent) {
			t.Errorf("%s: %v, want an *ArgumentError", what, err)
		}
	}
	mustOK(t, c.Set(ctx, "k", []byte("v"), EX(time.Hour)))
	invalid("Set EX(-1s)", c.Set(ctx, "k", []byte("x"), EX(-time.Second)))
	invalid("Set PX(-5ms)", c.Set(ctx, "k", []byte("x"), PX(-5*time.Millisecond)))
	invalid("Set before 1970", c.Set(ctx, "k", []byte("x"), ExpireAt(time.Unix(-10, 0))))
	invalid("Set EX and PX", c.Set(ctx, "k", []byte("x"), EX(time.Second), PX(time.Minute)))
	invalid("Set Persist", c.Set(ctx, "k", []byte("x"), Persist()))
	_, err := c.SetNX(ctx, "k", []byte("x"), KeepTTL(), EX(time.Second))
	invalid("SetNX KeepTTL and EX", err)
	_, err = c.GetEx(ctx, "k", KeepTTL())
	invalid("GetEx KeepTTL", err)
	_, err = c.GetEx(ctx, "k", EX(-time.Second))
	invalid("GetEx EX(-1s)", err)
	if v := must(c.Get(ctx, "k"))(t); string(v) != "v" || ttl("k") < 59*time.Minute {
		t.Errorf("a refused command changed the key: %q, TTL %v", v, ttl("k"))
	}

	// In a batch the refused Set fails alone.
	b := c.Batch()
	bad := b.Set("k", []byte("x"), EX(-time.Second))
	good := b.Set("k2", []byte("y"), EX(0))
	err = b.Exec(ctx)
	invalid("Batch Exec", err)
	invalid("Batch Set", bad.Err())
	if good.Err() != nil || ttl("k2") != NoExpiry {
		t.Errorf("the batch's valid Set: %v, TTL %v", good.Err(), ttl("k2"))
	}
}
