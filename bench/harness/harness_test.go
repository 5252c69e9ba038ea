package harness

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
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
	if v := []float64{30, 10, 20}; !math.IsNaN(Median(nil)) || Median(v) != 20 || v[0] != 30 {
		t.Error("Median of nothing is not NaN, or Median sorted its argument")
	}
	if v, err := ParseInts("1, 8,64", 1, 100); err != nil || len(v) != 3 || v[1] != 8 {
		t.Errorf("ParseInts: %v %v", v, err)
	}
	if _, err := ParseInts("0", 1, 100); err == nil {
		t.Error("ParseInts accepted a value out of range")
	}
	if Kops(1234) != "1.2" || Kops(123456) != "123" || Num(1.234) != "1.23" || Percent(-1) != "–" ||
		SizeLabel(64) != "64 B" || SizeLabel(2048) != "2 KiB" || SizeLabel(1500) != "1500 B" {
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

func TestGridFlags(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	parse := GridFlags(fs)
	if err := fs.Parse([]string{"-conc", "8, 64", "-ops", "GET"}); err != nil {
		t.Fatal(err)
	}
	g, err := parse()
	if err != nil {
		t.Fatal(err)
	}
	pts := g.Points()
	if len(pts) != 4 {
		t.Fatalf("%d points, want 4: %v", len(pts), pts)
	}
	if got := pts[1].String(); got != "GET 64 B c=64" {
		t.Errorf("second point %q", got)
	}
	if got := pts[3].String(); got != "GET 2 KiB c=64" {
		t.Errorf("last point %q", got)
	}

	fs = flag.NewFlagSet("t", flag.ContinueOnError)
	parse = GridFlags(fs)
	if err := fs.Parse([]string{"-ops", "del"}); err != nil {
		t.Fatal(err)
	}
	if _, err := parse(); err == nil {
		t.Error("-ops del accepted")
	}
}

// A Result goes through clientbench -json to abbench unchanged, as one
// flat JSON object.
func TestResultJSON(t *testing.T) {
	in := Result{Point: Point{Client: "zipline", Op: "set", Size: 2048, Conc: 64, Run: 3},
		Measurement: Measurement{Ops: 1000, Elapsed: time.Second, P50: 40 * time.Microsecond, P99: time.Millisecond,
			AllocsPerOp: 1.5, ServerCPU: -1, ClientCPU: 3.25, OtherCPU: 12, Errors: 2, FirstErr: "boom"},
		Remeasured: true}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{`"client":"zipline"`, `"conc":64`, `"ops":1000`, `"server_cpu_us":-1`, `"remeasured":true`} {
		if !strings.Contains(string(b), field) {
			t.Errorf("%s lacks %s", b, field)
		}
	}
	var out Result
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if out != in {
		t.Errorf("round trip: %+v, want %+v", out, in)
	}
}

func TestParseNames(t *testing.T) {
	all := []string{"zipline", "rueidis", "goredis"}
	id := func(s string) string { return s }
	got, err := ParseNames(" goredis,zipline", all, id)
	if err != nil || strings.Join(got, ",") != "goredis,zipline" {
		t.Fatalf("got %q %v", got, err)
	}
	if _, err := ParseNames("zipline,nope", all, id); err == nil || !strings.Contains(err.Error(), `"nope"`) ||
		!strings.Contains(err.Error(), "zipline,rueidis,goredis") {
		t.Fatalf("an unknown name: %v", err)
	}
}

// Interleave rotates the variants' order by one each round, and stops
// between cells once the session is interrupted.
func TestSessionInterleave(t *testing.T) {
	ctx, stop := context.WithCancel(context.Background())
	s := &Session{ctx: ctx, stop: stop}
	var got []string
	s.Interleave(3, 3, func(round, i int) { got = append(got, fmt.Sprintf("%d:%d", round, i)) })
	want := "1:0 1:1 1:2 2:1 2:2 2:0 3:2 3:0 3:1"
	if strings.Join(got, " ") != want {
		t.Fatalf("order %v, want %s", got, want)
	}
	got = nil
	s.Interleave(2, 3, func(round, i int) {
		got = append(got, fmt.Sprintf("%d:%d", round, i))
		if len(got) == 2 {
			stop()
		}
	})
	if len(got) != 2 {
		t.Fatalf("after the interrupt: %v, want 2 cells", got)
	}
}
