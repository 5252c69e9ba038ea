package harness

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A cell of a fake operation: every goroutine calls its own Op; errors
// are counted apart and, past 1 %, fail the cell.
func TestMeasure(t *testing.T) {
	var rn Runner
	var calls atomic.Int64
	seen := make([]atomic.Bool, 4)
	m := rn.Measure(Cell{Conc: 4, Warmup: 20 * time.Millisecond, Duration: 100 * time.Millisecond, Close: func() {},
		Op: func(g int) Op {
			return func(context.Context) error {
				seen[g].Store(true)
				calls.Add(1)
				time.Sleep(100 * time.Microsecond)
				return nil
			}
		}})
	if m.Failed != "" || m.Ops == 0 || m.Errors != 0 || m.P50 < 100*time.Microsecond || m.OpsPerSec() <= 0 || m.ServerCPU != -1 {
		t.Fatalf("%+v", m)
	}
	for g := range seen {
		if !seen[g].Load() {
			t.Errorf("goroutine %d never ran", g)
		}
	}
	if !strings.Contains(m.Line(), "kops/s") || len(m.RawCells()) != len(RawHeader) {
		t.Errorf("line %q, cells %v", m.Line(), m.RawCells())
	}

	boom := errors.New("boom")
	m = rn.Measure(Cell{Conc: 2, Duration: 50 * time.Millisecond, Close: func() {},
		Op: func(g int) Op {
			n := 0
			return func(context.Context) error {
				time.Sleep(50 * time.Microsecond)
				if n++; n%10 == 0 {
					return boom
				}
				return nil
			}
		}})
	if m.Errors == 0 || m.FirstErr != "boom" || !strings.Contains(m.Failed, "errors") {
		t.Errorf("10 %% errors: %+v", m)
	}
}

func TestRuns(t *testing.T) {
	var r Runs
	r.Add(1, &Measurement{Ops: 100, Elapsed: time.Second, P50: time.Millisecond, ServerCPU: -1})
	r.Add(2, &Measurement{Ops: 300, Elapsed: time.Second, P50: 3 * time.Millisecond, ServerCPU: 2})
	r.Add(3, &Measurement{Failed: "connect: refused", Errors: 5})
	if r.N() != 2 || r.OpsPerSec() != 200 || len(r.Server) != 1 || r.Errors != 5 || r.Failures[0] != "run 3: connect: refused" {
		t.Fatalf("%+v", r)
	}
	ms := Metrics("server")
	if len(ms) != 5 || ms[3].Title != "server" || ms[0].Cell(&r) != "0.2 ±50%" || ms[1].Cell(&r) != "2000 / 0" {
		t.Errorf("metrics: %q %q", ms[0].Cell(&r), ms[1].Cell(&r))
	}
}

func TestStats(t *testing.T) {
	if Median([]float64{3, 1, 2}) != 2 || Median([]float64{4, 1, 2, 3}) != 2.5 || Spread([]float64{1, 3}) != 0.5 || Spread([]float64{7}) != 0 {
		t.Error("median or spread")
	}
	if v, err := ParseInts("1, 8,64", 1, 100); err != nil || len(v) != 3 || v[1] != 8 {
		t.Errorf("ParseInts: %v %v", v, err)
	}
	if _, err := ParseInts("0", 1, 100); err == nil {
		t.Error("ParseInts accepted a value out of range")
	}
	if Kops(1234) != "1.2" || Kops(123456) != "123" || Num(1.234) != "1.23" || Percent(-1) != "–" {
		t.Error("formatting")
	}
	if shellQuote("a b") != "'a b'" || shellQuote("-x=1,2") != "-x=1,2" {
		t.Error("shellQuote")
	}
}

// The gate turned off measures once and never waits.
func TestQuietGateOff(t *testing.T) {
	q := &QuietGate{}
	n := 0
	start := time.Now()
	m, again := q.Measure(time.Second, func() Measurement { n++; return Measurement{OtherCPU: 90} }, func(*Measurement, bool) {})
	if n != 1 || again || m.OtherCPU != 90 || time.Since(start) > 100*time.Millisecond || q.Describe() != "" {
		t.Errorf("n=%d again=%v", n, again)
	}
}
