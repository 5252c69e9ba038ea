// Command hubbench measures fanout across hubs: several fanout hubs, each
// fed by sharded pub/sub from a local Redis Cluster, holding many WebSocket
// connections between them, as the issue "Fanout across hubs" asks for 100k
// connections over two hubs. It reports each hub's memory per idle
// connection (the goal is 8 KiB at most), the delivery latency (p50, p99,
// p99.9, max) and each hub's CPU time per delivery at a given publish rate,
// and from those figures the machines that 1M connections would need.
//
// One process here can hold at most about 19,500 sockets: RLIMIT_NOFILE's
// hard limit is 20,000 and cannot be raised (CAP_SYS_RESOURCE is dropped,
// prlimit fails). So the hubs and the WebSocket clients run as child
// processes, this program started again with a hidden -role flag: each of
// the -hubs hub processes holds at most 19,000 connections, and as many
// client processes as needed hold at most 19,000 each. Every process raises
// its soft open-file limit to the hard one. A run whose connections per hub
// would exceed 19,000 (or what the limit allows) stops at once and says how
// many hubs it needs. The children are driven over their stdin and stdout
// and die with the coordinator (parent-death signal); the cluster is
// stopped at the end, on an error and on an interrupt.
//
// A run:
//
//  1. starts a Redis Cluster of -nodes primaries (default 6, no replicas
//     unless -replicas; persistence off; cluster-node-timeout 15 s, so
//     that a loaded two-core machine does not get a node marked failed)
//     with the test bed;
//  2. starts H hub processes, each a zipline cluster client, a fanout.Hub
//     with default options (Shared compression), a ShardedSource on the
//     default 128 Partitions relayed with hub.Relay, and an http.Server
//     (ReadHeaderTimeout 10 s) serving the hub at /ws on a free port of
//     127.0.0.1. A hub records its memory before any connection arrives;
//  3. starts the client processes. Connection i dials hub i mod H from
//     127.0.0.(2 + i/20000), so that no source address runs out of
//     ephemeral ports, and asks for channel "ch:<i mod C>"; it offers
//     permessage-deflate as browsers do ("permessage-deflate;
//     client_max_window_bits": context takeover both ways), so the hub
//     uses its default compression. The client is a raw handshake and a
//     small frame reader, one goroutine and a 1 KiB buffer per
//     connection, in the manner of fanoutbench's;
//  4. connect: opens the N connections (128 handshakes in flight per
//     client process) and reports the time; then waits until every hub
//     reports its share of connections and of channels, and its source's
//     confirmation of every channel (the subscription wait); then lets
//     everything settle for -idle (default 10 s) and measures each hub's
//     memory per idle connection: (HeapInuse + StackInuse now − before any
//     connection) / connections, and the same of VmRSS, both after a
//     collection with freed memory returned to the OS (debug.FreeOSMemory).
//     HeapInuse counts memory allocated but never touched, which RSS does
//     not: the hub allocates each channel's compressor when its first
//     subscriber arrives, but traffic touches its pages later; so the
//     memory is measured again after the load;
//  5. warm-up: publishes at -rate for -warmup (default 5 s), not measured:
//     each channel's first messages make the hub build the rest of the
//     channel's compressor, which stalls deliveries for a while; the
//     report gives the warm-up's latencies apart;
//  6. load: publishes -rate messages a second (default 10,000) for
//     -duration (default 30 s), round robin over the C channels, with
//     Partitions.Publish (SPUBLISH) from a zipline client of this process:
//     every -tick (default 1 ms) the messages due are handed to 256
//     publishing goroutines, which zipline pipelines (a 10 ms tick sends
//     bursts of 100 messages, whose queueing on two cores adds a few
//     milliseconds to the median). It then waits until the clients have
//     every message they should (each message on channel c goes to every
//     connection on c), or until nothing arrives for 3 s. It measures each
//     hub's CPU time (user + system, from its rusage) over its deliveries
//     (hub.Stats().Deliveries) in that window, and, from the clients, the
//     messages delivered against those expected and the latency.
//
// Latency: each message starts with the publisher's wall-clock send time,
// {"t":<UnixNano, 19 digits>,...}, followed by compressible JSON (a
// sequence number, the channel, and text cut from the corpus's real JSON
// records) up to exactly -size bytes (default 256, the hub's compression
// threshold, so every message is compressed). The hub compresses, so the
// client inflates every compressed message to read the timestamp: the real
// path, as a browser takes it. Each connection keeps its own inflate window
// (the last 32 KiB it inflated, grown only as messages arrive: a channel's
// shared-context frames may refer to it) and borrows a decompressor from a
// pool for each message, so an idle client connection holds no
// decompressor. The latency is the arrival of the message's last frame
// (before inflating) minus the send time, recorded into a log-linear
// histogram shared by the process's connections, which the coordinator
// merges; the report adds the longest latency of each second of the load,
// to tell a stall from a spread, and the publisher's SPUBLISH round trips.
// All processes share one clock.
//
// Everything runs on this machine's 2 cores: the hubs, the clients, the
// Redis nodes and the publisher compete for them, and the report gives each
// one's CPU and the machine's busy time over the load window. The report is
// a markdown table, printed and, with -out, appended to a file, followed by
// notes and an estimate of the machines 1M connections would need at the
// same delivery rate per connection, from the memory per connection and the
// CPU per delivery, with its assumptions. -compression stateless (or off)
// runs the hubs with another compression mode, for comparison;
// -cpuprofile writes each hub's CPU profile.
//
//	cd bench && go run ./cmd/hubbench -conns 38000 -hubs 2 -out results/hubs.md
//	cd bench && go run ./cmd/hubbench -conns 100000 -hubs 6 -out results/hubs.md
//	cd bench && go run ./cmd/hubbench -conns 2000 -hubs 2 -duration 10s -idle 2s -nodes 3   # smoke test
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ziplinekv/zipline/internal/pace"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/bench/harness"
	"github.com/ziplinekv/zipline/cmd/zipline/bench/sysstat"
	"github.com/ziplinekv/zipline/fanout"
	"github.com/ziplinekv/zipline/testbed"
	"github.com/ziplinekv/zipline/testbed/corpus"
)

