package zipline

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ziplinekv/zipline/internal/pipe"
	"github.com/ziplinekv/zipline/internal/resp"
)

// Client is a connection to one Redis or Valkey server, safe for
// concurrent use by any number of goroutines, and meant to be created once
// and shared. Requests from all goroutines go out batched on one connection
// (see the package documentation); there is no pool to size.
//
// Blocking commands (BLPOP, XREAD BLOCK, WAIT...) run on a small pool of
// dedicated connections, so they never stall the shared one.
type Client struct {
	pipe *pipe.Pipe
	s    *shared
	// lease is set on a Client bound to one dedicated connection (from
	// Dedicated or Watch); nil on the shared Client.
	lease *lease
	// codec compresses values; nil when compression is off (or on Raw).
	codec *valueCodec
}

// shared is what a Client and the dedicated Clients made from it have in
// common.
type shared struct {
	opts      Options
	pipeOpts  pipe.Options
	dedicated *dedicatedPool
	codec     *valueCodec // as configured; a Raw Client has none of its own
}

// New connects to the server described by opts and returns a Client. The
// first connection is made before New returns, so a wrong address or
// password is reported here; later losses reconnect in the background.
func New(opts Options) (*Client, error) {
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	vc, err := newValueCodec(opts.Compression)
	if err != nil {
		return nil, err
	}
	s := &shared{opts: opts, codec: vc}
	s.pipeOpts = pipe.Options{
		Dial:                dialer(opts),
		Protocol:            opts.Protocol,
		Username:            opts.Username,
		Password:            opts.Password,
		DB:                  opts.DB,
		ClientName:          opts.ClientName,
		HandshakeTimeout:    opts.DialTimeout,
		IOTimeout:           opts.IOTimeout,
		HealthCheckInterval: opts.HealthCheckInterval,
		MaxFlushDelay:       opts.MaxFlushDelay,
		ReconnectBackoffMin: opts.ReconnectBackoffMin,
		ReconnectBackoffMax: opts.ReconnectBackoffMax,
		WaitForReconnect:    opts.WaitForReconnect,
		Limits: resp.Limits{
			MaxBulkLen:      opts.ReplyLimits.MaxBulkLen,
			MaxAggregateLen: opts.ReplyLimits.MaxAggregateLen,
			MaxDepth:        opts.ReplyLimits.MaxDepth,
		},
		Logger: opts.Logger.With("addr", opts.Addr),
	}
	p, err := pipe.New(context.Background(), s.pipeOpts)
	if err != nil {
		return nil, connectError(opts.Addr, err)
	}
	s.dedicated = newDedicatedPool(s)
	return &Client{pipe: p, s: s, codec: vc}, nil
}

func (o Options) validate() error {
	if o.Protocol != 0 && o.Protocol != 2 && o.Protocol != 3 {
		return fmt.Errorf("zipline: Options.Protocol must be 0, 2 or 3, not %d", o.Protocol)
	}
	if o.DB < 0 {
		return fmt.Errorf("zipline: Options.DB must not be negative")
	}
	return nil
}

// connectError turns a failed set-up into an error that says where, and
// exposes a refused HELLO/AUTH as a *ServerError.
func connectError(addr string, err error) error {
	var he *pipe.HandshakeError
	if errors.As(err, &he) && he.Reply.IsError() {
		return fmt.Errorf("zipline: connect %s: %s: %w", addr, he.Command, serverError(he.Reply))
	}
	return fmt.Errorf("zipline: connect %s: %w", addr, err)
}

func dialer(o Options) func(ctx context.Context) (net.Conn, error) {
	dial := o.Dialer
	if dial == nil {
		d := &net.Dialer{KeepAlive: 15 * time.Second}
		dial = d.DialContext
	}
	return func(ctx context.Context) (net.Conn, error) {
		c, err := dial(ctx, o.Network, o.Addr)
		if err != nil || o.TLSConfig == nil {
			return c, err
		}
		cfg := o.TLSConfig
		if cfg.ServerName == "" && o.Network == "tcp" {
			cfg = cfg.Clone()
			cfg.ServerName, _, _ = net.SplitHostPort(o.Addr)
		}
		tc := tls.Client(c, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			c.Close()
			return nil, err
		}
		return tc, nil
	}
}

// Close closes the Client. Requests already queued or in flight get their
// replies first (within the I/O timeout); new ones fail with ErrClosed.
// On a Client from Dedicated, Close instead returns the connection to the
// pool.
func (c *Client) Close() error {
	if c.lease != nil {
		c.lease.release()
		return nil
	}
	err := c.pipe.Close()
	c.s.dedicated.close()
	return err
}

// Logger returns the logger the Client reports to (Options.Logger), for
// packages built on the Client.
func (c *Client) Logger() *slog.Logger { return c.s.opts.Logger }

// Protocol reports the RESP version in use: 2 or 3.
func (c *Client) Protocol() int { return c.pipe.Protocol() }

// PipelineStats are counters of the shared connection, for tuning and
// demos: how many requests went out in how many writes.
type PipelineStats struct {
	Writes     uint64 // system calls that wrote requests
	Requests   uint64 // requests written (a Batch counts once)
	Reconnects uint64
}

// PipelineStats returns the shared connection's counters.
func (c *Client) PipelineStats() PipelineStats {
	st := c.pipe.Stats()
	return PipelineStats{Writes: st.Batches.Load(), Requests: st.Calls.Load(), Reconnects: st.Reconnect.Load()}
}

