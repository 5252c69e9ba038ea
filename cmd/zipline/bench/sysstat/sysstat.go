// Package sysstat reads the machine's CPU accounting from /proc, for the
// demo and the benchmarks: what a process used, what the whole machine was
// busy with (to tell a quiet run from a noisy one), and a description of
// the CPUs. On systems without /proc the readers return zero values.
//
// A measurement takes a Sample before and after its window; the difference
// (Sample.Sub) splits the CPU time between this process, the server under
// test and everything else.
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

// Sample is one reading of the CPU counters a measured window compares.
type Sample struct {
	Time     time.Time
	Self     time.Duration // this process, every thread
	Server   time.Duration // the server processes together, if ServerOK
	ServerOK bool
	Busy     time.Duration // all CPUs, all processes; 0 where unknown

	server bool // a server was given, so Other must leave it out
}

// Take reads the counters now. serverPIDs are the processes whose CPU time
// is the server's, added up (a cluster is several); 0s are ignored, so
// Take(0) means no server. ServerOK needs every one of them read.
func Take(serverPIDs ...int) Sample {
	s := Sample{Self: selfCPU(), Busy: machineBusy()}
	ok := true
	for _, pid := range serverPIDs {
		if pid == 0 {
			continue
		}
		s.server = true
		d, err := processCPU(pid)
		ok = ok && err == nil
		s.Server += d
	}
	s.ServerOK = s.server && ok
	if !s.ServerOK {
		s.Server = 0
	}
	s.Time = time.Now()
	return s
}

// Usage is the CPU time spent between two samples.
type Usage struct {
	Elapsed  time.Duration
	Self     time.Duration
	Server   time.Duration // if ServerOK
	ServerOK bool
	// Other is what every other process used, if OtherOK: it is known
	// when the machine's counters, and the server's if there is one, were
	// read both times.
	Other   time.Duration
	OtherOK bool
}

// Sub returns the CPU time spent from earlier to s.
func (s Sample) Sub(earlier Sample) Usage {
	u := Usage{Elapsed: s.Time.Sub(earlier.Time), Self: s.Self - earlier.Self, ServerOK: s.ServerOK && earlier.ServerOK}
	if u.ServerOK {
		u.Server = s.Server - earlier.Server
	}
	if s.Busy > 0 && earlier.Busy > 0 && (u.ServerOK || !s.server) {
		u.Other, u.OtherOK = max(0, s.Busy-earlier.Busy-u.Self-u.Server), true
	}
	return u
}

// OtherPercent is Other in percent of one CPU over the window, or -1 if it
// is unknown.
func (u Usage) OtherPercent() float64 {
	if !u.OtherOK || u.Elapsed <= 0 {
		return -1
	}
	return 100 * float64(u.Other) / float64(u.Elapsed)
}

// clkTck is USER_HZ, the unit of /proc's CPU times on Linux.
const clkTck = 100

// selfCPU returns the user plus system CPU time this process has used.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// processCPU returns the user plus system CPU time of process pid.
func processCPU(pid int) (time.Duration, error) {
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

// machineBusy returns the non-idle CPU time of all CPUs together, from the
// first line of /proc/stat, or 0 where it cannot be read.
func machineBusy() time.Duration {
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

// Machine describes where a benchmark runs, for its report: the CPUs,
// GOMAXPROCS, the kernel and the load average at the time of the call.
func Machine() string {
	s := fmt.Sprintf("%d CPUs (%s), GOMAXPROCS %d", runtime.NumCPU(), cpuModel(), runtime.GOMAXPROCS(0))
	if k := kernel(); k != "" {
		s += ", kernel " + k
	}
	if l := loadAverage(); l != "" {
		s += "; load average " + l
	}
	return s
}

// cpuModel returns the CPU's model name, or "unknown CPU".
func cpuModel() string {
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.Lines(string(b)) {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				return strings.TrimSpace(v)
			}
		}
	}
	return "unknown CPU"
}

// loadAverage returns the 1, 5 and 15 minute load averages as printed by
// the kernel, or "".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	if f := strings.Fields(string(b)); len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return ""
}

// kernel returns the kernel release, or "".
func kernel() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
