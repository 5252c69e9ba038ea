package zipline

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/internal/testkit"
)

// sentinelClient starts a Sentinel group and a Client of it.
func sentinelClient(t *testing.T, cfg testkit.SentinelConfig, opts Options) (*Client, *testkit.Sentinel) {
	t.Helper()
	g := testkit.NewSentinel(t, cfg)
	opts.Sentinel.MasterName, opts.Sentinel.Addrs = g.MasterName, g.SentinelAddrs()
	if opts.Logger == nil {
		opts.Logger = quiet
	}
	c, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, g
}

// write is one acknowledged (or failed) SET of a load.
type write struct {
	key  string
	sent time.Time // when the call began
	at   time.Time // when its reply (or error) came
	err  error
}

// The Client follows the primary through a failover: the primary is
// killed under load from 16 writers, the sentinels promote a replica, and
// the writers go on there. Only calls in flight when it died fail, and no
// write made after the kill is lost (nor, with the load paced so that
// replication keeps up, one before it).
func TestSentinelFollowsAFailover(t *testing.T) {
	c, g := sentinelClient(t, testkit.SentinelConfig{}, Options{})
	ctx := context.Background()
	if err := c.Set(ctx, "before", []byte("1")); err != nil {
		t.Fatal(err)
	}
	primary, err := g.Primary(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := primary.Do(ctx, "GET", "before"); err != nil || string(v.Bytes()) != "1" {
		t.Fatalf("the write is not on the primary %s: %v %v", primary.Addr, v, err)
	}
	waitOnReplicas(t, g, "before", "1")

	const writers = 16
	load := newWriteLoad(c, writers, time.Millisecond)
	load.waitFor(t, 200*writers, time.Time{})
	// The cut-off is when the client had lost its connection to the killed
	// primary (or moved on), not when the kill began: a write the old
	// primary ran just before it died can be acknowledged afterwards, its
	// reply read from the socket, and be missing from the replica that
	// replication had not reached yet; that is the server's loss, where a
	// write made once the client saw the primary gone can never have run
	// there.
	gone := watchClient(t, c, primary.Addr, func(_ *sentinel, v *sentinelView) bool {
		return !v.primary.up() || v.primary.addr != primary.Addr
	})
	f, err := g.KillPrimary(ctx)
	if err != nil {
		load.finish()
		t.Fatal(err)
	}
	killed := time.Now().Add(-f.Settled) // Settled runs from the kill
	t.Logf("the sentinels named %s in place of %s after %v", f.Primary.Addr, f.Former.Addr, f.Named.Round(time.Millisecond))
	cutoff, ok := gone(t, killed, 30*time.Second)
	if !ok {
		load.finish()
		t.Fatalf("the client never left the killed primary %s", primary.Addr)
	}
	t.Logf("the client saw the primary gone %v after the kill began", cutoff.Sub(killed).Round(time.Millisecond))
	load.waitFor(t, 10*writers, cutoff)
	load.check(t, c, cutoff)
	var st Stats
	c.carrier.stats(&st)
	if st.Reconnects == 0 {
		t.Error("Stats.Reconnects does not count the switch of primary")
	}
	if v, err := f.Primary.Do(ctx, "GET", "before"); err != nil || string(v.Bytes()) != "1" {
		t.Errorf("the new primary lost a write made before: %v %v", v, err)
	}
}

// writeLoad writes unique keys from several goroutines until stopped.
type writeLoad struct {
	mu     sync.Mutex
	writes []write
	stop   chan struct{}
	wg     sync.WaitGroup
	n      int
}

// newWriteLoad starts n writers, each writing once per pace (0: as fast
// as it can). Paced, the load leaves the replicas time to keep up, so that
// whatever a failover loses is the client's doing, not replication's lag.
func newWriteLoad(c *Client, n int, pace time.Duration) *writeLoad {
	l := &writeLoad{stop: make(chan struct{}), n: n}
	for w := range n {
		l.wg.Go(func() {
			var tick <-chan time.Time
			if pace > 0 {
				t := time.NewTicker(pace)
				defer t.Stop()
				tick = t.C
			}
			for i := 0; ; i++ {
				select {
				case <-l.stop:
					return
				default:
				}
				if tick != nil {
					select {
					case <-l.stop:
						return
					case <-tick:
					}
				}
				key := "load:" + strconv.Itoa(w) + ":" + strconv.Itoa(i)
				ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
				sent := time.Now()
				err := c.Set(ctx, key, []byte("v"))
				cancel()
				l.mu.Lock()
				l.writes = append(l.writes, write{key, sent, time.Now(), err})
				l.mu.Unlock()
			}
		})
	}
	return l
}

// waitFor waits, bounded, until n writes made after since succeeded.
func (l *writeLoad) waitFor(t *testing.T, n int, since time.Time) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ok := 0
		l.mu.Lock()
		for _, w := range l.writes {
			if w.err == nil && w.sent.After(since) {
				ok++
			}
		}
		l.mu.Unlock()
		if ok >= n {
			return
		}
		if time.Now().After(deadline) {
			l.finish()
			t.Fatalf("only %d writes succeeded after %v in 30 s", ok, since)
		}
		time.Sleep(10 * time.Millisecond) // polling the load's progress, bounded
	}
}

