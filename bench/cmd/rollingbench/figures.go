package main

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ziplinekv/zipline/bench/setget"
)

// step is one shard's turn in the rolling restart: its replica restarted,
// the switch to it, its former primary restarted. Times are since the
// load began.
type step struct {
	start, end time.Duration
	// switchStart and switchEnd bound the switch: CLUSTER FAILOVER or
	// SENTINEL FAILOVER (or the kill) until the testbed saw the new
	// primary answer as one.
	switchStart, switchEnd time.Duration
	// promoted is when the new primary answered as one (cluster switches;
	// zero elsewhere).
	promoted time.Duration
}

// figures are one run's results.
type figures struct {
	Switches int
	Failed   int // failed calls during the rolling restart
	// MaxFailedPerSwitch is the most failed calls in one shard's turn.
	MaxFailedPerSwitch int
	// Window is the longest time without any successful call, to within
	// a setget.Tick.
	Window time.Duration
	// WindowAt is when the longest window began, from the promotion of
	// the step it fell in (from its switch's start where no promotion is
	// known; negative: before it).
	WindowAt time.Duration
	// Recovery is, per switch, the time from its end until the calls per
	// 100 ms were back to 90 % of what they were before the restarts.
	Recovery  []time.Duration
	OpsPerSec float64 // successful calls per second over the restarts
	Lost      int     // acknowledged writes lost
	Wrong     int     // reads that did not return the value just acknowledged
	Errors    map[string]int
}

// recoveryWidth is the span whose successes are compared with the
// baseline's.
const recoveryWidth = 100 * time.Millisecond

// measure works out a run's figures from its successes per setget.Tick, its
// failures and its steps; baselineFrom is where the load had warmed up.
func measure(ticks []int, failures []setget.Failure, steps []step, baselineFrom time.Duration) figures {
	f := figures{Switches: len(steps), Errors: map[string]int{}}
	if len(steps) == 0 {
		return f
	}
	first, last := steps[0].start, steps[len(steps)-1].end
	for _, fl := range failures {
		f.Failed++
		f.Errors[fl.Class]++
	}
	for _, s := range steps {
		n := 0
		for _, fl := range failures {
			if fl.At >= s.start && fl.At < s.end {
				n++
			}
		}
		f.MaxFailedPerSwitch = max(f.MaxFailedPerSwitch, n)
	}
	lo, hi := int(first/setget.Tick), min(int(last/setget.Tick)+1, len(ticks))
	total := 0
	for _, n := range ticks[lo:hi] {
		total += n
	}
	var at int
	if f.Window, at = setget.LongestWindow(ticks[lo:hi]); at >= 0 {
		f.WindowAt = windowAt(steps, time.Duration(lo+at)*setget.Tick)
	}
	if d := last - first; d > 0 {
		f.OpsPerSec = float64(total) / d.Seconds()
	}
	w := int(recoveryWidth / setget.Tick)
	var before []int
	for i := int(baselineFrom / setget.Tick); i+w <= lo; i += w {
		before = append(before, sum(ticks[i:i+w]))
	}
	if len(before) == 0 {
		return f
	}
	slices.Sort(before)
	want := 0.9 * float64(before[len(before)/2])
	for _, s := range steps {
		from := int(s.switchEnd / setget.Tick)
		rec := time.Duration(-1)
		for i := from; i+w <= len(ticks); i++ {
			if float64(sum(ticks[i:i+w])) >= want {
				rec = time.Duration(i+w-from) * setget.Tick
				break
			}
		}
		f.Recovery = append(f.Recovery, rec)
	}
	return f
}

// origin is when a step's switch took effect: its promotion, or where
// none is known, the switch's start.
func (s step) origin() time.Duration {
	if s.promoted > 0 {
		return s.promoted
	}
	return s.switchStart
}

// windowAt is at relative to the switch of the step it falls in.
func windowAt(steps []step, at time.Duration) time.Duration {
	for _, s := range steps {
		if at >= s.start && at < s.end {
			return at - s.origin()
		}
	}
	return at - steps[len(steps)-1].origin()
}

func sum(v []int) int {
	n := 0
	for _, x := range v {
		n += x
	}
	return n
}

// writeTimeline writes a run's successes and failures per setget.Tick to
// path as CSV (ms, ok, failed, then the failures by class), after a
// comment line per step with its times in ms since the load began: what
// -timeline keeps, to see where a window opens against a switch.
func writeTimeline(path string, ticks []int, failures []setget.Failure, steps []step) error {
	var b strings.Builder
	ms := func(d time.Duration) int64 { return d.Milliseconds() }
	for i, s := range steps {
		fmt.Fprintf(&b, "# step %d: start %d, switch %d to %d, promoted %d, end %d\n",
			i, ms(s.start), ms(s.switchStart), ms(s.switchEnd), ms(s.promoted), ms(s.end))
	}
	byTick := map[int]map[string]int{}
	for _, f := range failures {
		i := int(f.At / setget.Tick)
		if byTick[i] == nil {
			byTick[i] = map[string]int{}
		}
		byTick[i][f.Class]++
	}
	b.WriteString("ms,ok,failed,classes\n")
	for i, n := range ticks {
		classes, failed := "", 0
		for _, c := range slices.Sorted(maps.Keys(byTick[i])) {
			failed += byTick[i][c]
			classes += fmt.Sprintf("%s=%d;", c, byTick[i][c])
		}
		fmt.Fprintf(&b, "%d,%d,%d,%q\n", ms(time.Duration(i)*setget.Tick), n, failed, classes)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