// maxPerProcess is the most connections one hub or client process takes:
// the hard open-file limit here is 20,000, and each process needs a few
// hundred descriptors besides (its Redis connections, pipes, epoll).
const maxPerProcess = 19000

type options struct {
	hubs, conns, channels, rate  int
	duration, idle, warmup, tick time.Duration
	nodes, replicas, size        int
	out                          string
	ramPerCore                   float64
	perProcess                   int // the most connections per process, from the fd limit
	fdLimit                      uint64
	profile                      string // CPU profiles of the hubs: the path's prefix
	compression                  string // the hubs' compression mode
}

func main() {
	var (
		role     = flag.String("role", "", "internal: run as a child process, hub or clients")
		index    = flag.Int("index", 0, "internal: the hub's index")
		seeds    = flag.String("seeds", "", "internal: the cluster's addresses, comma-separated")
		lo       = flag.Int("lo", 0, "internal: the client process's first connection")
		hi       = flag.Int("hi", 0, "internal: the client process's end connection (exclusive)")
		urls     = flag.String("urls", "", "internal: the hubs' URLs, comma-separated, by index")
		hubs     = flag.Int("hubs", 2, "hub processes")
		conns    = flag.Int("conns", 0, "WebSocket connections in all; 0: 19,000 per hub (or what the open-file limit allows)")
		channels = flag.Int("channels", 10000, "channels; connection i follows ch:<i mod channels>")
		rate     = flag.Int("rate", 10000, "messages published per second, over all channels")
		duration = flag.Duration("duration", 30*time.Second, "length of the load phase")
		idle     = flag.Duration("idle", 10*time.Second, "settle time after connecting, before the memory is measured")
		warmup   = flag.Duration("warmup", 5*time.Second, "publishing at -rate before the load phase, not measured (0: none)")
		tick     = flag.Duration("tick", time.Millisecond, "the publisher's pacing: every tick, the messages due are published at once")
		nodes    = flag.Int("nodes", 6, "primaries of the local Redis Cluster (at least 3)")
		replicas = flag.Int("replicas", 0, "replicas per primary (0: none)")
		size     = flag.Int("size", 256, "payload bytes of each message (at least 80)")
		out      = flag.String("out", "", "append the markdown report to this file")
		ram      = flag.Float64("ram-per-core", 2, "GiB of memory per core of the machines in the 1M estimate")
		compress = flag.String("compression", "shared", "the hubs' fanout.Options.Compression: shared (the default), stateless or off")
		profile  = flag.String("cpuprofile", "", "write each hub's CPU profile, over its whole life, to <this>-hub<i>.pprof")
	)
	flag.Parse()
	limit := raiseFileLimit()
	var err error
	switch *role {
	case "hub":
		err = runHub(*index, strings.Split(*seeds, ","), *compress, *profile)
	case "clients":
		err = runClients(*lo, *hi, *channels, strings.Split(*urls, ","))
	case "":
		o := &options{hubs: *hubs, conns: *conns, channels: *channels, rate: *rate, duration: *duration, idle: *idle,
			warmup: *warmup, tick: *tick, nodes: *nodes, replicas: *replicas, size: *size, out: *out, ramPerCore: *ram, fdLimit: limit, profile: *profile,
			compression: *compress}
		err = coordinate(o)
	default:
		err = fmt.Errorf("unknown -role %q", *role)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "hubbench:", err)
		os.Exit(1)
	}
}

