package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/bench"
	"github.com/ziplinekv/zipline/bench/harness"
	"github.com/ziplinekv/zipline/cmd/zipline/bench/failover"
	"github.com/ziplinekv/zipline/testbed"
)

// The report lists every run and the medians, and the chart draws round 1
// with a line per client and a mark per promotion.
func TestReportAndChart(t *testing.T) {
	zl, _ := bench.LookupCluster("zipline")
	peer, _ := bench.LookupCluster("rueidis")
	o := &options{clients: []bench.ClusterFactory{zl, peer}, rounds: 2, seeds: 1, svg: "x.svg",
		cfg: failover.Config{Before: 200 * time.Millisecond, After: 300 * time.Millisecond}.WithDefaults()}
	tl := func(promoted, back time.Duration) *failover.Timeline {
		t := &failover.Timeline{Bucket: 100 * time.Millisecond, Promotion: testbed.Promotion{Window: promoted},
			Errors: 3, FirstErr: time.Millisecond, LastErr: 2 * time.Millisecond, Recovered: back,
			Classes: []failover.Class{{Name: "zipline.ErrConnLost", Count: 3}}}
		for i := range 5 {
			t.Buckets = append(t.Buckets, failover.Bucket{Start: time.Duration(i-2) * 100 * time.Millisecond, Calls: 10, P99: time.Millisecond})
		}
		return t
	}
	r := &report{session: &harness.Session{Command: "cmd"}, opts: o, server: "redis 7.0.15", outcomes: []outcome{
		{client: "zipline", round: 1, tl: tl(200*time.Millisecond, 300*time.Millisecond)},
		{client: "rueidis", round: 1, tl: tl(250*time.Millisecond, 300*time.Millisecond)},
		{client: "zipline", round: 2, tl: tl(100*time.Millisecond, 200*time.Millisecond)},
		{client: "rueidis", round: 2, err: errors.New("boom")},
	}}
	var buf bytes.Buffer
	r.write(&buf)
	out := buf.String()
	for _, want := range []string{"| zipline | 1 | +200ms | 3 | +1ms | +2ms | 1ms |", "FAIL: boom",
		"| zipline | 2 | 0.15s | 3 | 0.00s | 0.25s | 0.10s |", "| rueidis | 1 | 0.25s |", "| -0.2 | 10, 0, 1.0 | 10, 0, 1.0 |"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	var svg bytes.Buffer
	if err := r.chart().WriteSVG(&svg); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(svg.String(), "<polyline"); n != 6 { // 3 panels × 2 clients
		t.Errorf("%d lines, want 6", n)
	}
	if !strings.Contains(svg.String(), "rueidis&#39;s cluster: replica promoted (+250ms)") {
		t.Errorf("no promotion mark for rueidis")
	}
}
