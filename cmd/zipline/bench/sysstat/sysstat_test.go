package sysstat

import (
	"os"
	"strings"
	"testing"
	"time"
)

func TestReaders(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	busy0, self0 := machineBusy(), selfCPU()
	burn(100 * time.Millisecond)
	if machineBusy() <= busy0 || selfCPU() <= self0 {
		t.Fatalf("CPU counters did not advance: machine %v -> %v, self %v -> %v", busy0, machineBusy(), self0, selfCPU())
	}
	if d, err := processCPU(os.Getpid()); err != nil || d <= 0 {
		t.Fatalf("processCPU(self) = %v, %v", d, err)
	}
	if _, err := processCPU(-1); err == nil {
		t.Fatal("processCPU of a missing pid succeeded")
	}
	if m := Machine(); !strings.Contains(m, "GOMAXPROCS") || !strings.Contains(m, "kernel ") || !strings.Contains(m, "load average ") {
		t.Fatalf("Machine() = %q", m)
	}
}

func TestSampleSub(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	// This process stands in for the server: its CPU is then counted
	// twice, which Other's floor at 0 absorbs.
	a := Take(os.Getpid())
	burn(100 * time.Millisecond)
	u := Take(os.Getpid()).Sub(a)
	if u.Elapsed < 100*time.Millisecond || u.Self <= 0 || !u.ServerOK || u.Server <= 0 || !u.OtherOK {
		t.Fatalf("usage %+v", u)
	}
	if p := u.OtherPercent(); p < 0 {
		t.Fatalf("OtherPercent = %v", p)
	}
	// A server whose CPU cannot be read leaves Other unknown: it would
	// include the server's share.
	missing := Take(-1)
	if u := Take(-1).Sub(missing); u.ServerOK || u.OtherOK || u.OtherPercent() != -1 {
		t.Fatalf("missing server: %+v", u)
	}
	none := Take(0)
	if u := Take(0).Sub(none); u.ServerOK || !u.OtherOK {
		t.Fatalf("no server: %+v", u)
	}
}

// burn keeps a CPU busy for d, so that the counters must move.
func burn(d time.Duration) {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); {
	}
}

// Several server processes add up, and one that cannot be read makes the
// server's share unknown.
func TestTakeSeveral(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	one, two := Take(os.Getpid()), Take(os.Getpid(), 0, os.Getpid())
	if !two.ServerOK || two.Server < 2*one.Server {
		t.Fatalf("two servers: %v, one: %v", two.Server, one.Server)
	}
	if s := Take(os.Getpid(), -1); s.ServerOK || !s.server {
		t.Fatalf("with a missing pid: %+v", s)
	}
}
