// Command rollingbench runs a rolling restart as operators run one, under
// load, through zipline and through go-redis on the same kind of runs: a
// 3+3 cluster (per shard: the replica restarted and waited for in sync,
// CLUSTER FAILOVER to it, the former primary restarted) and a Sentinel
// group of a primary, two replicas and three sentinels (each replica
// restarted, SENTINEL FAILOVER, the former primary restarted), once or
// more round. With -switch kill the primary is killed (SIGKILL) instead
// of failed over by hand; -switch reshard moves a cluster's slots from each
// primary to the next instead (redis-cli --cluster reshard, keys included). Each caller SETs its next key to a sequence
// number and GETs it back; afterwards every key is read back. It reports
// per client the switches, the failed calls (in all and the most in one
// shard's turn), the longest window without any successful call, the
// time back to full throughput after each switch, acknowledged writes
// lost and wrong reads, as medians over interleaved rounds.
//
//	cd bench && go run ./cmd/rollingbench -out results/rolling.md
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ziplinekv/zipline/bench/setget"

	"github.com/ziplinekv/zipline/bench/harness"
	"github.com/ziplinekv/zipline/testbed"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "rollingbench:", err)
		os.Exit(1)
	}
}

type options struct {
	clients    []clientDef
	topologies []string // "cluster", "sentinel"
	switches   []string // "graceful", "kill"
	rounds     int
	laps       int
	// reshardSlots is how many slots each step of -switch reshard moves.
	reshardSlots int
	kind         testbed.Kind
	load         setget.Config
	out          string
	// timeline is the directory each run's timeline goes to; empty: none.
	timeline string
}

func parseFlags() (*options, error) {
	var (
		clients    = flag.String("clients", "zipline,go-redis", "comma-separated clients: "+harness.JoinNames(clientDefs, clientDef.String))
		topologies = flag.String("topology", "cluster,sentinel", "cluster, sentinel or both")
		switches   = flag.String("switch", "graceful,kill,reshard", "graceful (CLUSTER/SENTINEL FAILOVER), kill (SIGKILL of the primary), reshard (a cluster's slots moved with redis-cli, keys included), comma-separated")
		rounds     = flag.Int("rounds", 3, "runs of every client per topology and switch, interleaved")
		laps       = flag.Int("laps", 1, "times round every shard in a run")
		slots      = flag.Int("reshard-slots", 1000, "slots each step of -switch reshard moves")
		kind       = flag.String("kind", "redis", "servers: redis or valkey")
		callers    = flag.Int("callers", 256, "goroutines")
		keys       = flag.Int("keys", 200, "keys per goroutine")
		timeout    = flag.Duration("timeout", 5*time.Second, "each call's context deadline")
		pause      = flag.Duration("retry-pause", 10*time.Millisecond, "a goroutine's pause after a failed call")
		out        = flag.String("out", "", "write the markdown report to this file")
		timeline   = flag.String("timeline", "", "write each run's successes and failures per 10 ms, with its switches' times, "+
			"into this directory (a CSV file per run)")
	)
	flag.Parse()
	if flag.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", flag.Args())
	}
	o := &options{rounds: *rounds, laps: *laps, reshardSlots: *slots, kind: testbed.Kind(*kind), out: *out, timeline: *timeline,
		load: setget.Config{Callers: *callers, Keys: *keys, CallTimeout: *timeout, RetryPause: *pause, Prefix: "roll"}}
	if o.rounds < 1 || o.laps < 1 || *slots < 1 || *callers < 1 || *keys < 1 || *timeout <= 0 || *pause < 0 {
		return nil, errors.New("need -rounds, -laps, -callers, -keys ≥ 1, -timeout > 0 and -retry-pause ≥ 0")
	}
	if o.kind != testbed.Redis && o.kind != testbed.Valkey {
		return nil, fmt.Errorf("-kind: %q is neither redis nor valkey", *kind)
	}
	var err error
	if o.clients, err = harness.ParseNames(*clients, clientDefs, clientDef.String); err != nil {
		return nil, fmt.Errorf("-clients: %w", err)
	}
	if o.topologies, err = harness.ParseNames(*topologies, []string{"cluster", "sentinel"}, word); err != nil {
		return nil, fmt.Errorf("-topology: %w", err)
	}
	if o.switches, err = harness.ParseNames(*switches, []string{"graceful", "kill", "reshard"}, word); err != nil {
		return nil, fmt.Errorf("-switch: %w", err)
	}
	return o, nil
}

