package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/fanout"
)

// hubReady is a hub process's first line: where it serves.
type hubReady struct {
	URL  string `json:"url"`
	Addr string `json:"addr"`
}

// hubStats is a hub process's answer to "stats": the hub's and its
// source's counters, its CPU time and its memory as it is (no collection
// forced).
type hubStats struct {
	fanout.Stats
	Relay      fanout.RelayStats
	Sharded    fanout.ShardedStats
	Subscribed int64 // channels the source has confirmed (Add returned nil), less those removed
	AddCalls   int64 // Add calls from the relay, and their time
	AddErrors  int64
	AddTotal   time.Duration
	AddMax     time.Duration
	CPU        time.Duration // user + system, the whole process
	Goroutines int
	Mem        memFigures
	NumGC      uint32        // garbage collections so far
	GCPause    time.Duration // their stop-the-world pauses in all
}

// memFigures is a process's memory at one moment.
type memFigures struct {
	HeapInuse  uint64
	StackInuse uint64
	Sys        uint64 // what the Go runtime holds from the OS
	RSS        uint64 // VmRSS
}

// hubMem is a hub's answer to "mem": its memory before any connection and
// now, both after a full collection with memory returned to the OS.
type hubMem struct {
	Conns         int
	Before, After memFigures
}

// countingSource is the hub's ShardedSource, counting the channels it has
// confirmed and timing the subscription changes the relay makes: the
// coordinator waits until every hub's source holds every channel.
type countingSource struct {
	*fanout.ShardedSource
	subscribed, calls, errs atomic.Int64
	total, longest          atomic.Int64 // nanoseconds
}

func (s *countingSource) Add(ctx context.Context, channels ...string) error {
	start := time.Now()
	err := s.ShardedSource.Add(ctx, channels...)
	d := int64(time.Since(start))
	s.calls.Add(1)
	s.total.Add(d)
	for {
		m := s.longest.Load()
		if d <= m || s.longest.CompareAndSwap(m, d) {
			break
		}
	}
	if err != nil {
		s.errs.Add(1)
		return err
	}
	s.subscribed.Add(int64(len(channels)))
	return nil
}

func (s *countingSource) Remove(ctx context.Context, channels ...string) error {
	err := s.ShardedSource.Remove(ctx, channels...)
	if err == nil {
		s.subscribed.Add(-int64(len(channels)))
	}
	return err
}

// runHub is a hub process: a zipline cluster client, a fanout hub fed by
// a ShardedSource through Relay, served at /ws on a free loopback port.
// compressionMode parses -compression.
func compressionMode(name string) (fanout.Compression, error) {
	for _, m := range []fanout.Compression{fanout.Shared, fanout.Stateless, fanout.Off} {
		if m.String() == name {
			return m, nil
		}
	}
	return 0, fmt.Errorf("-compression %q: want shared, stateless or off", name)
}

func runHub(index int, seeds []string, compression, profile string) error {
	signal.Ignore(os.Interrupt, syscall.SIGHUP) // the coordinator decides when to stop
	if profile != "" {
		f, err := os.Create(profile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	logger := warnLogger("hub " + strconv.Itoa(index))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	client, err := zipline.New(zipline.Options{Addrs: seeds, Logger: logger})
	if err != nil {
		return fmt.Errorf("hub %d: %w", index, err)
	}
	defer client.Close()
	mode, err := compressionMode(compression)
	if err != nil {
		return err
	}
	hub := fanout.New(fanout.Options{Compression: mode, Logger: logger}) // Shared unless -compression says otherwise
	parts, err := fanout.NewPartitions(0, "")
	if err != nil {
		return err
	}
	sharded, err := fanout.NewShardedSource(ctx, client, parts, fanout.ShardedOptions{Logger: logger})
	if err != nil {
		return fmt.Errorf("hub %d: %w", index, err)
	}
	src := &countingSource{ShardedSource: sharded}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/ws", hub)
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          log.New(os.Stderr, fmt.Sprintf("hub %d: http: ", index), 0),
	}
	go srv.Serve(ln)
	var relaying sync.WaitGroup
	relaying.Go(func() {
		if err := hub.Relay(ctx, src); err != nil && !errors.Is(err, context.Canceled) {
			logger.Warn("relay ended", "err", err)
		}
	})

	// The fixed costs are in place; no connection has arrived yet.
	before := measureMem()
	out := bufio.NewWriter(os.Stdout)
	reply(out, hubReady{URL: "ws://" + ln.Addr().String() + "/ws", Addr: ln.Addr().String()}, nil)

	serveCommands(func(command string) (any, error) {
		switch command {
		case "stats":
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			return hubStats{
				Stats: hub.Stats(), Relay: hub.RelayStats(), Sharded: sharded.Stats(),
				Subscribed: src.subscribed.Load(), AddCalls: src.calls.Load(), AddErrors: src.errs.Load(),
				AddTotal: time.Duration(src.total.Load()), AddMax: time.Duration(src.longest.Load()),
				CPU: cpuTime(), Goroutines: runtime.NumGoroutine(),
				Mem:   memFigures{HeapInuse: m.HeapInuse, StackInuse: m.StackInuse, Sys: m.Sys, RSS: rss()},
				NumGC: m.NumGC, GCPause: time.Duration(m.PauseTotalNs),
			}, nil
		case "mem":
			after := measureMem()
			return hubMem{Conns: hub.Stats().Conns, Before: before, After: after}, nil
		case "quit":
			sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer scancel()
			hub.Shutdown(sctx)
			srv.Close()
			cancel()
			relaying.Wait()
			sharded.Close()
			return nil, nil
		}
		return nil, errUnknown(command)
	})
	return nil
}

// measureMem collects garbage, returns freed memory to the OS, and reads
// the process's memory: the live heap and stacks, and RSS without garbage
// or memory the runtime merely keeps.
func measureMem() memFigures {
	runtime.GC()
	debug.FreeOSMemory()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return memFigures{HeapInuse: m.HeapInuse, StackInuse: m.StackInuse, Sys: m.Sys, RSS: rss()}
}

// rss returns VmRSS from /proc/self/status, in bytes, or 0.
func rss() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(v)
			if len(f) > 0 {
				kb, _ := strconv.ParseUint(f[0], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}

// cpuTime returns the user plus system CPU time of this process.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
