package compression

import (
	"runtime"
	"strconv"
	"time"

	"github.com/ziplinekv/zipline/cmd/zipline/bench/sysstat"
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
	s := cpuSnap{t: time.Now(), self: sysstat.SelfCPU(), busy: sysstat.MachineBusy()}
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

// Machine describes where the benchmark ran, for the report: CPU model,
// logical CPUs and the load average at the time of the call.
func Machine() string {
	return sysstat.CPUModel() + ", " + strconv.Itoa(runtime.NumCPU()) + " logical CPUs, load average " + sysstat.LoadAverage()
}
