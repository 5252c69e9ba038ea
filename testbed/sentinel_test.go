package testbed

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// SentinelBinary takes the sentinel program from the environment, else the
// server, with --sentinel; a wrong variable is an error, and no server at
// all is ErrNoBinary.
func TestSentinelBinary(t *testing.T) {
	real, err := Binary(Redis)
	if errors.Is(err, ErrNoBinary) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("ZIPLINE_REDIS_SERVER", "")

	t.Setenv("ZIPLINE_REDIS_SENTINEL", real)
	if bin, args, err := SentinelBinary(Redis); err != nil || bin != real || !slices.Equal(args, []string{"--sentinel"}) {
		t.Errorf("with ZIPLINE_REDIS_SENTINEL: %q %q %v", bin, args, err)
	}
	t.Setenv("ZIPLINE_REDIS_SENTINEL", filepath.Join(t.TempDir(), "nothing"))
	if _, _, err := SentinelBinary(Redis); err == nil || errors.Is(err, ErrNoBinary) {
		t.Errorf("with a wrong ZIPLINE_REDIS_SENTINEL: %v, want an error that is not ErrNoBinary", err)
	}
	t.Setenv("ZIPLINE_REDIS_SENTINEL", "")

	// Only redis-server on PATH: it runs as the sentinel.
	dir := t.TempDir()
	if err := os.Symlink(real, filepath.Join(dir, "redis-server")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	if bin, args, err := SentinelBinary(Redis); err != nil || bin != filepath.Join(dir, "redis-server") || !slices.Equal(args, []string{"--sentinel"}) {
		t.Errorf("with only redis-server on PATH: %q %q %v", bin, args, err)
	}
	t.Setenv("PATH", t.TempDir())
	if _, _, err := SentinelBinary(Redis); !errors.Is(err, ErrNoBinary) {
		t.Errorf("with nothing on PATH: %v, want ErrNoBinary", err)
	}
}

// TestSentinel runs the operations the client's Sentinel tests need, on one
// group per server kind (each step leaves it settled for the next); the two
// kinds run in parallel.
func TestSentinel(t *testing.T) {
	steps := []struct {
		name string
		run  func(*testing.T, *Sentinel)
	}{
		{"agree", testSentinelAgree},
		{"kill the primary and restart it", testSentinelKillRestart},
		{"manual failover", testSentinelFailover},
	}
	for _, kind := range []Kind{Redis, Valkey} {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			g, err := StartSentinel(t.Context(), SentinelConfig{Kind: kind})
			if errors.Is(err, ErrNoBinary) {
				t.Skip(err)
			}
			if err != nil {
				t.Fatal(err)
			}
			defer g.Stop()
			t.Logf("primary, 2 replicas and 3 sentinels up in %v", time.Since(start).Round(time.Millisecond))
			for _, step := range steps {
				if !t.Run(step.name, func(t *testing.T) { step.run(t, g) }) {
					logSentinels(t, g)
					return // the next steps need the group this one left
				}
			}
		})
	}
}

func testSentinelAgree(t *testing.T, g *Sentinel) {
	ctx := t.Context()
	p, err := g.Primary(ctx)
	if err != nil {
		t.Fatal(err)
	}
	nodes := g.Nodes()
	if len(nodes) != 3 || p != nodes[0] {
		t.Fatalf("primary %s of %d nodes, want the first of 3", p.Addr, len(nodes))
	}
	rs, err := g.Replicas(ctx)
	if err != nil || !slices.Equal(rs, nodes[1:]) {
		t.Fatalf("Replicas: %v %v, want the other two nodes", addrsOf(rs), err)
	}
	if len(g.Sentinels()) != 3 || len(g.SentinelAddrs()) != 3 {
		t.Fatalf("%d sentinels, want 3", len(g.Sentinels()))
	}
	for _, s := range g.Sentinels() {
		v, err := s.Do(ctx, "SENTINEL", "MASTER", g.MasterName)
		if err != nil {
			t.Fatal(err)
		}
		m := fieldMap(v)
		if m["name"] != "mymaster" || m["port"] != strconv.Itoa(p.Port) || m["quorum"] != "2" ||
			m["num-slaves"] != "2" || m["num-other-sentinels"] != "2" ||
			m["down-after-milliseconds"] != "1000" || m["failover-timeout"] != "5000" || m["parallel-syncs"] != "1" {
			t.Errorf("sentinel %s: SENTINEL MASTER %v", s.Addr, m)
		}
	}
	// Persistence is off on the data nodes.
	for _, n := range nodes {
		v, err := n.Do(ctx, "CONFIG", "GET", "save")
		if e := v.Elems(); err != nil || len(e) != 2 || len(e[1].Bytes()) != 0 {
			t.Errorf("%s: CONFIG GET save: %v %v", n.Addr, v, err)
		}
	}
	// A paused sentinel is left out; the others still answer.
	if err := g.PauseSentinel(g.Sentinels()[1]); err != nil {
		t.Fatal(err)
	}
	if p2, err := g.Primary(ctx); err != nil || p2 != p {
		t.Errorf("Primary with a sentinel paused: %v %v", p2, err)
	}
	if err := g.Sentinels()[1].Resume(); err != nil {
		t.Fatal(err)
	}
	// A sentinel's Server cannot be restarted as a data node by mistake.
	if err := g.Sentinels()[0].Restart(); err == nil {
		t.Error("Server.Restart of a sentinel succeeded")
	}
	if _, err := g.RestartSentinel(ctx, g.Sentinels()[0]); err != nil {
		t.Fatal(err)
	}
}

