package zipline

import (
	"context"
	"fmt"

	"github.com/ziplinekv/zipline/internal/resp"
)

// Batch queues commands and sends them together with Exec: one write, one
// round trip, and the commands arrive back to back even though other
// goroutines share the connection. Each queuing method returns a Future
// that holds the command's result once Exec returns.
//
// A Batch from Client.Tx is a transaction: Exec wraps the commands in
// MULTI/EXEC, so they run atomically. On a Client from Watch, Exec fails
// with ErrTxFailed if a watched key changed.
//
// On a cluster, a Batch routes each command by its keys' slots. Commands
// the servers send to every shard or node (DBSIZE, FLUSHALL, SCRIPT LOAD)
// are refused in it with a *CommandError: run them on the Client, which
// sends them to each and merges the replies.
//
// The values its Futures hold are the caller's to keep and modify, but
// values that arrived together may share one allocation, as an MGET
// reply's do: holding one keeps the others' bytes in memory.
//
// A Batch is not safe for concurrent use. After Exec it is empty and can
// be filled again.
type Batch struct {
	c *Client // the view that encodes and decodes this Batch's commands
	*queue
}

// queue is a batch's state, shared by its views (see Raw).
type queue struct {
	tx bool
	// r carries the encoded commands: taken at the first command, so a
	// batch encodes into a warm buffer and Exec sends it as is.
	r       *request
	pending []queued
	// err, in a transaction, is the first command that could not be
	// queued: the transaction is all or nothing, so Exec sends nothing and
	// fails every command with it. In a batch that is not a transaction a
	// refused command fails alone (queued.err) and the others run.
	err error
	// blocks hands out Futures, a block per result type in use (each a
	// *futureBlock[T]): a batch of many commands allocates a few blocks
	// that double in size rather than a Future each. With more result
	// types than blocks, the oldest block gives way, and the worst case is
	// the old one: an allocation per command. A Future is never handed out
	// twice.
	blocks [4]any
	oldest int
}

// A futureBlock's first Futures come with it; when they are used up it
// allocates twice as many as it last did, up to maxFutureBlock: a batch of
// 50 GETs takes three allocations (8, 16 and 32 Futures) rather than seven
// blocks of eight, and a batch of one command still takes one.
const (
	futureBlockSize = 8
	maxFutureBlock  = 128
)

type futureBlock[T any] struct {
	first [futureBlockSize]Future[T]
	free  []Future[T] // the block's Futures not handed out yet
	size  int         // how many Futures the block last allocated
}

// newFuture returns an unused Future for a command decoded by dec.
func newFuture[T any](q *queue, dec decoderID) *Future[T] {
	var b *futureBlock[T]
	for i := range q.blocks {
		if fb, ok := q.blocks[i].(*futureBlock[T]); ok {
			b = fb
			break
		}
	}
	if b == nil {
		b = new(futureBlock[T])
		b.free, b.size = b.first[:], futureBlockSize
		q.blocks[q.oldest] = b
		q.oldest = (q.oldest + 1) % len(q.blocks)
	}
	if len(b.free) == 0 {
		b.size = min(2*b.size, maxFutureBlock)
		b.free = make([]Future[T], b.size)
	}
	f := &b.free[0]
	b.free = b.free[1:]
	f.dec = dec
	return f
}

// queued is one command waiting for its reply.
type queued struct {
	f settler
	// err: the command was refused before it was encoded (a batch that is
	// not a transaction sends the others); it has no reply.
	err    error
	expand valueReply
	// accepts is what can answer the command inside EXEC's array: queued
	// in a transaction, its own reply on the wire is +QUEUED.
	accepts resp.TypeSet
}

// Batch returns an empty batch.
func (c *Client) Batch() *Batch { return &Batch{c: c, queue: &queue{}} }

// Tx returns an empty transaction: a Batch run inside MULTI/EXEC.
func (c *Client) Tx() *Batch { return &Batch{c: c, queue: &queue{tx: true}} }

// Raw returns a view of the same batch whose commands store and read values
// as they are, without compression (see Client.Raw). Commands queued through
// either view run together, in order, on Exec.
func (b *Batch) Raw() *Batch { return &Batch{c: b.c.Raw(), queue: b.queue} }

// Len returns the number of queued commands.
func (b *Batch) Len() int { return len(b.pending) }

// IsTx reports whether the batch runs as a MULTI/EXEC transaction.
func (b *Batch) IsTx() bool { return b.tx }

