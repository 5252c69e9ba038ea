package zipline

import (
	"math/bits"
	"sync/atomic"
	"time"

	"github.com/ziplinekv/zipline/internal/pipe"
)

// This file holds a server's solo connections: a few more connections
// beside the shared one, each lent to one caller at a time while callers
// are few.
//
// Why: a caller alone on a pipelined connection writes its request and
// reads the reply on its own goroutine (internal/pipe/ownread.go), as on a
// pool's connection. With a handful of callers on one connection they are
// rarely alone: each waits for the reader goroutine to read its reply and
// hand it over, a wake-up that a pool's caller never pays. At 8 callers
// that hand-off made a pool of 8 connections 1.2-1.3x faster than one
// pipelined connection (bench/RESULTS.md section 1). Under load the shared
// connection's batching wins instead: once its writer gathers batches, no
// solo connection is lent, and every caller shares the pipelined
// connection as before. They are off by default (Options.SoloConns 0):
// since the shared connection's reader was made cheaper to wake, 8
// callers do 8-26 % better on it alone, with idle CPUs sleeping or
// polled, and 45 % better beside CPU-bound processes, where a request per
// system call on each side costs most (bench/RESULTS.md section 1).

// soloConns are a server's solo connections. The zero value (or nil) has
// none, and take always gives the shared pipe.
type soloConns struct {
	// free has bit i set while solo connection i is open and not lent.
	// It is the only word callers touch: one load when none is free.
	free atomic.Uint64
	// full: want are open, so take never needs grow's lock again.
	full  atomic.Bool
	conns [maxSoloConns]atomic.Pointer[pipe.Pipe]

	want int // how many may open (Options.SoloConns)

	// dialer opens them; its mu also guards open, sweeper, calls and
	// retired.
	dialer sideDialer
	open   int // solo connections dialled and not closed

	// A solo connection that idles for idleAfter is closed (see sweep):
	// sweeper runs the check while any is open, calls holds the requests
	// each had written at the last check, and retired the counters of
	// those closed, which Stats keep.
	idleAfter time.Duration
	sweeper   *time.Timer
	calls     [maxSoloConns]uint64
	retired   Stats
}

// maxSoloConns bounds Options.SoloConns: free is one 64-bit word.
const maxSoloConns = 64

// soloIdleAfter is how long a solo connection may go unused before it is
// closed: callers that overlapped once (a burst, a deploy's warm-up) do
// not keep the server's connections, and the client's memory, for good.
const soloIdleAfter = time.Minute

// idleCalls is how many requests a solo connection writes in idleAfter
// when nobody uses it: its health checks.
func (s *soloConns) idleCalls() uint64 {
	if hc := s.dialer.opts.HealthCheckInterval; hc > 0 {
		return uint64(s.idleAfter/hc) + 1
	}
	return 0
}

func newSoloConns(opts pipe.Options, want int) *soloConns {
	if want <= 0 {
		return nil
	}
	return &soloConns{want: min(want, maxSoloConns), idleAfter: soloIdleAfter, dialer: newSideDialer(opts, "solo connection")}
}

// take lends a free, connected solo connection to the caller, who gives it
// back with give(i). It returns (nil, -1) when none is free, or when the
// shared connection has so many callers that it gathers batches: the
// caller then uses the shared connection. When none is free and the
// shared one is busy, another solo connection is opened in the
// background, up to want.
func (s *soloConns) take(shared *pipe.Pipe) (*pipe.Pipe, int) {
	if s == nil {
		return nil, -1
	}
	if shared.Gathering() {
		// So many callers share the connection that its writer gathers
		// their requests: batching serves them best, where a caller on a
		// connection of its own costs the server a read and a write for
		// each request (with solo connections lent at 64 and 512 callers,
		// throughput fell by 6-39 %: bench/RESULTS.md). Nor is another
		// opened then.
		return nil, -1
	}
	for range 4 { // a lost race for a bit tries the next; then share
		m := s.free.Load()
		if m == 0 {
			if !s.full.Load() {
				s.grow(shared)
			}
			return nil, -1
		}
		i := bits.TrailingZeros64(m)
		if !s.free.CompareAndSwap(m, m&^(1<<i)) {
			continue
		}
		// A bit is set only once its connection is stored (dial).
		if p := s.conns[i].Load(); p.Connected() {
			return p, i
		}
		// Reconnecting: leave it out until it is back.
		s.give(i)
		return nil, -1
	}
	return nil, -1
}

// give returns solo connection i after take.
func (s *soloConns) give(i int) { s.free.Or(1 << i) }

// grow opens one more solo connection in the background if fewer than
// want are open and the shared connection has requests in flight, so
// that a lone caller never opens any.
func (s *soloConns) grow(shared *pipe.Pipe) {
	if !s.dialer.mu.TryLock() {
		return // another caller is deciding, or a dial is being stored
	}
	defer s.dialer.mu.Unlock()
	if s.open >= s.want || !s.dialer.ready() || shared.InFlight()+int64(shared.Queued()) == 0 {
		return
	}
	s.dialer.start(s.keep)
}

// keep takes a dialled solo connection into service. The dialer's mu is
// held.
func (s *soloConns) keep(p *pipe.Pipe) {
	i := s.open
	s.open++
	s.conns[i].Store(p)
	s.calls[i] = 0
	s.full.Store(s.open >= s.want)
	if s.sweeper == nil {
		s.sweeper = time.AfterFunc(s.idleAfter, s.sweep)
	}
	s.give(i)
}

// sweep closes the solo connections that went unused since the last
// sweep, the last opened first: take lends the lowest free one, so the
// last opened is the least used, and the connections stay numbered from
// 0. One lent out, or used, ends the sweep. It runs again while any is
// open.
func (s *soloConns) sweep() {
	var idle []*pipe.Pipe
	s.dialer.mu.Lock()
	for s.open > 0 && !s.dialer.closed {
		i := s.open - 1
		p := s.conns[i].Load()
		if calls := p.Stats().Calls.Load(); calls-s.calls[i] > s.idleCalls() {
			break
		}
		m := s.free.Load()
		if m&(1<<i) == 0 {
			break // lent out
		}
		if !s.free.CompareAndSwap(m, m&^(1<<i)) {
			continue // another bit changed: look again
		}
		s.retired.addCounts(p)
		s.conns[i].Store(nil)
		s.open--
		s.full.Store(false)
		idle = append(idle, p)
	}
	for i := range s.open {
		s.calls[i] = s.conns[i].Load().Stats().Calls.Load()
	}
	if s.open > 0 && !s.dialer.closed {
		s.sweeper.Reset(s.idleAfter)
	} else {
		s.sweeper = nil
	}
	s.dialer.mu.Unlock()
	for _, p := range idle {
		p.Close()
	}
}

// close closes the solo connections; those lent out finish their request
// first (pipe.Close drains).
func (s *soloConns) close() {
	if s == nil {
		return
	}
	s.dialer.close(func() {
		if s.sweeper != nil {
			s.sweeper.Stop()
		}
	})
	n := s.open // no dial changes it after closed
	for i := range n {
		s.conns[i].Load().Close()
	}
}

// stats adds the solo connections' counters to st.
func (s *soloConns) stats(st *Stats) {
	if s == nil {
		return
	}
	s.dialer.mu.Lock()
	defer s.dialer.mu.Unlock()
	st.addRetired(&s.retired)
	for i := range s.open {
		st.addPipe(s.conns[i].Load())
		st.SoloOpen++
	}
}
