// Package pipe is one connection to one server with implicit pipelining.
//
// Any number of goroutines call Do at once. Their calls wait in a queue; a
// single writer goroutine takes everything queued and writes it in one
// system call, and a single reader goroutine parses the replies and hands
// each to its caller in FIFO order. Batching needs no timer: the writer
// flushes as soon as it finds work, so a lone request goes out at once, and
// under load requests pile up while the previous write is in the kernel, so
// batches grow by themselves.
//
// The pipe knows RESP and nothing about commands beyond connection set-up:
// callers hand it encoded bytes and a reply count. A caller whose context
// ends returns immediately; its reply is still read, and dropped, so the
// stream stays aligned. When the connection breaks, every request in flight
// fails with ErrConnLost (never retried: it may have run), and a supervisor
// redials with exponential backoff.
//
// A cluster router can own one Pipe per node; a subscriber can take push
// messages from the same reader through Options.OnPush.
package pipe

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ziplinekv/zipline/internal/resp"
)

// Options configure a Pipe. The root package fills in every default before
// calling New; zero values here mean "off".
type Options struct {
	// Dial opens a new network connection (TCP or TLS). Required.
	Dial func(ctx context.Context) (net.Conn, error)
	// Handshake settings, sent on every (re)connect.
	Protocol   int // 2 or 3; 0 tries RESP3 and falls back to RESP2
	Username   string
	Password   string
	DB         int
	ClientName string
	// HandshakeTimeout bounds dial plus set-up of one connection attempt.
	HandshakeTimeout time.Duration
	// IOTimeout declares the connection dead when a written request has
	// had no reply for this long, or a write blocks this long. 0 is off.
	IOTimeout time.Duration
	// HealthCheckInterval sends a PING after this much idle time, so a dead
	// peer is noticed before a request needs it. 0 is off.
	HealthCheckInterval time.Duration
	// MaxFlushDelay lets the writer wait this long after a write, when other
	// requests are in flight, to gather a bigger batch. 0 (the default in the
	// root package) flushes at once.
	MaxFlushDelay time.Duration
	// ReconnectBackoffMin and Max bound the wait between dial attempts.
	ReconnectBackoffMin, ReconnectBackoffMax time.Duration
	// WaitForReconnect queues requests made while disconnected until the
	// connection is back or their context ends; otherwise they fail at once
	// with ErrNotConnected.
	WaitForReconnect bool
	// NoReconnect makes the first connection loss final. Dedicated
	// connections use it: a silent reconnect would drop WATCH state.
	NoReconnect bool
	// OnPush receives RESP3 push messages, on the reader goroutine. Nil
	// drops them.
	OnPush func(resp.Value)
	// Limits bound every reply.
	Limits resp.Limits
	// ReadBufferSize is the initial read buffer; 0 means resp's default.
	ReadBufferSize int
	// Logger receives connection events. Nil discards them.
	Logger *slog.Logger
}

type connState int

const (
	stateConnected connState = iota
	stateDisconnected
	stateClosed
)

// Pipe is one pipelined connection. It is safe for concurrent use.
type Pipe struct {
	opts  Options
	log   *slog.Logger
	calls *sync.Pool

	mu    sync.Mutex
	queue []*Call // waiting for the writer
	spare []*Call // the writer's other queue slice, swapped in and out
	state connState
	// writerParked: the writer goroutine waits for a kick. directWriter: a
	// caller holds the writer's role and is writing its own request (see
	// enqueue). Only one of the two ever writes to the connection.
	writerParked bool
	directWriter bool
	active       *conn    // the connection being served, for direct writes
	lastErr      error    // why the connection went down
	conn         net.Conn // current connection, for Close to interrupt

	kick   chan struct{}   // wakes the parked writer; capacity 1
	life   context.Context // ends at Close: bounds dials and backoff waits
	cancel context.CancelFunc
	wg     sync.WaitGroup

	protocol atomic.Int32
	stats    Stats
	callers  atomic.Int64 // goroutines inside Do
	// gatherAbove: while more callers than this are inside Do, the writer
	// gathers batches (see gatherCallersPerProc).
	gatherAbove int64
}

// Stats are cumulative counters, updated by the writer and reader loops.
type Stats struct {
	Batches   atomic.Uint64 // writes to the connection
	Calls     atomic.Uint64 // calls written
	Reconnect atomic.Uint64 // successful reconnects
}

// New dials and sets up the first connection, then starts the loops. A
// failed first connection is returned as an error, so that a wrong address
// or password surfaces at start-up rather than on the first request.
func New(ctx context.Context, opts Options) (*Pipe, error) {
	if opts.Dial == nil {
		return nil, errors.New("pipe: Options.Dial is required")
	}
	p := &Pipe{
		opts:  opts,
		log:   opts.Logger,
		calls: newCallPool(),
		kick:  make(chan struct{}, 1),
		// Read once: a pipe serves one process, whose GOMAXPROCS rarely
		// changes after start-up.
		gatherAbove: int64(gatherCallersPerProc * runtime.GOMAXPROCS(0)),
	}
	p.life, p.cancel = context.WithCancel(context.Background())
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	c, err := p.connect(ctx)
	if err != nil {
		p.cancel()
		return nil, err
	}
	p.conn = c.conn
	p.wg.Add(1)
	go p.supervise(c)
	return p, nil
}

