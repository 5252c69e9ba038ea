// Command subbench measures pub/sub subscriber throughput: how many
// messages per second ONE subscriber connection of each client takes in
// from one channel, and whether it loses any, while a publisher that is not
// the bottleneck floods the channel with -messages messages of -size bytes.
//
//	cd bench && go run ./cmd/subbench -out results/subscribe.md
//
// Why: a subscriber is one connection read by one goroutine, so its cost
// per message (parsing the push, handing it to the application) bounds what
// a client can consume however many cores the machine has; a client that
// falls behind either pushes back on the server (its socket fills, the
// server buffers) or drops messages. This program shows both: the rate
// from the first message received to the last, and received against
// published.
//
// Set-up: one redis-server on a free loopback port (testbed:
// --save "" --appendonly no), with the pub/sub output-buffer limit lifted
// (CONFIG SET client-output-buffer-limit "pubsub 0 0 0") so that the server
// buffers a slow subscriber's backlog instead of disconnecting it, which
// would measure the server's limit rather than the client. The publisher
// is -publishers plain TCP connections, each writing pre-encoded PUBLISH
// commands in pipelined batches of 64 from one goroutine and reading the
// replies from another, so it costs almost no CPU and never waits for a
// round trip. Every cell is a fresh client subscribed on a fresh channel;
// publishing starts once PUBSUB NUMSUB shows the subscriber.
//
// Rounds interleave the variants (client × protocol) in an order that
// rotates every round; the report gives medians. A "raw" variant, a bare
// TCP reader that counts bytes, shows how fast this server and publisher
// deliver at all: the ceiling no client can pass.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ziplinekv/zipline/bench/harness"
	"github.com/ziplinekv/zipline/cmd/zipline/bench/sysstat"
	"github.com/ziplinekv/zipline/testbed"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "subbench:", err)
		os.Exit(1)
	}
}

type options struct {
	variants   []variant
	messages   int
	size       int
	rounds     int
	publishers int
	buffer     int
	idle       time.Duration
	maxOther   float64
	maxWait    time.Duration
	out        string
	cpuProfile string
}

func parseFlags() (*options, error) {
	var (
		clientList = flag.String("clients", "zipline,goredis,rueidis", "comma list of clients: "+harness.JoinNames(clients, clientName))
		protocols  = flag.String("protocols", "3,2", "RESP versions to run each client with")
		raw        = flag.Bool("raw", true, "also run the raw TCP reader (RESP2): the ceiling of server and publisher")
		messages   = flag.Int("messages", 1_000_000, "messages published per cell")
		size       = flag.Int("size", 100, "payload bytes per message")
		rounds     = flag.Int("rounds", 5, "rounds over all variants; tables show the median")
		publishers = flag.Int("publishers", 2, "publisher connections (each a writer and a reader goroutine)")
		buffer     = flag.Int("buffer", 0, "subscriber-side buffer in messages: zipline Subscriptions.Buffer and go-redis WithChannelSize; 0 = -messages (zipline then never overflows it)")
		idle       = flag.Duration("idle", 2*time.Second, "after publishing ends, how long without a new message before the rest count as lost")
		maxOther   = flag.Float64("max-other", 25, "quiet gate: wait up to -max-wait before a cell for other processes to use ≤ this % of one CPU, and measure a cell again when they used more; 0 turns it off")
		maxWait    = flag.Duration("max-wait", 5*time.Second, "quiet gate: longest wait before a cell")
		cpuProfile = flag.String("cpuprofile", "", "write a CPU profile of the whole run (this process: the clients, and the publisher, which costs little) to this file")
		quick      = flag.Bool("quick", false, "smoke test: -messages 100000 -rounds 1 unless set explicitly")
		out        = flag.String("out", "", "also write the markdown report to this file (rewritten after every round)")
	)
	flag.Parse()
	if flag.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", flag.Args())
	}
	if *quick {
		if err := harness.QuickDefaults(map[string]string{"messages": "100000", "rounds": "1"}); err != nil {
			return nil, err
		}
	}
	o := &options{messages: *messages, size: *size, rounds: *rounds, publishers: *publishers, buffer: *buffer,
		idle: *idle, maxOther: *maxOther, maxWait: *maxWait, out: *out, cpuProfile: *cpuProfile}
	if o.messages < 1 || o.size < 1 || o.rounds < 1 || o.publishers < 1 || o.buffer < 0 || o.idle <= 0 || o.maxOther < 0 {
		return nil, fmt.Errorf("need -messages, -size, -rounds, -publishers ≥ 1, -buffer ≥ 0, -idle > 0, -max-other ≥ 0")
	}
	if o.buffer == 0 {
		o.buffer = o.messages
	}
	protos, err := harness.ParseInts(*protocols, 2, 3)
	if err != nil {
		return nil, fmt.Errorf("-protocols: %w", err)
	}
	chosen, err := harness.ParseNames(*clientList, clients, clientName)
	if err != nil {
		return nil, fmt.Errorf("-clients: %w", err)
	}
	for _, c := range chosen {
		for _, p := range protos {
			o.variants = append(o.variants, variant{client: c, proto: p})
		}
	}
	if *raw {
		o.variants = append(o.variants, variant{client: rawClient, proto: 2})
	}
	return o, nil
}