func word(s string) string { return s }

// outcome is one client's run.
type outcome struct {
	client, topology, switching string
	round                       int
	fig                         figures
	err                         error
}

func run() error {
	o, err := parseFlags()
	if err != nil {
		return err
	}
	sess := harness.Begin("rollingbench", "")
	ctx := sess.Context()
	rep := &report{session: sess, opts: o}
	for _, topo := range o.topologies {
		for _, sw := range o.switches {
			if !applies(topo, sw) {
				continue
			}
			sess.Interleave(o.rounds, len(o.clients), func(r, i int) {
				d := o.clients[i]
				oc := outcome{client: d.name, topology: topo, switching: sw, round: r}
				var server string
				name := fmt.Sprintf("%s-%s-%d-%s", topo, sw, r, d.name)
				oc.fig, server, oc.err = runOne(ctx, o, d, topo, sw, name)
				if rep.server == "" {
					rep.server = server
				}
				logOutcome(oc)
				rep.outcomes = append(rep.outcomes, oc)
			})
		}
	}
	return sess.End(o.out, rep.write)
}

// warmup is how long the load runs before the restarts begin: the second
// half of it is the baseline that recovery is measured against.
const warmup = 2 * time.Second

// runOne starts a fresh cluster or Sentinel group, connects d's client,
// starts the load, restarts the nodes in turn and measures.
func runOne(ctx context.Context, o *options, d clientDef, topo, sw, name string) (figures, string, error) {
	var (
		s       setget.Store
		err     error
		server  string
		restart func(context.Context, *setget.Load) ([]step, error)
	)
	switch topo {
	case "cluster":
		cl, err := testbed.StartCluster(ctx, testbed.ClusterConfig{Kind: o.kind})
		if err != nil {
			return figures{}, "", fmt.Errorf("starting the cluster: %w", err)
		}
		defer cl.Stop()
		server = describe(ctx, o.kind, cl.Nodes()[0])
		if s, err = d.cluster(ctx, cl.Addrs()[:1]); err != nil {
			return figures{}, server, fmt.Errorf("%s: connect: %w", d.name, err)
		}
		restart = func(ctx context.Context, l *setget.Load) ([]step, error) {
			if sw == "reshard" {
				return reshard(ctx, cl, l, o.laps, o.reshardSlots)
			}
			return rollCluster(ctx, cl, l, o.laps, sw == "kill")
		}
	case "sentinel":
		g, err := testbed.StartSentinel(ctx, testbed.SentinelConfig{Kind: o.kind})
		if err != nil {
			return figures{}, "", fmt.Errorf("starting the Sentinel group: %w", err)
		}
		defer g.Stop()
		server = describe(ctx, o.kind, g.Nodes()[0])
		if s, err = d.sentinel(ctx, g.MasterName, g.SentinelAddrs()); err != nil {
			return figures{}, server, fmt.Errorf("%s: connect: %w", d.name, err)
		}
		restart = func(ctx context.Context, l *setget.Load) ([]step, error) {
			return rollSentinel(ctx, g, l, o.laps, sw == "kill")
		}
	}
	defer s.Close()
	l := setget.Start(o.load, s)
	if err := l.WaitOK(1000, 30*time.Second); err != nil {
		l.Finish()
		return figures{}, server, fmt.Errorf("warming up: %w", err)
	}
	for l.Now() < warmup {
		time.Sleep(setget.Tick) // the warm-up's length, not synchronisation
	}
	steps, err := restart(ctx, l)
	if err == nil {
		// The load goes on a while after the last restart: the last
		// switch's recovery is measured in it.
		err = l.WaitOK(o.load.Callers*20, 30*time.Second)
	}
	ticks, failures := l.Finish()
	if err != nil {
		return figures{}, server, err
	}
	if o.timeline != "" {
		if err := writeTimeline(filepath.Join(o.timeline, name+".csv"), ticks, failures, steps); err != nil {
			return figures{}, server, err
		}
	}
	fig := measure(ticks, failures, steps, warmup/2)
	fig.Wrong = l.Wrong()
	if fig.Lost, err = l.Lost(ctx); err != nil {
		return fig, server, err
	}
	return fig, server, nil
}

