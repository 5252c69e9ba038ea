// Command stormbench measures the topology-refresh storm that many cluster
// clients in one process cause on a large Redis Cluster, for zipline,
// go-redis v9 and rueidis side by side.
//
// For each client kind in turn it starts a fresh local cluster (by default
// 48 primaries with a replica each, cluster-node-timeout 1 s) and:
//
//  1. open: opens N clients together (default 200), client i seeded with
//     node i % nodes only, each SETting the key "storm:k" once; sampled
//     until 2 s after the last SET;
//  2. idle: nothing for -idle (default 40 s);
//  3. slot move: every client GETs the key in a loop (5 s deadline per
//     GET, 10 ms sleep between GETs) while the key's slot is moved to
//     another primary the way redis-cli moves one (SETSLOT IMPORTING on the
//     target, MIGRATING on the source, MIGRATE of its keys in batches from
//     CLUSTER GETKEYSINSLOT, SETSLOT NODE on the target, the source and
//     every other primary); sampled until 5 s after the move;
//  4. failover: the new owner is killed (SIGKILL) while the readers go on;
//     sampled until 5 s after its replica was promoted and every node
//     agreed on it;
//  5. until recovered (beyond the four phases asked for): the readers go
//     on until every client's latest GET succeeded, for at most 90 s;
//
// and then closes the clients and stops the cluster.
//
// Once a second it reads INFO commandstats from every node and takes the
// per-node deltas of the calls of CLUSTER SHARDS, CLUSTER SLOTS and
// CLUSTER NODES (topology queries) and, apart, of ROLE and INFO (probes).
// The benchmark's own commands (the sampling's INFO, the ROLE polls for the
// promotion) are counted as they are sent and subtracted, node by node:
// what is reported is the clients' own. It reports per client kind and
// phase the most topology queries one node answered in one second, the
// node-seconds with more than 5, the totals, the most probes, and the
// failed GETs.
//
// Other servers on the machine would take the CPU the counted ones need:
// before starting it waits (up to -wait) until no redis-server or
// valkey-server runs.
//
//	cd bench && go run ./cmd/stormbench -out results/storm.md
//	cd bench && go run ./cmd/stormbench -primaries 6 -n 10 -idle 5s -clients zipline   # smoke test
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ziplinekv/zipline/internal/pace"

	"github.com/ziplinekv/zipline/bench/harness"
	"github.com/ziplinekv/zipline/testbed"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "stormbench:", err)
		os.Exit(1)
	}
}

type options struct {
	kinds     []clientKind
	n         int
	primaries int
	idle      time.Duration
	kind      testbed.Kind
	out       string
	wait      time.Duration
}

func parseFlags() (*options, error) {
	var (
		clients   = flag.String("clients", "zipline,go-redis,rueidis", "comma-separated client kinds: "+harness.JoinNames(clientKinds, clientKind.String))
		n         = flag.Int("n", 200, "clients of each kind, opened together in one process")
		primaries = flag.Int("primaries", 48, "primaries of the cluster, each with one replica")
		idle      = flag.Duration("idle", 40*time.Second, "length of the idle phase")
		server    = flag.String("server", "redis", "servers: redis or valkey")
		out       = flag.String("out", "", "also write the markdown report to this file")
		wait      = flag.Duration("wait", time.Hour, "longest wait for the machine to be free of other measurements")
	)
	flag.Parse()
	if flag.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", flag.Args())
	}
	o := &options{n: *n, primaries: *primaries, idle: *idle, kind: testbed.Kind(*server), out: *out, wait: *wait}
	if o.n < 1 || o.primaries < 3 || o.idle < 0 {
		return nil, errors.New("need -n ≥ 1, -primaries ≥ 3 and -idle ≥ 0")
	}
	if o.kind != testbed.Redis && o.kind != testbed.Valkey {
		return nil, fmt.Errorf("-server: %q is neither redis nor valkey", *server)
	}
	var err error
	if o.kinds, err = harness.ParseNames(*clients, clientKinds, clientKind.String); err != nil {
		return nil, fmt.Errorf("-clients: %w", err)
	}
	return o, nil
}

