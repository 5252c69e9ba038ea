package zipline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ziplinekv/zipline/internal/pipe"
	"github.com/ziplinekv/zipline/internal/resp"
)

// ErrNotExecuted is returned by a Future whose Batch has not run yet.
var ErrNotExecuted = errors.New("zipline: batch not executed yet")

// Batch queues commands and sends them together with Exec: one write, one
// round trip, and the commands arrive back to back even though other
// goroutines share the connection. Each queuing method returns a Future
// that holds the command's result once Exec returns.
//
// A Batch from Client.Tx is a transaction: Exec wraps the commands in
// MULTI/EXEC, so they run atomically. On a Client from Watch, Exec fails
// with ErrTxFailed if a watched key changed.
//
// A Batch is not safe for concurrent use. After Exec it is empty and can
// be filled again.
type Batch struct {
	c *Client // encodes and decodes this view's commands
	*queue
}

// queue is a batch's state, shared by its views (see Raw).
type queue struct {
	tx bool
	// call carries the encoded commands: taken from the pipe's pool at the
	// first command, so a batch encodes into a warm buffer and Exec sends
	// it as is.
	call     *pipe.Call
	pending  []settler
	blocking bool  // holds a blocking command: run on a dedicated connection
	err      error // a command that could not be queued
}

// Batch returns an empty batch.
func (c *Client) Batch() *Batch { return &Batch{c: c, queue: &queue{}} }

// Tx returns an empty transaction: a Batch run inside MULTI/EXEC.
func (c *Client) Tx() *Batch { return &Batch{c: c, queue: &queue{tx: true}} }

// Raw returns a view of the same batch whose commands store and read values
// as they are, without compression (see Client.Raw). Commands queued through
// either view run together, in order, on Exec.
func (b *Batch) Raw() *Batch { return &Batch{c: b.c.Raw(), queue: b.queue} }

// buf returns the buffer commands are encoded into.
func (b *Batch) buf() *[]byte {
	if b.call == nil {
		b.call = b.c.pipe.NewCall()
		if b.tx {
			b.call.Buf = append(b.call.Buf, multiCommand...)
		}
	}
	return &b.call.Buf
}

// Len returns the number of queued commands.
func (b *Batch) Len() int { return len(b.pending) }

// IsTx reports whether the batch runs as a MULTI/EXEC transaction.
func (b *Batch) IsTx() bool { return b.tx }

// settler receives one command's reply after Exec.
type settler interface {
	settle(v resp.Value, err error)
}

// Future is the result of a command queued in a Batch.
type Future[T any] struct {
	c   *Client // decodes the reply as the queuing view would
	dec decoder[T]
	val T
	err error
}

func (f *Future[T]) settle(v resp.Value, err error) {
	switch {
	case err != nil:
		f.err = err
	case v.IsError():
		f.err = serverError(v)
	default:
		f.val, f.err = f.dec(f.c, v)
	}
}

// Result returns the command's result and error.
func (f *Future[T]) Result() (T, error) { return f.val, f.err }

// Val returns the result, or the zero value on error.
func (f *Future[T]) Val() T { return f.val }

// Err returns the command's error: ErrNotExecuted before Exec, Nil for a
// null reply, a *ServerError for an error reply, or the batch's error.
func (f *Future[T]) Err() error { return f.err }

// add queues one command built from name and args.
func add[T any](b *Batch, dec decoder[T], name string, args ...arg) *Future[T] {
	buf := b.buf()
	*buf = b.c.appendCommand(*buf, name, args)
	f := &Future[T]{c: b.c, dec: dec, err: ErrNotExecuted}
	b.pending = append(b.pending, f)
	return f
}

// addBlocking queues a blocking command. Outside a transaction it makes
// the whole batch run on a dedicated connection; inside MULTI, blocking
// commands do not block.
func addBlocking[T any](b *Batch, dec decoder[T], name string, args ...arg) *Future[T] {
	b.blocking = b.blocking || !b.tx
	return add(b, dec, name, args...)
}