// variant is one client at one protocol.
type variant struct {
	client *client
	proto  int
}

func (v variant) String() string { return fmt.Sprintf("%s/resp%d", v.client.name, v.proto) }

// result is what one cell measured.
type result struct {
	variant   variant
	round     int
	published int64
	received  int64
	badSize   int64         // messages whose payload had the wrong length
	recvTime  time.Duration // first message received to last
	pubTime   time.Duration // publishing started to its last reply
	dropped   int64         // messages the client says it dropped (zipline); -1 when it does not say
	gaps      int64         // gaps the client reported (zipline); -1 when it does not say
	reasons   string        // the gaps' reasons, "backlog×2 overflow×1"
	allocs    float64       // whole process (the publisher allocates nothing per message), per message received
	cpu       float64       // this process (subscriber and publisher), µs per message received
	server    float64       // redis-server, µs per message published; <0 unknown
	other     float64       // % of one CPU other processes used; <0 unknown
	failed    string
}

// rate is the subscriber's messages per second.
func (r *result) rate() float64 {
	if r.recvTime <= 0 {
		return 0
	}
	return float64(r.received-1) / r.recvTime.Seconds() // messages after the first, over the time they took
}

func (r *result) pubRate() float64 {
	if r.pubTime <= 0 {
		return 0
	}
	return float64(r.published) / r.pubTime.Seconds()
}

func (r *result) line() string {
	if r.failed != "" {
		return "FAIL " + r.failed
	}
	s := fmt.Sprintf("%7s kmsg/s  received %d/%d  publish %7s kmsg/s  allocs/msg %s  cpu %sµs/msg  other %s%%",
		harness.Kops(r.rate()), r.received, r.published, harness.Kops(r.pubRate()), harness.Num(r.allocs),
		harness.Num(r.cpu), harness.Percent(r.other))
	if r.dropped > 0 || r.gaps > 0 {
		s += fmt.Sprintf("  client dropped %d (%d gaps: %s)", r.dropped, r.gaps, r.reasons)
	}
	if r.badSize > 0 {
		s += fmt.Sprintf("  WRONG SIZE %d", r.badSize)
	}
	return s
}

