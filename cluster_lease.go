package zipline

// This file is what a cluster does for one caller at a time: a
// transaction on its slot's owner, Watch on a connection lent there, and a
// Client from Dedicated bound to one node.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ziplinekv/zipline/internal/resp"
)

// sendTx runs a MULTI/EXEC transaction on the owner of its one slot, as a
// unit: when the slot has moved (MOVED while queuing, or EXECABORT after
// one), or is moving (ASK, TRYAGAIN), the whole transaction goes again.
// Nothing of a transaction aborted that way ran.
func (c *cluster) sendTx(ctx context.Context, r *request) error {
	slot := noSlot
	for _, ci := range r.cmds {
		switch {
		case ci.slot == noSlot:
		case slot == noSlot:
			slot = ci.slot
		case ci.slot != slot:
			return &CrossSlotError{Command: "MULTI", Slots: r.slots()}
		}
	}
	backoff := retryBackoffMin
	var downSince time.Time // see failoverLeft
	for round := 0; ; round++ {
		nd := c.target(wireCommand{slot: slot})
		when := againOnRoutes
		if nd != nil {
			when = notAgain
			sub := c.s.newRequest()
			sub.call.Buf = append(sub.call.Buf, r.call.Buf...)
			sub.call.Expect = append(sub.call.Expect, r.call.Expect...)
			sub.call.N = r.call.N
			err := nd.send(ctx, sub)
			switch {
			case err == nil:
				for _, v := range sub.replies {
					if !v.IsError() || !isRefusal(v) {
						continue
					}
					f := flight{ask: make([]string, 1)}
					a := c.redirected(ctx, &f, 0, v, nd) // a MOVED patches the map
					if !strings.HasPrefix(unsafeString(v.Bytes()), "MOVED ") {
						a = max(a, againLater) // ASK or TRYAGAIN: the slot is moving; wait for the move to end
					}
					when = max(when, againNow, a) // a refusal always goes again
				}
				if when == notAgain {
					r.replies = sub.replies
					r.call, sub.call = sub.call, r.call // the replies live in the call
					sub.release()
					return nil
				}
			case errors.Is(err, ErrNotSent) && ctx.Err() == nil:
				when = againOnChange
				c.askRefresh()
			default:
				sub.release()
				return err
			}
			sub.release()
		}
		if round == maxRedirects {
			return errors.New("zipline: too many cluster redirects and retries for a transaction")
		}
		limit, over := c.failoverLeft(&downSince, when)
		if over {
			return ErrShardDown
		}
		if when == againNow && round == 0 {
			continue // refused with MOVED only: the map is patched, the new owner takes it now (once: see sendEach)
		}
		if err := c.wait(ctx, &backoff, when, limit); err != nil {
			return notSentErr(err)
		}
	}
}

// watch runs Watch on the owner of the keys' one slot, as a unit, like
// sendTx: the slot may move, or start moving, while fn runs. The server
// then refuses what fn sends there (MOVED, ASK, TRYAGAIN...), and a
// transaction queued with such a refusal aborts: nothing of it ran. So when
// fn fails after a refusal, the map is patched and fn runs again on the new
// owner, bounded by ctx and maxRedirects. As with ErrTxFailed, fn's reads
// are repeated; its writes belong in the transaction.
func (c *cluster) watch(ctx context.Context, keys []string, run func(carrier) error) error {
	slot := argsSlot(keyArgs(keys))
	if slot == crossSlot {
		return &CrossSlotError{Command: "WATCH", Slots: keySlots(keyArgs(keys))}
	}
	backoff := retryBackoffMin
	for round := 0; ; round++ {
		l, _, err := c.leaseFor(ctx, slot)
		if err != nil {
			return err
		}
		w := &watchLease{carrier: l, slot: slot}
		err = run(w)
		w.close()
		if err == nil || !w.refused.IsError() || ctx.Err() != nil {
			return err
		}
		if round == maxRedirects {
			return fmt.Errorf("zipline: too many cluster redirects and retries for a Watch: %w", err)
		}
		f := flight{ask: make([]string, 1)}
		c.redirected(ctx, &f, 0, w.refused, nil) // a MOVED patches the slot; an ASK waits for the move to end
		if err := c.wait(ctx, &backoff, againLater, -1); err != nil {
			return notSentErr(err)
		}
	}
}

// watchLease is Watch's connection on a cluster, on the owner of the
// watched keys' slot. A command for another slot is refused with a
// *CrossSlotError before it is sent: the server would refuse it with MOVED
// (or, queued in the transaction, abort EXEC), which means "the slot
// moved" and would run fn again, forever. It notes the first reply by which
// the server refused a command because of where the watched slot is, or is
// going (see cluster.watch).
type watchLease struct {
	carrier // the lease
	slot    int32
	refused resp.Value
}

var _ carrier = (*watchLease)(nil)

