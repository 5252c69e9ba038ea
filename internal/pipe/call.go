package pipe

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/ziplinekv/zipline/internal/resp"
)

// Call states. A call moves queued -> sent -> done. A caller whose context
// ends moves it to abandoned from queued or sent; whichever of the writer
// (queued) or reader (sent) next touches an abandoned call recycles it, so
// exactly one party ever returns a call to the pool. stateQueued is the
// zero value, which Reset stores.
const (
	stateQueued uint32 = iota
	stateSent
	stateDone
	stateAbandoned
)

// A Call is one unit of work on the pipe: one or more encoded commands that
// are written together, back to back, and the replies they produce. A Batch
// or a MULTI/EXEC transaction is a single Call, which is what keeps its
// commands contiguous on a connection that other goroutines share.
//
// Get calls from Pipe.NewCall, append the encoded commands to Buf, set N
// (and optionally Expect and Patience), and pass them to Pipe.Do.
type Call struct {
	// The struct is laid out by who writes what, one cache line each, and
	// sized to 256 bytes, a size class whose objects start on a line
	// boundary (TestCallLayout holds it there). At hundreds of callers in
	// flight, every line a call touches on its way through the caller, the
	// writer and the reader is a miss on another core; a 208-byte call,
	// placed anywhere, spanned five (bench/RESULTS.md#client-ab).

	// Line 0, written by the caller before Do, read by the writer and the
	// reader.

	// Buf holds N complete RESP commands.
	Buf []byte
	// N is the number of commands in Buf, hence of replies to wait for.
	N int
	// Expect, when not empty, holds the reply types that can answer each of
	// the N commands, in order. A reply of another type (error replies and
	// oversize stand-ins always fit) means the stream slipped out of step:
	// the connection is dropped and everything in flight fails with
	// ErrConnLost, rather than a value reaching the wrong caller.
	Expect      []resp.TypeSet
	expectOne   [1]resp.TypeSet // Expect's room for one command
	detached    bool            // no caller waits (health check, close marker): recycle on completion
	closeMarker bool            // the last call written before a graceful close

	// Line 1, written as the call travels (the caller's charge, the
	// writer's state and sentAt, the reader's reply and error), and read by
	// the caller when it resumes.
	state atomic.Uint32
	// pushes is Pipe.PushSeq when the last reply was read (see
	// PushesBefore); in the room state leaves on this line.
	pushes  uint32
	err     error
	replies []resp.Value
	sentAt  int64 // when it was handed to the connection, in the pipe's clock; the I/O timeout counts from here
	charged int64 // bytes counted against the pipe's pending limit

	// Line 2: the reply of a one-command call, written by the reader where
	// the caller reads it, without a separate array.
	one [1]resp.Value

	// Line 3: set when the call is made, or rarely. The reader reads done
	// here to wake the caller, so every store to this line is made only
	// when the value changes: one store per call pulled the line into the
	// caller's cache and made the reader miss it on every reply
	// (bench/RESULTS.md#client-ab).

	// Patience is how much longer than the I/O timeout this call's replies
	// may take: the server-side wait of a blocking command. Negative means
	// without limit (BLPOP with timeout 0); the caller's context bounds it.
	Patience time.Duration
	// PushKind, when set, says the replies come as push frames of this
	// kind: in RESP3, SUBSCRIBE's confirmations ("subscribe", one per
	// channel) are pushes, yet they answer the call.
	PushKind string
	done     chan struct{} // capacity 1; signalled once per use
	pool     *sync.Pool
	budget   *pendingBytes // where charged is returned
	_        [16]byte
}

// Replies returns the N replies. Valid only after Do returned nil and until
// Release.
func (c *Call) Replies() []resp.Value { return c.replies }

// PushesBefore returns how many out-of-band pushes had been read on the
// pipe (Pipe.PushSeq) when the call's last reply was: a push numbered at
// most this arrived before the reply, so the server sent it before it
// answered, and a push numbered more came after. Valid after Do returned
// nil, on a pipe with push handlers (Options.Push); 0 on others.
func (c *Call) PushesBefore() uint32 { return c.pushes }

// Reply returns the i-th reply.
func (c *Call) Reply(i int) resp.Value { return c.replies[i] }

// largeBuf is the size from which a command buffer is written without a
// copy, and is not kept by the pool: the garbage collector takes it, so one
// 10 MB SET does not pin 10 MB in the pool, and a buffer the writer may
// still be reading is never handed to another caller. It is large enough
// that a batch of 50 values of 2 KiB keeps its warm buffer: below it, such
// batches reallocated their buffer every time and ran slower than batches
// of 20 (bench/results/compression.md).
const largeBuf = 256 << 10

