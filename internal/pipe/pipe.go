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
// A lone request on an idle connection skips both goroutines: its caller
// writes it and reads the reply itself, as on a plain blocking connection
// (see enqueue and readRole). The roles go back to the goroutines as soon
// as a second caller arrives.
//
// The pipe knows RESP and nothing about commands beyond connection set-up:
// callers hand it encoded bytes and a reply count. A caller whose context
// ends returns immediately; its reply is still read, and dropped, so the
// stream stays aligned. When the connection breaks, every request in flight
// fails with ErrConnLost (never retried: it may have run), and a supervisor
// redials with exponential backoff.
//
// A cluster router can own one Pipe per node; a subscriber takes push
// messages from the same reader through Options.Push (see PushHandler).
package pipe

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/bits"
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
	Protocol int // 2 or 3; 0 tries RESP3 and falls back to RESP2
	Username string
	Password string
	// Credentials, if set, replace Username and Password: every handshake
	// fetches them, and Credentials.Renew re-authenticates the pipe in
	// place.
	Credentials *Credentials
	DB          int
	ClientName  string
	// HandshakeTimeout bounds dial plus set-up of one connection attempt.
	HandshakeTimeout time.Duration
	// IOTimeout declares the connection dead when its oldest unanswered
	// request has waited this long (plus its Call.Patience), or a write
	// blocks this long. 0 is off.
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
	// Push handlers receive out-of-band pushes by kind (see PushHandler);
	// pushes of other kinds are dropped.
	Push []PushHandler
	// RESP2Subscriber marks a RESP2 connection that will subscribe: its
	// message arrays are out-of-band pushes, not replies.
	RESP2Subscriber bool
	// OnConnect, if set, runs on every new connection, the first included,
	// after the handshake and before any request: it re-issues connection
	// state such as subscriptions or CLIENT TRACKING. An error drops the
	// connection, which is dialled again after the usual backoff (or, for
	// the first, fails New).
	OnConnect func(s *Setup) error
	// OnDisconnect, if set, is told when a connection is lost, before any
	// reconnect: state tied to it (tracked keys, subscriptions) is gone.
	OnDisconnect func(err error)
	// LastRead, if set, is kept at the time (UnixNano) the connection last
	// received bytes, to within a millisecond: proof that it was alive.
	LastRead *atomic.Int64
	// Limits bound every reply. A reply over a limit whose size is announced
	// up front reaches its caller as an Oversize value; others end the
	// connection.
	Limits resp.Limits
	// MaxPendingBytes bounds the bytes of requests queued or in flight; 0
	// is no bound. Past it, Do waits for room until its context ends, or,
	// with FailWhenPendingFull, fails at once with ErrPendingLimit.
	MaxPendingBytes     int64
	FailWhenPendingFull bool
	// ReadBufferSize is the initial read buffer; 0 means resp's default.
	ReadBufferSize int
	// Logger receives connection events. Nil discards them.
	Logger *slog.Logger
	// Calls is the pool NewCall takes calls from; nil gives the pipe its
	// own. Share one among the pipes a call may be sent to.
	Calls *CallPool
}

type connState int

const (
	stateConnected connState = iota
	stateDisconnected
	stateClosed
)

