package zipline

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ziplinekv/zipline/internal/pipe"
)

// dedicatedPool lends connections that serve one caller at a time: for
// blocking commands, Watch and Dedicated. They never reconnect on their
// own (a silent reconnect would drop WATCH state); a broken one is dropped
// and the next caller gets a fresh one.
type dedicatedPool struct {
	s     *shared
	slots chan struct{} // one token per open connection, idle or lent
	mu    sync.Mutex
	idle  []*pipe.Pipe
	done  bool
}

func newDedicatedPool(s *shared) *dedicatedPool {
	return &dedicatedPool{s: s, slots: make(chan struct{}, s.opts.MaxDedicatedConns)}
}

// get returns an idle connection or dials a new one, waiting for a free
// slot up to ctx.
func (d *dedicatedPool) get(ctx context.Context) (*pipe.Pipe, error) {
	for {
		d.mu.Lock()
		if d.done {
			d.mu.Unlock()
			return nil, fmt.Errorf("%w (%w)", ErrClosed, ErrNotSent)
		}
		if n := len(d.idle); n > 0 {
			p := d.idle[n-1]
			d.idle = d.idle[:n-1]
			d.mu.Unlock()
			if p.Closed() { // lost while idle
				p.Abort()
				<-d.slots
				continue
			}
			return p, nil
		}
		d.mu.Unlock()
		break
	}
	select {
	case d.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("zipline: waiting for a dedicated connection: %w", ctx.Err())
	}
	opts := d.s.pipeOpts
	opts.NoReconnect = true
	// A blocking command may legitimately wait longer than any I/O
	// timeout; the caller's context bounds it instead.
	opts.IOTimeout = 0
	opts.WaitForReconnect = false
	dctx, cancel := context.WithTimeout(ctx, d.s.opts.DialTimeout)
	defer cancel()
	p, err := pipe.New(dctx, opts)
	if err != nil {
		<-d.slots
		return nil, fmt.Errorf("%w (%w)", connectError(d.s.opts.Addr, err), ErrNotSent)
	}
	return p, nil
}

// put takes a connection back. One that may hold a pending reply or
// changed state is closed instead of kept.
func (d *dedicatedPool) put(p *pipe.Pipe, reusable bool) {
	d.mu.Lock()
	keep := reusable && !d.done && len(d.idle) < d.s.opts.MaxIdleDedicated && !p.Closed()
	if keep {
		d.idle = append(d.idle, p)
	}
	d.mu.Unlock()
	if !keep {
		p.Abort()
		<-d.slots
	}
}

// do runs a call on a borrowed connection. If the caller's context ends
// first, the connection is closed: the server stops waiting (say, in BLPOP)
// and nobody else can receive the abandoned reply.
func (d *dedicatedPool) do(ctx context.Context, call *pipe.Call) error {
	p, err := d.get(ctx)
	if err != nil {
		call.Release()
		return err
	}
	err = p.Do(ctx, call)
	d.put(p, err == nil)
	return err
}

func (d *dedicatedPool) close() {
	d.mu.Lock()
	d.done = true
	idle := d.idle
	d.idle = nil
	d.mu.Unlock()
	for _, p := range idle {
		p.Abort()
		<-d.slots
	}
}

// Dedicated returns a Client bound to a connection of its own, borrowed
// from the pool of dedicated connections. Every command on it, blocking or
// not, runs on that connection, and commands that change connection state
// (SELECT, CLIENT TRACKING, MULTI...) are allowed. Close returns the
// connection to the pool, or closes it if its state changed.
//
// Use it for a sequence of commands that must share a connection; for
// blocking commands alone the shared Client already borrows one per call.
func (c *Client) Dedicated(ctx context.Context) (*Client, error) {
	if c.lease != nil {
		return nil, errors.New("zipline: Dedicated called on a dedicated Client")
	}
	p, err := c.s.dedicated.get(ctx)
	if err != nil {
		return nil, err
	}
	return &Client{pipe: c.pipe, s: c.s, codec: c.codec, lease: &lease{pool: c.s.dedicated, p: p}}, nil
}

// Watch runs fn for an optimistic transaction: it WATCHes keys on a
// dedicated connection and passes fn a Client bound to it. fn reads what it
// needs, then queues its writes in tx := cl.Tx() and calls tx.Exec. If a
// watched key changed in between, Exec fails with ErrTxFailed and nothing
// was written; retry by calling Watch again.
//
// Watch returns fn's error. The keys are unwatched when fn returns, whether
// or not it ran a transaction.
func (c *Client) Watch(ctx context.Context, fn func(cl *Client) error, keys ...string) error {
	if len(keys) == 0 {
		return errors.New("zipline: Watch needs at least one key")
	}
	cl := c
	if c.lease == nil {
		var err error
		if cl, err = c.Dedicated(ctx); err != nil {
			return err
		}
		defer cl.Close()
	}
	if _, err := do(ctx, cl, decOK, "WATCH", strs(keys)...); err != nil {
		return err
	}
	err := fn(cl)
	// EXEC already unwatched; UNWATCH covers fn returning early. If it
	// cannot be sent the lease is dirty and the connection is dropped.
	uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	if _, uerr := do(uctx, cl, decOK, "UNWATCH"); uerr != nil && cl.lease != nil {
		cl.lease.dirty.Store(true)
	}
	return err
}
