package pipe

import (
	"sync"
	"sync/atomic"

	"github.com/ziplinekv/zipline/internal/resp"
)

// A PushHandler receives out-of-band pushes: RESP3 push messages that answer
// no request, such as pub/sub messages and client-side caching
// invalidations (and, on a RESP2 subscriber connection, the message arrays
// that stand for them).
//
// Each handler has its own goroutine fed through a queue of QueueLen
// pushes. The reader never waits for a handler: when the queue is full,
// the newest push is dropped and counted, and Lost reports the count before
// the handler sees anything else. A blocked handler therefore loses its own
// pushes, never delays replies to other callers. An Inline handler instead
// runs on the reader's goroutine (see Inline).
type PushHandler struct {
	// Kinds are the push kinds handled: the push's first element, such as
	// "message", "pmessage", "smessage" or "invalidate".
	Kinds []string
	// Handle receives each push, in arrival order, on the handler's
	// goroutine. Its Value stays valid after Handle returns.
	Handle func(v resp.Value)
	// Lost, if set, is told how many pushes were dropped since it was last
	// called, as soon as the handler's goroutine is free.
	Lost func(n int)
	// QueueLen bounds the pushes waiting for Handle. Default
	// DefaultPushQueueLen.
	QueueLen int
	// Inline runs Handle on the reader's goroutine, in order with replies:
	// no queue, nothing dropped, no hand-off to pay for per push. Reading
	// the connection, and so the server's sending, then goes at the
	// handler's pace, and TCP carries the backpressure to the server. It
	// suits a connection that carries nothing else worth hurrying, such as
	// a subscriber's, and only a Handle that never blocks (it hands the
	// push on and returns). QueueLen and Lost do not apply.
	Inline bool
}

// DefaultPushQueueLen is PushHandler.QueueLen's default.
const DefaultPushQueueLen = 1024

// pushKinds that answer a request: a SUBSCRIBE-family call gets one per
// channel, as push frames in RESP3 (see Call.PushKind).
func answersRequest(kind string) bool {
	switch kind {
	case "subscribe", "psubscribe", "ssubscribe", "unsubscribe", "punsubscribe", "sunsubscribe":
		return true
	}
	return false
}

// pushQueue is one handler's hand-off.
type pushQueue struct {
	h       PushHandler
	ch      chan resp.Value
	lost    chan struct{} // capacity 1: wakes the handler to report drops
	dropped atomic.Int64
	// arrived and handled count pushes read and pushes handled (or dropped):
	// while they differ, a push has reached the client but not its handler.
	arrived, handled atomic.Uint64
}

// pushRouter dispatches out-of-band pushes by kind. It is fixed when the
// pipe is made, and its goroutines live until the pipe closes.
type pushRouter struct {
	byKind map[string]*pushQueue
	wg     sync.WaitGroup
	stop   chan struct{}
	// Unrouted counts pushes of kinds nobody handles.
	unrouted atomic.Uint64
	// seq counts every out-of-band push read (see Pipe.PushSeq).
	seq atomic.Uint32
}

func newPushRouter(handlers []PushHandler) *pushRouter {
	r := &pushRouter{byKind: make(map[string]*pushQueue), stop: make(chan struct{})}
	for _, h := range handlers {
		if h.QueueLen <= 0 {
			h.QueueLen = DefaultPushQueueLen
		}
		q := &pushQueue{h: h}
		for _, k := range h.Kinds {
			r.byKind[k] = q
		}
		if h.Inline {
			continue
		}
		q.ch, q.lost = make(chan resp.Value, h.QueueLen), make(chan struct{}, 1)
		r.wg.Add(1)
		go r.serve(q)
	}
	return r
}

// dispatch hands v to its kind's handler without ever waiting for a
// queued one; an Inline handler runs here.
func (r *pushRouter) dispatch(kind string, v resp.Value) {
	r.seq.Add(1) // this push's number, which an Inline handler reads (Pipe.PushSeq)
	q := r.byKind[kind]
	if q == nil {
		r.unrouted.Add(1)
		return
	}
	if q.h.Inline {
		q.h.Handle(v) // handled before anything else is read: no backlog to count
		return
	}
	q.arrived.Add(1)
	select {
	case q.ch <- v:
	default:
		// Dropped: Lost tells the handler, and only then does the push
		// count as handled, so the backlog shows it until the handler has
		// acted on the loss (a client-side cache drops every entry then).
		q.dropped.Add(1)
		select {
		case q.lost <- struct{}{}:
		default:
		}
	}
}

func (r *pushRouter) serve(q *pushQueue) {
	defer r.wg.Done()
	report := func() {
		if n := q.dropped.Swap(0); n > 0 {
			if q.h.Lost != nil {
				q.h.Lost(int(n))
			}
			q.handled.Add(uint64(n))
		}
	}
	for {
		select {
		case v := <-q.ch:
			report()
			q.h.Handle(v)
			q.handled.Add(1)
		case <-q.lost:
			report()
		case <-r.stop:
			return
		}
	}
}

// PushBacklog reports how many pushes of one kind have been read from the
// connection and not yet handled (a dropped push counts until Lost has
// been told of it). A reader that must not act on data a push has already
// invalidated (a client-side cache) checks it is zero.
type PushBacklog struct{ q *pushQueue }

// Pending returns the pushes waiting for their handler.
func (b PushBacklog) Pending() uint64 {
	if b.q == nil {
		return 0
	}
	return b.q.arrived.Load() - b.q.handled.Load()
}

// PushSeq returns how many out-of-band pushes have been read on the pipe's
// connections, all kinds counted, since it was made. An Inline handler
// that reads it gets its own push's number; Call.PushesBefore gives a
// call's place among them.
func (p *Pipe) PushSeq() uint32 { return p.push.seq.Load() }

// Backlog returns the backlog of the handler of kind (empty if none).
func (p *Pipe) Backlog(kind string) PushBacklog { return PushBacklog{p.push.byKind[kind]} }

func (r *pushRouter) close() {
	close(r.stop)
	r.wg.Wait()
}

// pushKind returns the kind of an out-of-band message: the first element of
// a push frame, or, on a RESP2 subscriber connection, of an array whose
// first element names a pub/sub message or confirmation.
func pushKind(v resp.Value, resp2Subscriber bool) (string, bool) {
	switch v.Type() {
	case resp.Push:
	case resp.Array:
		if !resp2Subscriber {
			return "", false
		}
	default:
		return "", false
	}
	e := v.Elems()
	if len(e) == 0 {
		return "", v.Type() == resp.Push
	}
	kind := kindName(e[0].Bytes())
	if v.Type() == resp.Array {
		switch kind {
		case "message", "pmessage", "smessage":
		default:
			if !answersRequest(kind) {
				return "", false // a reply, such as PING's [pong, ""]
			}
		}
	}
	return kind, true
}

// knownKinds are the push kinds servers send, kept as constants so that
// naming a push's kind allocates nothing.
var knownKinds = [...]string{"message", "pmessage", "smessage", "invalidate", "subscribe", "psubscribe",
	"ssubscribe", "unsubscribe", "punsubscribe", "sunsubscribe", "tracking-redir-broken"}

func kindName(b []byte) string {
	for _, k := range knownKinds {
		if string(b) == k {
			return k
		}
	}
	return string(b)
}