func run() error {
	o, err := parseFlags()
	if err != nil {
		return err
	}
	stopProfile, err := harness.StartCPUProfile(o.cpuProfile)
	if err != nil {
		return err
	}
	defer stopProfile()
	sess := harness.Begin("subbench", "")
	rep := &report{
		Header: harness.Header{Title: "Subscriber throughput: zipline and peer clients",
			Command: sess.Command,
			Settings: fmt.Sprintf("%d messages of %d B per cell on one channel, one subscriber connection, %d publisher connections "+
				"(pipelined batches of %d), subscriber buffer %d messages, rounds %d, idle cut-off %v",
				o.messages, o.size, o.publishers, pubBatch, o.buffer, o.rounds, o.idle)},
		opts: o,
	}
	seen := map[string]bool{}
	for _, v := range o.variants {
		if !seen[v.client.name] {
			seen[v.client.name] = true
			rep.Clients = append(rep.Clients, harness.Client{Name: v.client.name, Desc: v.client.desc(o.buffer)})
		}
	}

	s, err := testbed.Start(testbed.Config{})
	if err != nil {
		return err
	}
	defer s.Stop()
	ctx := context.Background()
	if _, err := s.Do(ctx, "CONFIG", "SET", "client-output-buffer-limit", "pubsub 0 0 0"); err != nil {
		return fmt.Errorf("CONFIG SET client-output-buffer-limit: %w", err)
	}
	server := "existing"
	if info, err := s.Info(ctx, "server"); err == nil {
		server = "redis " + info["redis_version"] + ", started by subbench on " + s.Addr +
			` (--save "" --appendonly no, client-output-buffer-limit pubsub 0 0 0)`
	}
	rep.Env = harness.Environment(server)

	cells := len(o.variants) * o.rounds
	// A guess for the estimate and the quiet gate's budget: 300k messages/s.
	cellTime := time.Duration(float64(o.messages)/300e3*float64(time.Second)) + 300*time.Millisecond
	est := time.Duration(cells) * cellTime
	quiet := &harness.QuietGate{MaxOther: o.maxOther, MaxWait: o.maxWait, Budget: est / 2, ServerPIDs: []int{s.PID()}}
	rep.quiet = quiet.Describe()
	fmt.Fprintf(os.Stderr, "%d cells, about %v at 300k messages/s\n", cells, est.Round(time.Second))
	done := 0
	sess.Interleave(o.rounds, len(o.variants), func(r, i int) {
		v := o.variants[i]
		done++
		res, _ := harness.MeasureQuietly(quiet, cellTime, func() result { return runCell(s, o, v, r) }, result.judge,
			func(m result, again bool) {
				fmt.Fprintf(os.Stderr, "[round %d %d/%d%s] %-16s %s\n", r, done, cells, harness.AgainTag(again), v, m.line())
			})
		rep.results = append(rep.results, res)
		rep.waited, rep.remeasured = quiet.Waited, quiet.Remeasured
		sess.Save(o.out, rep.write)
	})
	if sess.Stopped() {
		rep.notes = append(rep.notes, "interrupted: incomplete run.")
	}
	return sess.End(o.out, rep.write)
}

// recorder counts what a subscriber received. The client's consumer calls
// got (or add) for every message, from one goroutine.
type recorder struct {
	want  int64
	size  int
	base  time.Time
	n     atomic.Int64
	bad   atomic.Int64
	first atomic.Int64 // since base, ns, of the first message; 0 before
	end   time.Duration
	done  chan struct{} // closed when want messages have arrived; end is set
}

func newRecorder(want int64, size int) *recorder {
	return &recorder{want: want, size: size, base: time.Now(), done: make(chan struct{})}
}

// got records one message with a payload of size bytes.
func (r *recorder) got(size int) {
	if size != r.size {
		r.bad.Add(1)
	}
	r.add(1)
}

// add records k messages.
func (r *recorder) add(k int64) {
	n := r.n.Add(k)
	if n == k {
		r.first.Store(int64(max(time.Since(r.base), 1)))
	}
	if n >= r.want && n-k < r.want {
		r.end = time.Since(r.base)
		close(r.done)
	}
}

