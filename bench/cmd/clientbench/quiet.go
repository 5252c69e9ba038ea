package main

import (
	"fmt"
	"os"
	"time"

	"github.com/ziplinekv/zipline/bench/measure"
	"github.com/ziplinekv/zipline/cmd/zipline/bench/sysstat"
)

// quietGate keeps other processes' CPU use out of the measurements where it
// can: the machine is shared, and a test or fuzzer running beside the
// benchmark takes CPU from the client and the server. Before each cell it
// waits (briefly) for a quiet moment, and a cell during which other
// processes used more than maxOther % of one CPU is measured once more,
// keeping the quieter attempt. Waiting and re-measuring draw on one budget,
// so a machine that never goes quiet costs a bounded amount of extra time.
type quietGate struct {
	maxOther  float64       // % of one CPU; 0 turns the gate off
	maxWait   time.Duration // per cell
	budget    time.Duration // left for waiting and re-measuring
	serverPID int           // 0 when unknown

	waited     time.Duration
	remeasured int
	exhausted  bool
}

const (
	quietSample = 200 * time.Millisecond
	quietPoll   = 300 * time.Millisecond
)

// sample returns the CPU other processes used during d, in % of one CPU, or
// -1 if it cannot tell. Nothing of ours runs meanwhile.
func (q *quietGate) sample(d time.Duration) float64 {
	before := sysstat.Take(q.serverPID)
	time.Sleep(d)
	return sysstat.Take(q.serverPID).Sub(before).OtherPercent()
}

func (q *quietGate) enabled() bool { return q.maxOther > 0 }

func (q *quietGate) spend(d time.Duration) {
	q.budget -= d
	if q.budget <= 0 && !q.exhausted {
		q.exhausted = true
		fmt.Fprintln(os.Stderr, "quiet gate: budget for waiting and re-measuring used up; measuring regardless from here on")
	}
}

// wait returns once other processes are quiet, after maxWait, or at once
// when the budget is spent.
func (q *quietGate) wait() {
	if !q.enabled() {
		return
	}
	start := time.Now()
	for i := 0; ; i++ {
		o := q.sample(quietSample)
		if o < 0 || o <= q.maxOther || q.budget <= 0 || time.Since(start) >= q.maxWait {
			break
		}
		if i == 0 {
			fmt.Fprintf(os.Stderr, "quiet gate: other processes use %.0f%% of a CPU; waiting up to %v\n", o, q.maxWait)
		}
		time.Sleep(quietPoll)
	}
	if extra := time.Since(start) - quietSample; extra > 0 {
		q.waited += extra
		q.spend(extra)
	}
}

// noisy reports whether res should be measured again.
func (q *quietGate) noisy(res *measure.Result, cellTime time.Duration) bool {
	return q.enabled() && res.Failed == "" && res.OtherCPU > q.maxOther && q.budget >= cellTime
}
