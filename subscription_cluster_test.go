package zipline

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/internal/testkit"
)

// One failover of a sharded channel's primary, killed under load, is one
// gap for a subscription that reads all along: every attempt to place the
// channel again while no node served its slot used to report one more
// (7-11 per failover, 20-180 ms apart; 8 here before the fix).
func TestClusterShardedChannelFailoverIsOneGap(t *testing.T) {
	c, cl := clusterClient(t, testkit.Redis, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const ch = "orders"
	sub, err := c.SSubscribe(ctx, ch)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	var gaps, after atomic.Int64 // after: messages since the first gap
	resumed := make(chan struct{})
	go func() {
		for _, err := range sub.Messages(ctx) {
			switch {
			case errors.Is(err, ErrGap):
				gaps.Add(1)
			case err != nil:
				return
			case gaps.Load() > 0:
				if after.Add(1) == 50 {
					close(resumed)
				}
			}
		}
	}()
	pub := func() {
		pctx, pcancel := context.WithTimeout(ctx, 100*time.Millisecond)
		c.Do(pctx, "SPUBLISH", ch, "m") // fails while the shard is down
		pcancel()
	}
	for range 20 {
		pub()
	}
	load := startClusterLoad(c, 200)
	defer load.finish()
	owner, err := cl.KeyOwner(ctx, ch)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Kill(ctx, owner); err != nil {
		t.Fatal(err)
	}
	tick := time.NewTicker(2 * time.Millisecond) // the publishing rate
	defer tick.Stop()
	for done := false; !done; {
		select {
		case <-resumed:
			done = true
		case <-ctx.Done():
			t.Fatalf("messages did not resume after the failover (%d gaps, %d messages after)", gaps.Load(), after.Load())
		case <-tick.C:
			pub()
		}
	}
	if n := gaps.Load(); n != 1 {
		t.Errorf("one failover gave %d gaps, want 1", n)
	}
}
