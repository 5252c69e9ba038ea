package zipline

// This file is the Sentinel carrier: a primary and its replicas, named by
// Redis Sentinel (Options.Sentinel), and what it gives callers through the
// seam (carrier.go). How it follows the sentinels (asking them, the
// +switch-master subscription, switching primaries) is in
// sentinel_watch.go.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ziplinekv/zipline/internal/pipe"
)

// sentinel carries requests to the primary a group of sentinels names, and
// reads to its replicas when Options.ReadFrom says so. Each server is
// reached as a single server is: one shared pipelined connection, and
// dedicated connections for blocking commands.
//
// It routes and retries, as the cluster does, within the caller's
// context: while a sentinel promotes a replica, writes wait for it (the
// old primary would lose them when demoted); a request that could not be sent (the primary is down, or
// being replaced) waits for the next primary and goes there; a read a
// replica turns away (LOADING, MASTERDOWN) goes to the primary; a request
// that a demoted primary refused whole (-READONLY, or -REDIRECT, which
// names the new primary) did not run, and goes to the new primary. A
// request lost with its connection is not sent again (it may have run),
// unless it only reads: then it goes once more, to the primary.
type sentinel struct {
	s    *shared
	name string

	// view is the primary and the replicas now; swapped whole.
	view atomic.Pointer[sentinelView]
	// retired: the counters of the nodes closed so far.
	retired retiredNodes

	mu        sync.Mutex
	sentinels []string      // known sentinels, the configured ones first
	changed   chan struct{} // closed (and replaced) when the primary changes
	// query is the connection to the sentinel asked last (nil when none),
	// at index queryAt of sentinels.
	query   *pipe.Pipe
	queryAt int

	// switches counts primary changes, and with the nodes' reconnects is
	// Stats.Reconnects.
	switches atomic.Uint64
	// holdUntil (UnixNano, 0 for none) holds writes while a sentinel
	// promotes a replica: what the old primary took meanwhile would be
	// lost when it is demoted.
	holdUntil atomic.Int64
	// holdMu makes a hold's start (checked against the primary) and a
	// switch with its release one step each (see holdWrites).
	holdMu sync.Mutex
	// trying are the sentinels whose failover of the current primary is
	// under way: writes are held until the switch, or until all of them
	// have aborted. Only the sentinel follower touches it.
	trying map[string]bool
	// failoverTimeout is the group's failover-timeout as the sentinels
	// last said (a time.Duration; 0 until they have): see failoverHold.
	failoverTimeout atomic.Int64
	// want carries an address a -REDIRECT named to the watcher (capacity
	// 1; a newer one replaces an older one), refreshAsked a request for a
	// refresh (capacity 1).
	want         chan string
	refreshAsked chan struct{}
	life         context.Context
	stop         context.CancelFunc
	wg           sync.WaitGroup
	rr           atomic.Uint32
	// replicaPick is which replica ReadPreferReplica reads from (modulo
	// their number), drawn once per client so that an application's
	// clients spread over the replicas.
	replicaPick uint32
}

// sentinelView is who serves the group now.
type sentinelView struct {
	primary  *node
	replicas []*node // sorted by address; empty with ReadPrimary
}

var _ carrier = (*sentinel)(nil)

// newSentinel asks the sentinels for the primary, connects to it (and to
// the replicas when reads may go there), and starts following them.
func newSentinel(ctx context.Context, s *shared) (*sentinel, error) {
	cfg := s.opts.Sentinel
	k := &sentinel{s: s, name: cfg.MasterName, sentinels: append([]string(nil), cfg.Addrs...),
		changed: make(chan struct{}), want: make(chan string, 1), refreshAsked: make(chan struct{}, 1),
		replicaPick: rand.Uint32(), queryAt: -1}
	k.life, k.stop = context.WithCancel(context.Background())
	g, err := k.ask(ctx)
	if err != nil {
		k.close()
		return nil, err
	}
	p, err := k.connectPrimary(ctx, g.primary)
	if err != nil {
		k.close()
		return nil, err
	}
	k.view.Store(&sentinelView{primary: p})
	k.useReplicas(ctx, g.replicas)
	k.learnSentinels(g.sentinels)
	k.learnFailoverTimeout(g.failoverTimeout)
	k.wg.Add(1)
	go k.followSentinels()
	return k, nil
}

