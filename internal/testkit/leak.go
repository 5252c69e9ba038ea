package testkit

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Resources is a snapshot of what a test could leak or grow: goroutines,
// open file descriptors (sockets included) and live heap.
type Resources struct {
	Goroutines int
	FDs        int    // entries of /proc/self/fd; -1 where that cannot be read
	HeapBytes  uint64 // runtime.MemStats.HeapAlloc just after a GC
}

func (r Resources) String() string {
	return fmt.Sprintf("%d goroutines, %d fds, %d heap bytes", r.Goroutines, r.FDs, r.HeapBytes)
}

// Tolerance is how far above a baseline each resource may end. A negative
// field skips that check; the zero value allows no growth at all.
type Tolerance struct {
	Goroutines int
	FDs        int
	HeapBytes  int64
}

// Snapshot returns the current resources. It runs a garbage collection
// first, so the heap figure is what is live.
func Snapshot() Resources {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return Resources{
		Goroutines: runtime.NumGoroutine(),
		FDs:        countFDs(),
		HeapBytes:  ms.HeapAlloc,
	}
}

// countFDs counts the process's open descriptors, not counting the one used
// to list them.
func countFDs() int {
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		return -1
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return -1
	}
	return len(names) - 1
}

// excess describes each resource of r above base by more than tol, with
// what helps to find the leak; "" if there is none.
func (r Resources) excess(base Resources, tol Tolerance) string {
	var b strings.Builder
	if tol.Goroutines >= 0 && r.Goroutines > base.Goroutines+tol.Goroutines {
		fmt.Fprintf(&b, "goroutines: %d, baseline %d + tolerance %d\n", r.Goroutines, base.Goroutines, tol.Goroutines)
	}
	if tol.FDs >= 0 && r.FDs >= 0 && base.FDs >= 0 && r.FDs > base.FDs+tol.FDs {
		fmt.Fprintf(&b, "open fds: %d, baseline %d + tolerance %d\n", r.FDs, base.FDs, tol.FDs)
	}
	if tol.HeapBytes >= 0 && int64(r.HeapBytes) > int64(base.HeapBytes)+tol.HeapBytes {
		fmt.Fprintf(&b, "live heap: %d bytes, baseline %d + tolerance %d\n", r.HeapBytes, base.HeapBytes, tol.HeapBytes)
	}
	return b.String()
}

// CheckBaseline returns nil once the process's resources are back within
// tol of base, checking repeatedly for up to within (goroutines and
// descriptors take a moment to unwind after a Close). Otherwise it returns
// an error naming what stayed above, with the goroutine stacks or open
// descriptors to look at.
func CheckBaseline(base Resources, tol Tolerance, within time.Duration) error {
	deadline := time.Now().Add(within)
	pause := time.Millisecond
	for {
		now := Snapshot()
		msg := now.excess(base, tol)
		if msg == "" {
			return nil
		}
		if !time.Now().Before(deadline) {
			if tol.Goroutines >= 0 && now.Goroutines > base.Goroutines+tol.Goroutines {
				msg += "\n" + goroutineDump()
			}
			if tol.FDs >= 0 && now.FDs > base.FDs+tol.FDs {
				msg += "\n" + fdList()
			}
			return errors.New("testkit: resources above baseline after " + within.String() + ":\n" + msg)
		}
		// Unwinding has no completion event to wait for; poll with backoff.
		time.Sleep(min(pause, time.Until(deadline)))
		pause = min(2*pause, 50*time.Millisecond)
	}
}

// ExpectBaseline fails the test unless CheckBaseline succeeds, e.g.
//
//	base := testkit.Snapshot()
//	// ... open and close clients ...
//	testkit.ExpectBaseline(t, base, testkit.Tolerance{Goroutines: 5, FDs: 3, HeapBytes: 8 << 20}, 5*time.Second)
func ExpectBaseline(tb testing.TB, base Resources, tol Tolerance, within time.Duration) {
	tb.Helper()
	if err := CheckBaseline(base, tol, within); err != nil {
		tb.Error(err)
	}
}

func goroutineDump() string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	return "goroutines:\n" + string(buf)
}

func fdList() string {
	names, err := filepath.Glob("/proc/self/fd/*")
	if err != nil {
		return ""
	}
	sort.Slice(names, func(i, j int) bool {
		a, _ := strconv.Atoi(filepath.Base(names[i]))
		b, _ := strconv.Atoi(filepath.Base(names[j]))
		return a < b
	})
	var b strings.Builder
	b.WriteString("open fds:\n")
	for _, n := range names {
		target, err := os.Readlink(n)
		if err != nil {
			continue // the descriptor Glob used, now closed
		}
		fmt.Fprintf(&b, "  %s -> %s\n", filepath.Base(n), target)
	}
	return b.String()
}
