package zipline

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/internal/testkit"
)

func fv(kv ...string) []FieldValue {
	var out []FieldValue
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, FieldValue{kv[i], []byte(kv[i+1])})
	}
	return out
}

func TestStreams(t *testing.T) {
	onEveryServer(t, func(t *testing.T, c *Client, _ testkit.Kind) {
		ctx := context.Background()
		id1 := must(c.XAdd(ctx, XAddArgs{Stream: "s", ID: "1-1", Values: fv("a", "1", "b", "")}))(t)
		eq(t, "XAdd ID", id1, "1-1")
		must(c.XAdd(ctx, XAddArgs{Stream: "s", ID: "2-1", Values: fv("a", "2")}))(t)
		id3 := must(c.XAdd(ctx, XAddArgs{Stream: "s", Values: fv("a", "3")}))(t)
		if id3 == "" || id3 == "2-1" {
			t.Fatalf("XAdd * ID %q", id3)
		}
		if _, err := c.XAdd(ctx, XAddArgs{Stream: "missing", NoMkStream: true, Values: fv("a", "1")}); !errors.Is(err, Nil) {
			t.Errorf("XAdd NOMKSTREAM on a missing stream: %v, want Nil", err)
		}
		eq(t, "XLen", must(c.XLen(ctx, "s"))(t), int64(3))
		all := must(c.XRange(ctx, "s", "-", "+"))(t)
		if len(all) != 3 || all[0].ID != "1-1" || len(all[0].Values) != 2 {
			t.Fatalf("XRange = %+v", all)
		}
		if v, ok := all[0].Value("b"); !ok || v == nil || len(v) != 0 {
			t.Errorf("empty field value: %q %v", v, ok)
		}
		eq(t, "XRangeN", len(must(c.XRangeN(ctx, "s", "-", "+", 2))(t)), 2)
		rev := must(c.XRevRange(ctx, "s", "+", "-"))(t)
		eq(t, "XRevRange first", rev[0].ID, id3)
		eq(t, "XRevRangeN", must(c.XRevRangeN(ctx, "s", "+", "-", 1))(t)[0].ID, id3)
		eq(t, "XDel", must(c.XDel(ctx, "s", "2-1", "9-9"))(t), int64(1))
		must(c.XAdd(ctx, XAddArgs{Stream: "s", MaxLen: 10, Values: fv("a", "4")}))(t)
		eq(t, "XTrim MaxLen", must(c.XTrim(ctx, "s", XTrimArgs{MaxLen: 2}))(t), int64(1))
		eq(t, "XLen after trim", must(c.XLen(ctx, "s"))(t), int64(2))

		// XREAD: non-blocking, nothing new (Nil), and blocking until an
		// XADD from another goroutine.
		got := must(c.XRead(ctx, XReadArgs{Streams: []string{"s"}, IDs: []string{"0"}}))(t)
		if len(got) != 1 || got[0].Stream != "s" || len(got[0].Messages) != 2 {
			t.Fatalf("XRead = %+v", got)
		}
		if _, err := c.XRead(ctx, XReadArgs{Streams: []string{"s"}, IDs: []string{"$"}}); !errors.Is(err, Nil) {
			t.Errorf("XRead of nothing new: %v, want Nil", err)
		}
		start := time.Now()
		if _, err := c.XRead(ctx, XReadArgs{Streams: []string{"s"}, IDs: []string{"$"}, Block: 50 * time.Millisecond}); !errors.Is(err, Nil) || time.Since(start) < 40*time.Millisecond {
			t.Errorf("XRead BLOCK 50ms: %v after %v, want Nil after the wait", err, time.Since(start))
		}
		woke := make(chan []XStream, 1)
		go func() {
			r, _ := c.XRead(ctx, XReadArgs{Streams: []string{"s"}, IDs: []string{"$"}, Block: BlockForever})
			woke <- r
		}()
		// The read blocks on a dedicated connection: the shared one still
		// serves this XADD, which wakes it (retried until it does, since
		// the read may not be waiting yet).
		var r []XStream
		for r == nil {
			must(c.XAdd(ctx, XAddArgs{Stream: "s", Values: fv("wake", "up")}))(t)
			select {
			case r = <-woke:
			case <-time.After(100 * time.Millisecond):
			}
		}
		if v, _ := r[0].Messages[0].Value("wake"); string(v) != "up" {
			t.Errorf("blocking XRead got %+v", r)
		}
		if _, err := c.XRead(ctx, XReadArgs{Streams: []string{"s", "t"}, IDs: []string{"0"}}); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("XRead with an ID short: %v", err)
		}

		// Consumer groups.
		mustOK(t, c.XGroupCreate(ctx, "s", "g", "0"))
		mustOK(t, c.XGroupCreateMkStream(ctx, "s2", "g", "$"))
		eq(t, "XGroupCreateConsumer", must(c.XGroupCreateConsumer(ctx, "s", "g", "c0"))(t), int64(1))
		rg := must(c.XReadGroup(ctx, XReadGroupArgs{Group: "g", Consumer: "c1", Streams: []string{"s"}, IDs: []string{">"}, Count: 2}))(t)
		if len(rg) != 1 || len(rg[0].Messages) != 2 {
			t.Fatalf("XReadGroup = %+v", rg)
		}
		first := rg[0].Messages[0].ID
		p := must(c.XPending(ctx, "s", "g"))(t)
		if p.Count != 2 || p.Lower != first || p.Consumers["c1"] != 2 {
			t.Errorf("XPending = %+v", p)
		}
		pe := must(c.XPendingExt(ctx, XPendingExtArgs{Stream: "s", Group: "g", Start: "-", End: "+", Count: 10}))(t)
		if len(pe) != 2 || pe[0].Consumer != "c1" || pe[0].RetryCount != 1 {
			t.Errorf("XPendingExt = %+v", pe)
		}
		claimed := must(c.XClaim(ctx, XClaimArgs{Stream: "s", Group: "g", Consumer: "c2", Messages: []string{first}}))(t)
		if len(claimed) != 1 || claimed[0].ID != first {
			t.Errorf("XClaim = %+v", claimed)
		}
		eq(t, "XClaimJustID", len(must(c.XClaimJustID(ctx, XClaimArgs{Stream: "s", Group: "g", Consumer: "c1", Messages: []string{first}}))(t)), 1)
		ac := must(c.XAutoClaim(ctx, XAutoClaimArgs{Stream: "s", Group: "g", Consumer: "c3", Start: "0-0", Count: 10}))(t)
		if ac.Next != "0-0" || len(ac.Messages) != 2 {
			t.Errorf("XAutoClaim = %+v", ac)
		}
		acid := must(c.XAutoClaimJustID(ctx, XAutoClaimArgs{Stream: "s", Group: "g", Consumer: "c4", Start: "0-0"}))(t)
		if len(acid.IDs) != 2 || len(acid.Messages) != 0 {
			t.Errorf("XAutoClaimJustID = %+v", acid)
		}
		eq(t, "XAck", must(c.XAck(ctx, "s", "g", first, "0-1"))(t), int64(1))
		info := must(c.XInfoStream(ctx, "s"))(t)
		if info.Length != must(c.XLen(ctx, "s"))(t) || info.Groups != 1 || info.FirstEntry.ID == "" || info.LastEntry.ID == "" {
			t.Errorf("XInfoStream = %+v", info)
		}
		groups := must(c.XInfoGroups(ctx, "s"))(t)
		if len(groups) != 1 || groups[0].Name != "g" || groups[0].Pending != 1 {
			t.Errorf("XInfoGroups = %+v", groups)
		}
		consumers := must(c.XInfoConsumers(ctx, "s", "g"))(t)
		if len(consumers) < 4 {
			t.Errorf("XInfoConsumers = %+v", consumers)
		}
		mustOK(t, c.XGroupSetID(ctx, "s", "g", "0"))
		eq(t, "XGroupDelConsumer", must(c.XGroupDelConsumer(ctx, "s", "g", "c4"))(t), int64(1))
		eq(t, "XGroupDestroy", must(c.XGroupDestroy(ctx, "s", "g"))(t), int64(1))

		// In a batch and a transaction, the same results.
		for _, b := range []*Batch{c.Batch(), c.Tx()} {
			add := b.XAdd(XAddArgs{Stream: "bs", ID: "5-5", Values: fv("k", "v")})
			rng := b.XRange("bs", "-", "+")
			rd := b.XRead(XReadArgs{Streams: []string{"bs"}, IDs: []string{"0"}})
			mustOK(t, b.Exec(ctx))
			if add.Val() != "5-5" || len(rng.Val()) != 1 || len(rd.Val()) != 1 {
				t.Errorf("batched: %v %+v %+v (%v %v %v)", add.Val(), rng.Val(), rd.Val(), add.Err(), rng.Err(), rd.Err())
			}
			must(c.Del(ctx, "bs"))(t)
		}
	})
}
