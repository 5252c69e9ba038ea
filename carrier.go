package zipline

import (
	"context"

	"github.com/ziplinekv/zipline/internal/pipe"
)

// A carrier takes requests to a server and brings back their replies. It
// is to the command layer what http.RoundTripper is to http.Client: the
// command layer encodes and decodes, the carrier only moves requests, and
// it is the one seam between the two. Implementations:
//
//   - direct: one server, through the shared pipelined connection, with
//     blocking commands on connections borrowed from a pool;
//   - lease: one dedicated connection lent to a single caller (Dedicated,
//     Watch).
type carrier interface {
	// send writes r's commands and waits for their replies, which it leaves
	// in r.replies. An error means no replies: the request failed as a
	// whole (error replies are replies, not errors).
	send(ctx context.Context, r *request) error
	// lease lends a connection for one caller's exclusive use: the carrier
	// of a Client from Dedicated or Watch.
	lease(ctx context.Context) (carrier, error)
	// protocol reports the RESP version negotiated: 2 or 3.
	protocol() int
	// stats adds the carrier's connection counters to st.
	stats(st *Stats)
	// close stops the carrier: see Client.Close.
	close() error
}

// A leased carrier is one connection lent to one Client. Commands that
// change the connection's state taint it, so it is closed rather than
// lent again.
type leased interface {
	carrier
	taint()
}

// direct carries requests to one server.
type direct struct {
	pipe      *pipe.Pipe
	dedicated *dedicatedPool
	// tracked is the shared connection's client-side caching state, nil
	// when the cache is off.
	tracked *trackedConn
}

var _ carrier = (*direct)(nil)

func (d *direct) send(ctx context.Context, r *request) error {
	if r.blocking {
		return d.dedicated.send(ctx, r)
	}
	return r.sendOn(ctx, d.pipe)
}

func (d *direct) lease(ctx context.Context) (carrier, error) { return d.dedicated.lease(ctx) }

func (d *direct) protocol() int { return d.pipe.Protocol() }

func (d *direct) stats(st *Stats) {
	st.addPipe(d.pipe)
	open, lent := d.dedicated.stats()
	st.DedicatedOpen += open
	st.DedicatedInUse += lent
}

// close drains the shared connection while it interrupts the dedicated
// ones: a BLPOP waiting without a deadline would otherwise hold Close up
// forever, and pop an element for nobody afterwards.
func (d *direct) close() error {
	d.dedicated.close()
	return d.pipe.Close()
}
