// Package testkit is zipline's test support: real servers started for a
// test and stopped when it ends, and the tools that break them on purpose.
// Only tests import it. The servers come from the testbed module beside
// the library (testbed starts them, testbed/servertest binds them to a
// test), which the CLI and bench/ use too.
//
//   - NewServer starts a redis-server or valkey-server; Pause and Restart
//     wrap its process faults so that a failing test never leaves a stopped
//     server behind.
//   - NewCluster starts a Redis Cluster or Valkey Cluster (three primaries
//     with a replica each by default) whose operations kill, fail over,
//     restart, reshard and take down shards, each waiting until the cluster
//     has settled and reporting what happened (the failover window, the
//     slots moved).
//   - NewProxy puts a fault-injecting TCP proxy in front of a server:
//     latency, freeze and thaw, blackholes, cuts (FIN or RST) at an exact
//     byte, corruption of a byte, injected replies, resets, and counters to
//     wait on instead of sleeping.
//   - Snapshot and ExpectBaseline check that goroutines, open descriptors
//     and live heap come back to where they were.
//   - LogRecorder records slog output, and ExpectNoSecrets checks that no
//     value or password shows in logs or errors.
package testkit
