package zipline

// This file is the seam between the command layer and the connections:
// client.go encodes commands and decodes replies, and reaches the servers
// only through a carrier, as net/http's Client reaches the network only
// through a RoundTripper (transport.go).

import (
	"context"

	"github.com/ziplinekv/zipline/internal/pipe"
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