// raiseFileLimit raises the soft open-file limit to the hard one, and
// returns it.
func raiseFileLimit() uint64 {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 1024
	}
	if l.Cur < l.Max {
		l.Cur = l.Max
		if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l) != nil {
			syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l)
		}
	}
	return l.Cur
}

// check validates the options and fills in the defaults that depend on
// the open-file limit.
func (o *options) check() error {
	o.perProcess = min(maxPerProcess, int(min(o.fdLimit, 1<<30))-1000)
	if o.perProcess < 100 {
		return fmt.Errorf("the open-file limit is %d: too low for this benchmark", o.fdLimit)
	}
	switch {
	case o.hubs < 1 || o.hubs > 64:
		return errors.New("-hubs: want 1 to 64")
	case o.channels < 1:
		return errors.New("-channels: want at least 1")
	case o.rate < 1:
		return errors.New("-rate: want at least 1")
	case o.duration <= 0 || o.idle < 0 || o.warmup < 0 || o.tick <= 0:
		return errors.New("-duration and -tick must be positive, -idle and -warmup not negative")
	case o.nodes < 3:
		return errors.New("-nodes: a cluster needs at least 3 primaries")
	case o.replicas < 0:
		return errors.New("-replicas: want 0 or more")
	case o.size < 80:
		return errors.New("-size: want at least 80 bytes (the timestamp and the fields before the text)")
	case o.ramPerCore <= 0:
		return errors.New("-ram-per-core must be positive")
	}
	if _, err := compressionMode(o.compression); err != nil {
		return err
	}
	if o.conns == 0 {
		o.conns = o.perProcess * o.hubs
	}
	if o.conns < o.hubs {
		return fmt.Errorf("-conns %d: want at least one connection per hub", o.conns)
	}
	if perHub := (o.conns + o.hubs - 1) / o.hubs; perHub > o.perProcess {
		return fmt.Errorf("%d connections over %d hubs is %d per hub, more than one process can hold here "+
			"(at most %d: RLIMIT_NOFILE's hard limit is %d and cannot be raised); %d connections need at least %d hubs: -hubs %d",
			o.conns, o.hubs, perHub, o.perProcess, o.fdLimit, o.conns,
			(o.conns+o.perProcess-1)/o.perProcess, (o.conns+o.perProcess-1)/o.perProcess)
	}
	if o.conns > perSourceIP*250 {
		return fmt.Errorf("-conns %d: at most %d (source addresses 127.0.0.2 to 127.0.0.251)", o.conns, perSourceIP*250)
	}
	return nil
}