// Do queues any command, as Client.Do sends one.
func (b *Batch) Do(args ...any) *Future[Value] {
	f := &Future[Value]{c: b.c, dec: decValue, err: ErrNotExecuted}
	if b.err != nil {
		return f
	}
	var nameArg string
	ok := len(args) > 0
	if ok {
		nameArg, ok = argText(args[0])
	}
	if !ok {
		b.err = errors.New("zipline: Batch.Do needs a command name")
		return f
	}
	var nameBuf [32]byte
	name := upper(nameBuf[:0], nameArg)
	switch classify(string(name), args) {
	case classForbidden:
		b.err = &CommandError{Command: string(name), Reason: forbiddenReason}
		return f
	case classConnState:
		if b.c.lease == nil || b.tx {
			b.err = &CommandError{Command: string(name), Reason: connStateReason}
			return f
		}
		b.c.lease.dirty.Store(true)
	case classBlocking:
		b.blocking = b.blocking || !b.tx
	}
	if err := b.c.checkCompatible(string(name)); err != nil {
		b.err = err
		return f
	}
	buf := b.buf()
	start := len(*buf)
	vc, compress := b.c.valueCommandFor(string(name))
	var err error
	if *buf, err = b.c.appendDoArgs(*buf, args, vc, compress); err != nil {
		*buf = (*buf)[:start]
		b.err = fmt.Errorf("zipline: %s: %w", name, err)
		return f
	}
	if compress {
		f.dec = func(c *Client, v resp.Value) (Value, error) {
			v, err := c.decodeReply(v, vc)
			return Value{v}, err
		}
	}
	b.pending = append(b.pending, f)
	return f
}

var (
	multiCommand = resp.AppendBulkString(resp.AppendArrayLen(nil, 1), "MULTI")
	execCommand  = resp.AppendBulkString(resp.AppendArrayLen(nil, 1), "EXEC")
)

// Exec sends the queued commands in one round trip and fills their
// futures. It returns an error if the batch could not be sent or its
// connection failed (every future then holds that error), ErrTxFailed for
// a transaction aborted by WATCH, and otherwise the first error reply of
// any command, so that a batch of writes needs one check. A null reply is
// not an error here; the futures report it as Nil.
func (b *Batch) Exec(ctx context.Context) error {
	pending, err, call := b.pending, b.err, b.call
	b.pending, b.err, b.call, b.blocking = nil, nil, nil, false
	if err != nil {
		if call != nil {
			call.Release()
		}
		b.fail(pending, err)
		return err
	}
	if len(pending) == 0 {
		if call != nil {
			call.Release()
		}
		return nil
	}
	call.N = len(pending)
	if b.tx {
		call.Buf = append(call.Buf, execCommand...)
		call.N += 2
	}
	var start time.Time
	if b.c.s.opts.OnCommand != nil {
		start = time.Now()
	}
	err = b.send(ctx, call)
	if err == nil {
		err = b.settle(pending, call)
		call.Release()
	} else {
		b.fail(pending, err)
	}
	if b.c.s.opts.OnCommand != nil {
		name := "BATCH"
		if b.tx {
			name = "TX"
		}
		b.c.s.opts.OnCommand(ctx, CommandEvent{Name: name, Commands: len(pending), Duration: time.Since(start), Err: err})
	}
	return err
}

func (b *Batch) send(ctx context.Context, call *pipe.Call) error {
	switch {
	case b.c.lease != nil:
		return b.c.lease.do(ctx, call)
	case b.blocking:
		return b.c.s.dedicated.do(ctx, call)
	}
	return b.c.pipe.Do(ctx, call)
}

func (b *Batch) fail(pending []settler, err error) {
	for _, f := range pending {
		f.settle(resp.Value{}, err)
	}
}

// settle distributes the replies, and returns Exec's error.
func (b *Batch) settle(pending []settler, call *pipe.Call) error {
	replies := call.Replies()
	if !b.tx {
		for i, f := range pending {
			f.settle(replies[i], nil)
		}
		return firstError(replies)
	}
	// MULTI's +OK, one +QUEUED (or a queuing error) per command, EXEC's
	// reply: the array of results, null if WATCH aborted, or EXECABORT.
	if replies[0].IsError() {
		err := serverError(replies[0])
		b.fail(pending, err)
		return err
	}
	queued := replies[1 : len(replies)-1]
	exec := replies[len(replies)-1]
	switch {
	case exec.IsNull():
		b.fail(pending, ErrTxFailed)
		return ErrTxFailed
	case exec.IsError():
		execErr := serverError(exec)
		for i, f := range pending {
			if queued[i].IsError() { // the command that made EXEC abort
				f.settle(queued[i], nil)
			} else {
				f.settle(resp.Value{}, execErr)
			}
		}
		return execErr
	}
	results := exec.Elems()
	if len(results) != len(pending) {
		err := fmt.Errorf("zipline: EXEC returned %d results for %d commands", len(results), len(pending))
		b.fail(pending, err)
		return err
	}
	for i, f := range pending {
		f.settle(results[i], nil)
	}
	return firstError(results)
}

func firstError(replies []resp.Value) error {
	for _, r := range replies {
		if r.IsError() {
			return serverError(r)
		}
	}
	return nil
}
