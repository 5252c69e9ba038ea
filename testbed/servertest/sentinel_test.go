package servertest

import (
	"testing"

	"github.com/ziplinekv/zipline/testbed"
)

// A sentinel paused in a subtest is left out while it is paused, and the
// subtest's cleanup resumes it; the group settles with all three again.
func TestSentinelPauseIsResumedAtCleanup(t *testing.T) {
	g := NewSentinel(t, testbed.SentinelConfig{Replicas: 1})
	ctx := t.Context()
	p, err := g.Settle(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p != g.Nodes()[0] || len(g.Sentinels()) != 3 {
		t.Fatalf("primary %s, %d sentinels; want %s and 3", p.Addr, len(g.Sentinels()), g.Nodes()[0].Addr)
	}

	t.Run("paused sentinel", func(t *testing.T) {
		Pause(t, g.Sentinels()[0])
		if p2, err := g.Primary(ctx); err != nil || p2 != p {
			t.Fatalf("Primary with a sentinel paused: %v %v, want %s", p2, err, p.Addr)
		}
	})

	if _, err := g.Settle(ctx); err != nil {
		t.Fatalf("after the subtest's cleanup: %v", err)
	}
	if v, err := g.Sentinels()[0].Do(ctx, "PING"); err != nil || string(v.Bytes()) != "PONG" {
		t.Fatalf("resumed sentinel: %v %v", v, err)
	}
}
