package harness

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"

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

	ctx  context.Context
	stop context.CancelFunc
}

// Begin begins a session of the benchmark named name (built with tags):
// it prints the command line on standard error, notes the machine, and
// makes the session's context end at an interrupt (Ctrl-C), so that what
// was measured until then is still reported.
func Begin(name, tags string) *Session {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
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
	for r := 1; r <= rounds; r++ {
		for k := range n {
			if s.ctx.Err() != nil {
				return
			}
			cell(r, (k+r-1)%n)
		}
	}
}

// End notes the machine after, writes the report with write to standard
// output and, when path is not empty, to path (Publish), and returns the
// interrupt's error if the session was interrupted.
func (s *Session) End(path string, write func(io.Writer)) error {
	defer s.stop()
	s.MachineAfter = sysstat.Machine()
	if err := Publish(path, write); err != nil {
		return err
	}
	return s.ctx.Err()
}
