package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/cmd/zipline/bench/compression"
	"github.com/ziplinekv/zipline/testbed"
	"github.com/ziplinekv/zipline/testbed/corpus"
	"github.com/ziplinekv/zipline/testbed/servertest"
)

// smallDemo shrinks the demo's sections for a test.
func smallDemo(t *testing.T) {
	t.Helper()
	keys, rounds, records, clients, msgs := demoCompressionKeys, demoCompressionRounds, demoLayoutRecords,
		demoFanoutClients, demoFanoutMessages
	demoCompressionKeys, demoCompressionRounds, demoLayoutRecords, demoFanoutClients, demoFanoutMessages = 300, 1, 2000, 5, 20
	t.Cleanup(func() {
		demoCompressionKeys, demoCompressionRounds, demoLayoutRecords, demoFanoutClients, demoFanoutMessages =
			keys, rounds, records, clients, msgs
	})
}

// demoServer starts a server holding one key of the user's, and returns a
// client on it.
func demoServer(t *testing.T) (*testbed.Server, *zipline.Client) {
	t.Helper()
	srv := servertest.NewServer(t, testbed.Config{})
	c, err := zipline.New(zipline.Options{Addr: srv.Addr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Set(context.Background(), "mine", []byte("keep me")); err != nil {
		t.Fatal(err)
	}
	return srv, c
}

// onlyMine fails the test unless the server holds the user's key alone,
// unchanged.
func onlyMine(t *testing.T, c *zipline.Client) {
	t.Helper()
	ctx := context.Background()
	if n, err := c.DBSize(ctx); err != nil || n != 1 {
		var left []string
		for k, err := range c.Scan(ctx, zipline.ScanOptions{Count: 1000}) {
			if err == nil && len(left) < 5 {
				left = append(left, k)
			}
		}
		t.Errorf("DBSIZE = %d (%v) after the demo, want 1; keys such as %q", n, err, left)
	}
	if v, err := c.Get(ctx, "mine"); err != nil || string(v) != "keep me" {
		t.Errorf("the user's key reads %q, %v", v, err)
	}
}

// The whole demo against a server given with -addr leaves it as it found
// it: every key it wrote is gone, the user's key is untouched.
func TestDemoLeavesNoKeys(t *testing.T) {
	srv, c := demoServer(t)
	smallDemo(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := stdoutOf(t, func() error {
		return runDemo(ctx, []string{"-addr", srv.Addr, "-d", "100ms", "-c", "8", "-keys", "500", "-size", "64"})
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"== Compression", "Namespaces:", "== Fanout", "20 real JSON messages",
		"Deleted the 500 keys the demo had left on " + srv.Addr} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	onlyMine(t, c)
}

// The demo with -url reaches a server that needs a password: it runs every
// section but compression (whose clients dial by address alone), leaves the
// server as it found it, and never prints the password.
func TestDemoURLWithPassword(t *testing.T) {
	const secret = "s3cret-pw"
	srv := servertest.NewServer(t, testbed.Config{Args: []string{"--requirepass", secret}})
	c, err := zipline.New(zipline.Options{Addr: srv.Addr, Password: secret})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := c.Set(ctx, "mine", []byte("keep me")); err != nil {
		t.Fatal(err)
	}
	smallDemo(t)
	url := "redis://:" + secret + "@" + srv.Addr
	out, err := stdoutOf(t, func() error {
		return runDemo(ctx, []string{"-url", url, "-d", "100ms", "-c", "8", "-keys", "500", "-size", "64"})
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"== Compression", "Skipped: its clients dial the server by address alone", "Namespaces:",
		"== Fanout", "Deleted the 500 keys the demo had left on " + srv.Addr} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, secret) {
		t.Errorf("the output shows the password:\n%s", out)
	}
	onlyMine(t, c)
	// Without the password, the demo stops at the server's refusal.
	if err := runDemo(ctx, []string{"-url", "redis://" + srv.Addr, "-d", "100ms"}); err == nil || strings.Contains(err.Error(), secret) {
		t.Errorf("demo without the password: %v", err)
	}
}

// On a server that already holds a key the demo writes, the demo refuses
// to run, and writes and deletes nothing.
func TestDemoRefusesUsedKeys(t *testing.T) {
	srv, c := demoServer(t)
	smallDemo(t)
	ctx := context.Background()
	for _, key := range []string{"demo:7", "demo:user:1999", "demo:u:#1", "zipline-demo:compression:tps:0000299"} {
		t.Run(key, func(t *testing.T) {
			if err := c.Set(ctx, key, []byte("theirs")); err != nil {
				t.Fatal(err)
			}
			out, err := stdoutOf(t, func() error {
				return runDemo(ctx, []string{"-addr", srv.Addr, "-d", "100ms", "-c", "8", "-keys", "500"})
			})
			if err == nil || !strings.Contains(err.Error(), "already holds keys the demo writes") {
				t.Fatalf("demo on a server holding %s: %v\n%s", key, err, out)
			}
			if v, err := c.Get(ctx, key); err != nil || string(v) != "theirs" {
				t.Errorf("%s reads %q, %v", key, v, err)
			}
			if _, err := c.Del(ctx, key); err != nil {
				t.Fatal(err)
			}
			onlyMine(t, c)
		})
	}
}

// Interrupted in the middle of a section (Ctrl-C cancels the context),
// the demo still deletes every key it wrote.
func TestDemoCleansUpOnError(t *testing.T) {
	srv, c := demoServer(t)
	smallDemo(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Cancel once the namespace section has written its first plain keys
	// (bounded poll: the demo writes them within seconds).
	watched := make(chan error, 1)
	go func() {
		for range 6000 {
			if n, err := c.Exists(context.Background(), demoLayoutPrefix+"0"); err != nil || n == 1 {
				cancel()
				watched <- err
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
		watched <- errors.New("the demo never wrote its namespace section's keys")
	}()
	out, err := stdoutOf(t, func() error {
		return runDemo(ctx, []string{"-addr", srv.Addr, "-d", "100ms", "-c", "8", "-keys", "500"})
	})
	if werr := <-watched; werr != nil {
		t.Fatal(werr)
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("demo cancelled in its namespace section returned %v\n%s", err, out)
	}
	if !strings.Contains(out, "Deleted the ") {
		t.Errorf("output does not say what was deleted:\n%s", out)
	}
	onlyMine(t, c)
}

// The compression section's declared keys are the ones its datasets use.
func TestDemoCompressionKeyNames(t *testing.T) {
	smallDemo(t)
	var k demoKeys
	declareCompressionKeys(&k)
	var declared []string
	k.each(func(names []string) error { declared = append(declared, names...); return nil })
	var want []string
	for _, part := range []string{"mem:", "tps:"} {
		want = append(want, compression.NewDataset(corpus.JSON98, demoCompressionKeys, 1, demoCompressionPrefix+part).Keys...)
	}
	if !slices.Equal(declared, want) {
		t.Errorf("declared %d keys (%q…), datasets use %d (%q…)", len(declared), declared[:2], len(want), want[:2])
	}
}

func TestGlobEscape(t *testing.T) {
	if got := globEscape(`a*b?c[d]e\f:`); got != `a\*b\?c\[d\]e\\f:` {
		t.Errorf("globEscape = %q", got)
	}
}

// The throughput table's figures: medians of the quiet rounds, marked
// when their middle rounds spread too far or too few quiet rounds remain.
func TestDemoThroughputStats(t *testing.T) {
	point := func(tps, other float64) compression.Point {
		return compression.Point{Ops: uint64(tps), Elapsed: time.Second, ClientUS: tps / 1000, OtherCPU: other}
	}
	tp := demoThroughput{rounds: 5, knowOther: true, idleOther: 0}
	// none: steady; zstd: one wild round, tolerated; LZ4: three busy rounds.
	for r, v := range []float64{100, 104, 98, 101, 99} {
		tp.add(compression.None, compression.Set, r, point(v*1000, 0))
	}
	for r, v := range []float64{50, 52, 5, 51, 49} {
		tp.add(compression.Zstd, compression.Set, r, point(v*1000, 0))
	}
	for r, v := range []float64{80, 40, 30, 82, 20} {
		other := 0.0
		if r == 1 || r == 2 || r == 4 {
			other = 90
		}
		tp.add(compression.LZ4, compression.Set, r, point(v*1000, other))
	}
	for _, tc := range []struct {
		b      compression.Backend
		tps    float64
		ratio  float64
		noisy  bool
		spread string
	}{
		{compression.None, 100_000, 1, false, "0.02"},
		{compression.Zstd, 50_000, 0.5, false, "0.04"},      // round 2 is an outlier the median ignores
		{compression.LZ4, 40_000, 40.0 / 104, true, "1.25"}, // all five rounds, as 3 of them were busy
	} {
		st, ok := tp.stats(tc.b, compression.Set)
		if !ok || st.tps != tc.tps || st.noisy != tc.noisy || fmt.Sprintf("%.2f", st.spread) != tc.spread {
			t.Errorf("%v: %+v, %v; want %.0f keys/s, noisy %v, spread %s", tc.b, st, ok, tc.tps, tc.noisy, tc.spread)
		}
		if x, ok := tp.ratio(tc.b, compression.Set); tc.b != compression.None && (!ok || fmt.Sprintf("%.2f", x) != fmt.Sprintf("%.2f", tc.ratio)) {
			t.Errorf("%v: ratio %.3f, %v; want %.2f", tc.b, x, ok, tc.ratio)
		}
	}
	if _, ok := tp.stats(compression.None, compression.Get); ok {
		t.Error("a figure with no rounds has stats")
	}
	if w := tp.warning(); !strings.Contains(w, "during 3 of the 15 phases") {
		t.Errorf("warning %q", w)
	}
	// With -addr, only the check before the table speaks for other
	// processes: a busy machine marks every figure.
	busy := demoThroughput{rounds: 1, knowOther: false, idleOther: 80}
	busy.add(compression.None, compression.Set, 0, point(1000, 200))
	if st, _ := busy.stats(compression.None, compression.Set); !st.noisy || !strings.Contains(busy.warning(), "80 %") {
		t.Errorf("busy machine with -addr: %+v, warning %q", st, busy.warning())
	}
}