func run() error {
	o, err := parseFlags()
	if err != nil {
		return err
	}
	ctx, stop := harness.HandleSignals("closing the clients and the servers")
	defer stop()

	// 2 × primaries servers, and every client's connections in this
	// process: raised before any server starts, so that they inherit it.
	if err := raiseFileLimit(1 << 16); err != nil {
		return err
	}
	if err := awaitQuietMachine(ctx, o.wait); err != nil {
		return err
	}
	rep := &report{command: harness.CommandLine("stormbench", ""), opts: o, env: harness.Environment("")}
	fmt.Fprintln(os.Stderr, rep.command)
	for _, k := range o.kinds {
		if ctx.Err() != nil {
			break
		}
		res := runKind(ctx, o, k)
		if res.err != nil {
			fmt.Fprintf(os.Stderr, "[%s] FAIL: %v\n", k.name, res.err)
		}
		if rep.server == "" {
			rep.server = res.server
		}
		rep.results = append(rep.results, res)
		if err := harness.Save(o.out, rep.write); err != nil { // an interrupted run keeps what it has
			return err
		}
	}
	if err := harness.Publish(o.out, rep.write); err != nil {
		return err
	}
	return ctx.Err()
}

// raiseFileLimit raises the open-file limit, soft and hard, to at least n.
// Servers started afterwards inherit it.
func raiseFileLimit(n uint64) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return err
	}
	if lim.Cur >= n && lim.Max >= n {
		return nil
	}
	want := syscall.Rlimit{Cur: max(lim.Cur, n), Max: max(lim.Max, n)}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &want); err != nil {
		// Not privileged: as far as the hard limit goes.
		want = syscall.Rlimit{Cur: lim.Max, Max: lim.Max}
		if err2 := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &want); err2 != nil {
			return fmt.Errorf("raising the open-file limit to %d: %w", n, err)
		}
		fmt.Fprintf(os.Stderr, "open-file limit raised to its hard limit %d only (%v)\n", lim.Max, err)
	}
	return nil
}

// quietPoll is how often awaitQuietMachine looks again.
const quietPoll = 10 * time.Second

// awaitQuietMachine waits, polling every 10 s, until no redis-server or
// valkey-server process runs: another measurement's.
func awaitQuietMachine(ctx context.Context, bound time.Duration) error {
	start := time.Now()
	for i := 0; ; i++ {
		why := busy()
		if why == "" {
			if i > 0 {
				fmt.Fprintf(os.Stderr, "machine free after waiting %v\n", time.Since(start).Round(time.Second))
			}
			return nil
		}
		if time.Since(start) >= bound {
			return fmt.Errorf("the machine was still busy after %v: %s", bound, why)
		}
		if i%6 == 0 {
			fmt.Fprintf(os.Stderr, "waiting for the machine: %s\n", why)
		}
		if err := pace.Sleep(ctx, quietPoll); err != nil {
			return err
		}
	}
}

// busy says why the machine is not free, or "".
func busy() string {
	if pids := processes("redis-server", "valkey-server"); len(pids) > 0 {
		return fmt.Sprintf("%d redis-server/valkey-server processes run", len(pids))
	}
	return ""
}

// processes returns the PIDs of the processes with one of the names (as
// pgrep -x matches them: /proc/PID/comm).
func processes(names ...string) []int {
	dirs, _ := filepath.Glob("/proc/[0-9]*/comm")
	var pids []int
	for _, d := range dirs {
		b, err := os.ReadFile(d)
		if err != nil {
			continue
		}
		comm := strings.TrimSpace(string(b))
		for _, n := range names {
			if comm == n {
				pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(d)))
				pids = append(pids, pid)
			}
		}
	}
	return pids
}
