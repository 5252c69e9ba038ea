// Package sysstat reads the machine's CPU accounting from /proc, for the
// benchmarks: what a process used, what the whole machine was busy with (to
// tell a quiet run from a noisy one), and a description of the CPUs. On
// systems without /proc the readers return zero values.
package sysstat

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// clkTck is USER_HZ, the unit of /proc's CPU times on Linux.
const clkTck = 100

// SelfCPU returns the user plus system CPU time this process has used.
func SelfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ProcessCPU returns the user plus system CPU time of process pid.
func ProcessCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// Fields after the parenthesised command name, which may hold spaces:
	// utime and stime are the 14th and 15th fields of the whole line.
	end := strings.LastIndexByte(string(b), ')')
	if end < 0 || end+2 > len(b) {
		return 0, errors.New("sysstat: malformed /proc stat line")
	}
	f := strings.Fields(string(b[end+2:]))
	if len(f) < 13 {
		return 0, errors.New("sysstat: short /proc stat line")
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / clkTck, nil
}

// MachineBusy returns the non-idle CPU time of all CPUs together, from the
// first line of /proc/stat, or 0 where it cannot be read.
func MachineBusy() time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0
	}
	var busy int64
	for i, v := range f[1:9] { // user nice system idle iowait irq softirq steal
		if i == 3 || i == 4 {
			continue
		}
		n, _ := strconv.ParseInt(v, 10, 64)
		busy += n
	}
	return time.Duration(busy) * time.Second / clkTck
}

// CPUModel returns the CPU's model name, or "unknown CPU".
func CPUModel() string {
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.Lines(string(b)) {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				return strings.TrimSpace(v)
			}
		}
	}
	return "unknown CPU"
}

// LoadAverage returns the 1, 5 and 15 minute load averages as printed by
// the kernel, or "".
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	if f := strings.Fields(string(b)); len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return ""
}

// Kernel returns the kernel release, or "".
func Kernel() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// CPUs describes the machine's CPUs for a report: count, model and
// GOMAXPROCS.
func CPUs() string {
	return fmt.Sprintf("%d CPUs (%s), GOMAXPROCS %d", runtime.NumCPU(), CPUModel(), runtime.GOMAXPROCS(0))
}