// watch runs on the lent connection itself: Watch inside Watch's callback.
func (w *watchLease) watch(_ context.Context, _ []string, run func(carrier) error) error {
	return run(w)
}

func (w *watchLease) send(ctx context.Context, r *request) error {
	for _, ci := range r.cmds {
		if ci.slot >= 0 && ci.slot != w.slot {
			name := "WATCH callback"
			if r.tx {
				name = "MULTI"
			}
			slots := r.slots()
			if !slices.Contains(slots, w.slot) {
				slots = append([]int32{w.slot}, slots...)
			}
			return &CrossSlotError{Command: name, Slots: slots}
		}
	}
	err := w.carrier.send(ctx, r)
	if err != nil || w.refused.IsError() {
		return err
	}
	for _, v := range r.replies {
		if v.IsError() && isRefusal(v) {
			w.refused = v
			break
		}
	}
	return nil
}

// isRefusal reports whether an error reply says the command did not run
// because of where its slot is, or is going.
func isRefusal(v resp.Value) bool {
	prefix, _, _ := strings.Cut(unsafeString(v.Bytes()), " ")
	switch prefix {
	case "MOVED", "ASK", "TRYAGAIN", "CLUSTERDOWN", "MASTERDOWN", "LOADING":
		return true
	}
	return false
}

// lease lends a dedicated connection for Dedicated. Which node it goes to
// depends on the first command with a key sent on it (see lazyLease).
func (c *cluster) lease(ctx context.Context) (carrier, error) {
	return &lazyLease{c: c}, nil
}

// lazyLease is a Dedicated Client's carrier on a cluster: it borrows a
// connection from the node that owns the slot of the first command with a
// key, and keeps it: a dedicated connection is one connection. A later
// command for a slot another node serves is refused with a
// *NodeBoundError, rather than sent there to come back as MOVED.
type lazyLease struct {
	c    *cluster
	mu   sync.Mutex
	l    *lease
	node *node // the node of l
	slot int32 // the slot that bound it
}

var _ carrier = (*lazyLease)(nil)

func (z *lazyLease) bound(ctx context.Context, r *request) (*lease, error) {
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.l != nil {
		for _, ci := range r.cmds {
			if ci.slot >= 0 && ci.slot != z.slot {
				if nd := z.c.target(wireCommand{slot: ci.slot}); nd != z.node {
					return nil, &NodeBoundError{Bound: z.slot, BoundAddr: z.node.addr, Slot: ci.slot}
				}
			}
		}
		return z.l, nil
	}
	slot := noSlot
	for _, ci := range r.cmds {
		if ci.slot >= 0 {
			slot = ci.slot
			break
		}
	}
	l, nd, err := z.c.leaseFor(ctx, slot)
	if err != nil {
		return nil, err
	}
	z.l, z.node, z.slot = l, nd, slot
	return l, nil
}

func (z *lazyLease) send(ctx context.Context, r *request) error {
	l, err := z.bound(ctx, r)
	if err != nil {
		return err
	}
	return l.send(ctx, r)
}

func (z *lazyLease) lease(context.Context) (carrier, error) {
	return nil, errors.New("zipline: Dedicated called on a dedicated Client")
}

// watch runs on the Dedicated Client's connection itself.
func (z *lazyLease) watch(_ context.Context, _ []string, run func(carrier) error) error {
	return run(z)
}

func (z *lazyLease) eachShard(_ bool, fn func(carrier) error) error { return fn(z) }

func (z *lazyLease) serving(int32) endpoint { return endpoint{} }

func (z *lazyLease) changes() <-chan struct{} { return nil }

func (z *lazyLease) refresh() {}

func (z *lazyLease) protocol() int { return z.c.protocol() }

func (z *lazyLease) stats(st *Stats) {
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.l != nil {
		z.l.stats(st)
	}
}

func (z *lazyLease) close() error {
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.l == nil {
		return nil
	}
	return z.l.close()
}

func (z *lazyLease) taint() {
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.l != nil {
		z.l.taint()
	}
}

// leaseFor lends a dedicated connection to the node that serves slot,
// waiting within ctx for one to.
func (c *cluster) leaseFor(ctx context.Context, slot int32) (*lease, *node, error) {
	backoff := retryBackoffMin
	var downSince time.Time // see failoverLeft
	for {
		if nd := c.target(wireCommand{slot: slot}); nd != nil {
			l, err := nd.dedicated.lease(ctx)
			if err == nil || !errors.Is(err, ErrNotSent) || ctx.Err() != nil {
				return l, nd, err
			}
		}
		c.askRefresh()
		limit, over := c.failoverLeft(&downSince, againOnRoutes)
		if over {
			return nil, nil, ErrShardDown
		}
		if err := c.wait(ctx, &backoff, againOnRoutes, limit); err != nil {
			return nil, nil, notSentErr(err)
		}
	}
}
