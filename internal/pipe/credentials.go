package pipe

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ziplinekv/zipline/internal/resp"
)

// Credentials are what the connections of a set of pipes authenticate
// with when they come from a source that changes: a password rotated on
// the server, a token that expires. Every connection's handshake asks
// Fetch (so a reconnect uses what is current), and Renew authenticates
// every open connection again in place, with an AUTH in line with its
// requests: nothing is dropped, reordered or reconnected.
//
// Dedicated connections (NoReconnect) and RESP2 subscriber connections
// are not renewed with the others: a lent connection may be inside a MULTI,
// where AUTH would be queued, and a RESP2 subscriber may send nothing but
// (un)subscriptions. A dedicated connection is brought up to date when it
// is lent again (Refresh); a RESP2 subscriber authenticates afresh when it
// reconnects.
type Credentials struct {
	// Fetch returns the username ("" for the default user) and password.
	// Its error is a connection's, or Renew's; it must not carry the
	// password.
	Fetch func(ctx context.Context) (username, password string, err error)

	// generation counts the renewals; each pipe records the one it last
	// authenticated at.
	generation atomic.Uint64

	mu    sync.Mutex
	pipes map[*Pipe]struct{}
}

// ErrCredentials is matched by every error of fetching credentials.
var ErrCredentials = errors.New("zipline: credentials")

type credentialsError struct{ err error }

func (e *credentialsError) Error() string   { return "zipline: credentials: " + e.err.Error() }
func (e *credentialsError) Unwrap() []error { return []error{ErrCredentials, e.err} }

func (c *Credentials) fetch(ctx context.Context) (string, string, error) {
	user, pass, err := c.Fetch(ctx)
	if err != nil {
		return "", "", &credentialsError{err}
	}
	return user, pass, nil
}

// catchUpTimeout bounds catchUpCredentials' AUTH.
const catchUpTimeout = 10 * time.Second

// catchUpCredentials authenticates a connection just made (or remade)
// again if a renewal ran while its handshake was under way: the renewal
// could not reach it, and its handshake may have fetched what the renewal
// replaced, which nothing would renew before the next renewal (never,
// for credentials that do not expire). The AUTH goes in line with the
// first requests, from a goroutine of its own.
func (p *Pipe) catchUpCredentials() {
	cr := p.opts.Credentials
	if cr == nil || p.opts.NoReconnect || p.opts.RESP2Subscriber || p.authGeneration.Load() >= cr.generation.Load() {
		return
	}
	p.wg.Add(1) // the pipe is serving (or about to): its count is above zero
	go func() {
		defer p.wg.Done()
		ctx, cancel := context.WithTimeout(p.life, catchUpTimeout)
		defer cancel()
		if err := cr.Refresh(ctx, p); err != nil && p.life.Err() == nil {
			p.log.Warn("zipline: authenticating a new connection with renewed credentials failed", "err", err)
		}
	}()
}

// join adds p to the pipes Renew reaches, if it can be renewed in place.
func (c *Credentials) join(p *Pipe) {
	if p.opts.NoReconnect || p.opts.RESP2Subscriber {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pipes == nil {
		c.pipes = map[*Pipe]struct{}{}
	}
	c.pipes[p] = struct{}{}
}

func (c *Credentials) leave(p *Pipe) {
	c.mu.Lock()
	delete(c.pipes, p)
	c.mu.Unlock()
}

// Renew fetches the credentials once and authenticates every open pipe of
// the set with them. It returns how many connections it renewed, and the
// first error: a fetch that failed, or a server that refused them (the
// connection then stays authenticated as it was).
func (c *Credentials) Renew(ctx context.Context) (int, error) {
	gen := c.generation.Add(1)
	user, pass, err := c.fetch(ctx)
	if err != nil {
		return 0, err
	}
	c.mu.Lock()
	pipes := make([]*Pipe, 0, len(c.pipes))
	for p := range c.pipes {
		pipes = append(pipes, p)
	}
	c.mu.Unlock()
	renewed := 0
	var first error
	for _, p := range pipes {
		switch err := p.authenticate(ctx, user, pass); {
		case err == nil:
			p.authGeneration.Store(gen)
			renewed++
		case errors.Is(err, ErrClosed), errors.Is(err, ErrNotConnected):
			// closed meanwhile, or reconnecting: its handshake fetches anew
		case first == nil:
			first = err
		}
	}
	return renewed, first
}

// Refresh authenticates p again if a renewal ran since it last
// authenticated: a dedicated connection, before it is lent again.
func (c *Credentials) Refresh(ctx context.Context, p *Pipe) error {
	gen := c.generation.Load()
	if p.authGeneration.Load() >= gen {
		return nil
	}
	user, pass, err := c.fetch(ctx)
	if err != nil {
		return err
	}
	if err := p.authenticate(ctx, user, pass); err != nil {
		return err
	}
	p.authGeneration.Store(gen)
	return nil
}

// authenticate sends AUTH on p's connection, in line with its requests.
func (p *Pipe) authenticate(ctx context.Context, user, pass string) error {
	if user == "" {
		user = "default"
	}
	call := p.NewCall()
	defer call.Release()
	call.Buf = resp.AppendArrayLen(call.Buf, 3)
	for _, a := range [...]string{"AUTH", user, pass} {
		call.Buf = resp.AppendBulkString(call.Buf, a)
	}
	call.N = 1
	call.Expect = append(call.Expect, resp.Types(resp.SimpleString))
	if err := p.Do(ctx, call); err != nil {
		return err
	}
	if v := call.Reply(0); v.IsError() {
		return fmt.Errorf("zipline: AUTH on a live connection: %s", v.Bytes()) // the server's text names no password
	}
	return nil
}