// finish stops the load and returns its writes.
func (l *writeLoad) finish() []write {
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
	l.wg.Wait()
	return l.writes
}

// check stops the load and checks what a failover may cost: only calls in
// flight when the primary died fail (ErrConnLost: they may have run), and
// every acknowledged write made after cutoff, from which on the client
// could not send one to the former primary, is on the new primary. Writes
// made before and missing afterwards are the server's own loss
// (replication is asynchronous): reported, not failed.
func (l *writeLoad) check(t *testing.T, c *Client, cutoff time.Time) {
	t.Helper()
	writes := l.finish()
	var failed, lostAfter, lostBefore, after int
	var acked []time.Time
	ctx := context.Background()
	for _, w := range writes {
		if w.err != nil {
			failed++
			if !errors.Is(w.err, ErrConnLost) {
				t.Errorf("a call failed with %v: only calls in flight when the primary died may fail (ErrConnLost)", w.err)
			}
			continue
		}
		_, err := c.Get(ctx, w.key)
		missing := errors.Is(err, Nil)
		if err != nil && !missing {
			t.Fatalf("GET %s: %v", w.key, err)
		}
		if !missing {
			acked = append(acked, w.at)
		}
		if !w.sent.After(cutoff) {
			if missing {
				lostBefore++
			}
			continue
		}
		after++
		if missing {
			lostAfter++
		}
	}
	// A writer has one call in flight at a time, so each connection the
	// client loses fails at most one call per writer. A failover usually
	// loses one, the killed primary's (16 failures, 1 reconnect), but a
	// connection made while the sentinels reconfigure the group can be
	// lost too (a CI run saw 17 failures of 16 writers); every loss is a
	// reconnect.
	var st Stats
	c.carrier.stats(&st)
	if lost := max(1, int(st.Reconnects)); failed > l.n*lost {
		t.Errorf("%d calls failed; at most one per writer (%d) was in flight on each of the %d connections lost", failed, l.n, lost)
	}
	if lostAfter > 0 {
		t.Errorf("%d acknowledged writes made after the cut-off (the client had left the former primary, or held writes from it) are not on the new one", lostAfter)
	}
	slices.SortFunc(acked, time.Time.Compare)
	var window time.Duration
	for i := 1; i < len(acked); i++ {
		window = max(window, acked[i].Sub(acked[i-1]))
	}
	t.Logf("%d writes: no write succeeded for %v; %d failed (in flight), %d reconnects; lost: %d made before the cut-off (replication), %d of %d after",
		len(writes), window.Round(time.Millisecond), failed, st.Reconnects, lostBefore, lostAfter, after)
}

