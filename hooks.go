package zipline

import (
	"context"
	"net"
	"strings"
	"time"

	"github.com/ziplinekv/zipline/internal/resp"
)

// A Hook wraps stages of a Client's work, as go-redis's hooks do. Each
// method receives the next stage and returns the stage to run instead,
// which can observe the call, change its context or its result, or
// short-circuit it by returning without calling next. Hooks are given in
// Options.Hooks and run in order: the first is outermost. A method may
// return next unchanged to leave its stage alone.
//
// The stages are dialing a connection, processing one command, and
// processing a batch or transaction (Batch.Exec). Hooks see commands as
// they go on the wire: stored values already compressed, and replies
// before they are expanded and decoded.
type Hook interface {
	DialHook(next DialFunc) DialFunc
	ProcessHook(next ProcessFunc) ProcessFunc
	ProcessBatchHook(next ProcessBatchFunc) ProcessBatchFunc
}

// DialFunc opens a network connection to a server.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// ProcessFunc runs one command and leaves its reply in cmd.
type ProcessFunc func(ctx context.Context, cmd *Cmd) error

// ProcessBatchFunc runs the commands of a Batch (or Tx) in one round trip
// and leaves each reply in its Cmd. Its error is the batch's: a connection
// failure, or ErrTxFailed.
type ProcessBatchFunc func(ctx context.Context, cmds []*Cmd) error

// Cmd is one command as hooks see it: its name and arguments, and, once
// processed, its reply. A hook that short-circuits sets the reply itself.
type Cmd struct {
	wire  []byte // the encoded command, valid while the hook runs
	reply Value
	err   error

	// What the innermost stage sends: the request (of one command, or the
	// batch's), through the Client's carrier.
	c *Client
	r *request
}

// Name returns the command's name, as sent ("GET", "EVALSHA"). It reads
// only the name, whatever the size of the command.
func (c *Cmd) Name() string {
	n, rest := header(c.wire, '*')
	if n < 1 {
		return ""
	}
	l, rest := header(rest, '$')
	if l < 0 || l > len(rest) {
		return ""
	}
	return string(rest[:l])
}

// NArgs returns the number of arguments after the name.
func (c *Cmd) NArgs() int {
	n, _ := header(c.wire, '*')
	return max(n-1, 0)
}

// header reads a RESP header line ("*3\r\n", "$5\r\n") of type t at the
// start of b: its number, and what follows; -1 if b does not start so.
func header(b []byte, t byte) (int, []byte) {
	if len(b) < 4 || b[0] != t {
		return -1, nil
	}
	n := 0
	for i := 1; i < len(b); i++ {
		switch c := b[i]; {
		case c >= '0' && c <= '9':
			n = n*10 + int(c-'0')
		case c == '\r' && i+1 < len(b) && b[i+1] == '\n' && i > 1:
			return n, b[i+2:]
		default:
			return -1, nil
		}
	}
	return -1, nil
}

// Args returns the command's arguments after its name, as sent: stored
// values are compressed when the Client compresses them. The slices alias
// the request and are valid only while the hook runs.
func (c *Cmd) Args() [][]byte {
	args := c.args(-1)
	if len(args) == 0 {
		return nil
	}
	return args[1:]
}

// args parses the encoded command's bulk strings, name first.
func (c *Cmd) args(n int) [][]byte {
	var v resp.Value
	rd := resp.NewReader(strings.NewReader(unsafeString(c.wire)), len(c.wire)+1, resp.Limits{})
	if err := rd.ReadValue(&v); err != nil {
		return nil
	}
	elems := v.Elems()
	out := make([][]byte, len(elems))
	for i, e := range elems {
		out[i] = e.Bytes()
	}
	return out
}

// Reply returns the command's reply and error, once processed: an error
// reply is a *ServerError, a null is a Value whose IsNil is true.
func (c *Cmd) Reply() (Value, error) { return c.reply, c.err }

// SetReply sets the command's reply, so that the caller gets it: a hook
// that short-circuits the command sets it instead of calling next, and one
// that changes the result overwrites it after. The reply must fit the
// command: a typed method decodes it (a Get wants a string or a null).
func (c *Cmd) SetReply(v Value, err error) { c.reply, c.err = v, err }

// Values for hooks that answer commands themselves.

// StringReply returns a bulk string reply.
func StringReply(b []byte) Value { return Value{resp.StringValue(b)} }

// IntReply returns an integer reply.
func IntReply(n int64) Value { return Value{resp.IntValue(n)} }

// NilReply returns a null reply.
func NilReply() Value { return Value{resp.NullValue()} }