// marksReads reports whether read-only commands are marked as such when
// encoded (request.add): on a Sentinel group, where they may go to a
// replica (ReadFrom) and one lost with its connection is sent again (a
// failover's CLIENT KILL on the former primary, a replica restarted).
func (o Options) marksReads() bool {
	return o.Sentinel.MasterName != ""
}

func (k *sentinel) send(ctx context.Context, r *request) error {
	if ctx.Done() == nil {
		// A request waits for a primary at most as long as it would wait
		// for a reply.
		if t := k.s.opts.IOTimeout; t > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, t)
			defer cancel()
		}
	}
	read := k.s.opts.ReadFrom != ReadPrimary && r.readOnly()
	resent := false // a read lost with its connection goes once more
	backoff := retryBackoffMin
	for {
		changed := k.changes()
		// The hold is read before the view: a promotion installs the new
		// view and then clears the hold, so a sender that finds no hold
		// finds the new primary too. Read the other way round, a sender
		// could take the old view, then find the hold cleared, and write to
		// the former primary what its demotion would lose.
		hold := k.holdUntil.Load()
		v := k.view.Load()
		if v == nil {
			return errSentinelClosed
		}
		n := v.primary
		if read {
			n = k.s.readTarget(v.primary, v.replicas, k.replicaPick, &k.rr)
		}
		if hold != 0 && n == v.primary {
			if wait := time.Until(time.Unix(0, hold)); wait > 0 {
				// A replica is being promoted: what the old primary took now
				// would be lost. Wait for the new one.
				if err := waitForChange(ctx, changed, &wait); err != nil {
					return fmt.Errorf("zipline: sentinel group %q: failing over: %w (%w): %w", k.name, ErrNotConnected, ErrNotSent, err)
				}
				continue
			}
		}
		if n.up() {
			// A call is gone once a send fails, so each try sends a copy,
			// and r keeps its commands for the next.
			sub := k.s.newRequest()
			r.copyTo(sub)
			err := n.send(ctx, sub)
			if err == nil {
				if n != v.primary && turnedAway(sub) {
					sub.release()
					read = false // the primary serves it
					continue
				}
				redirect, demoted, all := demotedReplies(sub)
				if demoted {
					if redirect != "" {
						k.redirectTo(redirect)
					} else {
						k.refresh()
					}
				}
				if !all {
					r.adopt(sub)
					sub.release()
					return nil
				}
				sub.release() // it ran nowhere: go to the primary now
			} else {
				sub.release()
				if !resent && errors.Is(err, ErrConnLost) && r.readOnly() && ctx.Err() == nil {
					// A read lost with its connection changed nothing, run
					// or not: it goes once more, to the primary (a replica
					// that lost it may be restarting, and a failover's
					// CLIENT KILL closes the former primary's connections,
					// whose writes the hold above keeps from it).
					resent, read = true, false
					continue
				}
				if !errors.Is(err, ErrNotSent) || ctx.Err() != nil {
					return err
				}
			}
		} else if n != v.primary {
			read = false // its replicas are down: the primary serves it
			continue
		}
		k.refresh()
		if err := waitForChange(ctx, changed, &backoff); err != nil {
			return fmt.Errorf("zipline: sentinel group %q: no primary took the request: %w (%w): %w", k.name, ErrNotConnected, ErrNotSent, err)
		}
	}
}

