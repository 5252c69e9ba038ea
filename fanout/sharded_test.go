package fanout_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/fanout"
	"github.com/ziplinekv/zipline/fanout/wsclient"
	"github.com/ziplinekv/zipline/internal/testkit"
)

// quietProxy forwards TCP connections to a server and, when the server's
// side of one ends, dials the server again and goes on forwarding,
// telling the client nothing: whatever the server held for the
// connection, its subscriptions above all, is lost without an error, as
// behind a proxy or a load balancer that reconnects on its own.
type quietProxy struct {
	ln      net.Listener
	target  string
	redials atomic.Int64
	wg      sync.WaitGroup
	mu      sync.Mutex
	conns   []net.Conn // closed at the end
	closed  bool
}

func newQuietProxy(t *testing.T, target string) *quietProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &quietProxy{ln: ln, target: target}
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if p.track(c) {
				p.wg.Go(func() { p.forward(c) })
			}
		}
	})
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		p.closed = true
		for _, c := range p.conns {
			c.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	return p
}

func (p *quietProxy) addr() string { return p.ln.Addr().String() }

// track records c to be closed at the end; false if the end came first.
func (p *quietProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		return false
	}
	p.conns = append(p.conns, c)
	return true
}

// forward carries client's bytes to the server and back, dialling the
// server again whenever its side ends, until the client's side does.
func (p *quietProxy) forward(client net.Conn) {
	var mu sync.Mutex
	up, err := net.Dial("tcp", p.target)
	if err != nil || !p.track(up) {
		client.Close()
		return
	}
	server := func() net.Conn { mu.Lock(); defer mu.Unlock(); return up }
	p.wg.Go(func() { // client → server; bytes sent into a server's end are lost, as they would be
		buf := make([]byte, 16<<10)
		for {
			n, err := client.Read(buf)
			if n > 0 {
				server().Write(buf[:n])
			}
			if err != nil {
				client.Close()
				server().Close()
				return
			}
		}
	})
	buf := make([]byte, 16<<10)
	for {
		n, err := server().Read(buf)
		if n > 0 {
			if _, werr := client.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err == nil {
			continue
		}
		again, derr := net.Dial("tcp", p.target)
		if derr != nil || !p.track(again) {
			client.Close()
			return
		}
		mu.Lock()
		up = again
		mu.Unlock()
		p.redials.Add(1)
	}
}

// relay starts th relaying src, and returns what stops it and waits for
// it.
func relay(th *testHub, src fanout.Source) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	relayed := make(chan error, 1)
	go func() { relayed <- th.Relay(ctx, src) }()
	return func() { cancel(); <-relayed }
}

// quiet takes the logs of the clients and sources these tests break.
var quiet = slog.New(slog.DiscardHandler)

// waitFor polls cond, bounded by ctx.
func waitFor(ctx context.Context, t *testing.T, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("%s: not within the test's deadline", what)
		case <-time.After(5 * time.Millisecond): // polling state, bounded by ctx
		}
	}
}

