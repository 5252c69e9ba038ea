package pipe

import (
	"context"
	"sync"
	"sync/atomic"
)

// pendingBytes bounds the bytes of calls queued or in flight on one pipe,
// so that a slow or unreachable server cannot make callers pile up memory
// without limit. A call is admitted while the total is under the limit, so
// the bound is the limit plus one call: a call larger than the limit still
// goes out, alone.
type pendingBytes struct {
	limit    int64 // 0: no limit
	failFast bool  // when full: fail at once instead of waiting
	used     atomic.Int64
	waiting  atomic.Int32 // callers in acquire's slow path

	mu    sync.Mutex
	freed chan struct{} // closed (and replaced) when bytes are released while someone waits
}

// acquire charges c's size, waiting for room up to ctx (or failing at once
// with ErrPendingLimit if failFast). The error matches ErrNotSent.
func (b *pendingBytes) acquire(ctx context.Context, c *Call) error {
	if b.limit <= 0 {
		return nil
	}
	n := int64(len(c.Buf))
	for {
		// One atomic add on the way in, taken back if there was no room:
		// under load this counter is shared by every caller on two or more
		// processors, and a load-then-swap loop costs twice.
		if u := b.used.Add(n); u-n < b.limit {
			c.charged, c.budget = n, b
			return nil
		}
		b.release(n)
		if b.failFast {
			return notSent(ErrPendingLimit)
		}
		if err := b.wait(ctx); err != nil {
			return err
		}
	}
}

// wait blocks until some bytes are released or ctx ends.
func (b *pendingBytes) wait(ctx context.Context) error {
	b.waiting.Add(1)
	defer b.waiting.Add(-1)
	b.mu.Lock()
	if b.freed == nil {
		b.freed = make(chan struct{})
	}
	freed := b.freed
	b.mu.Unlock()
	if b.used.Load() < b.limit { // released before we registered
		return nil
	}
	select {
	case <-freed:
		return nil
	case <-ctx.Done():
		return notSent(ctx.Err())
	}
}

func (b *pendingBytes) release(n int64) {
	b.used.Add(-n)
	if b.waiting.Load() == 0 {
		return
	}
	b.mu.Lock()
	if b.freed != nil {
		close(b.freed)
		b.freed = nil
	}
	b.mu.Unlock()
}