// waitForChange waits for changed to close, or the backoff to pass (which
// then doubles, up to retryBackoffMax), or ctx to end (its error).
func waitForChange(ctx context.Context, changed <-chan struct{}, backoff *time.Duration) error {
	t := time.NewTimer(*backoff)
	defer t.Stop()
	*backoff = min(2**backoff, retryBackoffMax)
	select {
	case <-changed:
	case <-t.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// turnedAway reports whether a replica refused a read it cannot serve now:
// it is loading, or lost its primary and does not serve stale data.
func turnedAway(r *request) bool {
	for _, v := range r.replies {
		if v.IsError() {
			msg := unsafeString(v.Bytes())
			if strings.HasPrefix(msg, "LOADING") || strings.HasPrefix(msg, "MASTERDOWN") {
				return true
			}
		}
	}
	return false
}

// demotedReplies reports whether a reply of r says its server is no
// longer the primary: -REDIRECT host:port (a Valkey primary demoted under a
// connection that said CLIENT CAPA redirect; addr is where it points) or
// -READONLY (a demoted primary's refusal of a write). all says every reply
// did: then none of r's commands ran, and it may go to the new primary.
func demotedReplies(r *request) (addr string, demoted, all bool) {
	all = len(r.replies) > 0
	for _, v := range r.replies {
		msg := ""
		if v.IsError() {
			msg = unsafeString(v.Bytes())
		}
		switch {
		case strings.HasPrefix(msg, "REDIRECT "):
			addr, demoted = strings.Clone(strings.TrimSpace(msg[len("REDIRECT "):])), true
		case strings.HasPrefix(msg, "READONLY"):
			demoted = true
		default:
			all = false
		}
	}
	return addr, demoted, all && demoted
}

// errSentinelClosed is what a closed Sentinel carrier answers.
var errSentinelClosed = fmt.Errorf("%w (%w)", ErrClosed, ErrNotSent)

func (k *sentinel) lease(ctx context.Context) (carrier, error) {
	v := k.view.Load()
	if v == nil {
		return nil, errSentinelClosed
	}
	return v.primary.lease(ctx)
}

func (k *sentinel) watch(ctx context.Context, keys []string, run func(carrier) error) error {
	v := k.view.Load()
	if v == nil {
		return errSentinelClosed
	}
	return v.primary.watch(ctx, keys, run)
}

func (k *sentinel) eachShard(replicas bool, fn func(carrier) error) error {
	v := k.view.Load()
	if v == nil {
		return errSentinelClosed
	}
	if err := fn(v.primary.direct); err != nil || !replicas {
		return err
	}
	for _, n := range v.replicas {
		if err := fn(n.direct); err != nil {
			return err
		}
	}
	return nil
}

func (k *sentinel) serving(int32) endpoint {
	if v := k.view.Load(); v != nil {
		return v.primary.endpoint()
	}
	return endpoint{}
}

func (k *sentinel) changes() <-chan struct{} {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.changed
}

// refresh asks the watcher to ask the sentinels now.
func (k *sentinel) refresh() {
	select {
	case k.refreshAsked <- struct{}{}:
	default:
	}
}

// redirectTo asks the watcher to move to the primary a -REDIRECT named.
func (k *sentinel) redirectTo(addr string) {
	for {
		select {
		case k.want <- addr:
			return
		default:
		}
		select {
		case <-k.want: // an older address: this one replaces it
		default:
		}
	}
}

func (k *sentinel) taint() {}

func (k *sentinel) protocol() int {
	if v := k.view.Load(); v != nil {
		return v.primary.pipe.Protocol()
	}
	return 0
}

// stats adds up the nodes' counters and gauges, with those of the nodes
// gone; Reconnects counts the primary changes too.
func (k *sentinel) stats(st *Stats) {
	k.retired.addTo(st)
	st.Reconnects += k.switches.Load()
	if v := k.view.Load(); v != nil {
		v.primary.stats(st)
		for _, n := range v.replicas {
			n.stats(st)
		}
	}
}

// close stops following the sentinels and closes every connection.
func (k *sentinel) close() error {
	k.stop()
	k.wg.Wait()
	k.mu.Lock()
	if k.query != nil {
		k.query.Close()
		k.query = nil
	}
	k.mu.Unlock()
	v := k.view.Swap(nil)
	if v == nil {
		return nil
	}
	var wg sync.WaitGroup
	for _, n := range append([]*node{v.primary}, v.replicas...) {
		wg.Go(func() { n.close() })
	}
	wg.Wait()
	return nil
}

// retire closes nodes that left the group, keeping their counters.
func (k *sentinel) retire(nodes ...*node) {
	for _, n := range nodes {
		k.retired.keep(n)
		go n.close()
	}
}