// A subscription the server dropped without the client seeing an error (a
// proxy redialled behind it: PINGs are still answered) is found by the
// source's probe, subscribed again, and reported as a gap; deliveries go
// on. Before that, healthy partitions are never taken for lost.
func TestShardedSourceFindsSilentLoss(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{})
	proxy := newQuietProxy(t, srv.Addr)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client, err := zipline.New(zipline.Options{Addr: proxy.addr()})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	publisher, err := zipline.New(zipline.Options{Addr: srv.Addr})
	if err != nil {
		t.Fatal(err)
	}
	defer publisher.Close()
	parts, err := fanout.NewPartitions(8, "")
	if err != nil {
		t.Fatal(err)
	}
	const interval = 200 * time.Millisecond
	src, err := fanout.NewShardedSource(ctx, client, parts,
		fanout.ShardedOptions{ProbeInterval: interval, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	th := newTestHub(t, fanout.Options{})
	defer relay(th, src)()

	ws := th.dial(t, wsclient.Options{}, "news")
	subscribers := func() int64 {
		v, err := srv.Do(ctx, "PUBSUB", "SHARDNUMSUB", parts.Channel("news"))
		if err != nil {
			return -1
		}
		return v.Elems()[1].Int()
	}
	waitFor(ctx, t, "the hub subscribed", func() bool { return subscribers() == 1 })
	deliver := func(msg string) {
		t.Helper()
		if n, err := parts.Publish(ctx, publisher, "news", []byte(msg)); err != nil || n != 1 {
			t.Fatalf("publish %q: %d subscribers, %v", msg, n, err)
		}
		if got := string(read(t, ws)); got != msg {
			t.Fatalf("read %q, want %q", got, msg)
		}
	}
	deliver("before")
	waitFor(ctx, t, "three probes", func() bool { return src.Stats().Probes >= 3 })
	if st := src.Stats(); st.Lost != 0 || st.Partitions != 1 {
		t.Fatalf("healthy: %+v, want 1 partition and none lost", st)
	}

	// The server drops the subscriber connection; the proxy dials again
	// and says nothing. The client's connection stays up.
	if _, err := srv.Do(ctx, "CLIENT", "KILL", "TYPE", "pubsub"); err != nil {
		t.Fatal(err)
	}
	waitFor(ctx, t, "the proxy redialled", func() bool { return proxy.redials.Load() == 1 })
	lostAt := time.Now()
	waitFor(ctx, t, "the lost partition subscribed again", func() bool { return subscribers() == 1 })
	took := time.Since(lostAt)
	if st := src.Stats(); st.Lost != 1 {
		t.Errorf("after the loss: %+v, want 1 partition lost", st)
	}
	t.Logf("found and subscribed again %v after the loss (%.1f probe intervals)", took, float64(took)/float64(interval))
	deliver("after")
	if g := th.RelayStats().Gaps; g != 1 {
		t.Errorf("the relay saw %d gaps, want 1", g)
	}
	if n := proxy.redials.Load(); n != 1 {
		t.Errorf("the subscriber connection was dropped %d times; the probe alone should have found the loss", n)
	}
}

// Two hubs on one cluster, each through a ShardedSource: every message
// reaches both, each hub holds one subscriber connection per node that
// owns partitions it follows, and when a primary is killed its channels
// come back on the promoted replica with one gap.
func TestShardedHubsOnCluster(t *testing.T) {
	cl := testkit.NewCluster(t, testkit.ClusterConfig{Primaries: 4})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	parts, err := fanout.NewPartitions(16, "")
	if err != nil {
		t.Fatal(err)
	}
	publisher, err := zipline.New(zipline.Options{Addrs: cl.Addrs(), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer publisher.Close()
	channels := make([]string, 40)
	for i := range channels {
		channels[i] = fmt.Sprintf("ch%d", i)
	}
	type hub struct {
		th  *testHub
		src *fanout.ShardedSource
		ws  *wsclient.Conn
	}
	var hubs []hub
	for range 2 {
		client, err := zipline.New(zipline.Options{Addrs: cl.Addrs(), Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		defer client.Close()
		src, err := fanout.NewShardedSource(ctx, client, parts,
			fanout.ShardedOptions{ProbeInterval: 500 * time.Millisecond, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		th := newTestHub(t, fanout.Options{})
		defer relay(th, src)()
		hubs = append(hubs, hub{th: th, src: src, ws: th.dial(t, wsclient.Options{}, channels...)})
	}

	// published returns how many hubs a message on ch reached.
	published := func(ch, msg string) int64 {
		pctx, pcancel := context.WithTimeout(ctx, time.Second)
		defer pcancel()
		n, err := parts.Publish(pctx, publisher, ch, []byte(msg))
		if err != nil {
			return -1
		}
		return n
	}
	for _, ch := range channels {
		waitFor(ctx, t, ch+" followed by both hubs", func() bool { return published(ch, "") == 2 })
	}
	readAll := func(ws *wsclient.Conn, want []string) {
		t.Helper()
		var got []string
		for len(got) < len(want) {
			m := string(read(t, ws))
			if m != "" { // the empty messages published while waiting
				got = append(got, m)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("read %v, want %v", got, want)
		}
	}
	// deliver publishes one message on each of chs and reads them all on
	// both hubs.
	deliver := func(prefix string, chs []string) {
		t.Helper()
		var want []string
		for _, ch := range chs {
			msg := prefix + ch
			if n := published(ch, msg); n != 2 {
				t.Fatalf("%s reached %d hubs, want 2", msg, n)
			}
			want = append(want, msg)
		}
		slices.Sort(want)
		for _, h := range hubs {
			readAll(h.ws, want)
		}
	}
	deliver("m:", channels)

	// One subscriber connection per hub on each node that owns a followed
	// partition, and none on the others.
	followed := map[string]bool{} // by owner address
	for _, ch := range channels {
		owner, err := cl.KeyOwner(ctx, parts.Channel(ch))
		if err != nil {
			t.Fatal(err)
		}
		followed[owner.Addr] = true
	}
	for _, node := range cl.Nodes() {
		v, err := node.Do(ctx, "CLIENT", "LIST", "TYPE", "pubsub")
		if err != nil {
			t.Fatal(err)
		}
		n := strings.Count(string(v.Bytes()), "\n")
		want := 0
		if followed[node.Addr] {
			want = 2
		}
		if n != want {
			t.Errorf("node %s (primary %v): %d subscriber connections, want %d", node.Addr, followed[node.Addr], n, want)
		}
	}
	t.Logf("%d of 4 primaries own followed partitions", len(followed))

	// Kill the primary of ch0's partition: its channels come back on the
	// promoted replica, each hub reporting one gap.
	owner, err := cl.KeyOwner(ctx, parts.Channel("ch0"))
	if err != nil {
		t.Fatal(err)
	}
	var moved []string
	for _, ch := range channels {
		if o, _ := cl.KeyOwner(ctx, parts.Channel(ch)); o == owner {
			moved = append(moved, ch)
		}
	}
	killedAt := time.Now()
	if _, err := cl.Kill(ctx, owner); err != nil {
		t.Fatal(err)
	}
	for _, ch := range moved {
		waitFor(ctx, t, ch+" followed again by both hubs", func() bool { return published(ch, "") == 2 })
	}
	t.Logf("%d channels followed again on the promoted replica %v after the kill", len(moved), time.Since(killedAt))
	deliver("after:", moved)
	for i, h := range hubs {
		if g := h.th.RelayStats().Gaps; g < 1 {
			t.Errorf("hub %d: %d gaps after a failover, want at least 1", i, g)
		}
	}
}
