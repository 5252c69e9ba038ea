package harness

import "fmt"

// Runs is one cell's measurements over the runs of a benchmark, which a
// report summarises by their medians.
type Runs struct {
	// One value per successful run: ops/s, p50 and p99 in µs,
	// allocations, server and client CPU in µs per op (Server only when
	// measured).
	Ops, P50, P99, Allocs, Server, Client []float64
	Errors                                uint64   // failed operations, all runs
	Failures                              []string // "run N: why", for runs without numbers
}

// Add records run's measurement.
func (r *Runs) Add(run int, m *Measurement) {
	r.Errors += m.Errors
	if m.Failed != "" {
		r.Failures = append(r.Failures, fmt.Sprintf("run %d: %s", run, m.Failed))
		return
	}
	r.Ops = append(r.Ops, m.OpsPerSec())
	r.P50 = append(r.P50, Micros(m.P50))
	r.P99 = append(r.P99, Micros(m.P99))
	r.Allocs = append(r.Allocs, m.AllocsPerOp)
	r.Client = append(r.Client, m.ClientCPU)
	if m.ServerCPU >= 0 {
		r.Server = append(r.Server, m.ServerCPU)
	}
}

// N is the number of successful runs.
func (r *Runs) N() int { return len(r.Ops) }

// OpsPerSec is the median throughput.
func (r *Runs) OpsPerSec() float64 { return Median(r.Ops) }

// Metric is one of a report's tables: its title and what a cell shows.
type Metric struct {
	Title string
	Cell  func(r *Runs) string
}

// Metrics are the tables every client report shows, in order: throughput
// (median ±half the range), p50 / p99, allocations, server CPU (titled
// serverTitle) and client CPU per op.
func Metrics(serverTitle string) []Metric {
	return []Metric{
		{"Throughput, thousands of ops/s (median ±half-range)", func(r *Runs) string { return KopsSpread(r.Ops) }},
		{"Latency p50 / p99, µs", func(r *Runs) string { return Us(Median(r.P50)) + " / " + Us(Median(r.P99)) }},
		{"Allocations per op (whole client process)", func(r *Runs) string { return Num(Median(r.Allocs)) }},
		{serverTitle, func(r *Runs) string { return Num(Median(r.Server)) }},
		{"Client process CPU, µs per op", func(r *Runs) string { return Num(Median(r.Client)) }},
	}
}
