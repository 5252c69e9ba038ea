package zipline

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/ziplinekv/zipline/internal/pipe"
)

// dedicatedPool lends connections that serve one caller at a time: for
// blocking commands, Watch and Dedicated. They never reconnect on their
// own (a silent reconnect would drop WATCH state); a broken one is dropped
// and the next caller gets a fresh one. They keep the client's I/O timeout,
// extended for a blocking command by how long it may wait server-side.
type dedicatedPool struct {
	s     *shared
	opts  pipe.Options
	addr  string
	slots chan struct{} // one token per open connection, idle or lent
	mu    sync.Mutex
	idle  []*pipe.Pipe
	lent  map[*pipe.Pipe]struct{}
	done  bool
}

func newDedicatedPool(s *shared, opts pipe.Options, addr string) *dedicatedPool {
	opts.NoReconnect = true
	opts.WaitForReconnect = false
	opts.OnConnect, opts.OnDisconnect, opts.Push = nil, nil, nil
	return &dedicatedPool{
		s: s, opts: opts, addr: addr,
		slots: make(chan struct{}, s.opts.MaxDedicatedConns),
		lent:  make(map[*pipe.Pipe]struct{}),
	}
}

// get returns an idle connection or dials a new one, waiting for a free
// slot up to ctx. Its errors match ErrNotSent.
func (d *dedicatedPool) get(ctx context.Context) (*pipe.Pipe, error) {
	for {
		d.mu.Lock()
		if d.done {
			d.mu.Unlock()
			return nil, fmt.Errorf("%w (%w)", ErrClosed, ErrNotSent)
		}
		n := len(d.idle)
		if n == 0 {
			d.mu.Unlock()
			break
		}
		p := d.idle[n-1]
		d.idle = d.idle[:n-1]
		if p.Closed() { // lost while idle
			d.mu.Unlock()
			p.Abort()
			<-d.slots
			continue
		}
		d.lent[p] = struct{}{}
		d.mu.Unlock()
		// Credentials renewed while it was idle: authenticate it again
		// before it is lent (it was left out of the renewal, see
		// pipe.Credentials); one that cannot is dropped for a fresh one.
		if c := d.opts.Credentials; c != nil {
			if err := c.Refresh(ctx, p); err != nil {
				d.mu.Lock()
				delete(d.lent, p)
				d.mu.Unlock()
				p.Abort()
				<-d.slots
				continue
			}
		}
		return p, nil
	}
	select {
	case d.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("zipline: waiting for a dedicated connection: %w (%w)", ctx.Err(), ErrNotSent)
	}
	dctx, cancel := context.WithTimeout(ctx, d.s.opts.DialTimeout)
	defer cancel()
	p, err := pipe.New(dctx, d.opts)
	if err != nil {
		<-d.slots
		return nil, fmt.Errorf("%w (%w)", connectError(d.addr, err), ErrNotSent)
	}
	d.mu.Lock()
	if d.done { // Close ran while we dialled
		d.mu.Unlock()
		p.Abort()
		<-d.slots
		return nil, fmt.Errorf("%w (%w)", ErrClosed, ErrNotSent)
	}
	d.lent[p] = struct{}{}
	d.mu.Unlock()
	return p, nil
}

// put takes a connection back. One that may hold a pending reply or
// changed state is closed instead of kept.
func (d *dedicatedPool) put(p *pipe.Pipe, reusable bool) {
	d.mu.Lock()
	delete(d.lent, p)
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

// send runs a request on a borrowed connection. If the caller's context
// ends first, the connection is closed: the server stops waiting (say, in
// BLPOP) and nobody else can receive the abandoned reply.
func (d *dedicatedPool) send(ctx context.Context, r *request) error {
	p, err := d.get(ctx)
	if err != nil {
		return err
	}
	err = r.sendOn(ctx, p)
	d.put(p, err == nil)
	return err
}

func (d *dedicatedPool) lease(ctx context.Context) (*lease, error) {
	p, err := d.get(ctx)
	if err != nil {
		return nil, err
	}
	return &lease{pool: d, p: p}, nil
}

// stats counts the dedicated connections open and lent out.
func (d *dedicatedPool) stats() (open, lent int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.slots), len(d.lent)
}

// close closes idle connections and interrupts lent ones: their commands
// fail with ErrClosed, and their holders' later Close finds them gone.
func (d *dedicatedPool) close() {
	d.mu.Lock()
	d.done = true
	idle := d.idle
	d.idle = nil
	lent := make([]*pipe.Pipe, 0, len(d.lent))
	for p := range d.lent {
		lent = append(lent, p)
	}
	d.mu.Unlock()
	for _, p := range idle {
		p.Abort()
		<-d.slots
	}
	for _, p := range lent {
		p.Abort() // put, called by the holder, gives the slot back
	}
}

// lease is a dedicated connection lent to one Client until Close: the
// carrier of a Client from Dedicated or Watch.
type lease struct {
	pool *dedicatedPool
	p    *pipe.Pipe
	// mu keeps Close from returning the connection while a command runs.
	mu       sync.RWMutex
	released bool
	// dirty: its state changed (SELECT, CLIENT TRACKING...) or a command
	// failed in a way that may leave a reply pending; it is not reused.
	dirty atomic.Bool
}

var _ carrier = (*lease)(nil)

// send runs r on the leased connection, blocking commands included. A
// request abandoned after it was written closes the connection, as on the
// shared Client: a BLPOP would otherwise still pop an element for nobody.
// The lease is then dead, and later commands on it fail.
func (l *lease) send(ctx context.Context, r *request) error {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.released {
		return fmt.Errorf("zipline: dedicated connection already released: %w (%w)", ErrClosed, ErrNotSent)
	}
	err := r.sendOn(ctx, l.p)
	if err != nil && !errors.Is(err, ErrNotSent) {
		l.dirty.Store(true)
		l.p.Abort()
	}
	return err
}

func (l *lease) lease(context.Context) (carrier, error) {
	return nil, errors.New("zipline: Dedicated called on a dedicated Client")
}

// watch runs on the lent connection itself: Watch on a Client from
// Dedicated.
func (l *lease) watch(_ context.Context, _ []string, run func(carrier) error) error { return run(l) }

func (l *lease) eachShard(_ bool, fn func(carrier) error) error { return fn(l) }

func (l *lease) serving(int32) endpoint { return endpoint{} }

func (l *lease) changes() <-chan struct{} { return nil }

func (l *lease) refresh() {}

func (l *lease) taint() { l.dirty.Store(true) }

func (l *lease) protocol() int { return l.p.Protocol() }

func (l *lease) stats(st *Stats) { st.addPipe(l.p) }

// close gives the connection back to the pool, or closes it if its state
// changed.
func (l *lease) close() error {
	l.mu.Lock()
	if l.released {
		l.mu.Unlock()
		return nil
	}
	l.released = true
	l.mu.Unlock()
	l.pool.put(l.p, !l.dirty.Load())
	return nil
}
