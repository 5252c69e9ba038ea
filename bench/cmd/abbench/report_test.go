package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/bench/harness"
)

func TestReportPoint(t *testing.T) {
	o := &options{clients: []string{"zipline"}, maxOther: 25, rounds: 3}
	r := &report{session: &harness.Session{Command: "cmd"}, sides: []*side{{name: "A"}, {name: "B"}}, opts: o, threshold: 0.97}
	cell := harness.Point{Client: "zipline", Op: "get", Size: 64, Conc: 8}
	// ops per second = ops, over a one-second window.
	add := func(name string, run int, ops uint64, other float64, failed string) {
		c := cell
		c.Run = run
		r.add(name, harness.Result{Point: c, Measurement: harness.Measurement{Ops: ops, Elapsed: time.Second, OtherCPU: other, Failed: failed}})
	}
	add("A", 1, 90, 0, "")
	add("B", 1, 100, 0, "")
	add("A", 2, 96, 40, "")
	add("B", 2, 95, 0, "")
	add("A", 3, 0, 0, "connect: refused")
	add("B", 3, 110, 0, "")

	p := r.point(cell)
	if p.label != "GET 64 B c=8" {
		t.Errorf("label %q", p.label)
	}
	if want := 93.0 / 100; p.ratio != want { // median(90, 96) / median(95, 100, 110)
		t.Errorf("ratio %v, want %v", p.ratio, want)
	}
	if p.quietPairs != 1 || p.quietRatio != 0.9 { // round 1 only: round 2 was noisy, round 3 failed
		t.Errorf("quiet ratio %v over %d pairs, want 0.9 over 1", p.quietRatio, p.quietPairs)
	}
	if p.aFaster != 1 || p.paired != 2 || p.noisy != 1 || p.failed != 1 || !p.belowLimit {
		t.Errorf("point %+v", p)
	}

	var buf bytes.Buffer
	r.write(&buf)
	if !strings.Contains(buf.String(), "1 of 1 points below 0.97: GET 64 B c=8 (0.93)") {
		t.Errorf("report does not list the point below the threshold:\n%s", buf.String())
	}
}
