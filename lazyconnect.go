package zipline

// This file is the carrier of a Client made with Options.LazyConnect
// before it has connected.

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
)

// connecting connects in the background (connect.go's connect, again and
// again with the reconnect backoff) and then hands everything to the
// carrier that made: a single server's, a cluster's or a Sentinel
// group's. Requests made meanwhile wait for it within their context, or,
// when that has no deadline, for DialTimeout at most, and fail as not
// sent.
type connecting struct {
	s     *shared
	k     atomic.Pointer[carrier] // the carrier, once connected
	ready chan struct{}           // closed once k is set, or the Client closed
	life  context.Context
	stop  context.CancelFunc
	done  chan struct{} // closed when the connecting goroutine has ended
}

var _ carrier = (*connecting)(nil)

func newConnecting(s *shared) *connecting {
	c := &connecting{s: s, ready: make(chan struct{}), done: make(chan struct{})}
	c.life, c.stop = context.WithCancel(context.Background())
	go c.connect()
	return c
}

// connect tries until it connects or the Client is closed.
func (c *connecting) connect() {
	defer close(c.done)
	defer close(c.ready)
	log := c.s.opts.Logger
	backoff := c.s.opts.ReconnectBackoffMin
	for attempt := 1; ; attempt++ {
		k, err := c.s.connect(c.life)
		if err == nil {
			if c.life.Err() != nil {
				k.close()
				return
			}
			c.k.Store(&k)
			if attempt > 1 {
				log.Info("zipline: connected", "attempts", attempt)
			}
			return
		}
		if attempt == 1 {
			log.Warn("zipline: not connected yet; retrying in the background (LazyConnect)", "err", err)
		} else {
			log.Debug("zipline: still not connected", "attempt", attempt, "err", err)
		}
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-c.life.Done():
			t.Stop()
			return
		}
		backoff = min(2*backoff, c.s.opts.ReconnectBackoffMax)
	}
}

// now returns the carrier, or nil before the Client has connected.
func (c *connecting) now() carrier {
	if k := c.k.Load(); k != nil {
		return *k
	}
	return nil
}

// wait returns the carrier once connected, within ctx (or DialTimeout
// when ctx has no deadline).
func (c *connecting) wait(ctx context.Context) (carrier, error) {
	if k := c.now(); k != nil {
		return k, nil
	}
	if ctx.Done() == nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.s.opts.DialTimeout)
		defer cancel()
	}
	select {
	case <-c.ready:
		if k := c.now(); k != nil {
			return k, nil
		}
		return nil, fmt.Errorf("%w (%w)", ErrClosed, ErrNotSent)
	case <-ctx.Done():
		return nil, fmt.Errorf("zipline: not connected yet (LazyConnect): %w (%w): %w", ErrNotConnected, ErrNotSent, ctx.Err())
	}
}

func (c *connecting) send(ctx context.Context, r *request) error {
	k, err := c.wait(ctx)
	if err != nil {
		return err
	}
	return k.send(ctx, r)
}

func (c *connecting) lease(ctx context.Context) (carrier, error) {
	k, err := c.wait(ctx)
	if err != nil {
		return nil, err
	}
	return k.lease(ctx)
}

func (c *connecting) watch(ctx context.Context, keys []string, run func(carrier) error) error {
	k, err := c.wait(ctx)
	if err != nil {
		return err
	}
	return k.watch(ctx, keys, run)
}

// eachShard walks the shards once connected; before, the one shard is
// this carrier, whose requests wait for the connection.
func (c *connecting) eachShard(replicas bool, fn func(carrier) error) error {
	if k := c.now(); k != nil {
		return k.eachShard(replicas, fn)
	}
	return fn(c)
}

func (c *connecting) serving(slot int32) endpoint {
	if k := c.now(); k != nil {
		return k.serving(slot)
	}
	return endpoint{}
}

// changes is closed once connected, when the routes first exist.
func (c *connecting) changes() <-chan struct{} {
	if k := c.now(); k != nil {
		return k.changes()
	}
	return c.ready
}

func (c *connecting) refresh() {
	if k := c.now(); k != nil {
		k.refresh()
	}
}

func (c *connecting) taint() {}

func (c *connecting) protocol() int {
	if k := c.now(); k != nil {
		return k.protocol()
	}
	return 0
}

func (c *connecting) stats(st *Stats) {
	if k := c.now(); k != nil {
		k.stats(st)
	}
}

// close stops connecting, and closes the carrier if it connected.
func (c *connecting) close() error {
	c.stop()
	<-c.done
	if k := c.now(); k != nil {
		return k.close()
	}
	return nil
}
