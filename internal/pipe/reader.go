package pipe

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ziplinekv/zipline/internal/resp"
)

// inflight is the FIFO of calls written to one connection and not yet
// answered. The writer appends; the reader takes everything at once and
// works through its own copy, so the lock is taken once per batch, not per
// reply.
type inflight struct {
	mu     sync.Mutex
	calls  []*Call
	failed bool
	dead   chan struct{} // closed when the reader stops
	// armed reports whether a read deadline is set. The writer arms one when
	// it hands calls to an idle connection; after that only the reader moves
	// it (see replyLoop.alive).
	armed bool
	// outstanding counts calls pushed and not yet answered: the writer's
	// sign that more requests are coming.
	outstanding atomic.Int64
	// paceAt, when above zero, is the count of outstanding calls at which
	// the writer, holding a batch back, wants to hear (on paced) that
	// replies have come: see Pipe.pace.
	paceAt atomic.Int64
	paced  chan struct{} // capacity 1

	// The read role (see readRole). readKick wakes the reader goroutine
	// waiting for it; stop tells it to take the role back and read until
	// the connection fails, which is being torn down.
	role      readRole
	readKick  chan struct{} // capacity 1
	stop      bool
	idleSince time.Time // when the role was last given up
	// epoch is when the connection's in-flight list began: calls record
	// when they were sent as a count of nanoseconds since, which fits the
	// call's line where a time.Time would not.
	epoch time.Time
	// settleWanted asks the reader goroutine to signal settled when it
	// next gives the role up (see conn.settle).
	settleWanted bool
	settled      chan struct{} // capacity 1
	// out says the reader goroutine of an idle connection has ended (see
	// park), and resume starts another, which kickReader does when the
	// role is wanted again.
	out    bool
	resume func()
}

func newInflight() *inflight {
	now := time.Now()
	return &inflight{
		dead:      make(chan struct{}),
		readKick:  make(chan struct{}, 1),
		settled:   make(chan struct{}, 1),
		paced:     make(chan struct{}, 1),
		idleSince: now,
		epoch:     now,
	}
}

