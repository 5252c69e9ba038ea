package zipline

import (
	"context"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/internal/testkit"
)

// A rolling restart of a cluster as operators run one, beside 256
// goroutines writing and reading their own keys (reads from the replicas,
// ReadPreferReplica): shard by shard, the replica restarted and
// waited for until in sync, CLUSTER FAILOVER to it, then the former
// primary restarted and waited for. Every switch is graceful (a manual
// failover hands over with nothing lost; the restarted nodes serve no
// slot), so no call fails, no acknowledged write is lost and no value is
// wrong: a read in flight on a replica as it stops goes again to the
// primary. One round here; two under make soak.
func TestClusterRollingRestartUnderLoad(t *testing.T) {
	rounds := rollingRounds()
	for _, kind := range []testkit.Kind{testkit.Redis, testkit.Valkey} {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			c, cl := clusterClient(t, kind, Options{ReadFrom: ReadPreferReplica})
			ctx := context.Background()
			l := startClusterLoad(c, 256)
			ps := startPubSubLoad(t, c, true, channelPerShard()...)
			l.waitOK(t, 20000)
			start := time.Now()
			switches := 0
			restart := func(node *testkit.Server) {
				t.Helper()
				if _, err := cl.Restart(ctx, node); err != nil {
					t.Fatal(err)
				}
				if err := cl.AwaitReplicas(ctx); err != nil {
					t.Fatal(err)
				}
			}
			for range rounds {
				for shard := range 3 {
					topo, err := cl.Settle(ctx)
					if err != nil {
						t.Fatal(err)
					}
					primary := topo.Primaries()[shard]
					replica := topo.Replicas(primary.ID)[0]
					restart(replica.Server)
					if _, err := cl.Failover(ctx, replica.Server); err != nil {
						t.Fatal(err)
					}
					switches++
					restart(primary.Server)
					l.waitOK(t, 2000)
				}
			}
			failures := l.finish()
			l.readBack = readFromPrimaries(t, Options{Addrs: cl.Addrs()[:1]})
			published, gaps := ps.finish(t)
			failures = append(failures, published...)
			reportFailures(t, failures)
			l.verify(t, nil)
			if gaps > 2*switches { // one per switch, two under load (the routes change twice)
				t.Errorf("pub/sub: %d gaps reported through %d switches, want at most two per switch", gaps, switches)
			}
			t.Logf("%s: %d switches in %v, %d calls ok, %d failed, %d pub/sub gaps", kind, switches, time.Since(start).Round(time.Millisecond), l.ok.Load(), len(failures), gaps)
		})
	}
}

// The same of a Sentinel group (a primary and two replicas): each replica
// restarted, SENTINEL FAILOVER, the former primary restarted. The writes
// wait from the failover's start until the new primary is announced, the
// sentinel's CLIENT KILL on the former primary finds none in flight, and
// the reads it cuts go again: no call fails, nothing acknowledged is lost.
func TestSentinelRollingRestartUnderLoad(t *testing.T) {
	rounds := rollingRounds()
	for _, kind := range []testkit.Kind{testkit.Redis, testkit.Valkey} {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			c, g := sentinelClient(t, testkit.SentinelConfig{Kind: kind}, Options{ReadFrom: ReadPreferReplica})
			ctx := context.Background()
			l := startClusterLoad(c, 256)
			ps := startPubSubLoad(t, c, false, "ps:a", "ps:b")
			l.waitOK(t, 20000)
			start := time.Now()
			restart := func(node *testkit.Server) {
				t.Helper()
				if _, err := g.RestartNode(ctx, node); err != nil {
					t.Fatal(err)
				}
			}
			for range rounds {
				replicas, err := g.Replicas(ctx)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range replicas {
					restart(r)
				}
				f, err := g.Failover(ctx)
				if err != nil {
					t.Fatal(err)
				}
				restart(f.Former)
				l.waitOK(t, 2000)
			}
			failures := l.finish()
			l.readBack = readFromPrimaries(t, Options{Sentinel: Sentinel{MasterName: g.MasterName, Addrs: g.SentinelAddrs()}})
			published, gaps := ps.finish(t)
			failures = append(failures, published...)
			reportFailures(t, failures)
			l.verify(t, nil)
			if gaps > 2*rounds { // one per switch, two under load (the routes change twice)
				t.Errorf("pub/sub: %d gaps reported through %d switches, want at most two per switch", gaps, rounds)
			}
			t.Logf("%s: %d switches in %v, %d calls ok, %d failed, %d pub/sub gaps", kind, rounds, time.Since(start).Round(time.Millisecond), l.ok.Load(), len(failures), gaps)
		})
	}
}

// readFromPrimaries opens a Client that reads from the primaries, for
// reading the keys back after a load that read from replicas (whose last
// writes may not have reached every replica yet: lag, not loss).
func readFromPrimaries(t *testing.T, opts Options) *Client {
	t.Helper()
	opts.Logger = quiet
	c, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// rollingRounds is how many times round a rolling restart goes: once in
// make test, twice under make soak.
func rollingRounds() int {
	if *soakFor != 0 {
		return 2
	}
	return 1
}

// reportFailures fails the test with the first ten failed calls.
func reportFailures(t *testing.T, failures []failure) {
	t.Helper()
	for i, f := range failures {
		if i == 10 {
			t.Errorf("... %d failures in all", len(failures))
			return
		}
		t.Errorf("call failed during the rolling restart at %v: %v", f.at, f.err)
	}
}