// Pipe is one pipelined connection. It is safe for concurrent use.
type Pipe struct {
	opts Options
	// authGeneration is the Credentials renewal the connection last
	// authenticated at (see Credentials.Refresh).
	authGeneration atomic.Uint64
	log            *slog.Logger
	calls          *CallPool

	mu    sync.Mutex
	queue []*Call // waiting for the writer
	spare []*Call // the writer's other queue slice, swapped in and out
	state connState
	// down mirrors state != stateConnected, for Connected: routing asks it
	// on every replica read, and must not contend for mu with the loops.
	down atomic.Bool
	// writerParked: the writer goroutine waits for a kick. directWriter: a
	// caller holds the writer's role and is writing its own request (see
	// enqueue). Only one of the two ever writes to the connection.
	writerParked bool
	directWriter bool
	active       *conn    // the connection being served, for direct writes
	lastErr      error    // why the connection went down
	conn         net.Conn // current connection, for Close to interrupt
	// abandonedQueued counts calls given up while in queue, since the
	// writer last took it: when they are many, the queue is compacted so a
	// long outage does not hold their memory (see noteAbandoned).
	abandonedQueued int
	closing         bool // Close or Abort has begun

	kick    chan struct{}   // wakes the parked writer; capacity 1
	life    context.Context // ends at Close: bounds dials and backoff waits
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	pending pendingBytes

	protocol atomic.Int32
	server   atomic.Pointer[Server] // what the last handshake's HELLO said
	stats    Stats
	// callers is the writer's estimate of the callers using the pipe
	// (writeLoop's load), for Gathering.
	callers  atomic.Int64
	push     *pushRouter
	connects int // connections made, for Setup.Reconnect; owned by the dialling goroutine
	// gatherAbove: while more callers than this use the connection (as
	// the writer estimates it), the writer gathers batches (see
	// gatherCallersPerProc).
	gatherAbove int64
	// paceAbove: while more callers than this use the connection, the
	// writer paces batches of small requests (writer.go, pace).
	paceAbove int64
	// ownReads: callers of lone requests may read their own replies; off
	// when pushes arrive out of band (see readRole).
	ownReads bool
}

// UnroutedPushes counts out-of-band pushes no handler took.
func (p *Pipe) UnroutedPushes() uint64 { return p.push.unrouted.Load() }

// Stats are cumulative counters, updated by the writer and reader loops.
type Stats struct {
	Batches   atomic.Uint64 // writes to the connection
	Calls     atomic.Uint64 // calls written
	Reconnect atomic.Uint64 // successful reconnects
	// OwnReads counts requests whose caller read the reply itself, on an
	// otherwise idle connection (see readRole).
	OwnReads atomic.Uint64
	// WriteSizes is a histogram of calls per write: bucket i counts writes
	// of 2^i to 2^(i+1)-1 calls, the last bucket everything larger.
	WriteSizes [WriteSizeBuckets]atomic.Uint64
}

// WriteSizeBuckets is the number of buckets in Stats.WriteSizes: up to
// 2^11 calls per write, and more.
const WriteSizeBuckets = 12

// wrote counts one write of n calls.
func (s *Stats) wrote(n int) {
	s.Batches.Add(1)
	s.Calls.Add(uint64(n))
	s.WriteSizes[min(bits.Len(uint(n))-1, WriteSizeBuckets-1)].Add(1)
}

// Queued reports how many calls wait to be written.
func (p *Pipe) Queued() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.queue)
}

// InFlight reports how many calls were written and wait for replies.
func (p *Pipe) InFlight() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.active == nil {
		return 0
	}
	return p.active.fl.outstanding.Load()
}

// Gathering reports whether so many callers use the pipe that its writer
// gathers their requests into batches (see gatherCallersPerProc): by the
// writer's estimate of the callers, the recent peak of the calls queued or
// in flight as it last saw them. Lone requests, written by their callers,
// go past the writer and leave the estimate as it was. It is one atomic
// load, for a caller choosing among connections on every request.
func (p *Pipe) Gathering() bool { return p.callers.Load() > p.gatherAbove }

// PendingBytes reports the bytes of calls queued or in flight, as counted
// against Options.MaxPendingBytes (0 when there is no limit).
func (p *Pipe) PendingBytes() int64 { return p.pending.used() }

