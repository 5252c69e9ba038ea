package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// progressLineEvery is how often a progress report is written where
// standard error is not a terminal (a file, a pipe, a CI log): one plain
// line at most this often, where a terminal gets a bar redrawn in place.
const progressLineEvery = 10 * time.Second

// progress reports how far a long pass over keys has come, on standard
// error. On a terminal it redraws one bar in place; anywhere else it
// writes a plain line at most every progressLineEvery, so that a log or a
// script's output holds a few lines, not thousands of carriage-return
// frames; with quiet it writes nothing. The zero of a nil *progress is
// quiet too.
type progress struct {
	mu       sync.Mutex // the pass reports and the logger writes from several goroutines
	out      io.Writer
	terminal bool
	what     string    // what is counted: "keys"
	start    time.Time // of the pass
	last     time.Time // of the last line written (not on a terminal)
	drawn    bool      // a bar is on the screen, to end with a newline
}

// newProgress returns the reporter for a pass counting what on out;
// nil (silent) when quiet.
func newProgress(out *os.File, what string, quiet bool) *progress {
	if quiet {
		return nil
	}
	return &progress{out: out, terminal: isTerminal(out), what: what, start: time.Now()}
}

// isTerminal says whether f is a terminal (a character device; /dev/null is
// one too, where a bar costs nothing).
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// quietFlag defines -q, the flag that silences progress reports.
func quietFlag(fs *flag.FlagSet) *bool {
	q := fs.Bool("q", false, "no progress reports on standard error (without a terminal there, a line every 10 s)")
	fs.BoolVar(q, "quiet", false, "the same as -q")
	return q
}

// update reports done of total (total 0: unknown); eta < 0 means unknown.
func (p *progress) update(done, total int64, eta time.Duration) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	elapsed := time.Since(p.start)
	rate := float64(done) / max(elapsed.Seconds(), 1e-3)
	if eta < 0 && rate > 0 && total > done {
		eta = time.Duration(float64(total-done)/rate) * time.Second
	}
	etaText := "?"
	if eta >= 0 {
		etaText = eta.Round(time.Second).String()
	}
	frac := 1.0
	if total > 0 {
		frac = min(float64(done)/float64(total), 1)
	}
	if !p.terminal {
		now := time.Now()
		if !p.last.IsZero() && now.Sub(p.last) < progressLineEvery {
			return
		}
		p.last = now
		fmt.Fprintf(p.out, "%3.0f%% %d/%d %s  %.0f %s/s  ETA %s\n", 100*frac, done, total, p.what, rate, p.what, etaText)
		return
	}
	const width = 30
	filled := int(frac * width)
	fmt.Fprintf(p.out, "\r[%s%s] %3.0f%% %d/%d %s  %.0f %s/s  ETA %s ", strings.Repeat("#", filled),
		strings.Repeat(".", width-filled), 100*frac, done, total, p.what, rate, p.what, etaText)
	p.drawn = true
}

// finish ends the bar's line, so that what follows starts on a line of its
// own.
func (p *progress) finish() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.endBar()
}

func (p *progress) endBar() {
	if p.drawn {
		fmt.Fprintln(p.out)
		p.drawn = false
	}
}

// Write writes b (a log record) on a line of its own, never inside the
// bar: a logger for the pass writes through it.
func (p *progress) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.endBar()
	return p.out.Write(b)
}
