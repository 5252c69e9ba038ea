// Command sentinelbench measures what a client does when the primary of a
// Redis Sentinel group goes away under a write load: for each client and
// round, a fresh group (a primary, 2 replicas, 3 sentinels), a paced load
// of SETs of unique keys through the client, and either a SIGKILL of the
// primary (scenario kill) or SENTINEL FAILOVER (scenario manual, the old
// primary stays up and is demoted). It reports the failover window (the
// longest stretch without a successful write), the failed calls, and the
// acknowledged writes that the final primary does not hold, split into
// those acknowledged before the fault (lost by the asynchronous
// replication) and after it (lost by the client, which wrote to a server
// that was no longer the primary), beside go-redis's FailoverClient and
// rueidis, in the same run.
//
//	cd bench && go run ./cmd/sentinelbench -out results/sentinel.md
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ziplinekv/zipline/internal/pace"

	"github.com/redis/go-redis/v9"
	"github.com/ziplinekv/zipline/bench/harness"
	"github.com/ziplinekv/zipline/testbed"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "sentinelbench:", err)
		os.Exit(1)
	}
}

// Scenarios.
const (
	scenarioKill   = "kill"
	scenarioManual = "manual"
)

type options struct {
	clients        []clientDef
	scenarios      []string
	rounds         int
	goroutines     int
	pace, deadline time.Duration
	before, after  time.Duration
	kind           testbed.Kind
	out, svg       string
	quiet          bool
}

func parseFlags() (*options, error) {
	var (
		clients    = flag.String("clients", clientNames(), "comma-separated clients: "+clientNames())
		scenarios  = flag.String("scenarios", "kill,manual", "comma-separated scenarios: kill (SIGKILL of the primary), manual (SENTINEL FAILOVER)")
		rounds     = flag.Int("rounds", 5, "rounds; each runs every scenario for every client on a fresh group, clients in rotating order")
		quick      = flag.Bool("quick", false, "one round (unless -rounds is given)")
		goroutines = flag.Int("goroutines", 16, "goroutines of the write load")
		pace       = flag.Duration("pace", time.Millisecond, "each goroutine issues one SET every this long (no catching up after a slow call)")
		deadline   = flag.Duration("deadline", 5*time.Second, "each call's context deadline")
		before     = flag.Duration("before", 2*time.Second, "load before the fault")
		after      = flag.Duration("after", 5*time.Second, "load after the group settled again")
		kind       = flag.String("kind", "redis", "data nodes and sentinels: redis or valkey")
		out        = flag.String("out", "", "write the markdown report to this file (rewritten after every run); default: print it")
		svg        = flag.String("svg", "", "write the chart here; default: beside -out, same name ending .svg; \"none\": no chart")
		quiet      = flag.Bool("quiet-clients", true, "drop the clients' own log lines (go-redis's logger, zipline's slog default) from stderr")
	)
	flag.Parse()
	if flag.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", flag.Args())
	}
	roundsSet := false
	flag.Visit(func(f *flag.Flag) { roundsSet = roundsSet || f.Name == "rounds" })
	o := &options{rounds: *rounds, goroutines: *goroutines, pace: *pace, deadline: *deadline, before: *before,
		after: *after, kind: testbed.Kind(*kind), out: *out, svg: *svg, quiet: *quiet}
	if *quick && !roundsSet {
		o.rounds = 1
	}
	if o.rounds < 1 || o.goroutines < 1 || o.pace <= 0 || o.deadline <= 0 || o.before <= 0 || o.after <= 0 {
		return nil, errors.New("need -rounds, -goroutines ≥ 1 and -pace, -deadline, -before, -after > 0")
	}
	if o.kind != testbed.Redis && o.kind != testbed.Valkey {
		return nil, fmt.Errorf("-kind: %q is neither redis nor valkey", *kind)
	}
	var err error
	if o.clients, err = pickClients(*clients); err != nil {
		return nil, fmt.Errorf("-clients: %w", err)
	}
	for s := range strings.SplitSeq(*scenarios, ",") {
		switch s = strings.TrimSpace(s); s {
		case scenarioKill, scenarioManual:
			o.scenarios = append(o.scenarios, s)
		case "":
		default:
			return nil, fmt.Errorf("-scenarios: unknown %q (kill, manual)", s)
		}
	}
	if len(o.scenarios) == 0 {
		return nil, errors.New("-scenarios: none")
	}
	switch {
	case o.svg == "none":
		o.svg = ""
	case o.svg == "" && o.out != "":
		o.svg = strings.TrimSuffix(o.out, ".md") + ".svg"
	}
	return o, nil
}

