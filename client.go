package zipline

// This file is the Client: it encodes commands, expands stored values,
// runs hooks and decodes replies. It reaches the servers only through a
// carrier (carrier.go), as net/http's client.go reaches the network
// through transport.go; connect.go makes the carriers.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/ziplinekv/zipline/internal/resp"
)

// Client is a handle to a Redis or Valkey deployment: one server, a
// Sentinel group (following its primary through failovers) or a Cluster
// (routing each command by the slot of its keys), chosen by Options. It is
// safe for concurrent use by any number of goroutines, and meant to be
// created once and shared: requests from all goroutines go out batched on
// one connection per server (see the package documentation), so there is
// no pool to size.
//
// Blocking commands (BLPOP, XREAD BLOCK, WAIT...) run on a small pool of
// dedicated connections, so they never stall the shared one. Close
// releases everything it holds.
type Client struct {
	s *shared
	// carrier takes this Client's requests: the shared connection, or, on a
	// Client from Dedicated or Watch, a lease of one connection.
	carrier carrier
	// codec compresses values; nil when compression is off (or on Raw).
	codec *valueCodec
}

// New connects to the server described by opts and returns a Client. The
// first connection is made before New returns, so a wrong address or
// password is reported here; later losses reconnect in the background.
// With Options.LazyConnect, New returns at once and connects in the
// background.
func New(opts Options) (*Client, error) {
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	vc, err := newValueCodec(opts.Compression)
	if err != nil {
		return nil, err
	}
	s := &shared{
		opts:  opts,
		codec: vc,
		calls: newCallPool(),
		limits: resp.Limits{
			MaxBulkLen:      opts.ReplyLimits.MaxBulkLen,
			MaxAggregateLen: opts.ReplyLimits.MaxAggregateLen,
			MaxDepth:        opts.ReplyLimits.MaxDepth,
		},
	}
	s.requests.New = func() any { return &request{s: s} }
	s.marksReads = opts.marksReads()
	s.hooks = buildHooks(opts, sendOne, sendBatch)
	if opts.ClientCache.MaxBytes > 0 {
		s.cache = newClientCache(opts.ClientCache)
	}
	if opts.Credentials != nil {
		s.creds = newCredentialsRenewal(opts.Credentials, opts.Logger)
	}
	var k carrier
	if opts.LazyConnect {
		k = newConnecting(s)
	} else if k, err = s.connect(context.Background()); err != nil {
		if s.cache != nil {
			s.cache.close()
		}
		if s.creds != nil {
			s.creds.close()
		}
		return nil, err
	}
	s.top = k
	return &Client{s: s, carrier: k, codec: vc}, nil
}

// shards returns a Client pinned to each shard, and with replicas to each
// replica c holds a connection to, for commands that concern every shard or
// node (policy.go; SCAN): on a single server, c's view of it.
func (c *Client) shards(replicas bool) []*Client {
	var out []*Client
	c.carrier.eachShard(replicas, func(k carrier) error {
		out = append(out, c.with(k))
		return nil
	})
	return out
}

// with returns a Client that shares c's settings and view but sends through
// another carrier.
func (c *Client) with(k carrier) *Client {
	return &Client{s: c.s, carrier: k, codec: c.codec}
}

// Close closes the Client. Requests already queued or in flight on the
// shared connection get their replies first (within the I/O timeout);
// new ones fail with ErrClosed, and so do commands running on dedicated
// connections (a BLPOP waiting without a deadline, a Watch callback),
// which are interrupted. Every call of Close returns once all of that is
// done.
//
// On a Client from Dedicated, Close instead returns the connection to the
// pool. Raw views share their Client's connection: closing one closes it.
func (c *Client) Close() error {
	if c.carrier != c.s.top { // a lent connection: give it back
		return c.carrier.close()
	}
	c.s.closed.Do(func() {
		c.s.subscriptions().close() // and none after this
		c.s.closeErr = c.s.top.close()
		if c.s.cache != nil {
			c.s.cache.close()
		}
		if c.s.creds != nil {
			c.s.creds.close()
		}
	})
	return c.s.closeErr
}

// Logger returns the logger the Client reports to (Options.Logger), for
// packages built on the Client.
func (c *Client) Logger() *slog.Logger { return c.s.opts.Logger }

// Protocol reports the RESP version in use: 2 or 3.
func (c *Client) Protocol() int { return c.carrier.protocol() }

// run sends one command and decodes its reply: the path of every typed
// Client method. It is small enough to be inlined, and hands the command on
// by its address: passed by value, the command and run's other arguments
// did not fit in registers, and went through memory once more on every
// call (bench/RESULTS.md#client-ab).
func run[T any](ctx context.Context, c *Client, cm command[T]) (T, error) {
	return runCommand(ctx, c, &cm)
}

// runChecked is run for a command whose builder can refuse it.
func runChecked[T any](ctx context.Context, c *Client, cm command[T], err error) (T, error) {
	if err != nil {
		var zero T
		return zero, err
	}
	return runCommand(ctx, c, &cm)
}

