package testkit

import (
	"context"
	"errors"
	"testing"

	"github.com/ziplinekv/zipline/internal/localserver"
)

// The cluster test bed is localserver's, so tests need only this package.
type (
	Cluster       = localserver.Cluster
	ClusterConfig = localserver.ClusterConfig
	Topology      = localserver.Topology
	ClusterNode   = localserver.Node
	SlotRange     = localserver.SlotRange
)

// Cluster node roles.
const (
	Primary = localserver.Primary
	Replica = localserver.Replica
)

// KeySlot returns the hash slot of key, computed independently of the
// client under test.
func KeySlot(key string) int { return localserver.KeySlot(key) }

// NewCluster starts a Redis Cluster or Valkey Cluster for a test (by
// default three primaries with one replica each, node timeout one second)
// and stops it when the test ends: every node is killed by its PID, paused
// ones included, and its directory removed. It skips the test if the server
// or redis-cli is missing, and fails it on any other error.
//
// Subtests that share one cluster should pause nodes with Pause, which
// resumes them when the subtest ends, and begin with Cluster.Settle, so
// that each starts from a healthy cluster whatever the previous one did.
func NewCluster(tb testing.TB, cfg ClusterConfig) *Cluster {
	tb.Helper()
	c, err := localserver.StartCluster(context.Background(), cfg)
	if errors.Is(err, localserver.ErrNoBinary) {
		tb.Skipf("skipping: %v", err)
	}
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(c.Stop)
	return c
}