// outcome is one client's run of one scenario.
type outcome struct {
	client, scenario string
	round            int
	err              error

	fo testbed.Failover
	// fault is the fault's instant from the run's start; the others are
	// from the fault.
	fault      time.Duration
	settleGap  time.Duration            // from the bench's own Settle to the fault: the testbed's check before it
	loadEnd    time.Duration            // end of the load, from the fault
	events     map[string]time.Duration // first heard
	lastEvents map[string]time.Duration // last heard (of several sentinels)
	again      bool                     // the group had failed over once more by the end
	dbsize     int64
	fig        figures
	// Per chart bucket, from chartLo: acknowledged writes kept, failed
	// calls, acknowledged writes lost.
	kept, failed, lost []float64
	runTime            time.Duration
}

func run() error {
	o, err := parseFlags()
	if err != nil {
		return err
	}
	if o.quiet {
		redis.SetLogger(discardLogger{})
		log.SetOutput(io.Discard) // zipline logs through slog's default, which writes to the log package
	}
	sess := harness.Begin("sentinelbench", "")
	ctx := sess.Context()
	rep := &report{session: sess, opts: o, env: harness.Environment(""), started: time.Now()}
	fmt.Fprintf(os.Stderr, "%d runs of ~%v each\n", o.rounds*len(o.scenarios)*len(o.clients),
		(o.before + o.after + 8*time.Second).Round(time.Second))
	for _, sc := range o.scenarios {
		sess.Interleave(o.rounds, len(o.clients), func(r, i int) {
			t0 := time.Now()
			oc, server := runOne(ctx, o, o.clients[i], sc, r)
			oc.runTime = time.Since(t0)
			if rep.server == "" {
				rep.server = server
			}
			logOutcome(oc)
			rep.outcomes = append(rep.outcomes, oc)
			sess.Save(o.out, rep.write)
		})
	}
	rep.elapsed = time.Since(rep.started)
	if err := sess.End(o.out, rep.write); err != nil && ctx.Err() == nil {
		return err
	}
	if o.svg != "" {
		var svg bytes.Buffer
		if err := rep.chart().WriteSVG(&svg); err != nil {
			return fmt.Errorf("chart: %w", err)
		}
		if err := os.WriteFile(o.svg, svg.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// Chart range and bucket, from the fault.
const (
	chartLo     = -time.Second
	chartHi     = 6 * time.Second
	chartBucket = 50 * time.Millisecond
)

// runOne runs scenario sc for client c on a fresh group.
func runOne(ctx context.Context, o *options, c clientDef, sc string, round int) (oc outcome, server string) {
	oc = outcome{client: c.name, scenario: sc, round: round}
	g, err := testbed.StartSentinel(ctx, testbed.SentinelConfig{Kind: o.kind})
	if err != nil {
		oc.err = fmt.Errorf("starting the group: %w", err)
		return oc, ""
	}
	defer g.Stop()
	server = string(o.kind)
	if info, err := g.Nodes()[0].Info(ctx, "server"); err == nil {
		server = fmt.Sprintf("%s %s%s", o.kind, info["redis_version"], info["valkey_version"])
	}

	base := time.Now()
	obs, err := observe(ctx, g.SentinelAddrs(), g.MasterName, base)
	if err != nil {
		oc.err = fmt.Errorf("subscribing to the sentinels' events: %w", err)
		return oc, server
	}
	defer obs.close()

	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	w, err := c.dial(dctx, g.MasterName, g.SentinelAddrs())
	cancel()
	if err != nil {
		oc.err = fmt.Errorf("%s: connect: %w", c.name, err)
		return oc, server
	}
	closed := false
	defer func() {
		if !closed {
			w.Close()
		}
	}()

	// The load.
	stopLoad := make(chan struct{})
	prefix := fmt.Sprintf("%s:%d:", c.name, round)
	per := make([][]write, o.goroutines)
	var wg sync.WaitGroup
	for gi := range o.goroutines {
		wg.Go(func() { per[gi] = loop(ctx, w, prefix+strconv.Itoa(gi)+":", gi, o, base, stopLoad) })
	}
	var stopAt time.Duration
	stopNow := func() {
		stopAt = time.Since(base)
		close(stopLoad)
		wg.Wait()
	}

	// The fault. The testbed's KillPrimary and Failover first wait for the
	// group to settle and only then start their clock, right before the
	// SIGKILL or the SENTINEL FAILOVER; Settled runs from that instant to
	// their return. So the fault is the return minus Settled. The bench's
	// own Settle just before makes the testbed's a quick check.
	pace.Sleep(ctx, o.before)
	if _, err := g.Settle(ctx); err != nil {
		stopNow()
		oc.err = fmt.Errorf("before the fault: %w", err)
		return oc, server
	}
	pre := time.Since(base)
	switch sc {
	case scenarioKill:
		oc.fo, err = g.KillPrimary(ctx)
	case scenarioManual:
		oc.fo, err = g.Failover(ctx)
	}
	ret := time.Since(base)
	oc.fault = ret - oc.fo.Settled
	oc.settleGap = oc.fault - pre
	if err != nil {
		stopNow()
		oc.err = fmt.Errorf("%s: %w", sc, err)
		return oc, server
	}
	pace.Sleep(ctx, o.after)
	stopNow()
	w.Close()
	closed = true
	oc.loadEnd = stopAt - oc.fault
	oc.events, oc.lastEvents = obs.since(oc.fault)

	// What the final primary holds: read back every acknowledged key with
	// a plain connection to the primary the sentinels name.
	p, err := g.Settle(ctx)
	if err != nil {
		oc.err = fmt.Errorf("after the load: %w", err)
		return oc, server
	}
	oc.again = oc.fo.Again || p != oc.fo.Primary
	if oc.dbsize, err = readBack(ctx, p.Addr, prefix, per); err != nil {
		oc.err = fmt.Errorf("reading back from %s: %w", p.Addr, err)
		return oc, server
	}
	var all []write
	for _, ws := range per {
		all = append(all, ws...)
	}
	promotion := time.Duration(-1)
	if t, ok := oc.events[evSlaveofNoone]; ok {
		promotion = oc.fault + t
	}
	oc.fig = compute(all, oc.fault, promotion, stopAt)
	oc.kept, oc.failed, oc.lost = bucketed(all, oc.fault, chartLo, chartHi, chartBucket)
	return oc, server
}

// loop is one goroutine of the load: a SET of a new key every o.pace (the
// first after gi/goroutines of it, so that the goroutines are spread over
// the period), until stop is closed. A call that takes longer than the
// pace is followed by the next one at once, and the pace resumes from
// there: the load does not catch up.
func loop(ctx context.Context, w writer, prefix string, gi int, o *options, base time.Time, stop <-chan struct{}) []write {
	ws := make([]write, 0, int((o.before+o.after+10*time.Second)/o.pace))
	next := time.Now().Add(o.pace * time.Duration(gi) / time.Duration(o.goroutines))
	for i := 0; ; i++ {
		if d := time.Until(next); d > 0 {
			time.Sleep(d)
		}
		select {
		case <-stop:
			return ws
		default:
		}
		now := time.Now()
		if next = next.Add(o.pace); next.Before(now) {
			next = now
		}
		key := prefix + strconv.Itoa(i)
		cctx, cancel := context.WithTimeout(ctx, o.deadline)
		start := time.Since(base)
		err := w.Set(cctx, key, []byte(key))
		end := time.Since(base)
		cancel()
		ws = append(ws, write{start: start, end: end, err: err})
	}
}

// readBack marks the acknowledged writes whose key addr does not hold
// (with the value written, the key itself), reading them with MGET in
// chunks on a plain connection, and returns the number of keys there.
func readBack(ctx context.Context, addr, prefix string, per [][]write) (int64, error) {
	rc := redis.NewClient(&redis.Options{Addr: addr, DisableIdentity: true, MaxRetries: -1})
	defer rc.Close()
	const chunk = 1000
	type ref struct{ g, i int }
	var keys []string
	var refs []ref
	flush := func() error {
		if len(keys) == 0 {
			return nil
		}
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		vals, err := rc.MGet(cctx, keys...).Result()
		cancel()
		if err != nil {
			return err
		}
		for j, v := range vals {
			if s, ok := v.(string); !ok || s != keys[j] {
				per[refs[j].g][refs[j].i].lost = true
			}
		}
		keys, refs = keys[:0], refs[:0]
		return nil
	}
	for gi, ws := range per {
		for i, w := range ws {
			if w.err != nil {
				continue
			}
			keys = append(keys, prefix+strconv.Itoa(gi)+":"+strconv.Itoa(i))
			refs = append(refs, ref{gi, i})
			if len(keys) == chunk {
				if err := flush(); err != nil {
					return 0, err
				}
			}
		}
	}
	if err := flush(); err != nil {
		return 0, err
	}
	return rc.DBSize(ctx).Result()
}

func logOutcome(oc outcome) {
	if oc.err != nil {
		fmt.Fprintf(os.Stderr, "[round %d] %-7s %-8s FAIL %v\n", oc.round, oc.scenario, oc.client, oc.err)
		return
	}
	f := oc.fig
	fmt.Fprintf(os.Stderr, "[round %d] %-7s %-8s named +%v settled +%v; window %v (from %s), kept-only %v; %d/%d failed %v; lost %d before the fault, %d after (%v, %d after the promotion); %v\n",
		oc.round, oc.scenario, oc.client, ms(oc.fo.Named), ms(oc.fo.Settled), ms(f.Window), signed(f.WindowFrom), ms(f.Durable),
		f.Failed, f.Writes, f.ByKind, f.LostBefore, f.LostAfter, lostRange(f), f.LostAfterPromotion, oc.runTime.Round(100*time.Millisecond))
}

// ms rounds d for printing.
func ms(d time.Duration) time.Duration {
	if d >= 10*time.Millisecond || d <= -10*time.Millisecond {
		return d.Round(time.Millisecond)
	}
	return d.Round(10 * time.Microsecond)
}

type discardLogger struct{}

func (discardLogger) Printf(context.Context, string, ...any) {}