// plan is who connects where, and what each message should reach.
type plan struct {
	share       []int    // connections per hub
	hubChannels []int    // distinct channels per hub
	subs        []int32  // connections per channel
	hubsOf      []int8   // hubs following each channel
	clients     [][2]int // each client process's [lo, hi)
}

func makePlan(o *options) *plan {
	p := &plan{share: make([]int, o.hubs), hubChannels: make([]int, o.hubs),
		subs: make([]int32, o.channels), hubsOf: make([]int8, o.channels)}
	mask := make([]uint64, o.channels)
	for i := range o.conns {
		ch, h := i%o.channels, i%o.hubs
		p.share[h]++
		p.subs[ch]++
		if mask[ch]&(1<<h) == 0 {
			mask[ch] |= 1 << h
			p.hubChannels[h]++
			p.hubsOf[ch]++
		}
	}
	n := (o.conns + o.perProcess - 1) / o.perProcess
	for k := range n {
		p.clients = append(p.clients, [2]int{k * o.conns / n, (k + 1) * o.conns / n})
	}
	return p
}

// followed counts the channels with at least one connection.
func (p *plan) followed() int {
	n := 0
	for _, s := range p.subs {
		if s > 0 {
			n++
		}
	}
	return n
}

// each calls f for every index in parallel and returns the errors joined.
func each(n int, f func(i int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = f(i) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// stopChildren stops the processes in parallel.
func stopChildren(cs []*child) {
	var wg sync.WaitGroup
	for _, c := range cs {
		if c != nil {
			wg.Go(c.stop)
		}
	}
	wg.Wait()
}

// run is everything one run measured, for the report.
type run struct {
	o        *options
	p        *plan
	command  string
	env      []string
	server   string
	clusterT time.Duration

	connect   []connectReport
	connectT  time.Duration
	subWait   time.Duration
	hubPre    []hubStats // before the first connection
	subStats  []hubStats // when every channel was subscribed
	hubWarm0  []hubStats // before the warm-up
	mem       []hubMem
	memLoad   []hubMem // after the load
	clientRSS uint64   // client processes' RSS after connecting, in all

	pub                   pubResult
	warmPub               pubResult
	warmReceived          uint64
	warmLat               hist
	hub0, hub1            []hubStats
	cl0, cl1              []clientStats
	sys0, sys1            sysstat.Sample
	clientCPU             time.Duration
	window                time.Duration // from the first publish to the end of the drain
	lat                   hist
	secondMax             map[int64]int64 // the longest latency of the messages sent in each Unix second
	received, compressed  uint64
	bad, closed           uint64
	firstClientErr        string
	load0, load1, machine string
}

func coordinate(o *options) error {
	if err := o.check(); err != nil {
		return err
	}
	ctx, stop := harness.HandleSignals("closing the clients, the hubs and the cluster")
	defer stop()
	r := &run{o: o, p: makePlan(o), command: harness.CommandLine("hubbench", "")}
	fmt.Fprintln(os.Stderr, r.command)
	fmt.Fprintf(os.Stderr, "%d connections over %d hubs (%v each), %d client processes, %d channels (%d followed)\n",
		o.conns, o.hubs, r.p.share, len(r.p.clients), o.channels, r.p.followed())

	// The cluster.
	start := time.Now()
	cctx, ccancel := context.WithTimeout(ctx, 3*time.Minute)
	replicas := o.replicas
	if replicas == 0 {
		replicas = -1 // the test bed's "none"
	}
	cl, err := testbed.StartCluster(cctx, testbed.ClusterConfig{Kind: testbed.Redis, Primaries: o.nodes,
		Replicas: replicas, NodeTimeout: 15 * time.Second})
	ccancel()
	if err != nil {
		return err
	}
	defer cl.Stop()
	harness.AtAbort(cl.Stop)
	r.clusterT = time.Since(start)
	var redisPIDs []int
	for _, s := range cl.Nodes() {
		redisPIDs = append(redisPIDs, s.PID())
	}
	if info, err := cl.Nodes()[0].Info(ctx, "server"); err == nil {
		r.server = "redis " + info["redis_version"]
	}
	r.env = harness.Environment(r.server)
	seeds := strings.Join(cl.Addrs(), ",")
	fmt.Fprintf(os.Stderr, "cluster of %d primaries up in %v\n", o.nodes, r.clusterT.Round(time.Millisecond))

	// The hubs.
	hubs := make([]*child, o.hubs)
	defer stopChildren(hubs)
	harness.AtAbort(func() {
		for _, c := range hubs {
			if c != nil {
				c.kill()
			}
		}
	})
	ready := make([]hubReady, o.hubs)
	for h := range hubs {
		args := []string{"-role", "hub", "-index", strconv.Itoa(h), "-seeds", seeds, "-compression", o.compression}
		if o.profile != "" {
			args = append(args, "-cpuprofile", fmt.Sprintf("%s-hub%d.pprof", o.profile, h))
		}
		if hubs[h], err = startChild(fmt.Sprintf("hub %d", h), args...); err != nil {
			return err
		}
	}
	if err := each(o.hubs, func(h int) error { return hubs[h].call(ctx, "", time.Minute, &ready[h]) }); err != nil {
		return err
	}
	var urls []string
	for _, rd := range ready {
		urls = append(urls, rd.URL)
	}

	// The client processes.
	clients := make([]*child, len(r.p.clients))
	defer stopChildren(clients) // before the hubs: deferred later, runs first
	harness.AtAbort(func() {
		for _, c := range clients {
			if c != nil {
				c.kill()
			}
		}
	})
	for k, rg := range r.p.clients {
		if clients[k], err = startChild(fmt.Sprintf("clients %d", k), "-role", "clients", "-lo", strconv.Itoa(rg[0]),
			"-hi", strconv.Itoa(rg[1]), "-channels", strconv.Itoa(o.channels), "-urls", strings.Join(urls, ",")); err != nil {
			return err
		}
	}
	if err := each(len(clients), func(k int) error { return clients[k].call(ctx, "", time.Minute, nil) }); err != nil {
		return err
	}

	// The publisher, its connections opened before the load.
	pub, err := zipline.New(zipline.Options{Addrs: cl.Addrs(), Logger: warnLogger("publisher")})
	if err != nil {
		return err
	}
	defer pub.Close()
	parts, err := fanout.NewPartitions(0, "")
	if err != nil {
		return err
	}
	if err := warmUp(ctx, pub, parts); err != nil {
		return fmt.Errorf("publisher warm-up: %w", err)
	}

	// Phase (a): connect, wait for the subscriptions, settle, measure.
	r.hubPre = make([]hubStats, o.hubs)
	if err := each(o.hubs, func(h int) error { return hubs[h].call(ctx, "stats", time.Minute, &r.hubPre[h]) }); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "connecting %d connections\n", o.conns)
	r.connect = make([]connectReport, len(clients))
	start = time.Now()
	if err := each(len(clients), func(k int) error {
		return clients[k].call(ctx, "connect", 30*time.Minute, &r.connect[k])
	}); err != nil {
		return err
	}
	r.connectT = time.Since(start)
	failed, first := 0, ""
	for _, c := range r.connect {
		failed += c.Failed
		if first == "" {
			first = c.FirstError
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d connections failed; the first: %s", failed, o.conns, first)
	}
	fmt.Fprintf(os.Stderr, "connected in %v; waiting for the hubs' subscriptions\n", r.connectT.Round(time.Millisecond))
	start = time.Now()
	if r.subStats, err = awaitSubscribed(ctx, hubs, r.p); err != nil {
		return err
	}
	r.subWait = time.Since(start)
	fmt.Fprintf(os.Stderr, "subscribed after %v more; settling for %v\n", r.subWait.Round(time.Millisecond), o.idle)
	if err := pace.Sleep(ctx, o.idle); err != nil {
		return err
	}
	r.mem = make([]hubMem, o.hubs)
	if err := each(o.hubs, func(h int) error { return hubs[h].call(ctx, "mem", time.Minute, &r.mem[h]) }); err != nil {
		return err
	}
	cls := make([]clientStats, len(clients))
	if err := each(len(clients), func(k int) error { return clients[k].call(ctx, "stats", time.Minute, &cls[k]) }); err != nil {
		return err
	}
	for _, c := range cls {
		r.clientRSS += c.RSS
	}

	// Phase (b): load, after a warm-up that is not measured: a channel's
	// first message makes the hub allocate the rest of the channel's
	// compressor and touch its tables, which stalls the first second.
	if o.warmup > 0 {
		fmt.Fprintf(os.Stderr, "warming up: %d messages/s for %v\n", o.rate, o.warmup)
		w0, w1 := make([]clientStats, len(clients)), make([]clientStats, len(clients))
		r.hubWarm0 = make([]hubStats, o.hubs)
		if err := snapshot(ctx, hubs, clients, r.hubWarm0, w0); err != nil {
			return err
		}
		r.warmPub = publish(ctx, o, o.warmup, r.p, pub, parts)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err := drain(ctx, clients, w0, w1, r.warmPub.expected); err != nil {
			return err
		}
		for k := range clients {
			r.warmReceived += w1[k].Received - w0[k].Received
			r.warmLat.add(w1[k].Hist, 1)
			r.warmLat.add(w0[k].Hist, -1)
		}
	}
	fmt.Fprintf(os.Stderr, "publishing %d messages/s for %v\n", o.rate, o.duration)
	r.hub0, r.cl0 = make([]hubStats, o.hubs), make([]clientStats, len(clients))
	if err := snapshot(ctx, hubs, clients, r.hub0, r.cl0); err != nil {
		return err
	}
	r.load0 = loadAverage()
	r.sys0 = sysstat.Take(redisPIDs...)
	r.pub = publish(ctx, o, o.duration, r.p, pub, parts)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	fmt.Fprintf(os.Stderr, "published %d (%d failed); waiting for the deliveries\n", r.pub.published, r.pub.failed)
	r.cl1 = make([]clientStats, len(clients))
	if err := drain(ctx, clients, r.cl0, r.cl1, r.pub.expected); err != nil {
		return err
	}
	r.sys1 = sysstat.Take(redisPIDs...)
	r.window = r.sys1.Time.Sub(r.sys0.Time)
	r.load1, r.machine = loadAverage(), sysstat.Machine()
	r.hub1 = make([]hubStats, o.hubs)
	if err := each(o.hubs, func(h int) error { return hubs[h].call(ctx, "stats", time.Minute, &r.hub1[h]) }); err != nil {
		return err
	}
	// The memory again, now that every channel's compressor has run: its
	// tables were allocated at the first subscriber, but untouched pages
	// are not resident until traffic touches them.
	r.memLoad = make([]hubMem, o.hubs)
	if err := each(o.hubs, func(h int) error { return hubs[h].call(ctx, "mem", time.Minute, &r.memLoad[h]) }); err != nil {
		return err
	}
	for k := range clients {
		c0, c1 := r.cl0[k], r.cl1[k]
		r.received += c1.Received - c0.Received
		r.compressed += c1.Compressed - c0.Compressed
		r.bad += c1.Bad - c0.Bad
		r.closed += c1.Closed
		r.clientCPU += c1.CPU - c0.CPU
		for sec, d := range c1.SecondMax {
			if r.secondMax == nil {
				r.secondMax = map[int64]int64{}
			}
			r.secondMax[sec] = max(r.secondMax[sec], d)
		}
		r.lat.add(c1.Hist, 1)
		r.lat.add(c0.Hist, -1)
		if r.firstClientErr == "" {
			r.firstClientErr = c1.FirstError
		}
	}

	report := r.report()
	fmt.Print(report)
	if o.out != "" {
		f, err := os.OpenFile(o.out, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		_, err = f.WriteString(report)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	fmt.Fprintln(os.Stderr, "stopping the clients, the hubs and the cluster")
	return nil
}

// awaitSubscribed polls the hubs until each has its share of connections
// and channels, and its source has confirmed every channel; at most 5 min.
func awaitSubscribed(ctx context.Context, hubs []*child, p *plan) ([]hubStats, error) {
	st := make([]hubStats, len(hubs))
	deadline := time.Now().Add(5 * time.Minute)
	for {
		if err := each(len(hubs), func(h int) error { return hubs[h].call(ctx, "stats", time.Minute, &st[h]) }); err != nil {
			return nil, err
		}
		var missing []string
		for h, s := range st {
			if s.Conns != p.share[h] || s.Channels != p.hubChannels[h] || s.Subscribed != int64(p.hubChannels[h]) {
				missing = append(missing, fmt.Sprintf("hub %d: %d/%d connections, %d/%d channels, %d subscribed",
					h, s.Conns, p.share[h], s.Channels, p.hubChannels[h], s.Subscribed))
			}
		}
		if len(missing) == 0 {
			return st, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the hubs were not all subscribed after 5 min: %s", strings.Join(missing, "; "))
		}
		if err := pace.Sleep(ctx, 100*time.Millisecond); err != nil {
			return nil, err
		}
	}
}

// snapshot reads every hub's and client process's counters.
func snapshot(ctx context.Context, hubs, clients []*child, hs []hubStats, cs []clientStats) error {
	return errors.Join(
		each(len(hubs), func(h int) error { return hubs[h].call(ctx, "stats", time.Minute, &hs[h]) }),
		each(len(clients), func(k int) error { return clients[k].call(ctx, "stats", time.Minute, &cs[k]) }))
}

// drain waits until the clients have received expected messages since cl0,
// or nothing has arrived for 3 s (at most 60 s), and leaves their last
// counters in cl1.
func drain(ctx context.Context, clients []*child, cl0, cl1 []clientStats, expected uint64) error {
	var last uint64
	lastChange := time.Now()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if err := each(len(clients), func(k int) error { return clients[k].call(ctx, "stats", time.Minute, &cl1[k]) }); err != nil {
			return err
		}
		var got uint64
		for k := range clients {
			got += cl1[k].Received - cl0[k].Received
		}
		if got != last {
			last, lastChange = got, time.Now()
		}
		if got >= expected || time.Since(lastChange) > 3*time.Second || time.Now().After(deadline) {
			return nil
		}
		if err := pace.Sleep(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
}

// warnLogger logs warnings and errors to stderr, naming the process.
func warnLogger(name string) *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})).With("process", name)
}

// loadAverage is /proc/loadavg's first three fields.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// pubResult is what the publisher did.
type pubResult struct {
	published, failed uint64
	mismatched        uint64 // SPUBLISH reached another number of hubs than follow the channel
	expected          uint64 // deliveries to connections the published messages should make
	firstErr          string
	elapsed           time.Duration // from the first publish to the last reply
	behind            time.Duration // the most the pacing fell behind its schedule
	rtt               *atomicHist   // SPUBLISH round trips, from the timestamp to the reply
}

// publish publishes o.rate messages a second for duration, round robin
// over the channels: every o.tick the messages due are handed to 256
// goroutines, each stamping the message with the time just before its
// SPUBLISH.
func publish(ctx context.Context, o *options, duration time.Duration, p *plan, c *zipline.Client, parts *fanout.Partitions) pubResult {
	var (
		res                                   = pubResult{rtt: new(atomicHist)}
		published, failed, mismatched, expect atomic.Uint64
		errOnce                               sync.Once
		seq                                   atomic.Uint64
	)
	fill := fillerText()
	jobs := make(chan int, max(o.rate/10, 256))
	var wg sync.WaitGroup
	for range 256 {
		wg.Go(func() {
			for ch := range jobs {
				name := "ch:" + strconv.Itoa(ch)
				now := time.Now()
				payload := makePayload(o.size, seq.Add(1), name, fill, now.UnixNano())
				n, err := parts.Publish(ctx, c, name, payload)
				res.rtt.record(time.Since(now))
				if err != nil {
					failed.Add(1)
					errOnce.Do(func() { res.firstErr = err.Error() })
					continue
				}
				published.Add(1)
				expect.Add(uint64(p.subs[ch]))
				if n != int64(p.hubsOf[ch]) {
					mismatched.Add(1)
				}
			}
		})
	}
	total := int(math.Round(float64(o.rate) * duration.Seconds()))
	tick := time.NewTicker(o.tick)
	start := time.Now()
	sent, next := 0, 0
	for sent < total && ctx.Err() == nil {
		due := min(total, int(float64(o.rate)*time.Since(start).Seconds())+1)
		for ; sent < due; sent++ {
			jobs <- next
			next = (next + 1) % o.channels
		}
		// How far behind its schedule the sending is: the time the last
		// message handed over was due.
		res.behind = max(res.behind, time.Since(start)-time.Duration(float64(sent)/float64(o.rate)*float64(time.Second)))
		select {
		case <-tick.C:
		case <-ctx.Done():
		}
	}
	tick.Stop()
	close(jobs)
	wg.Wait()
	res.elapsed = time.Since(start)
	res.published, res.failed, res.mismatched, res.expected = published.Load(), failed.Load(), mismatched.Load(), expect.Load()
	return res
}

// warmUp publishes once on every partition, to channels nobody follows, so
// that the publisher has its connections to every node before the load.
func warmUp(ctx context.Context, c *zipline.Client, parts *fanout.Partitions) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return each(4*parts.Len(), func(i int) error {
		_, err := parts.Publish(ctx, c, "warmup:"+strconv.Itoa(i), []byte("warm-up"))
		return err
	})
}