// runCell subscribes a fresh client of v on a fresh channel, publishes
// o.messages to it and waits until all have arrived or none came for
// o.idle after publishing ended.
func runCell(s *testbed.Server, o *options, v variant, round int) (res result) {
	res = result{variant: v, round: round, published: int64(o.messages), dropped: -1, gaps: -1, server: -1, other: -1}
	channel := fmt.Sprintf("subbench:%d:%s:%d", round, v, time.Now().UnixNano())
	rec := newRecorder(int64(o.messages), o.size)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	sess, err := v.client.open(ctx, s.Addr, v.proto, channel, o.buffer, rec)
	if err != nil {
		cancel()
		res.failed = "subscribe: " + err.Error()
		return res
	}
	defer sess.close()
	err = waitSubscribed(ctx, s, channel)
	cancel()
	if err != nil {
		res.failed = err.Error()
		return res
	}
	runtime.GC()

	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	cpu0 := sysstat.Take(s.PID())
	pubStart := time.Now()
	var pubErr error
	var pubDone atomic.Bool
	go func() {
		pubErr = publish(s.Addr, channel, o.messages, o.size, o.publishers)
		res.pubTime = time.Since(pubStart)
		pubDone.Store(true)
	}()

	// Wait for the last message, or for the flow to stop.
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	last, lastChange := int64(0), time.Now()
	deadline := time.Now().Add(10*time.Minute + time.Duration(o.messages)*10*time.Microsecond)
	var end time.Duration
wait:
	for {
		select {
		case <-rec.done:
			end = rec.end
			break wait
		case now := <-tick.C:
			if n := rec.n.Load(); n != last {
				last, lastChange = n, now
			} else if pubDone.Load() && now.Sub(lastChange) > o.idle || now.After(deadline) {
				end = lastChange.Sub(rec.base) // within one tick of the last message
				break wait
			}
		}
	}
	cpu1 := sysstat.Take(s.PID())
	runtime.ReadMemStats(&ms1)
	for !pubDone.Load() { // the publisher's replies come after the messages at most by a round trip
		time.Sleep(time.Millisecond)
	}
	if pubErr != nil {
		res.failed = "publish: " + pubErr.Error()
		return res
	}

	res.received, res.badSize = rec.n.Load(), rec.bad.Load()
	if res.received == 0 {
		res.failed = "no message received"
		return res
	}
	res.recvTime = end - time.Duration(rec.first.Load())
	if sess.stats != nil {
		res.dropped, res.gaps, res.reasons = sess.stats()
	}
	used := cpu1.Sub(cpu0)
	n := float64(res.received)
	res.allocs = float64(ms1.Mallocs-ms0.Mallocs) / n
	res.cpu = harness.Micros(used.Self) / n
	if used.ServerOK {
		res.server = harness.Micros(used.Server) / float64(res.published)
	}
	res.other = used.OtherPercent()
	return res
}

// waitSubscribed polls PUBSUB NUMSUB until the channel has a subscriber.
func waitSubscribed(ctx context.Context, s *testbed.Server, channel string) error {
	for {
		v, err := s.Do(ctx, "PUBSUB", "NUMSUB", channel)
		if err != nil {
			return fmt.Errorf("PUBSUB NUMSUB: %w", err)
		}
		if e := v.Elems(); len(e) == 2 && e[1].Int() >= 1 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no subscriber on %s: %w", channel, ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

var newline = []byte{'\n'}

// pubBatch is how many PUBLISH commands a publisher writes at once.
const pubBatch = 64

// publish sends n PUBLISH commands of a size-byte payload to channel over
// conns connections, pipelined, and returns once every reply has been read.
func publish(addr, channel string, n, size, conns int) error {
	var one []byte
	payload := strings.Repeat("m", size)
	for _, a := range []string{"PUBLISH", channel, payload} {
		one = fmt.Appendf(one, "$%d\r\n%s\r\n", len(a), a)
	}
	one = append([]byte("*3\r\n"), one...)
	batch := make([]byte, 0, len(one)*pubBatch)
	for range pubBatch {
		batch = append(batch, one...)
	}

	var wg sync.WaitGroup
	errs := make([]error, conns)
	for i := range conns {
		quota := n / conns
		if i < n%conns {
			quota++
		}
		wg.Go(func() { errs[i] = publishOn(addr, one, batch, quota) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// publishOn writes quota commands (one is one command, batch pubBatch of
// them) on a new connection while another goroutine reads the replies:
// integer replies, one line each, so counting newlines counts them.
func publishOn(addr string, one, batch []byte, quota int) error {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Minute))
	readErr := make(chan error, 1)
	go func() {
		buf := make([]byte, 64<<10)
		for got := 0; got < quota; {
			k, err := conn.Read(buf)
			chunk := buf[:k]
			if i := bytes.IndexByte(chunk, '-'); i >= 0 { // an error reply; PUBLISH never returns a negative integer
				end := bytes.IndexByte(chunk[i:], '\r')
				readErr <- fmt.Errorf("server: %s", chunk[i:i+max(end, 0)])
				return
			}
			got += bytes.Count(chunk, newline)
			if err != nil && got < quota {
				readErr <- err
				return
			}
		}
		readErr <- nil
	}()
	for left := quota; left > 0; {
		b := batch
		if left < pubBatch {
			b = batch[:left*len(one)]
		}
		if _, err := conn.Write(b); err != nil {
			return err
		}
		left -= len(b) / len(one)
	}
	return <-readErr
}

// judge says how noisy an attempt was and whether it failed, for
// harness.MeasureQuietly.
func (r result) judge() (other float64, failed bool) { return r.other, r.failed != "" }