// New dials and sets up the first connection, then starts the loops. A
// failed first connection is returned as an error, so that a wrong address
// or password surfaces at start-up rather than on the first request.
func New(ctx context.Context, opts Options) (*Pipe, error) {
	if opts.Dial == nil {
		return nil, errors.New("pipe: Options.Dial is required")
	}
	p := &Pipe{
		opts:    opts,
		log:     opts.Logger,
		calls:   opts.Calls,
		kick:    make(chan struct{}, 1),
		pending: pendingBytes{limit: opts.MaxPendingBytes, failFast: opts.FailWhenPendingFull},
		// Read once: a pipe serves one process, whose GOMAXPROCS rarely
		// changes after start-up.
		gatherAbove: int64(gatherCallersPerProc * runtime.GOMAXPROCS(0)),
		paceAbove:   int64(paceCallersPerProc * runtime.GOMAXPROCS(0)),
		ownReads:    len(opts.Push) == 0 && !opts.RESP2Subscriber,
	}
	if p.calls == nil {
		p.calls = NewCallPool()
	}
	p.pending.queueLock = &p.mu
	p.push = newPushRouter(opts.Push)
	p.life, p.cancel = context.WithCancel(context.Background())
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	c, err := p.connect(ctx)
	if err != nil {
		p.cancel()
		p.push.close()
		return nil, err
	}
	p.conn = c.conn
	p.wg.Add(1)
	go p.supervise(c)
	if opts.Credentials != nil {
		opts.Credentials.join(p)
		p.catchUpCredentials()
	}
	return p, nil
}

// NewCall returns an empty call from the pipe's pool.
func (p *Pipe) NewCall() *Call { return p.calls.Get() }

// Protocol reports the RESP version negotiated on the current connection.
func (p *Pipe) Protocol() int { return int(p.protocol.Load()) }

// Server is what a server says it is in its HELLO reply.
type Server struct {
	Name    string // "redis", "valkey"
	Version string // "7.0.15"
	// Role is "master" or "replica" (HELLO says it; Redis 7 and Valkey do).
	Role string
	// AvailabilityZone is the server's availability-zone setting (Valkey
	// 8 and later), "" when it has none.
	AvailabilityZone string
}

// Server returns what the server said it is when the connection was last
// set up: the zero Server if it did not say (no HELLO).
func (p *Pipe) Server() Server {
	if s := p.server.Load(); s != nil {
		return *s
	}
	return Server{}
}

// Stats returns the pipe's counters.
func (p *Pipe) Stats() *Stats { return &p.stats }

// Do queues the call and waits for its N replies. On success the replies
// are in the call, which the caller then Releases. On any error the call is
// gone: the pipe recycles it, now or when its reply arrives.
//
// If ctx ends first, Do returns at once with an error wrapping ctx.Err().
// A call that had not been written yet is then never sent, and its error
// also matches ErrNotSent.
func (p *Pipe) Do(ctx context.Context, c *Call) error {
	if c.N <= 0 {
		c.Release()
		return errors.New("pipe: call with no commands")
	}
	if err := ctx.Err(); err != nil {
		c.Release()
		return notSent(err)
	}
	for mayPeek := true; ; {
		ac, err := p.enqueue(c)
		if err == errPendingFull {
			if err := p.pending.full(ctx); err != nil {
				c.Release()
				return err
			}
			continue
		}
		if err != nil {
			c.Release()
			return err
		}
		if ac == nil {
			break // queued for the writer goroutine
		}
		// A lone request: this goroutine holds the writer's role.
		switch p.writeDirect(ctx, ac, c, mayPeek) {
		case directRetry:
			mayPeek = false // looked at once: write it this time
			continue
		case directGaveUp:
			c.Release()
			return notSent(ctx.Err())
		}
		break
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
		was, ok := c.abandon()
		if !ok {
			<-c.done // completed just before we could abandon it
			return p.result(c)
		}
		if was == stateQueued {
			p.noteAbandoned()
			return notSent(ctx.Err())
		}
		return ctx.Err()
	}
}

// noteAbandoned counts a call abandoned in the queue. The writer recycles
// such calls when it takes them, but while the connection is down (with
// WaitForReconnect) it takes nothing: once abandoned calls make up half the
// queue, they are removed and recycled here, so their buffers and their
// share of the pending bytes are freed at once.
func (p *Pipe) noteAbandoned() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.abandonedQueued++
	if p.abandonedQueued < minCompaction || 2*p.abandonedQueued < len(p.queue) {
		return
	}
	live := p.queue[:0]
	for _, c := range p.queue {
		if c.state.Load() == stateAbandoned {
			c.Release()
		} else {
			live = append(live, c)
		}
	}
	clear(p.queue[len(live):])
	p.queue = live
	p.abandonedQueued = 0
}

// minCompaction is the fewest abandoned calls worth a pass over the queue.
const minCompaction = 16

