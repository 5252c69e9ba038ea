package zipline

// This file holds direct, the carrier of requests to one server: its
// shared connection, and beside it the dedicated pool (blocking commands,
// Watch, Dedicated), the solo connections (solo.go) and the bulk lane
// (bulk.go).

import (
	"context"
	"errors"
	"fmt"

	"github.com/ziplinekv/zipline/internal/pipe"
	"github.com/ziplinekv/zipline/internal/resp"
)

// direct carries requests to one server.
type direct struct {
	addr      string
	pipe      *pipe.Pipe
	dedicated *dedicatedPool
	// tracked is the shared connection's client-side caching state, nil
	// when the cache is off.
	tracked *trackedConn
	// solo are the connections lent to one caller at a time while callers
	// are few (solo.go); nil when Options.SoloConns is not positive.
	solo *soloConns
	// bulk carries large requests and replies apart (bulk.go); nil with
	// the client-side cache, or Options.BulkThreshold negative.
	bulk *bulkLane
}

var _ carrier = (*direct)(nil)

func (d *direct) send(ctx context.Context, r *request) error {
	if r.blocking {
		return d.dedicated.send(ctx, r)
	}
	if n := d.bulk.cost(len(r.call.Buf), ""); n > 0 {
		if p := d.bulk.take(); p != nil {
			if err := d.bulk.admit(ctx, n); err != nil {
				return err
			}
			defer d.bulk.release(n)
			return r.sendOn(ctx, p)
		}
	}
	if p, i := d.solo.take(d.pipe); p != nil {
		defer d.solo.give(i)
		return r.sendOn(ctx, p)
	}
	return r.sendOn(ctx, d.pipe)
}

func (d *direct) lease(ctx context.Context) (carrier, error) { return d.dedicated.lease(ctx) }

func (d *direct) watch(ctx context.Context, _ []string, run func(carrier) error) error {
	l, err := d.dedicated.lease(ctx)
	if err != nil {
		return err
	}
	defer l.close()
	return run(l)
}

func (d *direct) eachShard(_ bool, fn func(carrier) error) error { return fn(d) }
func (d *direct) serving(int32) endpoint                         { return d.endpoint() }
func (d *direct) changes() <-chan struct{}                       { return nil }
func (d *direct) refresh()                                       {}
func (d *direct) taint()                                         {}
func (d *direct) protocol() int                                  { return d.pipe.Protocol() }

func (d *direct) stats(st *Stats) {
	st.addPipe(d.pipe)
	d.solo.stats(st)
	d.bulk.stats(st)
	open, lent := d.dedicated.stats()
	st.DedicatedOpen += open
	st.DedicatedInUse += lent
}

// close drains the shared connection while it interrupts the dedicated
// ones: a BLPOP waiting without a deadline would otherwise hold Close up
// forever, and pop an element for nobody afterwards.
func (d *direct) close() error {
	d.dedicated.close()
	d.solo.close()
	d.bulk.close()
	return d.pipe.Close()
}

func (d *direct) endpoint() endpoint { return endpoint{addr: d.addr, pipe: d.pipe, tracked: d.tracked} }

// sendDirect is sendRequest for the one case that needs no request: a
// command that does not block, on the shared connection of one server,
// without hooks. Nothing routes it, so it goes straight into a call, as
// the seam's carriers would send it. It is most commands of most clients,
// and at hundreds of callers in flight the request's own cache lines,
// touched again as each caller resumes, cost a tenth of the throughput
// (bench/RESULTS.md#client-ab). The reply is left in v.
func (c *Client) sendDirect(ctx context.Context, d *direct, v *resp.Value, spec *commandSpec, args []arg, expect resp.TypeSet) (valueReply, error) {
	values, vr, err := c.lookupValues(spec, args)
	if err != nil {
		return vr, err
	}
	if vr.read != nil {
		spec, args, expect = vr.read.spec, vr.read.args, vr.read.expect // answered from a read of the plaintext
	}
	call := c.s.calls.Get()
	c.appendCommand(call, spec, args, expect, values)
	var p *pipe.Pipe
	var key string
	sent := len(call.Buf)
	if d.bulk != nil {
		key = firstKey(args)
		if n := d.bulk.cost(sent, key); n > 0 {
			if p = d.bulk.take(); p != nil {
				if err := d.bulk.admit(ctx, n); err != nil {
					call.Release()
					return vr, err
				}
				defer d.bulk.release(n)
			}
		}
	}
	if p == nil {
		var solo int
		if p, solo = d.solo.take(d.pipe); p == nil {
			p = d.pipe
		} else {
			defer d.solo.give(solo)
		}
	}
	if err := p.Do(ctx, call); err != nil {
		return vr, err
	}
	*v = call.Reply(0)
	call.Release()
	d.bulk.learn(key, sent, *v)
	if v.Type().Failed() {
		return vr, c.s.errorOf(*v)
	}
	return vr, nil
}

// newDirect connects to one server. With the client-side cache on, its
// shared connection tracks the keys read through it (and only that one:
// dedicated connections do not).
func newDirect(ctx context.Context, s *shared, addr string) (*direct, error) {
	return newDirectWith(ctx, s, addr, nil, s.opts.SoloConns)
}

// newDirectWith is newDirect with adjust applied to the options of each of
// its connections, shared and dedicated (a Sentinel group's role checks),
// and up to soloConns solo connections (solo.go).
//
// With the client-side cache on there are none: the server sends its
// invalidations on the shared connection, and only one connection orders
// them before every later reply (a write's own included), which is what
// keeps a cached read from returning a value older than one already
// written or seen.
func newDirectWith(ctx context.Context, s *shared, addr string, adjust func(*pipe.Options), soloConns int) (*direct, error) {
	po := s.pipeOptions(addr)
	if adjust != nil {
		adjust(&po)
	}
	dedicated := po
	var tc *trackedConn
	bulkThreshold := s.opts.BulkThreshold
	if s.cache != nil {
		tc = s.cache.track(&po)
		soloConns, bulkThreshold = 0, 0
	}
	solo := newSoloConns(po, soloConns)
	bulk := newBulkLane(po, bulkThreshold)
	p, err := pipe.New(ctx, po)
	if err != nil {
		return nil, connectError(addr, err)
	}
	if tc != nil {
		tc.attach(p)
	}
	return &direct{addr: addr, pipe: p, dedicated: newDedicatedPool(s, dedicated, addr), tracked: tc, solo: solo, bulk: bulk}, nil
}

// connectError turns a failed set-up into an error that says where, and
// exposes a refused HELLO/AUTH as a *ServerError, and a refused SELECT as
// ErrNoDB too.
func connectError(addr string, err error) error {
	var he *pipe.HandshakeError
	if errors.As(err, &he) && he.Reply.IsError() {
		if he.Command == "SELECT" {
			return fmt.Errorf("zipline: connect %s: %w", addr, noDBError{serverError(he.Reply)})
		}
		return fmt.Errorf("zipline: connect %s: %s: %w", addr, he.Command, serverError(he.Reply))
	}
	return fmt.Errorf("zipline: connect %s: %w", addr, err)
}
