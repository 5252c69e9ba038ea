// Package servertest starts the test bed's servers and clusters for a test
// and stops them when it ends. It is the testbed package bound to
// testing.TB: a missing binary skips the test (make test installs them, and
// CI fails a skip), any other error fails it, and a server paused by a test
// is resumed however the test ends.
//
// It is its own package so that programs that start servers (the CLI's
// demo) link testbed without linking the testing package.
package servertest

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/ziplinekv/zipline/testbed"
)

// NewServer starts a server for a test and stops it when the test ends. It
// skips the test if the binary is missing, and fails it on any other error.
func NewServer(tb testing.TB, cfg testbed.Config) *testbed.Server {
	tb.Helper()
	s, err := testbed.Start(cfg)
	if errors.Is(err, testbed.ErrNoBinary) {
		tb.Skipf("skipping: %v", err)
	}
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Stop)
	return s
}

// NewCluster starts a Redis Cluster or Valkey Cluster for a test (by
// default three primaries with one replica each, node timeout one second)
// and stops it when the test ends: every node is killed by its PID, paused
// ones included, and its directory removed. It skips the test if the server
// or redis-cli is missing, and fails it on any other error.
//
// Subtests that share one cluster should pause nodes with Pause, which
// resumes them when the subtest ends, and begin with Cluster.Settle, so
// that each starts from a healthy cluster whatever the previous one did.
func NewCluster(tb testing.TB, cfg testbed.ClusterConfig) *testbed.Cluster {
	tb.Helper()
	c, err := testbed.StartCluster(context.Background(), cfg)
	if errors.Is(err, testbed.ErrNoBinary) {
		tb.Skipf("skipping: %v", err)
	}
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(c.Stop)
	return c
}

// Pause freezes s (SIGSTOP) for a test and returns the function that
// resumes it. Resume is also registered with tb.Cleanup, so a test that
// fails or returns early never leaves a stopped server behind; calling the
// returned function more than once, or after Kill, is harmless.
func Pause(tb testing.TB, s *testbed.Server) (resume func()) {
	tb.Helper()
	if err := s.Pause(); err != nil {
		tb.Fatalf("servertest: pause %s: %v", s.Addr, err)
	}
	var once sync.Once
	resume = func() { once.Do(func() { s.Resume() }) } // fails only if the process is gone
	tb.Cleanup(resume)
	return resume
}

// Restart starts s again on the same port after Kill (or kills and restarts
// it), waits until it answers, and fails the test if it cannot.
func Restart(tb testing.TB, s *testbed.Server) {
	tb.Helper()
	if err := s.Restart(); err != nil {
		tb.Fatalf("servertest: restart %s: %v", s.Addr, err)
	}
}

// NewSentinel starts a Sentinel group for a test (by default a primary
// with two replicas, watched by three sentinels with quorum two, the
// primary thought down after one second) and stops it when the test ends:
// every data node and sentinel is killed by its PID, paused ones included,
// and its directory removed. It skips the test if the server is missing,
// and fails it on any other error.
//
// Subtests that share one group should begin with Sentinel.Settle, so
// that each starts from a healthy group whatever the previous one did.
func NewSentinel(tb testing.TB, cfg testbed.SentinelConfig) *testbed.Sentinel {
	tb.Helper()
	g, err := testbed.StartSentinel(context.Background(), cfg)
	if errors.Is(err, testbed.ErrNoBinary) {
		tb.Skipf("skipping: %v", err)
	}
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(g.Stop)
	return g
}
