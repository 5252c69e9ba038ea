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
	busy0, self0 := MachineBusy(), SelfCPU()
	deadline := time.Now().Add(100 * time.Millisecond)
	for time.Now().Before(deadline) { // burn CPU so the counters must move
	}
	if MachineBusy() <= busy0 || SelfCPU() <= self0 {
		t.Fatalf("CPU counters did not advance: machine %v -> %v, self %v -> %v", busy0, MachineBusy(), self0, SelfCPU())
	}
	if d, err := ProcessCPU(os.Getpid()); err != nil || d <= 0 {
		t.Fatalf("ProcessCPU(self) = %v, %v", d, err)
	}
	if _, err := ProcessCPU(-1); err == nil {
		t.Fatal("ProcessCPU of a missing pid succeeded")
	}
	if !strings.Contains(CPUs(), "GOMAXPROCS") || LoadAverage() == "" || Kernel() == "" {
		t.Fatalf("descriptions: %q %q %q", CPUs(), LoadAverage(), Kernel())
	}
}
