package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/testbed"
	"github.com/ziplinekv/zipline/testbed/servertest"
)

// The demo section prints memory and throughput for every backend, and
// leaves the server as it found it.
func TestDemoCompression(t *testing.T) {
	srv := servertest.NewServer(t, testbed.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := zipline.New(zipline.Options{Addr: srv.Addr})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Set(ctx, "mine", []byte("keep me")); err != nil {
		t.Fatal(err)
	}
	saved, savedRounds := demoCompressionKeys, demoCompressionRounds
	demoCompressionKeys, demoCompressionRounds = 300, 3
	defer func() { demoCompressionKeys, demoCompressionRounds = saved, savedRounds }()
	out, err := stdoutOf(t, func() error {
		return demoCompression(ctx, &demoEnv{addr: srv.Addr, client: c, dur: 600 * time.Millisecond})
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// The table's columns widen with their content (a failed point's text):
	// look for words, not exact spacing.
	for _, want := range []string{"300 × json-1884", "300 × html-1247", "49.3 %", "SET keys/s", "GET keys/s", "zstd", "LZ4",
		"median of 3 rounds", "spread (SET, GET)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// A point with failed calls is a bug. Under the race detector, a point
	// can also be too slow to measure in its short window (zstd runs 10-20x
	// slower), which says nothing about the code.
	if strings.Contains(out, "failed keys") || (!raceEnabled && strings.Contains(out, "failed")) {
		t.Errorf("a throughput point failed:\n%s", out)
	}
	if n, err := c.DBSize(ctx); err != nil || n != 1 {
		t.Errorf("DBSIZE = %d (%v) after the demo, want 1", n, err)
	}
}
