package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/bench/harness"
	"github.com/ziplinekv/zipline/testbed"
)

const msec = time.Millisecond

// synthetic is a run of writes: acknowledged every 10 ms until 1 s, the
// fault at 1 s, nothing acknowledged for 400 ms while calls fail, writes
// acknowledged by the old primary (lost) from 1.4 to 1.6 s, and kept ones
// from 1.6 s to 3 s (the end of the load). Two writes acknowledged just
// before the fault are lost too: the replication's share.
func synthetic() []write {
	var ws []write
	for t := 10 * msec; t < 1000*msec; t += 10 * msec {
		ws = append(ws, write{start: t - msec, end: t, lost: t >= 980*msec})
	}
	ws = append(ws,
		write{start: 1001 * msec, end: 1002 * msec, err: zipline.ErrConnLost},
		write{start: 1100 * msec, end: 1100 * msec, err: fmt.Errorf("dial: %w", syscall.ECONNREFUSED)},
		write{start: 1200 * msec, end: 1300 * msec, err: context.DeadlineExceeded},
		write{start: 1300 * msec, end: 1301 * msec, err: errors.New("READONLY You can't write against a read only replica.")},
		write{start: 1302 * msec, end: 1303 * msec, err: errors.New("something else")},
	)
	for t := 1400 * msec; t < 1600*msec; t += 10 * msec {
		ws = append(ws, write{start: t - msec, end: t, lost: true})
	}
	for t := 1600 * msec; t <= 3000*msec; t += 10 * msec {
		ws = append(ws, write{start: t - msec, end: t})
	}
	return ws
}

func TestCompute(t *testing.T) {
	ws := synthetic()
	f := compute(ws, 1000*msec, 1450*msec, 3000*msec)
	check := func(name string, got, want any) {
		t.Helper()
		if got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	check("Writes", f.Writes, len(ws))
	check("Failed", f.Failed, 5)
	check("Acked", f.Acked, len(ws)-5)
	for k, want := range map[string]int{kindTimeout: 1, kindConn: 2, kindReadOnly: 1, kindOther: 1} {
		check("ByKind["+k+"]", f.ByKind[k], want)
	}
	// The last acknowledgement before the fault is at 990 ms, the next at
	// 1400 ms (a lost one); the next kept one at 1600 ms.
	check("Window", f.Window, 410*msec)
	check("WindowFrom", f.WindowFrom, -10*msec)
	// 970 ms is the last kept one before the fault (980 and 990 are lost).
	check("Durable", f.Durable, 630*msec)
	check("DurableFrom", f.DurableFrom, -30*msec)
	check("LostBefore", f.LostBefore, 2)
	check("LostAfter", f.LostAfter, 20)
	check("Lost", f.Lost, 22)
	check("LostAfterPromotion", f.LostAfterPromotion, 15) // 1450 … 1590
	check("FirstLostAfter", f.FirstLostAfter, 400*msec)
	check("LastLostAfter", f.LastLostAfter, 590*msec)
	check("AckedBefore", f.AckedBefore, 99)

	// Without a promotion instant the split is unknown.
	check("LostAfterPromotion unknown", compute(ws, 1000*msec, -1, 3000*msec).LostAfterPromotion, -1)

	// A client that never recovers: the window runs to the end of the load.
	var stuck []write
	for _, w := range ws {
		if w.end < 1000*msec {
			stuck = append(stuck, w)
		}
	}
	g := compute(stuck, 1000*msec, -1, 3000*msec)
	check("stuck Window", g.Window, 2010*msec)
	check("stuck WindowFrom", g.WindowFrom, -10*msec)
}

func TestLongestGap(t *testing.T) {
	if gap, from := longestGap(nil, 5*msec); gap != 5*msec || from != 0 {
		t.Errorf("no acks: %v from %v", gap, from)
	}
	// Out of order, as the goroutines' lists are concatenated.
	if gap, from := longestGap([]time.Duration{30 * msec, 10 * msec, 20 * msec, 70 * msec}, 80*msec); gap != 40*msec || from != 30*msec {
		t.Errorf("gap %v from %v, want 40ms from 30ms", gap, from)
	}
}

func TestBucketed(t *testing.T) {
	kept, failed, lost := bucketed(synthetic(), 1000*msec, -time.Second, time.Second, 100*msec)
	if len(kept) != 20 {
		t.Fatalf("%d buckets, want 20", len(kept))
	}
	// Bucket 10 is [0, 100 ms) after the fault: one failure (1002 ms).
	// Bucket 14 is [400, 500 ms): 10 lost. Bucket 16: 10 kept.
	if failed[10] != 1 || lost[14] != 10 || kept[16] != 10 || kept[9] != 8 || lost[9] != 2 {
		t.Errorf("failed[10]=%v lost[14]=%v kept[16]=%v kept[9]=%v lost[9]=%v", failed[10], lost[14], kept[16], kept[9], lost[9])
	}
}

func TestKindOf(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{context.DeadlineExceeded, kindTimeout},
		{fmt.Errorf("x: %w", context.DeadlineExceeded), kindTimeout},
		{errors.New("read tcp 127.0.0.1:1->127.0.0.1:2: i/o timeout"), kindTimeout},
		{io.EOF, kindConn},
		{errors.New("dial tcp 127.0.0.1:6379: connect: connection refused"), kindConn},
		{zipline.ErrConnLost, kindConn},
		{errors.New("READONLY You can't write against a read only replica."), kindReadOnly},
		{errors.New("LOADING"), kindOther},
	} {
		if got := kindOf(c.err); got != c.want {
			t.Errorf("kindOf(%v) = %s, want %s", c.err, got, c.want)
		}
	}
}

