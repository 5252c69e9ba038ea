package pipe

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ziplinekv/zipline/internal/resp"
)

// inflight is the FIFO of calls written to one connection and not yet
// answered. The writer appends; the reader takes everything at once and
// works through its own copy, so the lock is taken once per batch, not per
// reply.
type inflight struct {
	mu       sync.Mutex
	calls    []*Call
	failed   bool
	dead     chan struct{} // closed when the reader stops
	deadline time.Time     // current read deadline; zero when none is set
	// outstanding counts calls pushed and not yet answered: the writer's
	// sign that more requests are coming.
	outstanding atomic.Int64
}

// push appends calls, and makes sure a read deadline covers them. It fails
// once the connection is dead: the calls were not written.
func (f *inflight) push(calls []*Call, nc net.Conn, timeout time.Duration) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failed {
		return false
	}
	f.calls = append(f.calls, calls...)
	f.outstanding.Add(int64(len(calls)))
	f.armDeadline(nc, timeout)
	return true
}

// armDeadline makes sure a read deadline covers what was just pushed. Like
// the write deadline, it is moved only when less than timeout remains.
// Callers hold f.mu.
func (f *inflight) armDeadline(nc net.Conn, timeout time.Duration) {
	if timeout <= 0 {
		return
	}
	if now := time.Now(); f.deadline.Sub(now) < timeout {
		f.deadline = now.Add(timeout + timeout/2)
		nc.SetReadDeadline(f.deadline)
	}
}

// pushOne is push for a single call, without building a slice.
func (f *inflight) pushOne(c *Call, nc net.Conn, timeout time.Duration) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failed {
		return false
	}
	f.calls = append(f.calls, c)
	f.outstanding.Add(1)
	f.armDeadline(nc, timeout)
	return true
}

// take swaps the pending calls with dst (emptied), returning them.
func (f *inflight) take(dst []*Call) []*Call {
	f.mu.Lock()
	dst, f.calls = f.calls, dst[:0]
	f.mu.Unlock()
	return dst
}

// clearDeadlineIfIdle handles a read timeout: with nothing in flight it only
// means the connection was quiet, so the deadline is lifted.
func (f *inflight) clearDeadlineIfIdle(nc net.Conn) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.calls) > 0 {
		return false
	}
	f.deadline = time.Time{}
	nc.SetReadDeadline(time.Time{})
	return true
}

// fail marks the connection dead and fails every call still queued in f.
func (f *inflight) fail(err error) {
	f.mu.Lock()
	if !f.failed {
		f.failed = true
		close(f.dead)
	}
	calls := f.calls
	f.calls = nil
	f.mu.Unlock()
	for _, c := range calls {
		c.complete(err)
	}
}

// readLoop parses replies and completes calls in the order they were
// written, until the connection fails.
func (p *Pipe) readLoop(c *conn, fl *inflight) (err error) {
	var (
		cur   *Call   // call whose replies are being collected
		local []*Call // taken from fl; local[next:] are still waiting
		next  int
	)
	defer func() {
		lost := fmt.Errorf("%w: %w", ErrConnLost, err)
		if p.life.Err() != nil {
			lost = fmt.Errorf("%w: %w", ErrClosed, err)
		}
		if cur != nil {
			cur.complete(lost)
		}
		for _, call := range local[next:] {
			call.complete(lost)
		}
		fl.fail(lost)
	}()
	for {
		var v resp.Value
		if err := c.rd.ReadValue(&v); err != nil {
			if isTimeout(err) && cur == nil && next == len(local) && c.rd.Buffered() == 0 &&
				fl.clearDeadlineIfIdle(c.conn) {
				continue
			}
			if isTimeout(err) {
				return fmt.Errorf("no reply within the I/O timeout: %w", err)
			}
			return err
		}
		if v.Type() == resp.Push {
			if p.opts.OnPush != nil {
				p.opts.OnPush(v)
			}
			continue
		}
		if cur == nil {
			if next == len(local) {
				clear(local)
				local, next = fl.take(local), 0
				if len(local) == 0 {
					return fmt.Errorf("%w: reply %s with no request waiting", resp.ErrProtocol, v)
				}
			}
			cur = local[next]
			next++
		}
		cur.replies = append(cur.replies, v)
		if len(cur.replies) == cur.N {
			fl.outstanding.Add(-1)
			last := cur.closeMarker
			cur.complete(nil)
			cur = nil
			if last {
				return errClosing
			}
		}
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