// watchClient polls c's view of its Sentinel group from now on, every
// millisecond, for the moments seen reports true, and returns a function
// giving the first such moment at or after since, waiting up to wait for
// one. The polling only makes a moment later than the client's own, never
// earlier.
func watchClient(t *testing.T, c *Client, former string, seen func(k *sentinel, v *sentinelView) bool) func(t *testing.T, since time.Time, wait time.Duration) (time.Time, bool) {
	t.Helper()
	k := c.carrier.(*sentinel)
	if v := k.view.Load(); v == nil || v.primary.addr != former || seen(k, v) {
		t.Fatalf("the client's view is not yet the primary %s's alone", former)
	}
	var mu sync.Mutex
	var at []time.Time
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			if v := k.view.Load(); v != nil && seen(k, v) {
				now := time.Now()
				mu.Lock()
				at = append(at, now)
				mu.Unlock()
			}
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond): // polling the client's state, bounded by the caller
			}
		}
	}()
	return func(t *testing.T, since time.Time, wait time.Duration) (time.Time, bool) {
		t.Helper()
		defer func() {
			close(stop)
			<-done
		}()
		deadline := time.Now().Add(wait)
		for {
			mu.Lock()
			i, _ := slices.BinarySearchFunc(at, since, time.Time.Compare)
			var first time.Time
			if i < len(at) {
				first = at[i]
			}
			mu.Unlock()
			if !first.IsZero() {
				return first, true
			}
			if !time.Now().Before(deadline) {
				return time.Time{}, false
			}
			time.Sleep(10 * time.Millisecond) // waiting for the watcher, bounded
		}
	}
}

// logTime is a slog.Handler that keeps the time of the first record with
// message msg (taken by the Logger when the line was logged).
type logTime struct {
	msg string
	at  atomic.Pointer[time.Time]
}

func (h *logTime) Enabled(context.Context, slog.Level) bool { return true }
func (h *logTime) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.at.CompareAndSwap(nil, &r.Time)
	}
	return nil
}
func (h *logTime) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *logTime) WithGroup(string) slog.Handler      { return h }

// A failover by hand (SENTINEL FAILOVER) demotes a primary that still
// runs: every write the old one took after the replica's promotion would
// be lost when it is demoted, so writes wait from the moment a sentinel
// begins the promotion until the new primary answers. None made after the
// client began to hold writes is lost (it lost tens of thousands before
// writes waited).
func TestSentinelManualFailover(t *testing.T) {
	begun := &logTime{msg: "zipline: sentinel failover begun; writes wait for the new primary"}
	c, g := sentinelClient(t, testkit.SentinelConfig{}, Options{Logger: slog.New(begun)})
	ctx := context.Background()
	const writers = 8
	load := newWriteLoad(c, writers, time.Millisecond)
	load.waitFor(t, 200*writers, time.Time{})
	primary, err := g.Primary(ctx)
	if err != nil {
		load.finish()
		t.Fatal(err)
	}
	// The cut-off is when the client held writes (it applied the leader's
	// failover-begun event), not when SENTINEL FAILOVER was sent: the event
	// reaches the client later, after the replica may have been promoted,
	// and what the old primary took in between is lost by design. Calls
	// begun before the hold may still reach the old primary; those begun
	// after it wait. The hold is seen polled (it lasts until the new
	// primary is named, tens of milliseconds at least); should a starved
	// poller miss it, the cut-off is when the client logged that it began
	// the hold, a few instructions earlier; should the client never have
	// applied the event, SENTINEL FAILOVER's moment, as before.
	held := watchClient(t, c, primary.Addr, func(k *sentinel, _ *sentinelView) bool { return k.holdUntil.Load() != 0 })
	f, err := g.Failover(ctx)
	if err != nil {
		load.finish()
		t.Fatal(err)
	}
	start := time.Now().Add(-f.Settled) // Settled runs from SENTINEL FAILOVER
	t.Logf("%s handed over to %s in %v", f.Former.Addr, f.Primary.Addr, f.Named.Round(time.Millisecond))
	cutoff, ok := held(t, start, 0) // the failover is over: the hold too
	switch logged := begun.at.Load(); {
	case ok:
		t.Logf("the client held writes %v after SENTINEL FAILOVER", cutoff.Sub(start).Round(time.Millisecond))
	case logged != nil:
		cutoff = *logged
		t.Logf("the hold was not seen; the client logged it %v after SENTINEL FAILOVER", cutoff.Sub(start).Round(time.Millisecond))
	default:
		cutoff = start
		t.Logf("the client never applied the failover-begun event")
	}
	load.waitFor(t, 10*writers, start.Add(f.Settled))
	load.check(t, c, cutoff)
}

