package harness

import (
	"fmt"
	"os"
	"time"

	"github.com/ziplinekv/zipline/cmd/zipline/bench/sysstat"
)

// QuietGate keeps other processes' CPU use out of the measurements where it
// can: the machine is shared, and a test or fuzzer running beside the
// benchmark takes CPU from the client and the server. Before each cell it
// waits (briefly) for a quiet moment, and a cell during which other
// processes used more than MaxOther % of one CPU is measured once more,
// keeping the quieter attempt. Waiting and re-measuring draw on one budget,
// so a machine that never goes quiet costs a bounded amount of extra time.
type QuietGate struct {
	MaxOther   float64       // % of one CPU; 0 turns the gate off
	MaxWait    time.Duration // per cell
	Budget     time.Duration // left for waiting and re-measuring
	ServerPIDs []int         // the server's processes, not "other"

	Waited     time.Duration // spent waiting so far
	Remeasured int           // cells measured again so far
	exhausted  bool
}

const (
	// QuietSample is how long the gate samples before each cell.
	QuietSample = 200 * time.Millisecond
	quietPoll   = 300 * time.Millisecond
)

// sample returns the CPU other processes used during d, in % of one CPU, or
// -1 if it cannot tell. Nothing of ours runs meanwhile.
func (q *QuietGate) sample(d time.Duration) float64 {
	before := sysstat.Take(q.ServerPIDs...)
	time.Sleep(d)
	return sysstat.Take(q.ServerPIDs...).Sub(before).OtherPercent()
}

// Enabled reports whether the gate does anything.
func (q *QuietGate) Enabled() bool { return q.MaxOther > 0 }

// Spend takes d (a re-measurement) from the budget.
func (q *QuietGate) Spend(d time.Duration) {
	q.Budget -= d
	if q.Budget <= 0 && !q.exhausted {
		q.exhausted = true
		fmt.Fprintln(os.Stderr, "quiet gate: budget for waiting and re-measuring used up; measuring regardless from here on")
	}
}

// Wait returns once other processes are quiet, after MaxWait, or at once
// when the budget is spent.
func (q *QuietGate) Wait() {
	if !q.Enabled() {
		return
	}
	start := time.Now()
	for i := 0; ; i++ {
		o := q.sample(QuietSample)
		if o < 0 || o <= q.MaxOther || q.Budget <= 0 || time.Since(start) >= q.MaxWait {
			break
		}
		if i == 0 {
			fmt.Fprintf(os.Stderr, "quiet gate: other processes use %.0f%% of a CPU; waiting up to %v\n", o, q.MaxWait)
		}
		time.Sleep(quietPoll)
	}
	if extra := time.Since(start) - QuietSample; extra > 0 {
		q.Waited += extra
		q.Spend(extra)
	}
}

// Noisy reports whether m should be measured again: other processes used
// more than MaxOther during it, and the budget still has room for a cell
// of cellTime.
func (q *QuietGate) Noisy(m *Measurement, cellTime time.Duration) bool {
	return q.noisy(m.OtherCPU, m.Failed != "", cellTime)
}

func (q *QuietGate) noisy(other float64, failed bool, cellTime time.Duration) bool {
	return q.Enabled() && !failed && other > q.MaxOther && q.Budget >= cellTime
}

// Measure waits for a quiet moment and measures once with measure; if the
// measurement was noisy it measures again and keeps the quieter attempt
// (again reports that it did). Each attempt goes to log as it ends.
// cellTime is what an attempt costs.
func (q *QuietGate) Measure(cellTime time.Duration, measure func() Measurement, log func(m *Measurement, again bool)) (
	m Measurement, again bool) {
	return MeasureQuietly(q, cellTime, measure,
		func(m Measurement) (float64, bool) { return m.OtherCPU, m.Failed != "" },
		func(m Measurement, again bool) { log(&m, again) })
}

// MeasureQuietly is QuietGate.Measure for a benchmark with a measurement
// type of its own: judge reports, for an attempt, the CPU other processes
// used during it (in % of one CPU) and whether it failed.
func MeasureQuietly[T any](q *QuietGate, cellTime time.Duration, measure func() T,
	judge func(T) (other float64, failed bool), log func(m T, again bool)) (m T, again bool) {
	q.Wait()
	m = measure()
	log(m, false)
	first, failed := judge(m)
	if !q.noisy(first, failed, cellTime) {
		return m, false
	}
	start := time.Now()
	q.Wait()
	second := measure()
	log(second, true)
	q.Spend(time.Since(start))
	q.Remeasured++
	if other, failed := judge(second); !failed && other < first {
		m = second
	}
	return m, true
}

// Describe says how the gate was set, for a report; "" when it is off.
// Call it before measuring, while Budget is whole.
func (q *QuietGate) Describe() string {
	if !q.Enabled() {
		return ""
	}
	return fmt.Sprintf("before each cell the harness waited up to %v for other processes to use ≤ %.0f%% of a CPU, "+
		"and measured a cell again (keeping the quieter attempt) when they used more during it, within a budget of %v",
		q.MaxWait, q.MaxOther, q.Budget.Round(time.Second))
}