// rollCluster restarts cl shard by shard, laps times round.
func rollCluster(ctx context.Context, cl *testbed.Cluster, l *setget.Load, laps int, kill bool) ([]step, error) {
	var steps []step
	for range laps {
		for shard := range 3 {
			st := step{start: l.Now()}
			roll, err := cl.RollShard(ctx, shard, kill)
			if err != nil {
				return steps, err
			}
			st.switchStart, st.switchEnd, st.end = roll.SwitchStart.Sub(l.Began()), roll.SwitchEnd.Sub(l.Began()), l.Now()
			st.promoted = roll.Promoted.Sub(l.Began())
			steps = append(steps, st)
		}
	}
	return steps, nil
}

// applies reports whether a switch applies to a topology: a Sentinel
// group has no slots to move.
func applies(topo, sw string) bool { return topo == "cluster" || sw != "reshard" }

// reshard moves slots from each primary to the next, shard by shard, laps
// times round: a step is one move, the switch the move itself.
func reshard(ctx context.Context, cl *testbed.Cluster, l *setget.Load, laps, slots int) ([]step, error) {
	var steps []step
	for range laps {
		for shard := range 3 {
			topo, err := cl.Settle(ctx)
			if err != nil {
				return steps, err
			}
			p := topo.Primaries()
			st := step{start: l.Now()}
			st.switchStart = st.start
			if _, err := cl.Reshard(ctx, p[shard].Server, p[(shard+1)%3].Server, slots); err != nil {
				return steps, err
			}
			st.switchEnd, st.end = l.Now(), l.Now()
			steps = append(steps, st)
		}
	}
	return steps, nil
}

// rollSentinel restarts g's replicas, fails over (or kills the primary)
// and restarts the former primary, laps times.
func rollSentinel(ctx context.Context, g *testbed.Sentinel, l *setget.Load, laps int, kill bool) ([]step, error) {
	var steps []step
	for range laps {
		st := step{start: l.Now()}
		replicas, err := g.Replicas(ctx)
		if err != nil {
			return steps, err
		}
		for _, r := range replicas {
			if _, err := g.RestartNode(ctx, r); err != nil {
				return steps, err
			}
		}
		st.switchStart = l.Now()
		var f testbed.Failover
		if kill {
			f, err = g.KillPrimary(ctx)
		} else {
			f, err = g.Failover(ctx)
		}
		if err != nil {
			return steps, err
		}
		st.switchEnd = l.Now()
		if _, err := g.RestartNode(ctx, f.Former); err != nil {
			return steps, err
		}
		st.end = l.Now()
		steps = append(steps, st)
	}
	return steps, nil
}

func describe(ctx context.Context, kind testbed.Kind, s *testbed.Server) string {
	if info, err := s.Info(ctx, "server"); err == nil {
		// Valkey reports the Redis version it is compatible with too.
		return fmt.Sprintf("%s %s", kind, cmp.Or(info["valkey_version"], info["redis_version"]))
	}
	return string(kind)
}

func logOutcome(oc outcome) {
	if oc.err != nil {
		fmt.Fprintf(os.Stderr, "[%s %s round %d] %-9s FAIL %v\n", oc.topology, oc.switching, oc.round, oc.client, oc.err)
		return
	}
	f := oc.fig
	fmt.Fprintf(os.Stderr, "[%s %s round %d] %-9s %d switches, %d failed (≤%d per switch), window %v (%v to %v around a promotion), recovery %v, %.0f ops/s, %d lost, %d wrong\n",
		oc.topology, oc.switching, oc.round, oc.client, f.Switches, f.Failed, f.MaxFailedPerSwitch, f.Window, f.WindowAt.Round(10*time.Millisecond), (f.WindowAt + f.Window).Round(10*time.Millisecond), f.Recovery, f.OpsPerSec, f.Lost, f.Wrong)
}
