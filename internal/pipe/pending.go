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
//
// The total is two counters, so that no call pays for an atomic update of
// a line shared by every processor: callers add to charged while they hold
// Pipe.mu to queue the call (the lock's line is theirs then anyway), and
// the reader adds to released once per run of replies it reads.
type pendingBytes struct {
	limit    int64 // 0: no limit
	failFast bool  // when full: fail at once instead of waiting
	// charged is read and written only under queueLock (Pipe.mu). It is
	// not atomic: on amd64 an atomic store is a locked exchange, which
	// cost every call as much as taking the lock again.
	charged   int64
	queueLock *sync.Mutex
	waiting   atomic.Int32 // callers in wait

	mu    sync.Mutex
	freed chan struct{} // closed (and replaced) when bytes are released while someone waits

	_        [64]byte     // released lives on the reader's own cache line
	released atomic.Int64 // charged bytes given back
	_        [56]byte
}

// used returns the bytes of calls queued or in flight.
func (b *pendingBytes) used() int64 {
	b.queueLock.Lock()
	defer b.queueLock.Unlock()
	return b.charged - b.released.Load()
}

// charge counts c against the limit, unless it is counted already. It
// reports false, charging nothing, when the limit is reached. The caller
// holds Pipe.mu.
func (b *pendingBytes) charge(c *Call) bool {
	if b.limit <= 0 || c.charged != 0 {
		return true
	}
	if b.charged-b.released.Load() >= b.limit {
		return false
	}
	n := int64(len(c.Buf))
	b.charged += n
	c.charged = n
	if c.budget != b { // stored only when it changes (see Call, line 3)
		c.budget = b
	}
	return true
}

// full handles a call that found the limit reached: it fails at once with
// ErrPendingLimit if failFast, or waits until some bytes are released or
// ctx ends. Its errors match ErrNotSent.
func (b *pendingBytes) full(ctx context.Context) error {
	if b.failFast {
		return notSent(ErrPendingLimit)
	}
	b.waiting.Add(1)
	defer b.waiting.Add(-1)
	b.mu.Lock()
	if b.freed == nil {
		b.freed = make(chan struct{})
	}
	freed := b.freed
	b.mu.Unlock()
	if b.used() < b.limit { // released before we registered
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
	b.released.Add(n)
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
