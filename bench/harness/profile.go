package harness

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"strings"
	"time"
)

// StartCPUProfile starts a CPU profile written to path and returns what
// stops it and closes the file. With an empty path it profiles nothing
// and the returned stop does nothing.
func StartCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// WindowTrace returns a Cell.Observe that writes an execution trace of the
// client process during the window to path (go tool trace reads it;
// scripts/trace-events.sh counts its events per operation). An error
// starting it is printed, and the cell is measured untraced.
func WindowTrace(path string) func() (stop func()) {
	return func() func() {
		f, err := os.Create(path)
		if err == nil {
			if err = trace.Start(f); err != nil {
				f.Close()
			}
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "trace %s: %v\n", path, err)
			return func() {}
		}
		return func() { trace.Stop(); f.Close() }
	}
}

// perfStatEvents are what WindowPerfStat counts: the system calls a
// request costs, the threads' sleeps and wake-ups, and CPU time. The
// system-call tracepoints need root (or perf_event_paranoid -1).
const perfStatEvents = "syscalls:sys_enter_write,syscalls:sys_enter_writev,syscalls:sys_enter_read," +
	"syscalls:sys_enter_epoll_wait,syscalls:sys_enter_epoll_pwait,syscalls:sys_enter_futex," +
	"sched:sched_switch,sched:sched_wakeup,cpu-migrations,task-clock"

// WindowPerfStat returns a Cell.Observe that counts perfStatEvents with
// `perf stat` during the window: in the client process into
// prefix+"-client.txt", and in the server processes pids, together, into
// prefix+"-server.txt". perf runs for the window's length from when it
// starts, a few milliseconds behind the window; stop waits for it.
func WindowPerfStat(prefix string, window time.Duration, pids []int) func() (stop func()) {
	return func() func() {
		targets := map[string][]int{"client": {os.Getpid()}, "server": pids}
		var cmds []*exec.Cmd
		for side, ps := range targets {
			if len(ps) == 0 {
				continue
			}
			list := make([]string, len(ps))
			for i, p := range ps {
				list[i] = strconv.Itoa(p)
			}
			cmd := exec.Command("perf", "stat", "-e", perfStatEvents, "-p", strings.Join(list, ","),
				"-o", prefix+"-"+side+".txt", "--", "sleep", strconv.FormatFloat(window.Seconds(), 'f', 3, 64))
			if err := cmd.Start(); err != nil {
				fmt.Fprintf(os.Stderr, "perf stat: %v\n", err)
				continue
			}
			cmds = append(cmds, cmd)
		}
		return func() {
			for _, cmd := range cmds {
				if err := cmd.Wait(); err != nil {
					fmt.Fprintf(os.Stderr, "perf stat: %v\n", err)
				}
			}
		}
	}
}

// Recorders are where the -trace-dir and -perf-stat-dir flags ask a
// benchmark to record each cell's window (WindowTrace, WindowPerfStat);
// empty for none.
type Recorders struct {
	TraceDir, PerfStatDir string
}

// RecorderFlags defines -trace-dir and -perf-stat-dir on fs.
func RecorderFlags(fs *flag.FlagSet) *Recorders {
	r := &Recorders{}
	fs.StringVar(&r.TraceDir, "trace-dir", "", "write an execution trace of each cell's window (client process) into this directory, "+
		"one file per cell (scripts/trace-events.sh counts its events per operation)")
	fs.StringVar(&r.PerfStatDir, "perf-stat-dir", "", "count system calls, context switches and wake-ups with `perf stat` during each "+
		"cell's window, in the client and in the server processes, into this directory (needs perf and root)")
	return r
}

// Observe returns a Cell.Observe that records the window into files named
// after the cell (name), or nil when r records nothing.
func (r *Recorders) Observe(name string, window time.Duration, serverPIDs []int) func() (stop func()) {
	var obs []func() func()
	if r.TraceDir != "" {
		obs = append(obs, WindowTrace(filepath.Join(r.TraceDir, name+".trace")))
	}
	if r.PerfStatDir != "" {
		obs = append(obs, WindowPerfStat(filepath.Join(r.PerfStatDir, name), window, serverPIDs))
	}
	if len(obs) == 0 {
		return nil
	}
	return func() func() {
		stops := make([]func(), len(obs))
		for i, o := range obs {
			stops[i] = o()
		}
		return func() {
			for _, stop := range stops {
				stop()
			}
		}
	}
}