// NewCall returns an empty call from the pipe's pool.
func (p *Pipe) NewCall() *Call {
	c := p.calls.Get().(*Call)
	c.Buf = c.Buf[:0]
	return c
}

// Protocol reports the RESP version negotiated on the current connection.
func (p *Pipe) Protocol() int { return int(p.protocol.Load()) }

// Stats returns the pipe's counters.
func (p *Pipe) Stats() *Stats { return &p.stats }

// Do queues the call and waits for its N replies. On success the replies
// are in the call, which the caller then Releases. On any error the call is
// gone: the pipe recycles it, now or when its reply arrives.
//
// If ctx ends first, Do returns ctx.Err() at once. A call that had not been
// written yet is then never sent.
func (p *Pipe) Do(ctx context.Context, c *Call) error {
	if c.N <= 0 {
		c.Release()
		return errors.New("pipe: call with no commands")
	}
	if err := ctx.Err(); err != nil {
		c.Release()
		return err
	}
	p.callers.Add(1)
	defer p.callers.Add(-1)
	if err := p.enqueue(c); err != nil {
		c.Release()
		return err
	}
	done := ctx.Done()
	if done == nil {
		<-c.done
		return p.result(c)
	}
	select {
	case <-c.done:
		return p.result(c)
	case <-done:
		if c.abandon() {
			return ctx.Err()
		}
		<-c.done // completed just before we could abandon it
		return p.result(c)
	}
}

func (p *Pipe) result(c *Call) error {
	if err := c.err; err != nil {
		c.Release()
		return err
	}
	return nil
}

func (p *Pipe) enqueue(c *Call) error {
	p.mu.Lock()
	switch p.state {
	case stateClosed:
		p.mu.Unlock()
		return notSent(ErrClosed)
	case stateDisconnected:
		if !p.opts.WaitForReconnect {
			err := p.lastErr
			p.mu.Unlock()
			return fmt.Errorf("%w: %w", notSent(ErrNotConnected), err)
		}
	}
	if p.writerParked && !p.directWriter && len(p.queue) == 0 && p.active != nil &&
		p.state == stateConnected && p.active.fl.outstanding.Load() == 0 {
		// A lone request (nothing queued, written or in flight): rather than
		// wake the writer goroutine for it, the caller writes it itself, so
		// it costs what it costs on a plain connection. Under any load the
		// writer goroutine batches as before.
		p.directWriter = true
		ac := p.active
		p.mu.Unlock()
		p.writeDirect(ac, c)
		return nil
	}
	p.queue = append(p.queue, c)
	wake := p.writerParked && !p.directWriter && p.state == stateConnected
	if wake {
		p.writerParked = false
	}
	p.mu.Unlock()
	if wake {
		p.kickWriter()
	}
	return nil
}

func (p *Pipe) kickWriter() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// writeDirect writes one call from its caller's goroutine, holding the
// writer's role, then gives the role back, waking the writer goroutine if
// requests queued up meanwhile.
func (p *Pipe) writeDirect(ac *conn, c *Call) {
	c.markSent()
	if ac.fl.pushOne(c, ac.conn, p.opts.IOTimeout) {
		ac.extendWriteDeadline(p.opts.IOTimeout)
		if _, err := ac.conn.Write(c.Buf); err != nil {
			ac.conn.Close() // the reader fails the call, and the rest in flight
		}
		p.stats.Batches.Add(1)
		p.stats.Calls.Add(1)
	} else {
		p.unsent([]*Call{c}) // the connection died first
	}
	p.mu.Lock()
	p.directWriter = false
	wake := len(p.queue) > 0 && p.writerParked
	if wake {
		p.writerParked = false
	}
	p.mu.Unlock()
	if wake {
		p.kickWriter()
	}
}

// Close stops the pipe gracefully: new requests fail with ErrClosed, while
// requests already queued or in flight still get their replies, for up to
// the I/O timeout (5s if none is set). Then the connection is closed, any
// request left fails, and Close returns once the pipe's goroutines exit.
func (p *Pipe) Close() error {
	drain := p.opts.IOTimeout
	if drain <= 0 {
		drain = defaultDrainTimeout
	}
	p.closeWithin(drain)
	return nil
}

// Abort closes the pipe at once: whatever is queued or in flight fails
// with ErrClosed. Dedicated connections use it when a request was
// abandoned, since its reply (say, of a BLPOP) may never come.
func (p *Pipe) Abort() {
	p.closeWithin(0)
}

