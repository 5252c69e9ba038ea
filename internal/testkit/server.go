package testkit

import (
	"testing"

	"github.com/ziplinekv/zipline/testbed"
	"github.com/ziplinekv/zipline/testbed/servertest"
)

// The test bed's servers and clusters, so that the library's tests need
// only this package. testbed (its own module, beside the library) starts
// them; servertest binds them to a test.
type (
	Server         = testbed.Server
	Value          = testbed.Value
	Config         = testbed.Config
	Kind           = testbed.Kind
	Cluster        = testbed.Cluster
	ClusterConfig  = testbed.ClusterConfig
	Topology       = testbed.Topology
	ClusterNode    = testbed.Node
	SlotRange      = testbed.SlotRange
	Resharding     = testbed.Resharding
	Sentinel       = testbed.Sentinel
	SentinelConfig = testbed.SentinelConfig
)

// Server kinds and cluster node roles.
const (
	Redis   = testbed.Redis
	Valkey  = testbed.Valkey
	Primary = testbed.Primary
	Replica = testbed.Replica
)

// NewServer starts a server for a test and stops it when the test ends
// (servertest.NewServer).
func NewServer(tb testing.TB, cfg Config) *Server {
	tb.Helper()
	return servertest.NewServer(tb, cfg)
}

// NewCluster starts a cluster for a test and stops it when the test ends
// (servertest.NewCluster).
func NewCluster(tb testing.TB, cfg ClusterConfig) *Cluster {
	tb.Helper()
	return servertest.NewCluster(tb, cfg)
}

// NewSentinel starts a Sentinel group (a primary, replicas, sentinels) for
// a test and stops it when the test ends (servertest.NewSentinel).
func NewSentinel(tb testing.TB, cfg SentinelConfig) *Sentinel {
	tb.Helper()
	return servertest.NewSentinel(tb, cfg)
}

// Pause freezes s for a test; the test's cleanup resumes it
// (servertest.Pause).
func Pause(tb testing.TB, s *Server) (resume func()) {
	tb.Helper()
	return servertest.Pause(tb, s)
}

// Restart starts s again on the same port (servertest.Restart).
func Restart(tb testing.TB, s *Server) {
	tb.Helper()
	servertest.Restart(tb, s)
}

// Binary returns the path of the server binary for kind.
func Binary(kind Kind) (string, error) { return testbed.Binary(kind) }

// KeySlot returns the hash slot of key, computed independently of the
// client under test.
func KeySlot(key string) int { return testbed.KeySlot(key) }
