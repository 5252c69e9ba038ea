package harness

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/ziplinekv/zipline/cmd/zipline/bench/sysstat"
)

// Session is the frame a benchmark main runs in: its command line (printed
// on standard error as it begins), the machine before and after, an
// interrupt that ends it early, and its cells in interleaved rounds. A main
// begins one, runs its cells through Interleave, and ends it with its
// report:
//
//	s := harness.Begin("rollingbench", "")
//	s.Interleave(o.rounds, len(o.clients), func(round, i int) { ... })
//	return s.End(o.out, rep.write)
type Session struct {
	// Command is the command line, to print in the report.
	Command string
	// MachineBefore and MachineAfter are the machine's description
	// (sysstat.Machine: CPUs, kernel, load average) at Begin and at End.
	MachineBefore, MachineAfter string

	ctx     context.Context
	stop    context.CancelFunc
	saveErr error // Save's first error, which End returns
}

// Begin begins a session of the benchmark named name (built with tags):
// it prints the command line on standard error, notes the machine, and
// makes the session's context end at the first interrupt (HandleSignals),
// so that the cell under way ends and what was measured is still
// reported; a second one aborts.
func Begin(name, tags string) *Session {
	ctx, stop := HandleSignals("after the current cell")
	s := &Session{Command: CommandLine(name, tags), MachineBefore: sysstat.Machine(), ctx: ctx, stop: stop}
	fmt.Fprintln(os.Stderr, s.Command)
	return s
}

// Context ends when the session is interrupted.
func (s *Session) Context() context.Context { return s.ctx }

// Interleave runs cell(round, i) for each of n variants, rounds times
// (round counts from 1). Each round starts one variant later than the one
// before, so that none always runs first, on a cold machine, or right
// after the same neighbour. It returns early once the session is
// interrupted, between cells.
func (s *Session) Interleave(rounds, n int, cell func(round, i int)) {
	s.Rounds(rounds, func(r int) { s.Rotated(r, n, func(i int) { cell(r, i) }) })
}

// Rounds runs round(r) for r from 1 to rounds, until the session is
// interrupted: for mains whose rounds do more than one pass over their
// variants (one per concurrency, say), each pass through Rotated.
func (s *Session) Rounds(rounds int, round func(r int)) {
	for r := 1; r <= rounds && !s.Stopped(); r++ {
		round(r)
	}
}

// Rotated runs cell(i) for each of n variants in round r's order (from
// variant r-1 on, round robin), until the session is interrupted.
func (s *Session) Rotated(r, n int, cell func(i int)) {
	for k := range n {
		if s.Stopped() {
			return
		}
		cell((k + r - 1) % n)
	}
}

// Stopped reports whether the session was interrupted.
func (s *Session) Stopped() bool { return s.ctx.Err() != nil }

// Save saves the report so far to path (nothing when path is empty), so
// that an interrupted or failed run keeps what it measured: mains call it
// after each round or cell. Its first error is End's.
func (s *Session) Save(path string, write func(io.Writer)) {
	if err := Save(path, write); err != nil && s.saveErr == nil {
		s.saveErr = err
	}
}

// End notes the machine after, writes the report with write to standard
// output and, when path is not empty, to path (Publish), and returns the
// first error of writing it (here or in Save), or else the interrupt's if
// the session was interrupted.
func (s *Session) End(path string, write func(io.Writer)) error {
	defer s.stop()
	s.MachineAfter = sysstat.Machine()
	if err := Publish(path, write); err != nil {
		return err
	}
	if s.saveErr != nil {
		return s.saveErr
	}
	return s.ctx.Err()
}