// push appends calls, stamped with the time they are handed to the
// connection, and makes sure a read deadline covers them. It fails once the
// connection is dead: the calls were not written.
func (f *inflight) push(calls []*Call, nc net.Conn, timeout time.Duration) bool {
	now := time.Now()
	sent := int64(now.Sub(f.epoch))
	for _, c := range calls {
		c.sentAt = sent
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failed {
		return false
	}
	f.calls = append(f.calls, calls...)
	f.outstanding.Add(int64(len(calls)))
	f.arm(nc, now, timeout)
	f.wantReader()
	return true
}

// wantReader makes sure someone reads the calls just pushed: the reader
// goroutine, if nobody holds the role. Callers hold f.mu.
func (f *inflight) wantReader() {
	if f.role == roleFree {
		f.role = roleReader
		f.kickReader()
	}
}

// pushOne is push for a single call, without building a slice.
func (f *inflight) pushOne(c *Call, nc net.Conn, timeout time.Duration) bool {
	now := time.Now()
	c.sentAt = int64(now.Sub(f.epoch))
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failed {
		return false
	}
	f.calls = append(f.calls, c)
	f.outstanding.Add(1)
	f.arm(nc, now, timeout)
	f.wantReader()
	return true
}

// arm sets a read deadline for calls just sent on a connection that had
// none. Calls already in flight are older, so an armed deadline already
// covers the new ones. Callers hold f.mu.
func (f *inflight) arm(nc net.Conn, now time.Time, timeout time.Duration) {
	if timeout > 0 && !f.armed {
		f.armed = true
		nc.SetReadDeadline(now.Add(timeout))
	}
}

// take swaps the pending calls with dst (emptied), returning them.
func (f *inflight) take(dst []*Call) []*Call {
	f.mu.Lock()
	dst, f.calls = f.calls, dst[:0]
	f.mu.Unlock()
	return dst
}

// fail marks the connection dead and fails every call still queued in f.
func (f *inflight) fail(err error) {
	f.mu.Lock()
	if !f.failed {
		f.failed = true
		close(f.dead)
	}
	f.stop = true
	f.kickReader()
	calls := f.calls
	f.calls = nil
	f.mu.Unlock()
	for _, c := range calls {
		c.complete(err)
	}
}

// replyLoop is the state of whoever reads one connection (see readRole):
// the calls taken from the in-flight FIFO and the one whose replies are
// being collected. Only the holder of the read role touches it.
type replyLoop struct {
	p     *Pipe
	c     *conn
	fl    *inflight
	cur   *Call   // call whose replies are being collected
	local []*Call // taken from fl; local[next:] are still waiting
	next  int
	// mayPark: the connection gets no out-of-band pushes and its socket
	// can be peeked at, so the reader goroutine may give the role up.
	mayPark bool
	// stamp: pushes have handlers here, and completed calls carry their
	// place among them (Call.PushesBefore); elsewhere nothing numbers them.
	stamp bool
	// retire: the connection idled (conn.idled), and the goroutine ends
	// at its next park.
	retire bool
	// handedErr is a read error a caller hit while holding the role: the
	// reader goroutine ends the connection with it.
	handedErr error
	// answered and uncharged are what the replies read since the last
	// settle took off fl.outstanding and the pending-bytes budget. Both
	// counters are shared with every caller and the writer, on other
	// processors; updating them once per read from the socket rather than
	// once per reply keeps the reader off their cache lines under load.
	answered, uncharged int64
	// lastRead is how many calls the last read from the socket answered:
	// more than one means callers overlap, and the reader goroutine keeps
	// the role through idle moments instead of handing it to a lone caller
	// and taking it back at once.
	lastRead int64
}

// settle applies answered and uncharged. The reader calls it whenever it
// has consumed everything read so far, before it may block.
func (l *replyLoop) settle() {
	if l.answered != 0 {
		left := l.fl.outstanding.Add(-l.answered)
		if at := l.fl.paceAt.Load(); at > 0 && left <= at && l.fl.paceAt.CompareAndSwap(at, 0) {
			select {
			case l.fl.paced <- struct{}{}:
			default:
			}
		}
		l.lastRead = l.answered
		l.answered = 0
	}
	if l.uncharged != 0 {
		l.p.pending.release(l.uncharged)
		l.uncharged = 0
	}
}

// readLoop parses replies and completes calls in the order they were
// written, until the connection fails.
// It returns errParked, and does nothing else, when the goroutine ends
// while its connection idles (see park): the connection lives on.
func (p *Pipe) readLoop(c *conn, resumed bool) error {
	l := c.loop
	err := l.run(resumed)
	if err == errParked {
		return err
	}
	l.settle()
	// A closing pipe's calls still in flight fail with ErrClosed when the
	// close cut them (a drain out of time, Abort); when the server hung up
	// first (a node restarted while its pipe drained) they were lost with
	// the connection like any other, and callers that resend a lost read
	// must see that.
	lost := fmt.Errorf("%w: %w", ErrConnLost, err)
	if p.life.Err() != nil && (errors.Is(err, net.ErrClosed) || err == errClosing) {
		lost = fmt.Errorf("%w: %w", ErrClosed, err)
	}
	if l.cur != nil {
		l.cur.complete(lost)
	}
	for _, call := range l.local[l.next:] {
		call.complete(lost)
	}
	l.fl.fail(lost)
	return err
}

// run reads until the connection fails. A goroutine resumed after an
// idle one ended goes on from where park returned: the role is its own.
func (l *replyLoop) run(resumed bool) error {
	if resumed && l.handedErr != nil {
		return l.handedErr
	}
	for {
		if !resumed && l.mayPark && l.idle() && l.lastRead <= 1 {
			if err := l.park(); err != nil {
				return err
			}
		}
		resumed = false
		var v resp.Value
		if err := l.readOne(&v); err != nil {
			return err
		}
		if _, err := l.handle(&v); err != nil {
			return err
		}
		if l.c.rd.Buffered() == 0 {
			l.settle()
			if l.c.idled.Load() && l.c.idled.Swap(false) {
				l.release()
				l.retire = true
			}
		}
	}
}

// readOne parses the next value from the connection.
func (l *replyLoop) readOne(v *resp.Value) error {
	if err := l.c.rd.ReadValue(v); err != nil {
		var le *resp.LimitError
		if errors.As(err, &le) {
			return fmt.Errorf("%w: %w", resp.ErrProtocol, err)
		}
		return err
	}
	return nil
}

// handle routes one value: to the push handlers, or to the oldest call
// waiting, which it completes once all its replies are in. It returns the
// call it completed, if any (for comparison only: the call may already be
// recycled).
func (l *replyLoop) handle(v *resp.Value) (*Call, error) {
	cur := l.head()
	if t := v.Type(); t == resp.Push || t == resp.Array && l.p.opts.RESP2Subscriber {
		if kind, ok := pushKind(*v, l.p.opts.RESP2Subscriber); ok && (cur == nil || cur.PushKind != kind) {
			l.p.push.dispatch(kind, *v)
			return nil, nil
		}
	}
	if cur == nil {
		return nil, fmt.Errorf("%w: %s with no request waiting", resp.ErrProtocol, v.Describe())
	}
	if i := len(cur.replies); i < len(cur.Expect) && !cur.Expect[i].Accepts(v.Type()) {
		return nil, fmt.Errorf("%w: stream out of step: a %s cannot answer command %d of %d",
			resp.ErrProtocol, v.Type(), i+1, cur.N)
	}
	cur.replies = append(cur.replies, *v)
	if len(cur.replies) < cur.N {
		l.c.rd.ShareNext(cur.N - len(cur.replies))
		return nil, nil
	}
	l.answered++
	l.uncharged += cur.charged
	cur.charged = 0
	unasked := false
	if l.c.rd.Buffered() == 0 {
		// The last reply read so far: settle before waking its caller,
		// whose next request must find the connection as idle as it is.
		l.settle()
	} else {
		// More is buffered. If it is a reply and no request is waiting,
		// the server answered something nobody asked: found before the
		// caller is woken, so its next request cannot be handed that reply.
		unasked = !l.p.opts.RESP2Subscriber && l.c.rd.ReplyBuffered() && !l.waiting()
	}
	last := cur.closeMarker
	if l.stamp {
		cur.pushes = l.p.push.seq.Load()
	}
	cur.complete(nil)
	l.cur = nil
	if l.next < len(l.local) {
		next := l.local[l.next]
		next.claim()
		// A batch's replies reach its caller together: already
		// buffered, they share one allocation (resp.Reader.ShareNext).
		l.c.rd.ShareNext(next.N)
	}
	if unasked {
		return cur, fmt.Errorf("%w: a reply arrived with no request waiting", resp.ErrProtocol)
	}
	if last {
		return cur, errClosing
	}
	return cur, nil
}

// release gives back the room a burst grew, on a connection the writer
// found idle: the read buffer, and the lists of calls in flight if no call
// is.
func (l *replyLoop) release() {
	l.c.rd.Shrink()
	if l.cur != nil || l.next < len(l.local) {
		return
	}
	l.local, l.next = nil, 0
	f := l.fl
	f.mu.Lock()
	if len(f.calls) == 0 {
		f.calls = nil
	}
	f.mu.Unlock()
}

// waiting reports whether a call is waiting for replies, taking the calls
// written since the last take if those taken are all answered.
func (l *replyLoop) waiting() bool {
	if l.next == len(l.local) {
		clear(l.local)
		l.local, l.next = l.fl.take(l.local), 0
	}
	return l.next < len(l.local)
}

// head returns the oldest call still waiting for replies, or nil.
func (l *replyLoop) head() *Call {
	if l.cur != nil {
		return l.cur
	}
	if !l.waiting() {
		return nil
	}
	l.cur = l.local[l.next]
	l.next++
	return l.cur
}

// alive runs when a read reaches its deadline. The connection is alive
// unless its oldest unanswered call has waited longer than the I/O timeout
// (plus that call's patience): a healthy connection under steady traffic
// keeps answering its oldest call, a hung one does not, however many new
// requests arrive. If alive, the deadline moves to when that oldest call
// runs out of time, and the read continues where it stopped, mid-reply or
// not; with nothing in flight the connection is idle and needs none.
func (l *replyLoop) alive() bool {
	l.fl.mu.Lock()
	defer l.fl.mu.Unlock()
	oldest := l.cur
	switch {
	case oldest != nil:
	case l.next < len(l.local):
		oldest = l.local[l.next]
	case len(l.fl.calls) > 0:
		oldest = l.fl.calls[0]
	default:
		l.fl.armed = false
		l.c.conn.SetReadDeadline(time.Time{})
		return true
	}
	if oldest.Patience < 0 {
		// A call that may block forever: nothing behind it can be answered
		// earlier, so no deadline applies until it is.
		l.fl.armed = false
		l.c.conn.SetReadDeadline(time.Time{})
		return true
	}
	due := l.fl.epoch.Add(time.Duration(oldest.sentAt) + l.p.opts.IOTimeout + oldest.Patience)
	if !time.Now().Before(due) {
		return false
	}
	l.fl.armed = true
	l.c.conn.SetReadDeadline(due)
	return true
}

// liveReader is the connection as the parser reads it. A read that reaches
// its deadline is not an error by itself: it asks alive whether the
// connection still makes progress and, if so, reads on, so the parser never
// loses its place in a reply.
type liveReader struct {
	conn     net.Conn
	alive    func() bool   // nil during set-up, when a deadline is final
	lastRead *atomic.Int64 // Options.LastRead, or nil
	// between reports whether the parser stands between two replies.
	between func() bool
	// owner: a caller holds the read role (see readOwn). interrupted: its
	// context ended, and the deadline was moved to the past to say so.
	owner       bool
	interrupted atomic.Bool
}

func (r *liveReader) Read(b []byte) (int, error) {
	for {
		n, err := r.conn.Read(b)
		if n > 0 && r.lastRead != nil {
			if now := time.Now().UnixNano(); now-r.lastRead.Load() > int64(time.Millisecond) {
				r.lastRead.Store(now)
			}
		}
		if n == 0 && err != nil && isTimeout(err) {
			if r.interrupted.Swap(false) {
				// A caller whose context ended hands the read over where
				// nothing is lost; mid-reply, it reads the reply to its
				// end. An interruption that arrives after the caller is
				// done costs whoever reads one more deadline check. Either
				// way the deadline it set is undone: by alive, or here if
				// there is no I/O timeout.
				if r.alive == nil {
					r.conn.SetReadDeadline(time.Time{})
				}
				if r.owner && r.between() {
					return 0, errInterrupted
				}
				if r.alive == nil {
					continue
				}
			}
			if r.alive == nil {
				return n, err
			}
			if r.alive() {
				continue
			}
			return 0, fmt.Errorf("no reply within the I/O timeout: %w", err)
		}
		return n, err
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
