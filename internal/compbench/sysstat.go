package compbench

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cpuSnap is a point-in-time reading of the CPU counters a phase reports.
type cpuSnap struct {
	t      time.Time
	self   time.Duration // this process, every thread (GLIDE's Rust threads included)
	server time.Duration // the server process; 0 when unknown
	srvOK  bool
	busy   time.Duration // all CPUs, all processes; 0 when unknown
}

func takeSnap(serverCPU func() (time.Duration, error)) cpuSnap {
	s := cpuSnap{t: time.Now(), self: processCPU(), busy: systemBusy()}
	if serverCPU != nil {
		if d, err := serverCPU(); err == nil {
			s.server, s.srvOK = d, true
		}
	}
	return s
}

// cpuUse is what happened between two snapshots, per operation where it
// makes sense.
type cpuUse struct {
	clientUS float64 // µs of this process's CPU per op
	serverUS float64 // µs of server CPU per op; -1 when unknown
	otherPct float64 // % of one CPU used by other processes; -1 when unknown
}

func between(a, b cpuSnap, ops uint64) cpuUse {
	u := cpuUse{serverUS: -1, otherPct: -1}
	el := b.t.Sub(a.t)
	if ops > 0 {
		u.clientUS = float64((b.self - a.self).Microseconds()) / float64(ops)
		if a.srvOK && b.srvOK {
			u.serverUS = float64((b.server - a.server).Microseconds()) / float64(ops)
		}
	}
	if a.busy > 0 && b.busy > 0 && el > 0 {
		other := (b.busy - a.busy) - (b.self - a.self)
		if a.srvOK && b.srvOK {
			other -= b.server - a.server
		}
		u.otherPct = max(0, 100*float64(other)/float64(el))
	}
	return u
}

// processCPU returns the user+system CPU time of this process.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// systemBusy returns the non-idle CPU time of the whole machine from
// /proc/stat, or 0 where there is none.
func systemBusy() time.Duration {
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
	for i, v := range f[1:9] {
		if i == 3 || i == 4 { // idle, iowait
			continue
		}
		n, _ := strconv.ParseInt(v, 10, 64)
		busy += n
	}
	const clkTck = 100 // USER_HZ
	return time.Duration(busy) * time.Second / clkTck
}

// Machine describes where the benchmark ran, for the report: CPU model,
// logical CPUs and the load average at the time of the call.
func Machine() string {
	model := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	load := ""
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) >= 3 {
			load = ", load average " + strings.Join(f[:3], " ")
		}
	}
	return model + ", " + strconv.Itoa(runtime.NumCPU()) + " logical CPUs" + load
}
