package zipline

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
)

// rotationLoad is the load that credentials and certificates are rotated
// under: callers SETting and GETting their own keys on the shared
// connection, and one caller taking a dedicated connection for each PING
// (a new one, so a new handshake, when c keeps none idle: MaxIdleDedicated
// -1; a lent idle one otherwise). It counts calls and failures, keeping the first.
type rotationLoad struct {
	calls, failed, dedicated atomic.Int64
	firstErr                 atomic.Value
	done                     chan struct{}
	wg                       sync.WaitGroup
}

// startRotationLoad starts callers goroutines and the dedicated one on c;
// stop ends them.
func startRotationLoad(ctx context.Context, c *Client, callers int) *rotationLoad {
	l := &rotationLoad{done: make(chan struct{})}
	for g := range callers {
		key := "k" + strconv.Itoa(g)
		l.wg.Go(func() {
			for i := 0; !l.stopped(); i++ {
				l.check(c.Set(ctx, key, []byte(strconv.Itoa(i))))
				_, err := c.Get(ctx, key)
				l.check(err)
			}
		})
	}
	l.wg.Go(func() {
		for !l.stopped() {
			d, err := c.Dedicated(ctx)
			if err != nil {
				l.check(err)
				continue
			}
			l.check(d.Ping(ctx))
			d.Close()
			l.dedicated.Add(1)
		}
	})
	return l
}

func (l *rotationLoad) stopped() bool {
	select {
	case <-l.done:
		return true
	default:
		return false
	}
}

func (l *rotationLoad) check(err error) {
	l.calls.Add(1)
	if err != nil && l.failed.Add(1) == 1 {
		l.firstErr.Store(err)
	}
}

// stop ends the load and waits for its goroutines.
func (l *rotationLoad) stop() {
	close(l.done)
	l.wg.Wait()
}