// runCommand is run's body.
func runCommand[T any](ctx context.Context, c *Client, cm *command[T]) (T, error) {
	var v resp.Value
	var vr valueReply
	var err error
	if cm.spec.partial || cm.spec.class >= classConnState {
		if err := c.admit(cm.spec); err != nil {
			var zero T
			return zero, err
		}
	}
	// The choice between the two paths stays here, not in a helper of its
	// own: every frame between the method and the pipe is one more to come
	// back through, cold, when the caller resumes with its reply.
	if d := fastDirect(c.carrier); d != nil && cm.block == 0 && c.s.hooks.process == nil {
		vr, err = c.sendDirect(ctx, d, &v, cm.spec, cm.args, cm.dec.accepts)
	} else if cm.spec.fansOut() {
		v, err = c.sendFanout(ctx, cm.spec, cm.args, cm.dec.accepts, cm.block)
	} else {
		v, vr, err = c.sendRequest(ctx, cm.spec, cm.args, cm.dec.accepts, cm.block)
	}
	if err == nil && vr.shape != replyNone {
		v, err = vr.expand(v)
	}
	if err != nil {
		var zero T
		return zero, err
	}
	return cm.dec.decode(v)
}

// sendRequest sends one command as a request through the Client's carrier
// (and its hooks), and returns its reply and how to expand it.
func (c *Client) sendRequest(ctx context.Context, spec *commandSpec, args []arg, expect resp.TypeSet, block time.Duration) (resp.Value, valueReply, error) {
	r := c.s.newRequest()
	vr, err := c.add(r, spec, args, expect)
	if err != nil {
		r.release()
		return resp.Value{}, vr, err
	}
	if block != 0 {
		r.wait(block)
	}
	v, err := c.send(ctx, r)
	return v, vr, err
}

// send runs a one-command request, through the hooks if there are any,
// and returns its reply, turning error replies into errors. It releases
// the request.
func (c *Client) send(ctx context.Context, r *request) (resp.Value, error) {
	var v resp.Value
	var err error
	if c.s.hooks.process != nil {
		v, err = c.processHooked(ctx, r)
	} else if err = c.carrier.send(ctx, r); err == nil {
		if len(r.splits) == 0 {
			v = r.replies[0]
			if r.errs != nil {
				err = r.errs[0]
			}
		} else {
			replies, errs := r.merged()
			v = replies[0]
			if errs != nil {
				err = errs[0]
			}
		}
	}
	if err == nil && v.Type().Failed() {
		err = c.s.errorOf(v)
	}
	r.release()
	return v, err
}

// Do sends any command, given as its name and arguments, and returns the
// reply. Arguments are encoded as go-redis encodes them: strings and byte
// slices as they are; integers, floats and bools (1 or 0) in decimal; a
// time.Duration as its nanoseconds; a time.Time in RFC 3339 with
// nanoseconds; nil as the empty string; and encoding.BinaryMarshalers by
// their MarshalBinary. An error reply is returned as a *ServerError; a
// null reply is a Value whose IsNil is true (and whose As methods return
// Nil).
//
// Stored values are compressed and expanded as by the typed methods (see
// Compression). Blocking commands run on a dedicated connection. Commands
// that would change the shared connection's state (SELECT, WATCH, MULTI,
// CLIENT TRACKING...) are refused with a *CommandError; run them on a
// Client from Dedicated, or use Watch and Tx.
func (c *Client) Do(ctx context.Context, args ...any) (Value, error) {
	var buf [8]arg
	cm, err := c.doCommand(buf[:0], args)
	if err != nil {
		return Value{}, err
	}
	return run(ctx, c, cm)
}

// doCommand turns Do's arguments into a command, refusing what the Client
// cannot send. The command's row is looked up here, once.
func (c *Client) doCommand(buf []arg, args []any) (command[Value], error) {
	if len(args) == 0 {
		return command[Value]{}, errors.New("zipline: Do needs a command")
	}
	var nameArg string
	switch x := args[0].(type) {
	case string:
		nameArg = x
	case []byte:
		nameArg = string(x)
	default:
		return command[Value]{}, fmt.Errorf("zipline: command name must be a string, not %T", args[0])
	}
	cargs := buf
	for i, a := range args[1:] {
		ca, err := anyArg(i+1, a)
		if err != nil {
			return command[Value]{}, fmt.Errorf("zipline: %s: %w", strings.ToUpper(nameArg), err)
		}
		cargs = append(cargs, ca)
	}
	var nameBuf [32]byte
	spec, cargs := lookupSpec(string(upper(nameBuf[:0], nameArg)), cargs)
	cm := command[Value]{spec: spec, args: cargs, dec: decValue}
	if spec.classFor(cargs) == classBlocking {
		cm.block = spec.block.timeout(cargs)
		if cm.block == 0 {
			cm.block = -1
		}
	}
	return cm, nil
}

// admit checks, for a command whose row asks for it (partial, or of a
// connection-state or forbidden class), that the Client may send it: the
// server has it, and the connection may carry it. A connection-state
// command is allowed only on a lent connection (Dedicated, Watch), which
// it taints: closed, not lent again. Forbidden commands never go.
func (c *Client) admit(spec *commandSpec) error {
	switch spec.class {
	case classForbidden:
		return &CommandError{Command: spec.fullName(), Reason: forbiddenReason}
	case classConnState:
		if c.carrier == c.s.top { // the shared connection
			return &CommandError{Command: spec.fullName(), Reason: connStateReason}
		}
		c.carrier.taint()
	}
	return c.s.notOnServer(spec)
}

const (
	forbiddenReason = "switches or ends the connection's protocol mode and is not supported " +
		"(pub/sub, MONITOR, replication, CLIENT REPLY, QUIT); use Close to disconnect"
	connStateReason = "changes connection state, which would leak into every user of the " +
		"shared connection; use Options (DB, ClientName), Tx, Watch, or a Client from Dedicated"
)
