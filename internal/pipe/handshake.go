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
	live := &liveReader{conn: nc, lastRead: p.opts.LastRead}
	c := &conn{conn: nc, live: live, rd: resp.NewReader(live, p.opts.ReadBufferSize, p.opts.Limits),
		peek: newPeeker(nc), next: make(chan struct{})}
	proto, err := p.handshake(ctx, c)
	if err == nil && p.opts.OnConnect != nil {
		err = p.opts.OnConnect(&Setup{c: c, p: p, Reconnect: p.connects > 0, Protocol: proto})
	}
	if !stop() || err != nil {
		nc.Close()
		if err == nil {
			err = ctx.Err()
		}
		return nil, err
	}
	nc.SetDeadline(time.Time{})
	p.protocol.Store(int32(proto))
	p.connects++
	return c, nil
}

// Setup is a new connection before it serves requests, as Options.OnConnect
// sees it: the place to re-issue connection state (subscriptions, CLIENT
// TRACKING) after a reconnect. Its commands run one at a time, under the
// dial timeout.
type Setup struct {
	c *conn
	p *Pipe
	// Reconnect is false for the pipe's first connection.
	Reconnect bool
	// Protocol is the RESP version negotiated: 2 or 3.
	Protocol int
}

// Do sends one command and returns its reply. An error reply is a Value,
// not an error.
func (s *Setup) Do(args ...string) (resp.Value, error) {
	vs, err := s.Send(1, "", args...)
	if err != nil {
		return resp.Value{}, err
	}
	return vs[0], nil
}

// Pipeline writes several commands at once and reads one reply for each,
// in order; with answerKind set, pushes of that kind count as replies.
func (s *Setup) Pipeline(answerKind string, cmds ...[]string) ([]resp.Value, error) {
	var buf []byte
	for _, c := range cmds {
		buf = appendStrings(buf, c)
	}
	return s.exchange(buf, len(cmds), answerKind)
}

// Send sends one command that n replies answer. With answerKind set, pushes
// of that kind count as replies (SUBSCRIBE's confirmations in RESP3). Other
// out-of-band pushes that arrive meanwhile go to their handlers.
func (s *Setup) Send(n int, answerKind string, args ...string) ([]resp.Value, error) {
	return s.exchange(appendStrings(nil, args), n, answerKind)
}

func (s *Setup) exchange(buf []byte, n int, answerKind string) ([]resp.Value, error) {
	if _, err := s.c.conn.Write(buf); err != nil {
		return nil, err
	}
	out := make([]resp.Value, 0, n)
	for len(out) < n {
		var v resp.Value
		if err := s.c.rd.ReadValue(&v); err != nil {
			return nil, err
		}
		if kind, ok := pushKind(v, s.p.opts.RESP2Subscriber); ok && kind != answerKind {
			s.p.push.dispatch(kind, v)
			continue
		}
		out = append(out, v)
	}
	return out, nil
}

// handshake sets the connection up: HELLO with the protocol wanted (which
// also says what the server is), or, on a server without HELLO, RESP2 with
// AUTH and CLIENT SETNAME; then SELECT.
func (p *Pipe) handshake(ctx context.Context, c *conn) (int, error) {
	o := &p.opts
	username, password := o.Username, o.Password
	if o.Credentials != nil {
		gen := o.Credentials.generation.Load()
		var err error
		if username, password, err = o.Credentials.fetch(ctx); err != nil {
			return 0, &HandshakeError{Command: "AUTH", Err: err}
		}
		p.authGeneration.Store(gen)
	}
	proto := 0
	{
		want := "3"
		if o.Protocol == 2 {
			want = "2"
		}
		args := []string{"HELLO", want}
		if password != "" {
			user := username
			if user == "" {
				user = "default"
			}
			args = append(args, "AUTH", user, password)
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
			if want == "2" {
				proto = 2
			}
			p.server.Store(helloServer(v))
		case o.Protocol == 3 || !helloUnsupported(v):
			return 0, &HandshakeError{Command: "HELLO", Reply: v}
		}
	}
	if proto == 0 { // no HELLO: RESP2, set up command by command
		proto = 2
		if password != "" {
			args := []string{"AUTH", password}
			if username != "" {
				args = []string{"AUTH", username, password}
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

// helloServer reads the server's name, version, role and availability
// zone from HELLO's reply, a map in RESP3 and pairs in RESP2.
func helloServer(v resp.Value) *Server {
	var s Server
	e := v.Elems()
	for i := 0; i+1 < len(e); i += 2 {
		switch string(e[i].Bytes()) {
		case "server":
			s.Name = string(e[i+1].Bytes())
		case "version":
			s.Version = string(e[i+1].Bytes())
		case "role":
			s.Role = string(e[i+1].Bytes())
		case "availability_zone":
			s.AvailabilityZone = string(e[i+1].Bytes())
		}
	}
	return &s
}

// helloUnsupported tells a server too old for HELLO (or built without
// RESP3) from one that refused our credentials.
func helloUnsupported(v resp.Value) bool {
	msg := string(v.Bytes())
	return strings.HasPrefix(msg, "NOPROTO") || strings.HasPrefix(msg, "ERR unknown command")
}

func appendStrings(dst []byte, args []string) []byte {
	dst = resp.AppendArrayLen(dst, len(args))
	for _, a := range args {
		dst = resp.AppendBulkString(dst, a)
	}
	return dst
}

func (c *conn) roundTrip(args ...string) (resp.Value, error) {
	if _, err := c.conn.Write(appendStrings(nil, args)); err != nil {
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
