package servertest

import (
	"testing"
	"time"

	"github.com/ziplinekv/zipline/testbed"
)

// A primary paused in a subtest is failed over; the subtest's cleanup
// resumes it, and it rejoins as a replica of the node that replaced it.
func TestClusterPauseIsResumedAtCleanup(t *testing.T) {
	c := NewCluster(t, testbed.ClusterConfig{})
	ctx := t.Context()
	topo, err := c.Settle(ctx)
	if err != nil {
		t.Fatal(err)
	}
	primary := topo.Primaries()[0]
	replica := topo.Replicas(primary.ID)[0]

	t.Run("paused primary", func(t *testing.T) {
		start := time.Now()
		Pause(t, primary.Server)
		// Settle leaves the paused node out: it returns once the replica
		// has taken over its slots.
		topo, err := c.Settle(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := topo.Node(replica.Server); n.Role != testbed.Primary || len(n.Slots) == 0 {
			t.Fatalf("replica after its primary hung: %+v, want it promoted", n)
		}
		t.Logf("a paused primary was failed over in %v", time.Since(start).Round(time.Millisecond))
	})

	topo, err = c.Settle(ctx)
	if err != nil {
		t.Fatalf("after the subtest's cleanup: %v", err)
	}
	if n, _ := topo.Node(primary.Server); n.Role != testbed.Replica || n.PrimaryID != replica.ID {
		t.Fatalf("resumed node %+v, want a replica of %s", n, replica.ID)
	}
	if len(topo.Nodes) != 6 {
		t.Fatalf("%d nodes, want 6", len(topo.Nodes))
	}
}
