package zipline

import (
	"cmp"
	"context"
	"sync"
	"time"

	"github.com/ziplinekv/zipline/internal/pipe"
)

// sideDialer opens the connections a server's direct keeps beside its
// shared one (the solo connections, the bulk lane) in the background, one
// at a time, so that no caller waits for a handshake: the caller that
// starts a dial goes on with the shared connection. After a failed dial
// the next waits sideRedialAfter, so a server that refuses connections is
// not asked again on every request.
//
// mu guards the dialer's state and its owner's record of the connections
// it keeps: keep runs under it, and close's owner reads that record
// after close, when no dial changes it any more.
type sideDialer struct {
	opts pipe.Options // how to dial: the shared connection's, untracked
	what string       // for the log: "solo connection", "bulk connection"

	mu      sync.Mutex
	dialing bool      // one is being dialled
	failed  time.Time // when the last dial failed
	closed  bool
	// life ends at close, cancelling a dial under way, which close waits
	// for (dials).
	life   context.Context
	cancel context.CancelFunc
	dials  sync.WaitGroup
}

// sideRedialAfter is how long a failed dial keeps others from starting.
const sideRedialAfter = time.Second

func newSideDialer(opts pipe.Options, what string) sideDialer {
	life, cancel := context.WithCancel(context.Background())
	return sideDialer{opts: opts, what: what, life: life, cancel: cancel}
}

// ready reports whether a dial may start now. The caller holds mu.
func (d *sideDialer) ready() bool {
	return !d.dialing && !d.closed && time.Since(d.failed) >= sideRedialAfter
}

// start dials in the background; keep gets the connection under mu,
// unless the dialer was closed meanwhile (then the connection is closed).
// The caller holds mu and has checked ready.
func (d *sideDialer) start(keep func(*pipe.Pipe)) {
	d.dialing = true
	d.dials.Add(1)
	go func() {
		defer d.dials.Done()
		ctx, cancel := context.WithTimeout(d.life, cmp.Or(d.opts.HandshakeTimeout, DefaultDialTimeout))
		p, err := pipe.New(ctx, d.opts)
		cancel()
		d.mu.Lock()
		defer d.mu.Unlock()
		d.dialing = false
		switch {
		case err != nil:
			d.failed = time.Now()
			d.opts.Logger.Debug("zipline: "+d.what, "err", err)
		case d.closed:
			p.Close()
		default:
			keep(p)
		}
	}()
}

// close stops the dials, waiting for one under way; before it returns,
// stop runs under mu (nil: nothing to do), for the owner's own timers.
func (d *sideDialer) close(stop func()) {
	d.mu.Lock()
	d.closed = true
	if stop != nil {
		stop()
	}
	d.mu.Unlock()
	d.cancel()
	d.dials.Wait()
}
