package zipline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ziplinekv/zipline/internal/pipe"
	"github.com/ziplinekv/zipline/internal/resp"
)

// A request is what crosses the seam between the command layer and a
// carrier: one or more encoded commands in a pipe.Call, written together,
// and what routing needs to know about each without parsing them again.
// A Client method sends a request of one command; a Batch, one of many.
type request struct {
	s    *shared
	call *pipe.Call // nil while a carrier holds it, and after a failed send
	cmds []cmdInfo  // one per command in call, MULTI and EXEC included
	// tx: the commands are wrapped in MULTI ... EXEC.
	tx bool
	// blocking: a command may wait server-side (BLPOP...), so the request
	// needs a connection of its own.
	blocking bool
	// replies, after a successful send: one per command, in order.
	replies []resp.Value
}

// cmdInfo is what the seam knows of one command.
type cmdInfo struct {
	start, end int // its bytes in call.Buf
}

func (s *shared) newRequest() *request {
	r := s.requests.Get().(*request)
	r.call = s.calls.Get()
	return r
}

// release returns the request and its call to their pools. Reply bytes
// already handed out stay valid: the parser allocates them per reply.
func (r *request) release() {
	if r.call != nil {
		r.call.Release()
		r.call = nil
	}
	r.cmds = r.cmds[:0]
	r.tx, r.blocking = false, false
	r.replies = nil
	r.s.requests.Put(r)
}

// add encodes one command into r: its name, then its arguments, the stored
// values among them compressed when the Client's view compresses their
// family (valueCommands). expect is the set of reply types that can answer
// it. It returns how to expand the stored values in its reply.
func (c *Client) add(r *request, name string, args []arg, expect resp.TypeSet) (valueReply, error) {
	values, vr, err := c.lookupValues(name, args)
	if err != nil {
		return vr, err
	}
	call := r.call
	start := len(call.Buf)
	call.Buf = resp.AppendArrayLen(call.Buf, 1+len(args))
	call.Buf = resp.AppendBulkString(call.Buf, name)
	for i := range args {
		if values.has(i) {
			call.Buf = c.codec.appendValue(call.Buf, args[i].valueBytes())
			continue
		}
		call.Buf = appendArg(call.Buf, &args[i])
	}
	call.N++
	call.Expect = append(call.Expect, expect)
	r.cmds = append(r.cmds, cmdInfo{start: start, end: len(call.Buf)})
	return vr, nil
}

// valueBytes returns a stored value's bytes, whatever its argument kind.
func (a *arg) valueBytes() []byte {
	switch a.kind {
	case argBytes:
		return a.b
	case argString, argKey:
		return unsafeBytes(a.s)
	}
	return []byte(a.text())
}

// wait extends how long the request's replies may take: a blocking command
// may hold them up to d (negative: without limit).
func (r *request) wait(d time.Duration) {
	switch p := &r.call.Patience; {
	case *p < 0:
	case d < 0:
		*p = -1
	default:
		*p += d
	}
	r.blocking = true
}

// sendOn sends r on one connection. While the pipe has the call, r does
// not: after a failure the pipe recycles it.
func (r *request) sendOn(ctx context.Context, p *pipe.Pipe) error {
	call := r.call
	r.call = nil
	if err := p.Do(ctx, call); err != nil {
		return err
	}
	r.call, r.replies = call, call.Replies()
	return nil
}

// replyError turns a reply that is an error, or a stand-in for a reply
// over the configured limits, into the error its caller gets.
func (s *shared) replyError(v resp.Value) error {
	switch {
	case v.IsError():
		return serverError(v)
	case v.Type() == resp.Oversize:
		le := v.Oversize(s.limits)
		return &ReplyLimitError{What: le.What, Size: le.Size, Limit: le.Limit}
	}
	return nil
}

// ReplyLimitError is a reply larger than Options.ReplyLimits allow. The
// client skipped it without reading it into memory; only the command it
// answered failed, and the connection stays in use.
type ReplyLimitError struct {
	What  string // "bulk length" or "aggregate length"
	Size  int64  // what the reply announced
	Limit int64
}

func (e *ReplyLimitError) Error() string {
	return fmt.Sprintf("zipline: reply %s %d exceeds the limit of %d (Options.ReplyLimits)", e.What, e.Size, e.Limit)
}

// Is makes a ReplyLimitError match ErrReplyTooLarge.
func (e *ReplyLimitError) Is(target error) bool { return target == ErrReplyTooLarge }

// ErrReplyTooLarge is matched by every *ReplyLimitError.
var ErrReplyTooLarge = errors.New("zipline: reply exceeds the configured limits")
