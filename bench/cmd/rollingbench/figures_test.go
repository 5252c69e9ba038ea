package main

import (
	"testing"
	"time"

	"github.com/ziplinekv/zipline/bench/setget"
)

func TestMeasure(t *testing.T) {
	// 3 s at 10 calls a setget.Tick; from 2 s a switch: 150 ms with no success,
	// then 5 calls a setget.Tick for 200 ms, then full again.
	ticks := make([]int, 300)
	for i := range ticks {
		switch {
		case i >= 200 && i < 215:
			ticks[i] = 0
		case i >= 215 && i < 235:
			ticks[i] = 5
		default:
			ticks[i] = 10
		}
	}
	failures := []setget.Failure{{At: 1900 * time.Millisecond, Class: "connection refused"},
		{At: 2010 * time.Millisecond, Class: "deadline exceeded"},
		{At: 2020 * time.Millisecond, Class: "MOVED (server)"}}
	steps := []step{{start: 1950 * time.Millisecond, switchStart: 2 * time.Second, switchEnd: 2150 * time.Millisecond, end: 2900 * time.Millisecond}}
	f := measure(ticks, failures, steps, 0)
	if f.Switches != 1 || f.Failed != 3 || f.MaxFailedPerSwitch != 2 {
		t.Errorf("switches %d, failed %d, per switch %d; want 1, 3, 2", f.Switches, f.Failed, f.MaxFailedPerSwitch)
	}
	if f.Window != 150*time.Millisecond {
		t.Errorf("window %v, want 150ms", f.Window)
	}
	// Back to 90 % of 100 calls per 100 ms: the first 100 ms after 2.15 s
	// with 90 calls is 2.33-2.43 s (2 ticks of 5, 8 of 10), which ends
	// 280 ms after the switch.
	if len(f.Recovery) != 1 || f.Recovery[0] != 280*time.Millisecond {
		t.Errorf("recovery %v, want [280ms]", f.Recovery)
	}
	if f.Errors["connection refused"] != 1 || f.Errors["deadline exceeded"] != 1 || f.Errors["MOVED (server)"] != 1 {
		t.Errorf("error classes %v", f.Errors)
	}
}
