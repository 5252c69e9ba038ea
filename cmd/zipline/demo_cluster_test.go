package main

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/testbed"
)

// The cluster demo with -failover, kept short: it starts a cluster, prints
// the slot map, kills a primary under 16 goroutines, and reports the
// failover from the client's side (only documented error classes), with
// the slots moved to the promoted replica; the cluster is gone afterwards.
func TestDemoClusterFailover(t *testing.T) {
	if _, err := testbed.Binary(testbed.Redis); errors.Is(err, testbed.ErrNoBinary) {
		t.Skip(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	out, err := stdoutOf(t, func() error {
		return runDemo(ctx, []string{"-cluster", "-failover", "-d", "600ms", "-c", "16", "-keys", "500", "-size", "32"})
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	t.Logf("%v\n%s", time.Since(start).Round(100*time.Millisecond), out)
	for _, want := range []string{"started a Redis Cluster of 6 nodes", "0-5460", "kill -9 of the primary",
		"was promoted", "the client:", "before the kill", "during (kill to recovered)", "after", "slots after the failover"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	// Every error class printed is one the client documents.
	for _, m := range regexp.MustCompile(`(?m)^\s+\d+  (.+?)(:|$)`).FindAllStringSubmatch(out, -1) {
		if !strings.HasPrefix(m[1], "zipline.Err") {
			t.Errorf("undocumented error class %q", m[1])
		}
	}
	// The killed primary's replica serves slot 0 now.
	before := regexp.MustCompile(`(?m)^(\S+)\s+0-5460\s+5461\s+(\S+)`).FindAllStringSubmatch(out, -1)
	if len(before) != 2 || before[1][1] != before[0][2] {
		t.Errorf("slot 0 moved from %v: want its replica to serve it after the failover", before)
	}
}

func TestDemoFlags(t *testing.T) {
	for _, args := range [][]string{{"-failover"}, {"-cluster", "-addr", "127.0.0.1:1"}, {"-cluster", "-c", "0"}} {
		if err := runDemo(context.Background(), args); err == nil {
			t.Errorf("demo %v: no error", args)
		}
	}
}
