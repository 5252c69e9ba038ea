package zipline

// This file is the seam between the command layer and the connections:
// client.go encodes commands and decodes replies, and reaches the servers
// only through a carrier, as net/http's Client reaches the network only
// through a RoundTripper (transport.go).

import (
	"context"
	"errors"
	"fmt"

	"github.com/ziplinekv/zipline/internal/pipe"
	"github.com/ziplinekv/zipline/internal/resp"
)

// A carrier takes requests to the servers and brings back their replies.
// It is to the command layer what http.RoundTripper is to http.Client: the
// Client encodes commands, expands stored values, runs hooks and decodes
// replies; a carrier moves requests, and nothing else reaches a server.
// Callers never ask which kind they hold.
//
// send writes r's commands and waits for their replies, which it leaves in
// r.replies (and in r.errs when some commands failed and others did not, as
// a cluster's nodes fail one by one). An error means the request failed as
// a whole; an error reply is a reply, not an error. Every error matches
// ErrNotSent when nothing of the request was written (sending it again is
// safe), or ErrConnLost when it was written and the outcome is unknown,
// unless ctx ended after the write (then only ctx.Err()). A carrier that
// routes (the cluster) follows MOVED and ASK and retries what provably did
// not run, within ctx; nothing else retries.
//
// The other methods give callers what they would otherwise get by asking
// which carrier they hold:
//
//   - lease lends one connection for one caller's exclusive use (Dedicated);
//     watch runs run on a connection lent for keys' slot, retrying run on
//     the slot's new owner when it moves under it (Watch).
//   - eachShard calls fn with a carrier pinned to each shard (one server:
//     itself), as redispipe's EachShard, and with replicas also to each
//     replica it holds a connection to: the fan-out of the commands the
//     servers send to all shards or all nodes (policy.go), and SCAN.
//   - serving tells of the connection that serves a slot now (any slot on
//     one server), for pub/sub and the client-side cache: an endpoint,
//     whose zero value says none does.
//   - changes returns a channel closed when the routes change (nil if they
//     never do); refresh says a caller saw a sign that they may have.
//   - taint marks a lent connection whose state a command changed, so it is
//     closed rather than lent again (a no-op elsewhere).
//
// Implementations: direct (one server: the shared pipelined connection,
// with a pool of dedicated connections for blocking commands); lease (one
// dedicated connection lent to one Client); cluster (cluster.go, a Redis or
// Valkey Cluster, by slot); watchLease and lazyLease (cluster_lease.go: a
// lease on a cluster, for Watch and Dedicated); sentinel (sentinel.go: the
// primary and replicas Redis Sentinel names); connecting (lazyconnect.go:
// a LazyConnect Client's until it has connected, then the carrier it made).
//
// One path goes around the seam, measured: Client.sendDirect writes a
// typed command straight into the shared connection of a direct carrier
// (fastDirect), since nothing routes it there (see sendDirect).
type carrier interface {
	send(ctx context.Context, r *request) error
	lease(ctx context.Context) (carrier, error)
	watch(ctx context.Context, keys []string, run func(k carrier) error) error
	eachShard(replicas bool, fn func(k carrier) error) error
	serving(slot int32) endpoint
	changes() <-chan struct{}
	refresh()
	taint()
	// protocol reports the RESP version negotiated: 2 or 3.
	protocol() int
	// stats adds the carrier's connection counters to st.
	stats(st *Stats)
	// close stops the carrier: see Client.Close. On a lent connection it
	// gives it back.
	close() error
}

// fastDirect returns the shared connection a typed command may be written
// to straight, past the seam (Client.sendDirect), or nil when the carrier
// is not one server's (a lazily connected Client's is, once connected):
// the one place that asks which carrier it holds.
func fastDirect(k carrier) *direct {
	switch k := k.(type) {
	case *direct:
		return k
	case *connecting:
		d, _ := k.now().(*direct)
		return d
	}
	return nil
}

// endpoint is what a carrier tells of the connection that serves a slot:
// where it goes (for pub/sub to follow the slot's owner), the connection
// itself (to recognise the one a request went out on), and its
// client-side caching state (nil when the cache is off). The zero
// endpoint: no connection serves the slot.
type endpoint struct {
	addr    string
	pipe    *pipe.Pipe
	tracked *trackedConn
}

func (d *direct) endpoint() endpoint { return endpoint{addr: d.addr, pipe: d.pipe, tracked: d.tracked} }

// direct carries requests to one server.
type direct struct {
	addr      string
	pipe      *pipe.Pipe
	dedicated *dedicatedPool
	// tracked is the shared connection's client-side caching state, nil
	// when the cache is off.
	tracked *trackedConn
	// solo are the connections lent to one caller at a time while callers
	// are few (solo.go); nil when Options.SoloConns is negative.
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

func (st *Stats) addPipe(p *pipe.Pipe) {
	st.addCounts(p)
	st.InFlight += p.InFlight()
	st.Queued += int64(p.Queued())
	st.PendingBytes += p.PendingBytes()
}

// addCounts adds p's counters (not its gauges) to st.
func (st *Stats) addCounts(p *pipe.Pipe) {
	ps := p.Stats()
	st.Writes += ps.Batches.Load()
	st.Requests += ps.Calls.Load()
	st.Reconnects += ps.Reconnect.Load()
	for i := range st.WriteSizes {
		st.WriteSizes[i] += ps.WriteSizes[i].Load()
	}
}

// addRetired adds the counters kept from connections since closed.
func (st *Stats) addRetired(r *Stats) {
	st.Writes += r.Writes
	st.Requests += r.Requests
	st.Reconnects += r.Reconnects
	for i := range st.WriteSizes {
		st.WriteSizes[i] += r.WriteSizes[i]
	}
}

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

// Errors about the connection, which the connections (internal/pipe) give
// and the carriers pass on. Each is checked with errors.Is; the error
// returned wraps the underlying cause as well.
var (
	// ErrClosed: the Client was closed.
	ErrClosed = pipe.ErrClosed
	// ErrNotSent is matched by every error of a request that never reached
	// the server, so retrying it is always safe.
	ErrNotSent = pipe.ErrNotSent
	// ErrNotConnected: the connection was down, and the request failed at
	// once (see Options.WaitForReconnect). It matches ErrNotSent.
	ErrNotConnected = pipe.ErrNotConnected
	// ErrConnLost: the connection broke after the request was written. The
	// server may or may not have run it, so zipline does not send it again
	// (on a cluster or a Sentinel group, a request that only reads goes
	// once more, to the primary, before it fails so).
	ErrConnLost = pipe.ErrConnLost
	// ErrPendingLimit: the bytes queued and in flight on the connection
	// reached Options.MaxPendingBytes, and Options.FailWhenPendingFull is
	// set. It matches ErrNotSent.
	ErrPendingLimit = pipe.ErrPendingLimit
)

// writeSizeBuckets is how many buckets Stats.WriteSizes has.
const writeSizeBuckets = pipe.WriteSizeBuckets

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