// The report has a table per scenario with the medians and ranges, the
// goal lines and every run; the chart draws three panels per scenario.
func TestReport(t *testing.T) {
	zl, _ := pickClients("zipline,go-redis")
	o := &options{clients: zl, scenarios: []string{scenarioManual}, rounds: 2, goroutines: 16, pace: msec,
		deadline: 5 * time.Second, before: 2 * time.Second, after: 5 * time.Second, svg: "x.svg"}
	ws := synthetic()
	mk := func(client string, round int, fig figures) outcome {
		kept, failed, lost := bucketed(ws, 1000*msec, chartLo, chartHi, chartBucket)
		return outcome{client: client, scenario: scenarioManual, round: round, fig: fig,
			fo: testbed.Failover{Named: 500 * msec, Settled: 3 * time.Second}, kept: kept, failed: failed, lost: lost,
			events: map[string]time.Duration{evSwitch: 600 * msec}, lastEvents: map[string]time.Duration{evSwitch: 1600 * msec}}
	}
	good := compute(ws[:99], 1000*msec, 1450*msec, 3000*msec) // stops at the fault, nothing lost after
	bad := compute(ws, 1000*msec, 1450*msec, 3000*msec)
	r := &report{session: &harness.Session{Command: "cmd"}, opts: o, server: "redis 7.0.15", outcomes: []outcome{
		mk("zipline", 1, good), mk("go-redis", 1, bad), mk("zipline", 2, good), mk("go-redis", 2, bad),
		{client: "go-redis", scenario: scenarioManual, round: 3, err: errors.New("boom")},
	}}
	var buf bytes.Buffer
	r.write(&buf)
	out := buf.String()
	for _, want := range []string{
		"| go-redis | 2 | 0.500 s (0.500–0.500) | 0.410 s (0.410–0.410) | 0.630 s (0.630–0.630) | 5 | 1 / 2 / 1 / 1 |",
		"| 2 | 20 | 15 |",
		"- go-redis, round 3: boom",
		"- zipline's acknowledged writes lost after the fault: 0 over 2 runs ✓",
		"+600ms…+1.6s",
		"20 (acked +400ms…+590ms)",
		"failed calls 0 vs 5 ✓ (go-redis's window is closed by acknowledgements it then lost: 20",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if fewer(0, 0) == mark(true) || fewer(1, 2) != mark(true) || fewer(2, 2) != mark(false) {
		t.Errorf("fewer: a tie at zero is no win, 1 < 2 is one, 2 = 2 is not")
	}
	var svg bytes.Buffer
	if err := r.chart().WriteSVG(&svg); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(svg.String(), "<polyline"); n < 6 { // 3 panels × 2 clients, some split by gaps
		t.Errorf("%d lines, want at least 6", n)
	}
}