func (p *Pipe) closeWithin(drain time.Duration) {
	p.mu.Lock()
	if p.state == stateClosed && p.life.Err() != nil {
		p.mu.Unlock()
		return
	}
	p.state = stateClosed
	p.mu.Unlock()
	p.cancel() // stops dials and backoff waits, and wakes an idle writer
	hardStop := func() {
		p.mu.Lock()
		if p.conn != nil {
			p.conn.Close()
		}
		p.mu.Unlock()
	}
	if drain <= 0 {
		hardStop()
	} else {
		t := time.AfterFunc(drain, hardStop)
		defer t.Stop()
	}
	p.wg.Wait()
	p.failQueued(notSent(ErrClosed))
}

const defaultDrainTimeout = 5 * time.Second

// Closed reports whether the pipe is closed, or dead for good after losing
// a connection with NoReconnect set.
func (p *Pipe) Closed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.state == stateClosed
}

// failQueued completes every call still waiting for the writer with err.
func (p *Pipe) failQueued(err error) {
	p.mu.Lock()
	q := p.queue
	p.queue = nil
	p.mu.Unlock()
	for _, c := range q {
		c.complete(err)
	}
}

// supervise runs connections one after another until Close.
func (p *Pipe) supervise(c *conn) {
	defer p.wg.Done()
	for {
		err := p.serve(c)
		p.mu.Lock()
		closing := p.state == stateClosed
		if !closing {
			p.state = stateDisconnected
			p.lastErr = err
			if p.opts.NoReconnect {
				p.state = stateClosed
			}
		}
		final := p.state == stateClosed
		p.mu.Unlock()
		if closing {
			return
		}
		p.log.Warn("zipline: connection lost", "addr", c.conn.RemoteAddr().String(), "err", err)
		if final {
			p.failQueued(notSent(fmt.Errorf("%w: %w", ErrConnLost, err)))
			return
		}
		if !p.opts.WaitForReconnect {
			p.failQueued(fmt.Errorf("%w: %w", notSent(ErrNotConnected), err))
		}
		if c = p.reconnect(); c == nil {
			return
		}
	}
}

// reconnect dials until it succeeds or the pipe closes, waiting between
// attempts with exponential backoff and jitter.
func (p *Pipe) reconnect() *conn {
	backoff := p.opts.ReconnectBackoffMin
	for attempt := 1; ; attempt++ {
		c, err := p.connect(p.life)
		if err == nil {
			p.mu.Lock()
			if p.state == stateClosed {
				p.mu.Unlock()
				c.conn.Close()
				return nil
			}
			p.state = stateConnected
			p.conn = c.conn
			p.writerParked = false // serve starts the writer running
			p.mu.Unlock()
			p.stats.Reconnect.Add(1)
			p.log.Info("zipline: reconnected", "addr", c.conn.RemoteAddr().String(), "attempts", attempt)
			return c
		}
		p.mu.Lock()
		p.lastErr = err
		p.mu.Unlock()
		p.log.Debug("zipline: reconnect failed", "attempt", attempt, "err", err)
		wait := backoff/2 + rand.N(backoff/2+1)
		t := time.NewTimer(wait)
		select {
		case <-p.life.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		backoff = min(backoff*2, p.opts.ReconnectBackoffMax)
	}
}

// conn is one established connection with its parser.
type conn struct {
	conn net.Conn
	rd   *resp.Reader
	fl   *inflight // set while served
	// writeDeadline belongs to whoever holds the writer's role.
	writeDeadline time.Time
}

// extendWriteDeadline makes sure the next write has at least timeout.
// Moving a deadline costs a timer update, so it is extended only when less
// than timeout remains.
func (c *conn) extendWriteDeadline(timeout time.Duration) {
	if timeout <= 0 {
		return
	}
	if now := time.Now(); c.writeDeadline.Sub(now) < timeout {
		c.writeDeadline = now.Add(timeout + timeout/2)
		c.conn.SetWriteDeadline(c.writeDeadline)
	}
}

// serve runs the reader and writer on one connection until it fails or the
// pipe closes, then fails whatever was in flight.
func (p *Pipe) serve(c *conn) error {
	fl := &inflight{dead: make(chan struct{})}
	c.fl = fl
	p.mu.Lock()
	p.active = c
	p.mu.Unlock()
	readErr := make(chan error, 1)
	go func() { readErr <- p.readLoop(c, fl) }()
	werr := p.writeLoop(c, fl)
	p.mu.Lock()
	p.active = nil
	p.mu.Unlock()
	if werr != errClosing {
		c.conn.Close() // stops the reader
	}
	rerr := <-readErr // on close, after the last reply (or Close's hard stop)
	c.conn.Close()
	err := rerr
	if err == nil || errors.Is(err, net.ErrClosed) || err == errClosing {
		err = werr
	}
	if err == nil || err == errClosing {
		err = ErrClosed
	}
	fl.fail(fmt.Errorf("%w: %w", ErrConnLost, err))
	return err
}