// fillerText is the text the payloads are cut from: the corpus's real
// JSON records, with quotes and backslashes replaced so that any cut of it
// sits in a JSON string, and bytes beyond ASCII too, so that a cut is
// valid UTF-8 (the hub sends it as a text message).
func fillerText() []byte {
	msgs, err := corpus.RealMessages(1024)
	var b []byte
	for _, m := range msgs {
		b = append(b, m...)
	}
	if err != nil || len(b) < 4096 {
		b = []byte(strings.Repeat(`{'id':1,'name':'hub bench','tags':['fanout','bench'],'active':true},`, 200))
	}
	for i, c := range b {
		switch {
		case c == '"':
			b[i] = '\''
		case c == '\\':
			b[i] = '/'
		case c < 0x20 || c >= 0x7f:
			b[i] = ' '
		}
	}
	return b
}

// makePayload builds one message of exactly size bytes:
//
//	{"t":<UnixNano, 19 digits>,"seq":<n>,"ch":"<channel>","d":"<text>"}
func makePayload(size int, seq uint64, channel string, fill []byte, now int64) []byte {
	b := make([]byte, 0, size)
	b = append(b, `{"t":`...)
	b = fmt.Appendf(b, "%019d", now)
	b = append(b, `,"seq":`...)
	b = strconv.AppendUint(b, seq, 10)
	b = append(b, `,"ch":"`...)
	b = append(b, channel...)
	b = append(b, `","d":"`...)
	for n := size - len(b) - 2; n > 0; {
		k := min(n, len(fill)/2)
		off := int(seq*131) % (len(fill) - k)
		b = append(b, fill[off:off+k]...)
		n -= k
	}
	return append(b, `"}`...)
}