// Release returns the call to its pool. Call it once, after Do returned nil
// and the replies have been read. (After a failed Do the call is already
// gone.)
func (c *Call) Release() {
	c.Reset()
	c.pool.Put(c)
}

// Reset empties a call that Do answered, for its owner to use again
// without a trip through the pool: what Release does, but the call stays
// with the caller. (After a failed Do the call is gone, as ever.)
func (c *Call) Reset() {
	c.uncharge()
	if cap(c.Buf) >= largeBuf {
		c.Buf = nil
	}
	c.dropReplies()
	c.Expect = c.Expect[:0]
	if c.Patience != 0 || c.PushKind != "" { // stored only when it changes (see line 3)
		c.Patience, c.PushKind = 0, ""
	}
	if c.err != nil {
		c.err = nil
	}
	c.N = 0
	c.detached, c.closeMarker = false, false
	// Back to stateQueued with a plain store: the call is the owner's alone
	// here (its completion or abandonment came through a channel or an
	// atomic), and Do publishes it under the pipe's lock. An atomic store
	// is a full fence, which waited here for the stores above to lines the
	// reader and writer hold (bench/RESULTS.md#client-ab). After Do the
	// state is queued already (see Pipe.result); this is for the calls the
	// writer and reader recycle.
	c.state = atomic.Uint32{}
	c.Buf = c.Buf[:0]
}

// dropReplies empties the replies, clearing the references they hold to
// bytes the caller now owns, except for a lone small reply: the reader
// wrote it on line 2, the caller has just read it there, and clearing it
// would be one more write to a line the reader is about to write again.
// Such a reply stays referenced until the call is next in line for a
// reply (see claim), at most largeBuf bytes per pooled call, as Buf keeps
// its bytes.
func (c *Call) dropReplies() {
	if len(c.replies) == 1 && &c.replies[0] == &c.one[0] && c.one[0].Small(largeBuf) {
		c.replies = c.replies[:0]
		return
	}
	clear(c.replies)
	c.replies = c.replies[:0]
}

// uncharge gives the call's bytes back to the pending limit: once it has
// been answered, failed or dropped, it no longer holds the connection up.
func (c *Call) uncharge() {
	if c.charged != 0 {
		c.budget.release(c.charged)
		c.charged = 0
	}
}

// complete records the outcome and wakes the caller, or recycles the call if
// nobody waits for it any more.
func (c *Call) complete(err error) {
	c.err = err
	c.uncharge()
	if c.state.Swap(stateDone) == stateAbandoned || c.detached {
		c.Release()
		return
	}
	c.done <- struct{}{}
}

// claim is the reader's store to the two lines it fills when the call is
// answered (line 1, the outcome; line 2, the reply), made as soon as the
// call is next in line. The lines were last held by the call's caller or
// the writer, on another processor; the store fetches them while the
// reader parses the reply, instead of leaving complete's atomic swap to
// wait for them (bench/RESULTS.md#client-ab). It changes nothing the call
// holds: err is nil until complete, and the reply it clears is a stale one
// that dropReplies left.
func (c *Call) claim() {
	c.err = nil
	c.one[0] = resp.Value{}
}

// markSent is the writer's claim on a queued call. It fails if the caller
// gave up before the call reached the wire; the call is then not written,
// and the writer recycles it.
func (c *Call) markSent() bool {
	return c.state.CompareAndSwap(stateQueued, stateSent)
}

// abandon is the caller's way out when its context ends. It reports the
// state the call was in (queued: never written; sent: on the wire), or
// ok false if the call has already completed, in which case the result is
// (or is about to be) in done.
func (c *Call) abandon() (was uint32, ok bool) {
	for {
		s := c.state.Load()
		if s == stateDone {
			return s, false
		}
		if c.state.CompareAndSwap(s, stateAbandoned) {
			return s, true
		}
	}
}

// CallPool recycles calls. One pool can serve many pipes (every connection
// of one client), so a call can be encoded before the connection it goes to
// is chosen.
type CallPool struct {
	p sync.Pool
}

// NewCallPool returns an empty pool.
func NewCallPool() *CallPool {
	cp := &CallPool{}
	cp.p.New = func() any {
		c := &Call{done: make(chan struct{}, 1), pool: &cp.p}
		c.Expect = c.expectOne[:0]
		c.replies = c.one[:0]
		return c
	}
	return cp
}

// Get returns an empty call.
func (cp *CallPool) Get() *Call {
	c := cp.p.Get().(*Call)
	c.Buf = c.Buf[:0]
	return c
}
