package zipline

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"
)

// Options that go-redis or the server would refuse, or that an earlier
// zipline sent otherwise than asked, are refused before sending or sent as
// asked: never silently dropped, never a wider delete than asked.
func TestOptionsThatCannotSurprise(t *testing.T) {
	c, _ := newTestClient(t, Options{})
	ctx := context.Background()
	invalid := func(what string, err error) {
		t.Helper()
		var ae *ArgumentError
		if !errors.As(err, &ae) || !errors.Is(err, ErrInvalidArgument) || !errors.Is(err, ErrNotSent) {
			t.Errorf("%s: %v, want an *ArgumentError before sending", what, err)
		}
	}
	stream := func(name string, n int) {
		t.Helper()
		c.Del(ctx, name)
		for i := range n {
			must(c.XAdd(ctx, XAddArgs{Stream: name, ID: strconv.Itoa(i+1) + "-0", Values: []FieldValue{{"f", []byte("v")}}}))(t)
		}
	}

	// XTRIM MAXLEN ~ 0 LIMIT 1 is sent as such (it was an exact MAXLEN 0,
	// which removed every entry), and removes what the server's own
	// answer to that command removes.
	stream("x1", 4)
	stream("x2", 4)
	got, err := c.XTrim(ctx, "x1", XTrimArgs{MaxLen: 0, Approx: true, Limit: 1})
	want, werr := c.Do(ctx, "XTRIM", "x2", "MAXLEN", "~", 0, "LIMIT", 1)
	if n, _ := want.AsInt64(); err != nil || werr != nil || got != n || got == 4 {
		t.Errorf("XTrim{MaxLen: 0, Approx, Limit: 1} removed %d (%v), the server's MAXLEN ~ 0 LIMIT 1 %v (%v)", got, err, want, werr)
	}
	if n, _ := c.XLen(ctx, "x1"); n != 4-got {
		t.Errorf("XLEN after the trim: %d", n)
	}
	if n, err := c.XTrim(ctx, "x1", XTrimArgs{}); err != nil || n != 4-got {
		t.Errorf("the zero XTrimArgs trims to nothing: %d %v", n, err)
	}
	_, err = c.XTrim(ctx, "x2", XTrimArgs{MaxLen: 1, Limit: 1})
	invalid("XTrim with Limit and no Approx", err)
	_, err = c.XTrim(ctx, "x2", XTrimArgs{MaxLen: 1, MinID: "2-0"})
	invalid("XTrim with MaxLen and MinID", err)
	_, err = c.XTrim(ctx, "x2", XTrimArgs{MaxLen: -1})
	invalid("XTrim with a negative MaxLen", err)
	if n, _ := c.XLen(ctx, "x2"); n != 4-mustInt(want) {
		t.Errorf("a refused XTrim trimmed: XLEN %d", n)
	}

	// XADD: Approx or Limit with no trim is refused (go-redis drops
	// Approx and sends a LIMIT the server refuses); a trim with them runs.
	_, err = c.XAdd(ctx, XAddArgs{Stream: "x3", Approx: true, Limit: 1, Values: []FieldValue{{"f", []byte("v")}}})
	invalid("XAdd with Approx and Limit but no MaxLen or MinID", err)
	_, err = c.XAdd(ctx, XAddArgs{Stream: "x3", Approx: true, Values: []FieldValue{{"f", []byte("v")}}})
	invalid("XAdd with Approx but no MaxLen or MinID", err)
	_, err = c.XAdd(ctx, XAddArgs{Stream: "x3", MaxLen: 2, Limit: 5, Values: []FieldValue{{"f", []byte("v")}}})
	invalid("XAdd with Limit on an exact trim", err)
	if n, _ := c.Exists(ctx, "x3"); n != 0 {
		t.Error("a refused XAdd added an entry")
	}
	if _, err := c.XAdd(ctx, XAddArgs{Stream: "x3", MaxLen: 2, Approx: true, Limit: 5, Values: []FieldValue{{"f", []byte("v")}}}); err != nil {
		t.Errorf("XAdd with MaxLen, Approx and Limit: %v", err)
	}

	// LMPOP, ZMPOP (and their blocking forms) with a count under 1: refused
	// (they popped one); SINTERCARD, ZINTERCARD with a negative limit:
	// refused (they dropped the LIMIT).
	must(c.RPush(ctx, "l", []byte("a"), []byte("b")))(t)
	must(c.ZAdd(ctx, "z", Z{Member: "a", Score: 1}, Z{Member: "b", Score: 2}))(t)
	for _, n := range []int64{0, -1} {
		_, err = c.LMPop(ctx, Left, n, "l")
		invalid("LMPop count "+strconv.FormatInt(n, 10), err)
		_, err = c.BLMPop(ctx, time.Second, Left, n, "l")
		invalid("BLMPop count "+strconv.FormatInt(n, 10), err)
		_, err = c.ZMPop(ctx, MinScore, n, "z")
		invalid("ZMPop count "+strconv.FormatInt(n, 10), err)
		_, err = c.BZMPop(ctx, time.Second, MinScore, n, "z")
		invalid("BZMPop count "+strconv.FormatInt(n, 10), err)
	}
	if n, _ := c.LLen(ctx, "l"); n != 2 {
		t.Errorf("a refused LMPOP popped: %d left", n)
	}
	must(c.SAdd(ctx, "s1", "a", "b"))(t)
	must(c.SAdd(ctx, "s2", "a", "b"))(t)
	_, err = c.SInterCard(ctx, -1, "s1", "s2")
	invalid("SInterCard limit -1", err)
	_, err = c.ZInterCard(ctx, -1, "z", "z")
	invalid("ZInterCard limit -1", err)
	if n, err := c.SInterCard(ctx, 0, "s1", "s2"); err != nil || n != 2 {
		t.Errorf("SInterCard limit 0 (none): %d %v", n, err)
	}
	b := c.Batch()
	f := b.LMPop(Left, 0, "l")
	if err := b.Exec(ctx); !errors.Is(err, ErrInvalidArgument) || !errors.Is(f.Err(), ErrInvalidArgument) {
		t.Errorf("LMPop count 0 in a Batch: %v, %v", err, f.Err())
	}

	// GEOSEARCH WITHDIST without WITHCOORD: zero coordinates, not NaN.
	must(c.GeoAdd(ctx, "g", GeoLocation{Name: "a", Longitude: 13.4, Latitude: 52.5}))(t)
	ls, err := c.GeoSearchLocation(ctx, "g", GeoSearchLocationQuery{GeoSearchQuery: GeoSearchQuery{
		Longitude: 13.4, Latitude: 52.5, Radius: 10, Unit: "km"}, WithDist: true})
	if err != nil || len(ls) != 1 || ls[0].Longitude != 0 || ls[0].Latitude != 0 {
		t.Errorf("GeoSearchLocation WithDist alone: %+v %v, want zero coordinates", ls, err)
	}

	// ExpireAtIf with the zero condition is ExpireAt (it sent "" and
	// failed on every call).
	must(c.IncrBy(ctx, "counter", 1))(t)
	at := time.Now().Add(time.Hour)
	if ok, err := c.ExpireAtIf(ctx, "counter", at, ""); err != nil || !ok {
		t.Errorf("ExpireAtIf with no condition: %v %v", ok, err)
	}
	if ttl, _ := c.TTL(ctx, "counter"); ttl < 59*time.Minute {
		t.Errorf("ExpireAtIf with no condition set a TTL of %v", ttl)
	}
}

func mustInt(v Value) int64 { n, _ := v.AsInt64(); return n }
