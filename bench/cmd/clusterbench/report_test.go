package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/bench"
	"github.com/ziplinekv/zipline/bench/harness"
)

// The report compares zipline with the best peer at every point, marks
// points below the bar, leaves out what a client lacks, and counts noise.
func TestReport(t *testing.T) {
	zl := bench.ClusterFactory{Name: "zipline"}
	peer := bench.ClusterFactory{Name: "peer", Lacks: []bench.ClusterOp{bench.OpMGet}}
	get, mget := point{bench.OpGet, 8}, point{bench.OpMGet, 1}
	r := &report{Header: harness.Header{Title: "t"}, clients: []bench.ClusterFactory{zl, peer},
		points: []point{get, mget}, runs: 2}
	add := func(f bench.ClusterFactory, p point, run int, ops uint64, other float64) {
		r.results = append(r.results, result{cellSpec: cellSpec{factory: f, point: p, run: run},
			Measurement: harness.Measurement{Ops: ops, Elapsed: time.Second, ServerCPU: -1, OtherCPU: other}})
	}
	add(zl, get, 1, 150_000, 0)
	add(zl, get, 2, 150_000, 40)
	add(peer, get, 1, 100_000, 0)
	add(peer, get, 2, 100_000, 0)
	add(zl, mget, 1, 4000, 0)
	var buf bytes.Buffer
	r.write(&buf)
	out := buf.String()
	for _, want := range []string{"| GET c=8 | 150 | peer | 100 | **1.50** |", "| MGET×100 c=1 | 4.0 |  | – | – |",
		"| MGET×100 c=1 | 4.0 | n/a |", "1 of 5 cells above 25%", "## Errors and failures\n\nnone"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}