// hooks is a Client's chain of hooks, built once by New.
type hooks struct {
	dial         func(DialFunc) DialFunc
	process      ProcessFunc      // nil when no hook wraps it
	processBatch ProcessBatchFunc // nil when no hook wraps it
}

// buildHooks chains the hooks over the innermost stages. OnCommand is one
// more hook, outermost, so it times everything the others do.
func buildHooks(o Options, innerProcess ProcessFunc, innerBatch ProcessBatchFunc) hooks {
	hs := o.Hooks
	if o.OnCommand != nil {
		hs = append([]Hook{onCommandHook(o.OnCommand)}, hs...)
	}
	var h hooks
	h.dial = func(d DialFunc) DialFunc {
		for i := len(hs) - 1; i >= 0; i-- {
			d = hs[i].DialHook(d)
		}
		return d
	}
	if len(hs) == 0 {
		return h
	}
	h.process, h.processBatch = innerProcess, innerBatch
	for i := len(hs) - 1; i >= 0; i-- {
		h.process = hs[i].ProcessHook(h.process)
		h.processBatch = hs[i].ProcessBatchHook(h.processBatch)
	}
	return h
}

// onCommandHook reports every command and batch to f (Options.OnCommand).
type onCommandHook func(ctx context.Context, ev CommandEvent)

func (f onCommandHook) DialHook(next DialFunc) DialFunc { return next }

func (f onCommandHook) ProcessHook(next ProcessFunc) ProcessFunc {
	return func(ctx context.Context, cmd *Cmd) error {
		start := time.Now()
		err := next(ctx, cmd)
		ev := CommandEvent{Name: cmd.Name(), Commands: 1, Duration: time.Since(start), Err: err}
		if ev.Err == nil {
			_, ev.Err = cmd.Reply()
		}
		f(ctx, ev)
		return err
	}
}

func (f onCommandHook) ProcessBatchHook(next ProcessBatchFunc) ProcessBatchFunc {
	return func(ctx context.Context, cmds []*Cmd) error {
		start := time.Now()
		err := next(ctx, cmds)
		ev := CommandEvent{Name: "BATCH", Commands: len(cmds), Duration: time.Since(start), Err: err}
		if ev.Commands > 1 && cmds[0].Name() == "MULTI" {
			ev.Name, ev.Commands = "TX", ev.Commands-2
		}
		for _, cmd := range cmds { // Exec's error: the first error reply
			if ev.Err != nil {
				break
			}
			ev.Err = cmd.err
		}
		f(ctx, ev)
		return err
	}
}

// process runs a one-command request through the hooks.
func (c *Client) processHooked(ctx context.Context, r *request) (resp.Value, error) {
	cmd := &Cmd{wire: r.call.Buf, c: c, r: r}
	if err := c.s.hooks.process(ctx, cmd); err != nil {
		return resp.Value{}, err
	}
	return cmd.reply.v, cmd.err
}

// sendOne is the innermost process stage: the request goes to the carrier.
func sendOne(ctx context.Context, cmd *Cmd) error {
	if err := cmd.c.carrier.send(ctx, cmd.r); err != nil {
		return err
	}
	replies, errs := cmd.r.merged()
	if errs != nil && errs[0] != nil {
		return errs[0]
	}
	cmd.reply, cmd.err = Value{replies[0]}, cmd.c.s.replyError(replies[0])
	return nil
}

// roundTripHooked runs a batch's request through the hooks, and returns a
// reply and error per command on the wire.
func (c *Client) roundTripHooked(ctx context.Context, r *request) ([]reply, error) {
	cmds := make([]*Cmd, len(r.cmds))
	for i, ci := range r.cmds {
		cmds[i] = &Cmd{wire: r.call.Buf[ci.start:ci.end], c: c, r: r}
	}
	if err := c.s.hooks.processBatch(ctx, cmds); err != nil {
		return nil, err
	}
	// The hooks may have set any reply: take them all from the Cmds.
	r.replies, r.errs = make([]resp.Value, len(cmds)), make([]error, len(cmds))
	for i, cmd := range cmds {
		r.replies[i], r.errs[i] = cmd.reply.v, cmd.err
	}
	return c.s.replies(r), nil
}

// sendBatch is the innermost batch stage.
func sendBatch(ctx context.Context, cmds []*Cmd) error {
	if len(cmds) == 0 {
		return nil
	}
	c, r := cmds[0].c, cmds[0].r
	if err := c.carrier.send(ctx, r); err != nil {
		return err
	}
	for i, v := range r.replies {
		cmds[i].reply, cmds[i].err = Value{v}, c.s.replyError(v)
		if r.errs != nil && r.errs[i] != nil {
			cmds[i].err = r.errs[i]
		}
	}
	return nil
}
