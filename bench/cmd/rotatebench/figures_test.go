package main

import (
	"maps"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/bench/setget"
)

func TestMeasure(t *testing.T) {
	// 3 s at 10 calls a setget.Tick; from 2 s on, 150 ms with no success, then
	// 5 calls a setget.Tick.
	ticks := make([]int, 300)
	for i := range ticks {
		switch {
		case i >= 200 && i < 215:
			ticks[i] = 0
		case i >= 215:
			ticks[i] = 5
		default:
			ticks[i] = 10
		}
	}
	failures := []setget.Failure{{At: 1400 * time.Millisecond, Class: "EOF"},
		{At: 2010 * time.Millisecond, Class: "deadline exceeded"},
		{At: 2020 * time.Millisecond, Class: "NOAUTH (server)"},
		{At: 2030 * time.Millisecond, Class: "NOAUTH (server)"}}
	var f figures
	measure(&f, ticks, failures, 1500*time.Millisecond)
	if f.Failed != 3 || f.Errors["deadline exceeded"] != 1 || f.Errors["NOAUTH (server)"] != 2 || f.Errors["EOF"] != 0 {
		t.Errorf("failed %d, classes %v; want 3 after 1.5 s", f.Failed, f.Errors)
	}
	if want := 50*10 + 85*5; f.OK != want {
		t.Errorf("ok %d, want %d", f.OK, want)
	}
	if f.Window != 150*time.Millisecond {
		t.Errorf("window %v, want 150ms", f.Window)
	}
	if want := float64(50*10+85*5) / 1.5; f.OpsPerSec != want {
		t.Errorf("ops/s %v, want %v", f.OpsPerSec, want)
	}
}

func TestClientConns(t *testing.T) {
	list := "id=3 addr=127.0.0.1:5000 laddr=127.0.0.1:6379 fd=8 name=rotatebench age=1 idle=0 flags=N db=0 user=app1 redir=-1 resp=3\n" +
		"id=4 addr=127.0.0.1:5001 laddr=127.0.0.1:6379 fd=9 name= age=0 idle=0 flags=N db=0 user=default cmd=client|list resp=2\n" +
		"id=5 addr=127.0.0.1:5002 laddr=127.0.0.1:6379 fd=10 name=rotatebench age=1 idle=0 flags=N db=0 user=app2 redir=-1 resp=3\n" +
		"id=6 addr=127.0.0.1:5003 laddr=127.0.0.1:6379 fd=11 name=rotatebench2 age=1 idle=0 flags=N db=0 user=app1 resp=3\n"
	conns := clientConns(list, "rotatebench")
	if !maps.Equal(conns, map[int64]string{3: "app1", 5: "app2"}) {
		t.Fatalf("conns %v", conns)
	}
	if n := stale(conns, "app2"); n != 1 {
		t.Errorf("stale %d, want 1", n)
	}
	before := map[int64]string{3: "app1", 5: "app1"}
	if !inPlace(before, map[int64]string{3: "app2", 5: "app2", 7: "app2"}, "app2") {
		t.Error("both switched, one more opened: not in place")
	}
	if inPlace(before, map[int64]string{3: "app2", 7: "app2"}, "app2") {
		t.Error("5 replaced by 7: in place")
	}
}

func TestSwitchMedian(t *testing.T) {
	never := time.Duration(-1)
	v := []time.Duration{300 * time.Millisecond, never, 100 * time.Millisecond}
	if m := medianSwitch(v); m != 300*time.Millisecond {
		t.Errorf("median %v", m)
	}
	if w := worstSwitch(v); w != never {
		t.Errorf("worst %v, want never", w)
	}
	if m := medianSwitch([]time.Duration{never, never, time.Second}); m != never {
		t.Errorf("median %v, want never", m)
	}
}