func (p *Pipe) result(c *Call) error {
	// The call is its caller's again. Claiming line 1 with a write before
	// reading it brings the line over once, ready for the writes Reset
	// makes; a read first would bring it over shared, and each of those
	// writes would then wait for the reader's copy to be invalidated
	// (bench/RESULTS.md#client-ab).
	c.state.Store(stateQueued)
	if err := c.err; err != nil {
		c.Release()
		return err
	}
	return nil
}

// enqueue queues the call for the writer goroutine, or, for a lone
// request (nothing queued, written or in flight, the writer goroutine
// idle), gives the caller the writer's role and returns the connection to
// write it to: rather than wake the writer goroutine for it, the caller
// writes it itself (see writeDirect). Under any load the writer goroutine
// batches as before.
//
// It first charges the call against MaxPendingBytes, and returns
// errPendingFull, queuing nothing, if that limit is reached.
func (p *Pipe) enqueue(c *Call) (*conn, error) {
	p.mu.Lock()
	switch p.state {
	case stateClosed:
		p.mu.Unlock()
		return nil, notSent(ErrClosed)
	case stateDisconnected:
		if !p.opts.WaitForReconnect {
			err := p.lastErr
			p.mu.Unlock()
			return nil, fmt.Errorf("%w: %w", notSent(ErrNotConnected), err)
		}
	}
	if !p.pending.charge(c) {
		p.mu.Unlock()
		return nil, errPendingFull
	}
	if p.writerParked && !p.directWriter && len(p.queue) == 0 && p.active != nil &&
		p.state == stateConnected && p.active.fl.outstanding.Load() == 0 {
		p.directWriter = true
		ac := p.active
		p.mu.Unlock()
		return ac, nil
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
	return nil, nil
}

// errPendingFull tells Do that enqueue found MaxPendingBytes reached.
var errPendingFull = errors.New("pipe: pending bytes at the limit")

func (p *Pipe) kickWriter() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// Outcomes of writeDirect.
const (
	directWritten = iota // written (or failed, or requeued): wait for the call
	directRetry          // not written; the connection was looked at: enqueue again
	directGaveUp         // not written; ctx ended first
)

// writeDirect writes a lone request from its caller's goroutine, holding
// the writer's role, then gives the role back, waking the writer goroutine
// if requests queued up meanwhile. If the read role is free too, the
// caller also reads the reply itself (see readRole); if the connection has
// sat unread for a while, it first peeks at it, and, with mayPeek, lets
// the reader goroutine deal with anything found there before writing.
func (p *Pipe) writeDirect(ctx context.Context, ac *conn, c *Call, mayPeek bool) int {
	var own, stale bool
	if ac.loop.mayPark {
		own, stale = ac.claimRead()
	}
	if own && stale && mayPeek && !ac.quiet() {
		p.releaseWriter()
		if !ac.settle(ctx) {
			return directGaveUp
		}
		return directRetry
	}
	c.markSent()
	if ac.fl.pushOne(c, ac.conn, p.opts.IOTimeout) {
		ac.extendWriteDeadline(p.opts.IOTimeout)
		p.stats.wrote(1) // before the write, as in writeLoop
		if _, err := ac.conn.Write(c.Buf); err != nil {
			ac.conn.Close() // the reader fails the call, and the rest in flight
		}
	} else {
		p.unsent([]*Call{c}) // the connection died first
		if own {
			ac.fl.mu.Lock()
			ac.fl.role = roleReader
			ac.fl.kickReader()
			ac.fl.mu.Unlock()
			own = false
		}
	}
	p.releaseWriter()
	if own {
		p.readOwn(ctx, ac, c)
	}
	return directWritten
}

// releaseWriter gives the writer's role back after a direct write.
func (p *Pipe) releaseWriter() {
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
// Every call of Close, concurrent or later, returns only then.
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
// abandoned, since its reply (say, of a BLPOP) may never come. It also cuts
// short a Close that is draining.
func (p *Pipe) Abort() {
	p.closeWithin(0)
}

func (p *Pipe) closeWithin(drain time.Duration) {
	if p.opts.Credentials != nil {
		p.opts.Credentials.leave(p)
	}
	p.mu.Lock()
	first := !p.closing
	p.closing = true
	p.state = stateClosed
	p.down.Store(true)
	p.mu.Unlock()
	hardStop := func() {
		p.mu.Lock()
		if p.conn != nil {
			p.conn.Close()
		}
		p.mu.Unlock()
	}
	if first {
		p.cancel() // stops dials and backoff waits, and wakes an idle writer
	}
	if drain <= 0 {
		hardStop()
	} else if first {
		t := time.AfterFunc(drain, hardStop)
		defer t.Stop()
	}
	p.wg.Wait()
	p.failQueued(notSent(ErrClosed))
	if first {
		p.push.close()
	}
}

const defaultDrainTimeout = 5 * time.Second

// Connected reports whether the pipe has a live connection now.
func (p *Pipe) Connected() bool {
	return !p.down.Load()
}

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
			p.down.Store(true)
			p.lastErr = err
			if p.opts.NoReconnect {
				p.state = stateClosed
			}
		}
		final := p.state == stateClosed
		p.mu.Unlock()
		if closing {
			c.replaced()
			return
		}
		p.log.Warn("zipline: connection lost", "err", err)
		if p.opts.OnDisconnect != nil {
			p.opts.OnDisconnect(err)
		}
		if final {
			p.failQueued(fmt.Errorf("%w: %w", notSent(ErrNotConnected), err))
			c.replaced()
			return
		}
		if !p.opts.WaitForReconnect {
			p.failQueued(fmt.Errorf("%w: %w", notSent(ErrNotConnected), err))
		}
		lost := c
		c = p.reconnect(lost)
		lost.replaced()
		if c == nil {
			return
		}
	}
}

