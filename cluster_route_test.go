package zipline

import (
	"context"
	"testing"

	"github.com/ziplinekv/zipline/internal/testkit"
)

// A Client that reads from replicas has READONLY on every connection, so
// a primary that has just been demoted runs a script sent to it by routes
// not yet updated, rather than answer MOVED, and the script's first write
// fails ("access a non local key"): nothing was written, and the script
// goes once more at the next routes, to the new primary.
func TestClusterScriptOnDemotedPrimary(t *testing.T) {
	for _, kind := range []testkit.Kind{testkit.Redis, testkit.Valkey} {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			testScriptOnDemotedPrimary(t, kind)
		})
	}
}

func testScriptOnDemotedPrimary(t *testing.T, kind testkit.Kind) {
	c, cl := clusterClient(t, kind, Options{ReadFrom: ReadPreferReplica})
	ctx := context.Background()
	incr := NewScript("return redis.call('INCR', KEYS[1])")
	const key = "demoted:n"
	if _, err := incr.Run(ctx, c, []string{key}); err != nil {
		t.Fatal(err)
	}
	owner, err := cl.KeyOwner(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	topo, err := cl.Settle(ctx)
	if err != nil {
		t.Fatal(err)
	}
	primary, _ := topo.Node(owner)
	replica := topo.Replicas(primary.ID)[0]
	if _, err := cl.Failover(ctx, replica.Server); err != nil {
		t.Fatal(err)
	}
	v, err := incr.Run(ctx, c, []string{key})
	if err != nil {
		t.Fatalf("a script right after its shard's failover: %v", err)
	}
	if n, _ := v.AsInt64(); n != 2 {
		t.Errorf("the script ran to %d, want 2: run twice, or not at all", n)
	}
}