// request returns the request commands are encoded into.
func (b *Batch) request() *request {
	if b.r == nil {
		b.r = b.c.s.newRequest()
		if b.pending == nil {
			k := b.r.scratch()
			b.pending, k.queued = k.queued, nil
		}
		if b.tx {
			b.r.tx = true
			b.c.add(b.r, specMULTI, nil, tsStatus)
		}
	}
	return b.r
}

// settler receives one command's reply after Exec.
type settler interface {
	settle(v resp.Value, err error)
}

// Future is the result of a command queued in a Batch.
type Future[T any] struct {
	dec decoderID
	val T
	err error
}

func (f *Future[T]) settle(v resp.Value, err error) {
	if err != nil {
		f.err = err
		return
	}
	f.val, f.err = decoderOf[T](f.dec).decode(v)
}

// Result returns the command's result and error.
func (f *Future[T]) Result() (T, error) { return f.val, f.err }

// Val returns the result, or the zero value on error.
func (f *Future[T]) Val() T { return f.val }

// Err returns the command's error: ErrNotExecuted before Exec, Nil for a
// null reply, a *ServerError for an error reply, or the batch's error.
func (f *Future[T]) Err() error { return f.err }

// enqueue queues one command: the path of every typed Batch method. A
// command the client refuses (its arguments, or its use with the Client's
// settings) fails alone in a batch, with its own error, and the others run;
// in a transaction nothing is sent, and every command fails with the first
// refusal.
func enqueue[T any](b *Batch, cm command[T]) *Future[T] {
	f := newFuture[T](b.queue, cm.dec.id)
	f.err = ErrNotExecuted
	if b.err != nil {
		b.refuse(f, nil)
		return f
	}
	if cm.spec.partial || cm.spec.class >= classConnState {
		err := b.c.admit(cm.spec)
		if err == nil && b.tx && cm.spec.class == classConnState {
			err = &CommandError{Command: cm.spec.fullName(), Reason: connStateReason}
		}
		if err != nil {
			b.refuse(f, err)
			return f
		}
	}
	if !b.tx && cm.spec.fansOut() && b.c.routes() {
		b.refuse(f, &CommandError{Command: cm.spec.fullName(), Reason: fanoutReason})
		return f
	}
	r := b.request()
	expect := cm.dec.accepts
	if b.tx {
		expect = tsQueued
	}
	vr, err := b.c.add(r, cm.spec, cm.args, expect)
	if err != nil {
		b.refuse(f, err)
		return f
	}
	if cm.block != 0 && !b.tx { // inside MULTI, blocking commands do not block
		r.wait(cm.block)
	}
	accepts := cm.dec.accepts
	if vr.read != nil {
		accepts = vr.read.expect // sent as a read of the plaintext
	}
	b.pending = append(b.pending, queued{f: f, expand: vr, accepts: accepts})
	return f
}

// enqueueChecked is enqueue for a command whose builder can refuse it
// (err): it then fails alone, without being encoded.
func enqueueChecked[T any](b *Batch, cm command[T], err error) *Future[T] {
	if err == nil {
		return enqueue(b, cm)
	}
	f := newFuture[T](b.queue, cm.dec.id)
	b.refuse(f, err)
	return f
}

// refuse queues f as a command refused with err (nil: refused for the
// transaction's earlier refusal).
func (b *Batch) refuse(f settler, err error) {
	if b.tx {
		if b.err == nil {
			b.err = err
		}
		err = nil // the transaction's error, given at Exec
	}
	b.pending = append(b.pending, queued{f: f, err: err})
}

// Do queues any command, as Client.Do sends one.
func (b *Batch) Do(args ...any) *Future[Value] {
	cm, err := b.c.doCommand(nil, args)
	cm.dec = decValue
	return enqueueChecked(b, cm, err)
}

var execExpect = resp.Types(resp.Array, resp.Null)

// Exec sends the queued commands in one round trip and fills their
// futures. It returns an error if the batch could not be sent or its
// connection failed (every future then holds that error), ErrTxFailed for
// a transaction aborted by WATCH, and otherwise the first error of any
// command, a refusal by the client or an error reply, so that a batch of
// writes needs one check. A null reply is not an error here; the futures
// report it as Nil.
func (b *Batch) Exec(ctx context.Context) error {
	pending, err, r := b.pending, b.err, b.r
	b.pending, b.err, b.r = nil, nil, nil
	if err == nil && r != nil && b.tx {
		_, err = b.c.add(r, specEXEC, nil, execExpect)
	}
	if err != nil || r == nil || len(r.cmds) == 0 { // nothing to send: empty, or every command refused
		if r != nil {
			r.release()
		}
		fail(pending, err)
		return firstError(pending, err)
	}
	replies, err := b.c.roundTrip(ctx, r)
	if err == nil {
		err = b.settle(pending, replies)
	} else {
		fail(pending, err)
	}
	r.scratch().keepQueued(pending)
	r.release()
	return err
}

