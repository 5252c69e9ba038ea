package zipline

import (
	"context"
	"errors"
	"time"
)

// Dedicated returns a Client bound to a connection of its own, borrowed
// from the pool of dedicated connections. Every command on it, blocking or
// not, runs on that connection, and commands that change connection state
// (SELECT, CLIENT TRACKING, MULTI...) are allowed. Close returns the
// connection to the pool, or closes it if its state changed. Closing the
// Client it came from interrupts it.
//
// Use it for a sequence of commands that must share a connection; for
// blocking commands alone the shared Client already borrows one per call.
func (c *Client) Dedicated(ctx context.Context) (*Client, error) {
	l, err := c.carrier.lease(ctx)
	if err != nil {
		return nil, err
	}
	return c.with(l), nil
}

// Watch runs fn for an optimistic transaction: it WATCHes keys on a
// dedicated connection and passes fn a Client bound to it. fn reads what it
// needs, then queues its writes in tx := cl.Tx() and calls tx.Exec. If a
// watched key changed in between, Exec fails with ErrTxFailed and nothing
// was written; retry by calling Watch again.
//
// Watch returns fn's error. The keys are unwatched when fn returns, whether
// or not it ran a transaction.
//
// On a cluster the keys must share one slot, and Watch runs on its owner.
// If the slot moves or starts moving while fn runs (a failover, a
// resharding), the server refuses fn's commands there and its transaction
// aborts without running; Watch then runs fn again on the new owner, within
// ctx. So fn may run more than once, as when it retries ErrTxFailed: keep
// its writes inside the transaction.
func (c *Client) Watch(ctx context.Context, fn func(cl *Client) error, keys ...string) error {
	if len(keys) == 0 {
		return errors.New("zipline: Watch needs at least one key")
	}
	return c.carrier.watch(ctx, keys, func(k carrier) error {
		return watchOn(ctx, c.with(k), fn, keys)
	})
}

// watchOn is Watch on a Client already bound to one connection.
func watchOn(ctx context.Context, cl *Client, fn func(cl *Client) error, keys []string) error {
	if _, err := run(ctx, cl, define(decOK, specWATCH, keyArgs(keys)...)); err != nil {
		return err
	}
	err := fn(cl)
	// EXEC already unwatched; UNWATCH covers fn returning early. If it
	// cannot be sent the lease is dirty and the connection is dropped.
	uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	if _, uerr := run(uctx, cl, define(decOK, specUNWATCH)); uerr != nil {
		cl.carrier.taint()
	}
	return err
}
