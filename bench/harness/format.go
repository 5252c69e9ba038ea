package harness

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Kops formats a throughput in thousands of operations per second, with
// one decimal below 10k, or "–" for NaN.
func Kops(opsPerSec float64) string {
	k := opsPerSec / 1000
	switch {
	case math.IsNaN(k):
		return "–"
	case k < 10:
		return fmt.Sprintf("%.1f", k)
	default:
		return fmt.Sprintf("%.0f", k)
	}
}

// KopsSpread formats throughputs v as their median in thousands of ops/s
// and, for more than one value, ±half their range as a percentage of it:
// "123 ±4%".
func KopsSpread(v []float64) string {
	s := Kops(Median(v))
	if len(v) > 1 {
		s += fmt.Sprintf(" ±%.0f%%", 100*Spread(v))
	}
	return s
}

// Num formats a small measured number with three significant digits at
// most, or "–" for NaN.
func Num(v float64) string {
	switch {
	case math.IsNaN(v):
		return "–"
	case v < 10:
		return fmt.Sprintf("%.2f", v)
	case v < 100:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.0f", v)
	}
}

// SizeLabel formats a value size: "64 B", "2 KiB".
func SizeLabel(size int) string {
	if size >= 1024 && size%1024 == 0 {
		return fmt.Sprintf("%d KiB", size/1024)
	}
	return fmt.Sprintf("%d B", size)
}

// Micros returns d in microseconds.
func Micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// Us formats microseconds without decimals, or "–" for NaN.
func Us(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	return fmt.Sprintf("%.0f", v)
}

// Percent formats an other-process CPU share, or "–" when unknown (<0).
func Percent(v float64) string {
	if v < 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f", v)
}

// Line is m as the progress line of a cell prints it (after the cell's
// name): throughput, latencies, allocations, CPU per op, other processes'
// CPU and errors, or FAIL and why.
func (m *Measurement) Line() string {
	if m.Failed != "" {
		return "FAIL " + m.Failed
	}
	srv := "–"
	if m.ServerCPU >= 0 {
		srv = Num(m.ServerCPU)
	}
	errs := ""
	if m.Errors > 0 {
		errs = fmt.Sprintf(" errors %d (%s)", m.Errors, m.FirstErr)
	}
	return fmt.Sprintf("%7s kops/s  p50 %6.0fµs p99 %6.0fµs  allocs %5s  redis %5sµs  client %5sµs  other %3s%%%s",
		Kops(m.OpsPerSec()), Micros(m.P50), Micros(m.P99), Num(m.AllocsPerOp), srv, Num(m.ClientCPU),
		Percent(m.OtherCPU), errs)
}

// RawHeader names the columns of RawCells.
var RawHeader = []string{"kops/s", "p50/p99", "allocs", "redis", "client", "other CPU %", "errors"}

// RawCells is m as a row of a report's raw-runs table, under RawHeader.
func (m *Measurement) RawCells() []string {
	if m.Failed != "" {
		return []string{"FAIL: " + strings.ReplaceAll(m.Failed, "|", "/"), "", "", "", "", "", fmt.Sprint(m.Errors)}
	}
	srv := "–"
	if m.ServerCPU >= 0 {
		srv = Num(m.ServerCPU)
	}
	return []string{Kops(m.OpsPerSec()), Us(Micros(m.P50)) + "/" + Us(Micros(m.P99)), Num(m.AllocsPerOp),
		srv, Num(m.ClientCPU), Percent(m.OtherCPU), fmt.Sprint(m.Errors)}
}

// AgainTag marks the log line of a re-measured attempt (see MeasureQuietly).
func AgainTag(again bool) string {
	if again {
		return " again"
	}
	return ""
}
