package harness

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"sync"
	"syscall"
)

// aborts are what a second signal runs before the program exits (see
// HandleSignals). Signals are the process's, so the registry is too.
var aborts struct {
	sync.Mutex
	next int
	fns  []abortFn // in the order registered
}

type abortFn struct {
	id int
	f  func()
}

// AtAbort registers f to run if a second signal aborts the run (see
// HandleSignals), and returns the function that unregisters it: stopping
// servers or child processes that would otherwise outlive the program.
func AtAbort(f func()) (unregister func()) {
	aborts.Lock()
	defer aborts.Unlock()
	aborts.next++
	id := aborts.next
	aborts.fns = append(aborts.fns, abortFn{id, f})
	return func() {
		aborts.Lock()
		defer aborts.Unlock()
		aborts.fns = slices.DeleteFunc(aborts.fns, func(a abortFn) bool { return a.id == id })
	}
}

// HandleSignals returns a context that the first SIGINT, SIGTERM or SIGHUP
// ends, after saying "stopping: <stopping> (again to abort)": the run
// winds down through its deferred calls. A second signal runs what AtAbort
// registered, the newest first, and exits with status 2, should the
// orderly path be stuck. stop undoes it.
func HandleSignals(stopping string) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sigc := make(chan os.Signal, 2)
	signal.Notify(sigc, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		select {
		case <-done:
			return
		case sig := <-sigc:
			fmt.Fprintf(os.Stderr, "%v: stopping: %s (again to abort)\n", sig, stopping)
			cancel()
		}
		select {
		case <-done:
			return
		case <-sigc:
		}
		aborts.Lock()
		for i := len(aborts.fns) - 1; i >= 0; i-- {
			aborts.fns[i].f()
		}
		os.Exit(2)
	}()
	return ctx, func() { signal.Stop(sigc); close(done); cancel() }
}