// firstError is Exec's error when nothing was sent: err, or the first
// command's refusal.
func firstError(pending []queued, err error) error {
	for _, q := range pending {
		if err != nil {
			break
		}
		err = q.err
	}
	return err
}

// roundTrip sends a batch's request, through the hooks if there are any,
// and returns a reply per command on the wire.
func (c *Client) roundTrip(ctx context.Context, r *request) ([]reply, error) {
	if c.s.hooks.processBatch != nil {
		return c.roundTripHooked(ctx, r)
	}
	if err := c.carrier.send(ctx, r); err != nil {
		return nil, err
	}
	return c.s.replies(r), nil
}

// fail settles every future with err, but those refused before sending,
// which keep their own error.
func fail(pending []queued, err error) {
	for _, q := range pending {
		if q.err != nil {
			q.f.settle(resp.Value{}, q.err)
			continue
		}
		q.f.settle(resp.Value{}, err)
	}
}

// settle distributes the replies, and returns Exec's error.
func (b *Batch) settle(pending []queued, replies []reply) error {
	if !b.tx {
		var first error
		i := 0 // the next reply: refused commands have none
		for _, q := range pending {
			rep := reply{err: q.err}
			if q.err == nil {
				rep = replies[i]
				i++
			}
			if err := b.deliver(q, rep); first == nil {
				first = err
			}
		}
		return first
	}
	// MULTI's +OK, one +QUEUED (or a queuing error) per command, EXEC's
	// reply: the array of results, null if WATCH aborted, or EXECABORT.
	if err := replies[0].err; err != nil {
		fail(pending, err)
		return err
	}
	queuedReplies := replies[1 : len(replies)-1]
	exec := replies[len(replies)-1]
	switch {
	case exec.err != nil:
		for i, q := range pending {
			if err := queuedReplies[i].err; err != nil { // the command that made EXEC abort
				q.f.settle(resp.Value{}, err)
			} else {
				q.f.settle(resp.Value{}, exec.err)
			}
		}
		return exec.err
	case exec.v.IsNull():
		fail(pending, ErrTxFailed)
		return ErrTxFailed
	}
	results := exec.v.Elems()
	if len(results) != len(pending) {
		err := fmt.Errorf("zipline: EXEC returned %d results for %d commands", len(results), len(pending))
		fail(pending, err)
		return err
	}
	var first error
	for i, q := range pending {
		v := results[i]
		rep := reply{v, b.c.s.replyError(v)}
		if rep.err == nil && !q.accepts.Accepts(v.Type()) {
			rep.err = fmt.Errorf("zipline: EXEC result %d: a %s cannot answer the command", i+1, v.Type())
		}
		if err := b.deliver(q, rep); first == nil {
			first = err
		}
	}
	return first
}

// deliver settles one future with its reply: an error reply becomes its
// error, stored values are expanded, then the reply is decoded. It returns
// the reply's error, for Exec's.
func (b *Batch) deliver(q queued, rep reply) error {
	if rep.err != nil {
		q.f.settle(resp.Value{}, rep.err)
		return rep.err
	}
	v := rep.v
	if q.expand.shape != replyNone {
		var err error
		if v, err = q.expand.expand(v); err != nil {
			q.f.settle(resp.Value{}, err)
			return nil
		}
	}
	q.f.settle(v, nil)
	return nil
}

// Pipelined queues commands in a new Batch with fn and runs them in one
// round trip, as go-redis's Pipelined does: it returns fn's error (then
// nothing is sent), or Exec's. The futures fn kept hold the results.
func (c *Client) Pipelined(ctx context.Context, fn func(b *Batch) error) error {
	b := c.Batch()
	if err := fn(b); err != nil {
		return err
	}
	return b.Exec(ctx)
}

// TxPipelined is Pipelined in a transaction (MULTI/EXEC), as go-redis's
// TxPipelined.
func (c *Client) TxPipelined(ctx context.Context, fn func(tx *Batch) error) error {
	tx := c.Tx()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Exec(ctx)
}
