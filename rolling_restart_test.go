package zipline

import (
	"context"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/codec"
	"github.com/ziplinekv/zipline/internal/testkit"
)

// A rolling restart of a cluster as operators run one, beside 256
// goroutines writing and reading their own keys (reads from the replicas,
// ReadPreferReplica), 16 more running MSET, MGET, batches, transactions
// and Watch, and sharded pub/sub: shard by shard, the replica restarted
// and waited for until in sync, CLUSTER FAILOVER to it, then the former
// primary restarted and waited for. Every switch is graceful (a manual
// failover hands over with nothing lost; the restarted nodes serve no
// slot), so no call fails, no acknowledged write is lost and no value is
// wrong: a read in flight on a replica as it stops goes again to the
// primary. On Valkey the values are compressed (see rollingShape). A
// Client opened before the restarts and idle through them reads every key
// back. Both with replica reads and with every command on the primaries,
// where the writes in flight to a former primary are the ones a client
// that sent the whole shard back to it (a stale shard map, see
// TestStaleMapDoesNotUndoAFailover) lost as it restarted. One round here;
// two under make soak.
func TestClusterRollingRestartUnderLoad(t *testing.T) {
	rounds := rollingRounds()
	for _, run := range []struct {
		kind testkit.Kind
		read ReadFrom
	}{{testkit.Redis, ReadPreferReplica}, {testkit.Valkey, ReadPreferReplica}, {testkit.Redis, ReadPrimary}, {testkit.Valkey, ReadPrimary}} {
		kind := run.kind
		name := string(kind) + "/replica-reads"
		if run.read == ReadPrimary {
			name = string(kind) + "/primaries"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			opts, shape := rollingShape(kind)
			opts.ReadFrom = run.read
			c, cl := clusterClient(t, kind, opts)
			ctx := context.Background()
			l := startShapedLoad(c, 256, shape)
			ps := startPubSubLoad(t, c, true, channelPerShard()...)
			idle := readFromPrimaries(t, Options{Addrs: cl.Addrs()[:1], Compression: opts.Compression})
			l.waitOK(t, 20000)
			start := time.Now()
			switches := 0
			for range rounds {
				for shard := range 3 {
					if _, err := cl.RollShard(ctx, shard, false); err != nil {
						t.Fatal(err)
					}
					switches++
					l.waitOK(t, 2000)
				}
			}
			failures := l.finish()
			l.readBack = idle
			published, gaps := ps.finish(t)
			failures = append(failures, published...)
			reportFailures(t, failures)
			l.verify(t, nil)
			l.verifyMixed(t)
			checkCompressed(t, c, shape)
			if gaps > 2*switches { // one per switch, two under load (the routes change twice)
				t.Errorf("pub/sub: %d gaps reported through %d switches, want at most two per switch", gaps, switches)
			}
			t.Logf("%s: %d switches in %v, %d GET/SET and %d other calls ok, %d failed, %d pub/sub gaps", kind, switches, time.Since(start).Round(time.Millisecond), l.ok.Load(), l.mixedOK.Load(), len(failures), gaps)
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
			opts, shape := rollingShape(kind)
			opts.ReadFrom = ReadPreferReplica
			c, g := sentinelClient(t, testkit.SentinelConfig{Kind: kind}, opts)
			ctx := context.Background()
			l := startShapedLoad(c, 256, shape)
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
			l.readBack = readFromPrimaries(t, Options{Sentinel: Sentinel{MasterName: g.MasterName, Addrs: g.SentinelAddrs()}, Compression: opts.Compression})
			published, gaps := ps.finish(t)
			failures = append(failures, published...)
			reportFailures(t, failures)
			l.verify(t, nil)
			l.verifyMixed(t)
			checkCompressed(t, c, shape)
			if gaps > 2*rounds { // one per switch, two under load (the routes change twice)
				t.Errorf("pub/sub: %d gaps reported through %d switches, want at most two per switch", gaps, rounds)
			}
			t.Logf("%s: %d switches in %v, %d GET/SET and %d other calls ok, %d failed, %d pub/sub gaps", kind, rounds, time.Since(start).Round(time.Millisecond), l.ok.Load(), l.mixedOK.Load(), len(failures), gaps)
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

// rollingShape is the options and load of a rolling restart on kind: on
// Redis plain values, on Valkey values of 300 bytes compressed with zstd;
// both with 16 goroutines of MSET, MGET, batches, transactions and Watch.
func rollingShape(kind testkit.Kind) (Options, loadShape) {
	shape := loadShape{mixed: 16}
	var opts Options
	if kind == testkit.Valkey {
		shape.pad = 300
		opts.Compression = Compression{Backend: codec.Zstd}
	}
	return opts, shape
}

// checkCompressed fails the test if a load of padded values compressed
// none, or met a value it could not expand.
func checkCompressed(t *testing.T, c *Client, shape loadShape) {
	t.Helper()
	st := c.Stats().Compression
	if shape.pad > 0 && (st.Compressed == 0 || st.Decompressed == 0) {
		t.Errorf("compression on, but %d values compressed and %d expanded", st.Compressed, st.Decompressed)
	}
	if st.Invalid != 0 {
		t.Errorf("%d compressed values could not be expanded", st.Invalid)
	}
}

// rollingRounds is how many times round a rolling restart goes: once in
// make test, twice under make soak.
func rollingRounds() int {
	return soakCount(1, 2)
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