// A server the sentinels no longer name is never written to, even when it
// still says it is a primary: after a reconnect the Client asks the
// sentinels, and goes where they point. Here the sentinels are made to
// monitor a replica promoted by hand, without any +switch-master, and the
// Client's connection to the old primary is cut.
func TestSentinelRefusesAPrimaryTheSentinelsDoNotName(t *testing.T) {
	c, g := sentinelClient(t, testkit.SentinelConfig{}, Options{})
	ctx := context.Background()
	if err := c.Set(ctx, "k", []byte("old")); err != nil {
		t.Fatal(err)
	}
	old, next := promoteByHand(t, g)
	host, port, _ := strings.Cut(next.Addr, ":")
	for _, s := range g.Sentinels() {
		for _, cmd := range [][]any{
			{"SENTINEL", "REMOVE", g.MasterName},
			{"SENTINEL", "MONITOR", g.MasterName, host, port, 2},
			{"SENTINEL", "SET", g.MasterName, "down-after-milliseconds", 1000},
		} {
			if _, err := g.Do(ctx, s, cmd...); err != nil {
				t.Fatalf("%s on %s: %v", cmd, s.Addr, err)
			}
		}
	}
	setLandsOnlyOn(t, c, old, next, "new", false, func() {
		if _, err := old.Do(ctx, "CLIENT", "KILL", "TYPE", "normal"); err != nil {
			t.Fatal(err)
		}
	})
}

// promoteByHand makes the group's first replica a primary (REPLICAOF NO
// ONE) behind the sentinels' back, and returns the old primary and it.
func promoteByHand(t *testing.T, g *testkit.Sentinel) (old, next *testkit.Server) {
	t.Helper()
	ctx := context.Background()
	old, err := g.Primary(ctx)
	if err != nil {
		t.Fatal(err)
	}
	replicas, err := g.Replicas(ctx)
	if err != nil || len(replicas) == 0 {
		t.Fatalf("replicas: %v %v", replicas, err)
	}
	next = replicas[0]
	if _, err := next.Do(ctx, "REPLICAOF", "NO", "ONE"); err != nil {
		t.Fatal(err)
	}
	return old, next
}

// setLandsOnlyOn runs then (after counting old's SETs), sets k = value
// through c, and checks that next holds it and old ran no SET of c's
// meanwhile. When old replicates next, the SET reaches it through
// replication too, and commandstats counts that one: old may then run as
// many SETs as next did, and no more.
func setLandsOnlyOn(t *testing.T, c *Client, old, next *testkit.Server, value string, oldReplicatesNext bool, then func()) {
	t.Helper()
	ctx := context.Background()
	oldBefore, nextBefore := serverCalls(t, old, "set"), serverCalls(t, next, "set")
	then()
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := c.Set(wctx, "k", []byte(value)); err != nil {
		t.Fatalf("SET after the primary moved: %v", err)
	}
	if v, err := next.Do(ctx, "GET", "k"); err != nil || string(v.Bytes()) != value {
		t.Fatalf("the write is not on the primary the sentinels name (%s): %v %v", next.Addr, v, err)
	}
	allowed := 0
	if oldReplicatesNext {
		allowed = serverCalls(t, next, "set") - nextBefore
	}
	if n := serverCalls(t, old, "set") - oldBefore; n > allowed {
		t.Fatalf("the old primary took %d writes after it stopped being the primary (%d replicated from the new one)", n, allowed)
	}
}

