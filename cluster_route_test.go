package zipline

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

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

// A request for a shard with no reachable primary waits for one (three
// quarters to all of FailoverWait), then fails with ErrShardDown, which matches ErrNotSent, and says
// what its last try met. A negative
// FailoverWait waits until the request's context ends.
func TestClusterFailoverWait(t *testing.T) {
	cl := testkit.NewCluster(t, testkit.ClusterConfig{})
	ctx := context.Background()
	bounded, err := New(Options{Addrs: cl.Addrs(), Logger: quiet, FailoverWait: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer bounded.Close()
	patient, err := New(Options{Addrs: cl.Addrs(), Logger: quiet, FailoverWait: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer patient.Close()
	topo, err := cl.Settle(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dead := topo.Primaries()[0]
	var downKey string
	for i := 0; downKey == ""; i++ {
		k := "fw:" + strconv.Itoa(i)
		owner, err := cl.KeyOwner(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		if owner == dead.Server {
			downKey = k
		}
	}
	if _, err := cl.KillShard(ctx, dead.Server); err != nil {
		t.Fatal(err)
	}

	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	start := time.Now()
	_, err = bounded.Get(rctx, downKey)
	took := time.Since(start)
	if !errors.Is(err, ErrShardDown) || !errors.Is(err, ErrNotSent) || !strings.Contains(err.Error(), "the last try") {
		t.Fatalf("GET on a shard down: %v, want ErrShardDown (ErrNotSent) with the last try's reason", err)
	}
	if took < 225*time.Millisecond || rctx.Err() != nil {
		t.Errorf("failed after %v: before three quarters of FailoverWait (300ms), or at the context's end", took)
	}
	tx := bounded.Tx()
	tx.Set(downKey, []byte("v"))
	if err := tx.Exec(rctx); !errors.Is(err, ErrShardDown) {
		t.Errorf("a transaction on a shard down: %v, want ErrShardDown", err)
	}

	pctx, pcancel := context.WithTimeout(ctx, time.Second)
	defer pcancel()
	if _, err := patient.Get(pctx, downKey); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("GET with FailoverWait -1 on a shard down: %v, want the context's deadline", err)
	}
	t.Logf("ErrShardDown after %v: %v", took.Round(time.Millisecond), err)
}