func testSentinelKillRestart(t *testing.T, g *Sentinel) {
	ctx := t.Context()
	old, err := g.Primary(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// SET and WAIT on one connection: WAIT waits for the connection's
	// own last write.
	vs, err := g.session(ctx, old, []any{"SET", "k", "acknowledged"}, []any{"WAIT", 1, 5000})
	if err != nil || vs[1].Int() < 1 {
		t.Fatalf("SET and WAIT 1: %v %v", vs, err)
	}
	f, err := g.KillPrimary(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("killed primary %s: %s named after %v, settled after %v",
		f.Former.Addr, f.Primary.Addr, f.Named.Round(time.Millisecond), f.Settled.Round(time.Millisecond))
	if f.Again {
		t.Logf("the sentinels failed over twice") // their doing, not the test bed's
	}
	if f.Former != old || f.Primary == old || f.Primary == nil || f.Named <= 0 || f.Settled < f.Named {
		t.Fatalf("KillPrimary: %+v", f)
	}
	if p, err := g.Primary(ctx); err != nil || p != f.Primary {
		t.Fatalf("Primary after the failover: %v %v, want %s", p, err, f.Primary.Addr)
	}
	if v, err := f.Primary.Do(ctx, "GET", "k"); err != nil || string(v.Bytes()) != "acknowledged" {
		t.Fatalf("GET on the new primary: %v %v", v, err)
	}
	rs, err := g.Replicas(ctx)
	if err != nil || len(rs) != 1 || rs[0] == old || rs[0] == f.Primary {
		t.Fatalf("Replicas after the failover: %v %v, want the third node", addrsOf(rs), err)
	}

	start := time.Now()
	p, err := g.RestartNode(ctx, old)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("restarted former primary %s rejoined as a replica in %v", old.Addr, time.Since(start).Round(time.Millisecond))
	if p != f.Primary {
		t.Fatalf("primary after the restart %s, want %s", p.Addr, f.Primary.Addr)
	}
	if rs, err := g.Replicas(ctx); err != nil || len(rs) != 2 || !slices.Contains(rs, old) {
		t.Fatalf("Replicas after the restart: %v %v, want two with %s", addrsOf(rs), err, old.Addr)
	}
	if v, err := old.Do(ctx, "GET", "k"); err != nil || string(v.Bytes()) != "acknowledged" {
		t.Fatalf("GET on the restarted node, resynced: %v %v", v, err)
	}
}

func testSentinelFailover(t *testing.T, g *Sentinel) {
	ctx := t.Context()
	old, err := g.Primary(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.session(ctx, old, []any{"SET", "m", "before"}, []any{"WAIT", 2, 5000}); err != nil {
		t.Fatal(err)
	}
	f, err := g.Failover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("manual failover from %s: %s named after %v, settled after %v",
		f.Former.Addr, f.Primary.Addr, f.Named.Round(time.Millisecond), f.Settled.Round(time.Millisecond))
	if f.Former != old || f.Primary == old {
		t.Fatalf("Failover: %+v", f)
	}
	// The former primary still runs, and the sentinels have demoted it.
	if err := g.inSync(ctx, old, f.Primary.Addr); err != nil {
		t.Fatal(err)
	}
	if v, err := f.Primary.Do(ctx, "GET", "m"); err != nil || string(v.Bytes()) != "before" {
		t.Fatalf("GET on the new primary: %v %v", v, err)
	}
}

// With passwords, the data nodes require theirs and the sentinels their
// own, and the sentinels still fail the group over (they authenticate to
// the nodes, the nodes to each other, the sentinels to each other).
func TestSentinelAuth(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  SentinelConfig
	}{
		{"requirepass", SentinelConfig{Password: "data-pw", SentinelPassword: "sentinel-pw"}},
		{"ACL user", SentinelConfig{Username: "app", Password: "data-pw", SentinelPassword: "sentinel-pw", Replicas: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			g, err := StartSentinel(ctx, tc.cfg)
			if errors.Is(err, ErrNoBinary) {
				t.Skip(err)
			}
			if err != nil {
				t.Fatal(err)
			}
			defer g.Stop()
			p, err := g.Primary(ctx)
			if err != nil {
				t.Fatal(err)
			}
			s := g.Sentinels()[0]
			for _, srv := range []*Server{p, s} {
				if _, err := srv.Do(ctx, "PING"); err == nil || !strings.Contains(err.Error(), "NOAUTH") {
					t.Errorf("%s without AUTH: %v, want NOAUTH", srv.Addr, err)
				}
				if v, err := g.Do(ctx, srv, "PING"); err != nil || string(v.Bytes()) != "PONG" {
					t.Errorf("%s with AUTH: %v %v", srv.Addr, v, err)
				}
			}
			// Each side's credentials are refused by the other.
			if _, err := (&Sentinel{Password: tc.cfg.SentinelPassword}).Do(ctx, p, "PING"); err == nil {
				t.Error("a data node accepted the sentinels' password")
			}
			if _, err := (&Sentinel{sentinels: []*Server{s}, SentinelPassword: tc.cfg.Password}).Do(ctx, s, "PING"); err == nil {
				t.Error("a sentinel accepted the data nodes' password")
			}
			if tc.cfg.Username != "" {
				if _, err := (&Sentinel{Password: tc.cfg.Password}).Do(ctx, p, "PING"); err == nil {
					t.Error("a data node accepted the password for the default user, which is off")
				}
			}

			if err := g.KillSentinel(g.Sentinels()[2]); err != nil {
				t.Fatal(err)
			}
			f, err := g.KillPrimary(ctx)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("with two sentinels of three: %s named after %v, settled after %v",
				f.Primary.Addr, f.Named.Round(time.Millisecond), f.Settled.Round(time.Millisecond))
			if _, err := g.RestartSentinel(ctx, g.Sentinels()[2]); err != nil {
				t.Fatal(err)
			}
			if _, err := g.RestartNode(ctx, f.Former); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// StartSentinel refuses what cannot work.
func TestStartSentinelRefuses(t *testing.T) {
	for _, cfg := range []SentinelConfig{
		{MasterName: "my master"},
		{Sentinels: 1, Quorum: 2},
		{Username: "app"},
		{Password: "with blank"},
	} {
		if g, err := StartSentinel(t.Context(), cfg); err == nil || errors.Is(err, ErrNoBinary) {
			if g != nil {
				g.Stop()
			}
			t.Errorf("StartSentinel(%+v): %v, want a configuration error", cfg, err)
		}
	}
}

// logSentinels logs the end of every sentinel's log, to see what they did.
func logSentinels(t *testing.T, g *Sentinel) {
	for _, s := range g.Sentinels() {
		t.Logf("sentinel %s:\n%s", s.Addr, s.logTail())
	}
}

// A failover by hand that the sentinel abandons is asked for again: the
// only replica is frozen as the sentinel chooses it, so that it is not
// promoted within FailoverTimeout and the sentinel gives up (sentinels do
// not retry a failover by hand themselves); once the sentinel has given
// up, the replica runs again, and Failover still ends with it promoted.
func TestSentinelFailoverAbandoned(t *testing.T) {
	for _, kind := range []Kind{Redis, Valkey} {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			g, err := StartSentinel(t.Context(), SentinelConfig{Kind: kind, Replicas: 1, FailoverTimeout: 2 * time.Second})
			if errors.Is(err, ErrNoBinary) {
				t.Skip(err)
			}
			if err != nil {
				t.Fatal(err)
			}
			defer g.Stop()
			replica := g.Nodes()[1]
			leader := g.Sentinels()[0]
			abandoned := make(chan error, 1)
			g.beforeFailover = func() {
				if err := replica.Pause(); err != nil {
					t.Error(err)
				}
				go func() {
					defer replica.Resume()
					started := false
					abandoned <- poll(t.Context(), 10*time.Millisecond, "waiting for the failover to be abandoned", func() error {
						v, err := g.Do(t.Context(), leader, "SENTINEL", "MASTER", g.MasterName)
						if err != nil {
							return err
						}
						flags := fieldMap(v)["flags"]
						if strings.Contains(flags, "failover_in_progress") {
							started = true
						}
						if !started || strings.Contains(flags, "failover_in_progress") {
							return fmt.Errorf("flags %q", flags)
						}
						return nil
					})
				}()
			}
			f, err := g.Failover(t.Context())
			if aerr := <-abandoned; aerr != nil {
				t.Fatal(aerr)
			}
			if err != nil {
				logSentinels(t, g)
				t.Fatal(err)
			}
			if f.Primary != replica {
				t.Fatalf("primary %s after the failover, want the replica %s", f.Primary.Addr, replica.Addr)
			}
			t.Logf("promoted in %v, the first attempt abandoned", f.Named.Round(time.Millisecond))
		})
	}
}