// reconnect dials until it succeeds or the pipe closes, waiting between
// attempts with exponential backoff and jitter. Once the first attempt is
// over, it tells those waiting on the lost connection's replacement.
func (p *Pipe) reconnect(lost *conn) *conn {
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
			p.down.Store(false)
			p.conn = c.conn
			p.writerParked = false // serve starts the writer running
			p.mu.Unlock()
			p.stats.Reconnect.Add(1)
			p.log.Info("zipline: reconnected", "attempts", attempt)
			p.catchUpCredentials()
			return c
		}
		p.mu.Lock()
		p.lastErr = err
		p.mu.Unlock()
		lost.replaced()
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
	live *liveReader // what rd reads from
	rd   *resp.Reader
	fl   *inflight  // set while served
	loop *replyLoop // the reader's state, shared by whoever holds the read role
	peek *peeker    // nil if the socket cannot be peeked at
	// next is closed once this connection's replacement was attempted
	// (see replaced).
	next     chan struct{}
	nextOnce sync.Once
	// writeDeadline belongs to whoever holds the writer's role.
	writeDeadline time.Time
	// idled says the writer found the connection idle for a health-check
	// interval: the reader gives back the room a burst grew when it next
	// stands between replies, and its goroutine ends at its next park.
	idled atomic.Bool
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
	fl := newInflight()
	c.fl = fl
	c.loop = &replyLoop{p: p, c: c, fl: fl, mayPark: p.ownReads && c.peek != nil, stamp: len(p.opts.Push) > 0}
	if p.opts.IOTimeout > 0 {
		c.live.alive = c.loop.alive
	}
	c.live.between = c.rd.Between
	p.mu.Lock()
	p.active = c
	p.mu.Unlock()
	readErr := make(chan error, 1)
	read := func(resumed bool) {
		if err := p.readLoop(c, resumed); err != errParked {
			readErr <- err
		}
	}
	fl.resume = func() { go read(true) }
	go read(false)
	werr := p.writeLoop(c, fl)
	p.mu.Lock()
	p.active = nil
	p.mu.Unlock()
	if werr != errClosing {
		c.conn.Close() // stops the reader
	}
	// A reader waiting for the read role takes it back and reads on: to
	// the last reply after a graceful close, or to the error.
	fl.mu.Lock()
	fl.stop = true
	fl.kickReader()
	fl.mu.Unlock()
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