// decoder converts a reply into a typed result. Replies that are errors
// never reach a decoder.
type decoder[T any] func(c *Client, v resp.Value) (T, error)

// do runs one command on the Client's connection and decodes its reply.
func do[T any](ctx context.Context, c *Client, dec decoder[T], name string, args ...arg) (T, error) {
	return route(ctx, c, false, dec, name, args)
}

// doBlocking is do for a command that can hold its connection for long.
func doBlocking[T any](ctx context.Context, c *Client, dec decoder[T], name string, args ...arg) (T, error) {
	return route(ctx, c, true, dec, name, args)
}

func route[T any](ctx context.Context, c *Client, blocking bool, dec decoder[T], name string, args []arg) (T, error) {
	call := c.pipe.NewCall()
	call.Buf = c.appendCommand(call.Buf, name, args)
	v, err := c.send(ctx, call, name, blocking)
	if err != nil {
		var zero T
		return zero, err
	}
	return dec(c, v)
}

// send runs a one-command call and returns its reply, with error replies
// turned into *ServerError. A blocking call from the shared Client goes to
// a dedicated connection.
func (c *Client) send(ctx context.Context, call *pipe.Call, name string, blocking bool) (resp.Value, error) {
	call.N = 1
	var start time.Time
	if c.s.opts.OnCommand != nil {
		start = time.Now()
	}
	var err error
	switch {
	case c.lease != nil:
		err = c.lease.do(ctx, call)
	case blocking:
		err = c.s.dedicated.do(ctx, call)
	default:
		err = c.pipe.Do(ctx, call)
	}
	var v resp.Value
	if err == nil {
		v = call.Reply(0)
		call.Release()
		if v.IsError() {
			err = serverError(v)
		}
	}
	if c.s.opts.OnCommand != nil {
		c.s.opts.OnCommand(ctx, CommandEvent{Name: name, Commands: 1, Duration: time.Since(start), Err: err})
	}
	return v, err
}

// Do sends any command, given as its name and arguments, and returns the
// reply. Arguments may be strings, byte slices, integers, floats, bools or
// encoding.BinaryMarshalers. An error reply is returned as a *ServerError;
// a null reply is a Value whose IsNil is true (and whose As methods return
// Nil).
//
// Blocking commands run on a dedicated connection. Commands that would
// change the shared connection's state (SELECT, WATCH, MULTI, CLIENT
// TRACKING...) are refused with a *CommandError; run them on a Client from
// Dedicated, or use Watch and Tx.
func (c *Client) Do(ctx context.Context, args ...any) (Value, error) {
	if len(args) == 0 {
		return Value{}, errors.New("zipline: Do needs a command")
	}
	nameArg, ok := argText(args[0])
	if !ok {
		return Value{}, fmt.Errorf("zipline: command name must be a string, not %T", args[0])
	}
	var buf [32]byte
	upperName := upper(buf[:0], nameArg)
	class := classify(string(upperName), args)
	switch {
	case class == classForbidden:
		return Value{}, &CommandError{Command: string(upperName), Reason: forbiddenReason}
	case class == classConnState && c.lease == nil:
		return Value{}, &CommandError{Command: string(upperName), Reason: connStateReason}
	}
	if err := c.checkCompatible(string(upperName)); err != nil {
		return Value{}, err
	}
	vc, compress := c.valueCommandFor(string(upperName))
	call := c.pipe.NewCall()
	var err error
	if call.Buf, err = c.appendDoArgs(call.Buf, args, vc, compress); err != nil {
		call.Release()
		return Value{}, fmt.Errorf("zipline: %s: %w", upperName, err)
	}
	if class == classConnState {
		c.lease.dirty.Store(true)
	}
	name := nameArg
	if c.s.opts.OnCommand != nil {
		name = string(upperName)
	}
	v, err := c.send(ctx, call, name, class == classBlocking)
	if err == nil && compress {
		v, err = c.decodeReply(v, vc)
	}
	return Value{v}, err
}

const (
	forbiddenReason = "switches or ends the connection's protocol mode and is not supported " +
		"(pub/sub, MONITOR, replication, CLIENT REPLY, QUIT); use Close to disconnect"
	connStateReason = "changes connection state, which would leak into every user of the " +
		"shared connection; use Options (DB, ClientName), Tx, Watch, or a Client from Dedicated"
)

// lease is a dedicated connection lent to one Client until Close.
type lease struct {
	pool *dedicatedPool
	p    *pipe.Pipe
	// mu keeps Close from returning the connection while a command runs.
	mu     sync.RWMutex
	closed bool
	// dirty: its state changed (SELECT, CLIENT TRACKING...) or a command
	// failed in a way that may leave a reply pending; it is not reused.
	dirty atomic.Bool
}

func (l *lease) do(ctx context.Context, call *pipe.Call) error {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		call.Release()
		return fmt.Errorf("zipline: dedicated connection already released: %w (%w)", ErrClosed, ErrNotSent)
	}
	err := l.p.Do(ctx, call)
	if err != nil {
		l.dirty.Store(true) // a reply may still be on its way: never reuse
	}
	return err
}

func (l *lease) release() {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.closed = true
	l.mu.Unlock()
	l.pool.put(l.p, !l.dirty.Load())
}