// waitOnReplicas waits, bounded, until every replica holds key = value.
func waitOnReplicas(t *testing.T, g *testkit.Sentinel, key, value string) {
	t.Helper()
	ctx := context.Background()
	replicas, err := g.Replicas(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range replicas {
		deadline := time.Now().Add(10 * time.Second)
		for {
			if v, err := r.Do(ctx, "GET", key); err == nil && string(v.Bytes()) == value {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("replica %s never got %s", r.Addr, key)
			}
			time.Sleep(5 * time.Millisecond) // waiting for replication, bounded
		}
	}
}

// With ReadPreferReplica, reads go to a replica and writes to the primary.
func TestSentinelReadsFromReplicas(t *testing.T) {
	c, g := sentinelClient(t, testkit.SentinelConfig{}, Options{ReadFrom: ReadPreferReplica})
	ctx := context.Background()
	if err := c.Set(ctx, "r", []byte("v")); err != nil {
		t.Fatal(err)
	}
	primary, err := g.Primary(ctx)
	if err != nil {
		t.Fatal(err)
	}
	waitOnReplicas(t, g, "r", "v")
	before := getCalls(t, primary)
	var got atomic.Int32
	for range 50 {
		if v, err := c.Get(ctx, "r"); err == nil && string(v) == "v" {
			got.Add(1)
		}
	}
	if got.Load() != 50 {
		t.Fatalf("%d of 50 reads returned the value", got.Load())
	}
	if n := getCalls(t, primary) - before; n != 0 {
		t.Fatalf("the primary served %d reads; ReadPreferReplica sends them to a replica", n)
	}
}

// The sentinels' credentials are their own: a group whose sentinels and
// data nodes require different passwords works with both given, and a
// wrong sentinel password fails New with an error that does not show it.
func TestSentinelCredentials(t *testing.T) {
	cfg := testkit.SentinelConfig{Password: "data-pw", SentinelPassword: "sentinel-pw", Replicas: -1, Sentinels: 1}
	c, _ := sentinelClient(t, cfg, Options{Password: "data-pw", Sentinel: Sentinel{Password: "sentinel-pw"}})
	if err := c.Set(context.Background(), "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	opts := c.s.opts
	opts.Sentinel.Password = "wrong-sentinel-pw"
	bad, err := New(opts)
	if err == nil {
		bad.Close()
		t.Fatal("New succeeded with a wrong sentinel password")
	}
	if strings.Contains(err.Error(), "wrong-sentinel-pw") || strings.Contains(err.Error(), "data-pw") {
		t.Fatalf("the error shows a password: %v", err)
	}
}

// On Valkey, the primary's connection says CLIENT CAPA redirect: when the
// primary is demoted under it (here by hand, before any sentinel knows),
// a write gets -REDIRECT to the new primary instead of -READONLY, and the
// Client goes there and sends it again: it ran nowhere before.
func TestSentinelFollowsRedirect(t *testing.T) {
	c, g := sentinelClient(t, testkit.SentinelConfig{Kind: testkit.Valkey}, Options{})
	ctx := context.Background()
	if err := c.Set(ctx, "k", []byte("before")); err != nil {
		t.Fatal(err)
	}
	old, next := promoteByHand(t, g)
	host, port, _ := strings.Cut(next.Addr, ":")
	if _, err := old.Do(ctx, "REPLICAOF", host, port); err != nil {
		t.Fatal(err)
	}
	setLandsOnlyOn(t, c, old, next, "after", true, func() {})
}

// ReadAZAffinity on a Sentinel group: a client in one replica's zone reads
// from that replica only.
func TestSentinelReadAZAffinity(t *testing.T) {
	g := testkit.NewSentinel(t, testkit.SentinelConfig{Kind: testkit.Valkey})
	ctx := context.Background()
	replicas, err := g.Replicas(ctx)
	if err != nil || len(replicas) != 2 {
		t.Fatalf("replicas: %v %v", replicas, err)
	}
	for i, r := range replicas {
		if _, err := r.Do(ctx, "CONFIG", "SET", "availability-zone", []string{"az-a", "az-b"}[i]); err != nil {
			t.Fatal(err)
		}
	}
	c, err := New(Options{Sentinel: Sentinel{MasterName: g.MasterName, Addrs: g.SentinelAddrs()},
		ReadFrom: ReadAZAffinity, AvailabilityZone: "az-b", Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Set(ctx, "z", []byte("v")); err != nil {
		t.Fatal(err)
	}
	waitOnReplicas(t, g, "z", "v")
	before := map[*testkit.Server]int{}
	for _, r := range replicas {
		before[r] = getCalls(t, r)
	}
	for range 40 {
		if v, err := c.Get(ctx, "z"); err != nil || string(v) != "v" {
			t.Fatalf("GET: %q %v", v, err)
		}
	}
	if n := getCalls(t, replicas[0]) - before[replicas[0]]; n != 0 {
		t.Errorf("the az-a replica served %d reads of a client in az-b", n)
	}
	if n := getCalls(t, replicas[1]) - before[replicas[1]]; n != 40 {
		t.Errorf("the az-b replica served %d of 40 reads", n)
	}
}

// A subscription follows the primary too: after a failover it is made
// again on the new primary, reports the gap, and receives what is
// published there.
func TestSentinelSubscriptionFollowsAFailover(t *testing.T) {
	c, g := sentinelClient(t, testkit.SentinelConfig{}, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sub, err := c.Subscribe(ctx, "news")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if _, err := g.KillPrimary(ctx); err != nil {
		t.Fatal(err)
	}
	received := make(chan error, 1)
	go func() {
		gap := false
		for msg, err := range sub.Messages(ctx) {
			switch {
			case errors.Is(err, ErrGap):
				gap = true
			case err != nil:
				received <- err
				return
			case string(msg.Payload) == "after":
				if !gap {
					received <- errors.New("no gap was reported for the failover")
					return
				}
				received <- nil
				return
			}
		}
		received <- ctx.Err()
	}()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if _, err := c.Publish(ctx, "news", []byte("after")); err != nil && ctx.Err() != nil {
			t.Fatal(err)
		}
		select {
		case err := <-received:
			if err != nil {
				t.Fatal(err)
			}
			return
		case <-tick.C: // publish again until the subscription is back
		}
	}
}

// A failover's start holds writes for as long as the sentinels may take to
// end it: the group's failover-timeout, read from SENTINEL MASTER, within
// 3 and 30 s. (A hold of 3 s is shorter than the test groups' 5 s: a
// failover slowed by CPU-bound neighbours could outlast it.)
func TestSentinelFailoverHoldIsTheGroupsTimeout(t *testing.T) {
	c, _ := sentinelClient(t, testkit.SentinelConfig{FailoverTimeout: 8 * time.Second}, Options{})
	k := c.carrier.(*sentinel)
	if got := k.failoverHold(); got != 8*time.Second {
		t.Fatalf("hold %v, want the group's failover-timeout, 8s", got)
	}
	for _, tc := range []struct{ timeout, want time.Duration }{
		{0, failoverHoldMin}, {time.Second, failoverHoldMin}, {180 * time.Second, failoverHoldMax},
	} {
		k.failoverTimeout.Store(int64(tc.timeout))
		if got := k.failoverHold(); got != tc.want {
			t.Errorf("failover-timeout %v: hold %v, want %v", tc.timeout, got, tc.want)
		}
	}
}
