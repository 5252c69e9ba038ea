package pipe

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/ziplinekv/zipline/internal/resp"
)

// connect dials and sets up one connection: HELLO 3 (with AUTH and SETNAME)
// falling back to RESP2 AUTH on servers that do not know HELLO, then SELECT.
func (p *Pipe) connect(ctx context.Context) (*conn, error) {
	if t := p.opts.HandshakeTimeout; t > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t)
		defer cancel()
	}
	nc, err := p.opts.Dial(ctx)
	if err != nil {
		return nil, err
	}
	if dl, ok := ctx.Deadline(); ok {
		nc.SetDeadline(dl)
	}
	// Cancelling ctx (Close during a reconnect) interrupts the set-up.
	stop := context.AfterFunc(ctx, func() { nc.SetDeadline(time.Unix(1, 0)) })
	c := &conn{conn: nc, rd: resp.NewReader(nc, p.opts.ReadBufferSize, p.opts.Limits)}
	proto, err := p.handshake(c)
	if !stop() || err != nil {
		nc.Close()
		if err == nil {
			err = ctx.Err()
		}
		return nil, err
	}
	nc.SetDeadline(time.Time{})
	p.protocol.Store(int32(proto))
	return c, nil
}

func (p *Pipe) handshake(c *conn) (int, error) {
	o := &p.opts
	proto := 2
	if o.Protocol != 2 {
		args := []string{"HELLO", "3"}
		if o.Password != "" {
			user := o.Username
			if user == "" {
				user = "default"
			}
			args = append(args, "AUTH", user, o.Password)
		}
		if o.ClientName != "" {
			args = append(args, "SETNAME", o.ClientName)
		}
		v, err := c.roundTrip(args...)
		switch {
		case err != nil:
			return 0, &HandshakeError{Command: "HELLO", Err: err}
		case !v.IsError():
			proto = 3
		case o.Protocol == 3 || !helloUnsupported(v):
			return 0, &HandshakeError{Command: "HELLO", Reply: v}
		}
	}
	if proto == 2 {
		if o.Password != "" {
			args := []string{"AUTH", o.Password}
			if o.Username != "" {
				args = []string{"AUTH", o.Username, o.Password}
			}
			if err := c.expectOK(args...); err != nil {
				return 0, err
			}
		}
		if o.ClientName != "" {
			if err := c.expectOK("CLIENT", "SETNAME", o.ClientName); err != nil {
				return 0, err
			}
		}
	}
	if o.DB != 0 {
		if err := c.expectOK("SELECT", strconv.Itoa(o.DB)); err != nil {
			return 0, err
		}
	}
	return proto, nil
}

// helloUnsupported tells a server too old for HELLO (or built without
// RESP3) from one that refused our credentials.
func helloUnsupported(v resp.Value) bool {
	msg := string(v.Bytes())
	return strings.HasPrefix(msg, "NOPROTO") || strings.HasPrefix(msg, "ERR unknown command")
}

func (c *conn) roundTrip(args ...string) (resp.Value, error) {
	buf := resp.AppendArrayLen(nil, len(args))
	for _, a := range args {
		buf = resp.AppendBulkString(buf, a)
	}
	if _, err := c.conn.Write(buf); err != nil {
		return resp.Value{}, err
	}
	var v resp.Value
	err := c.rd.ReadValue(&v)
	return v, err
}

func (c *conn) expectOK(args ...string) error {
	v, err := c.roundTrip(args...)
	if err != nil {
		return &HandshakeError{Command: args[0], Err: err}
	}
	if v.IsError() {
		return &HandshakeError{Command: args[0], Reply: v}
	}
	return nil
}
