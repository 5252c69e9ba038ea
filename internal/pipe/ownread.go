package pipe

import (
	"context"
	"errors"
	"time"

	"github.com/ziplinekv/zipline/internal/resp"
)

// Who reads a connection. Exactly one goroutine reads it at a time, and the
// role moves between the reader goroutine and callers:
//
//   - roleReader: the reader goroutine reads, as it always does under load.
//   - roleFree: nothing is in flight and the reader goroutine waits for a
//     kick instead of blocking in Read. The socket is not being read.
//   - roleCaller: a caller that wrote a lone request (see enqueue) reads
//     its own reply on its own goroutine.
//
// A lone request on an idle connection thus costs what it costs on a plain
// blocking connection: one write and one read on the caller's goroutine,
// with no goroutine woken to read the reply and none to hand it over. That
// is the whole gap to a synchronous client at one goroutine. As soon as a
// second request is written while the caller reads, the caller hands the
// role back to the reader goroutine once its own reply is in, and the pipe
// works as before.
//
// The role is free only on connections without out-of-band pushes
// (subscriptions, client tracking): those are read at all times, so pushes
// are never late. While nobody reads, a server closing the connection goes
// unnoticed until the next request, so a caller that finds the connection
// idle for a while first peeks at the socket (see conn.quiet): if the server
// closed it, or sent something unasked, the reader goroutine deals with
// that before the request is written.
type readRole uint8

const (
	roleReader readRole = iota
	roleFree
	roleCaller
)

// idleCheckAfter is how long a connection can sit unread before a caller
// peeks at it before writing. Back-to-back requests from one goroutine
// never pay for the peek; a request after a pause pays one non-blocking
// system call.
const idleCheckAfter = time.Millisecond

// errInterrupted ends a caller's read when its context ends between two
// replies: the reader goroutine takes over from the same place.
var errInterrupted = errors.New("pipe: read handed over")

// errParked ends a reader goroutine whose connection idles (see park).
var errParked = errors.New("pipe: reader parked")

// kickReader wakes the reader goroutine if it waits for the role, or
// starts one if it ended while the connection idled. Callers hold f.mu and
// have just set f.role = roleReader (or f.stop).
func (f *inflight) kickReader() {
	if f.out {
		f.out = false
		f.resume()
		return
	}
	select {
	case f.readKick <- struct{}{}:
	default:
	}
}

// release gives up the read role after a caller or the reader goroutine
// found nothing left to read. Callers hold f.mu.
func (f *inflight) release() {
	f.role = roleFree
	f.idleSince = time.Now()
	if f.settleWanted {
		f.settleWanted = false
		select {
		case f.settled <- struct{}{}:
		default:
		}
	}
}

// park gives the read role up while nothing is in flight, and waits until
// a writer (or the caller that held it) hands it back, or the connection
// is being torn down. It returns at once if there is something to read.
// On a connection found idle (l.retire) it returns errParked instead of
// waiting: the goroutine ends, and with it the stack an idle connection
// would keep (a connection per node of a 1,000-node cluster), and
// kickReader starts another when the role is wanted.
func (l *replyLoop) park() error {
	f := l.fl
	f.mu.Lock()
	if len(f.calls) > 0 || f.stop || f.role != roleReader {
		f.mu.Unlock()
		return nil
	}
	f.release()
	if l.retire {
		l.retire, f.out = false, true
		f.mu.Unlock()
		return errParked
	}
	f.mu.Unlock()
	for {
		<-f.readKick
		f.mu.Lock()
		if f.role == roleFree && f.stop {
			f.role = roleReader
		}
		mine := f.role == roleReader
		f.mu.Unlock()
		if mine {
			return l.handedErr
		}
	}
}

// idle reports whether nothing is in flight and nothing buffered: the
// reader goroutine may give up the role. The reader asks before every
// reply, so the local checks come first: while replies are buffered it
// touches no counter another processor writes (settle does, and runs here
// only when the buffer is empty, once per read from the socket).
func (l *replyLoop) idle() bool {
	if l.cur != nil || l.next < len(l.local) || l.c.rd.Buffered() != 0 {
		return false
	}
	l.settle()
	return l.fl.outstanding.Load() == 0
}

// claimRead takes the read role for a caller about to write a lone request,
// if the reader goroutine has given it up. It reports whether the caller
// now reads, and whether the connection has been idle long enough to be
// peeked at first.
func (c *conn) claimRead() (claimed, stale bool) {
	f := c.fl
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.role != roleFree || f.failed || f.stop {
		return false, false
	}
	f.role = roleCaller
	return true, time.Since(f.idleSince) >= idleCheckAfter
}

// settle hands the read role, just claimed, back to the reader goroutine
// so it reads whatever the peek found waiting, and waits until it has: it
// gave the role up again (the connection is fine), or the connection died
// and its replacement was attempted. It reports false if ctx ended first.
func (c *conn) settle(ctx context.Context) bool {
	f := c.fl
	f.mu.Lock()
	f.role = roleReader
	f.settleWanted = true
	f.kickReader()
	f.mu.Unlock()
	// Bounded: what the peek saw may be the start of something still
	// arriving. Then the reader goroutine keeps the role, and the retry
	// writes the request without claiming it.
	t := time.NewTimer(settleWait)
	defer t.Stop()
	select {
	case <-f.settled:
		return true
	case <-t.C:
		return true
	case <-f.dead:
	case <-ctx.Done():
		return false
	}
	select {
	case <-c.next:
		return true
	case <-ctx.Done():
		return false
	}
}

// settleWait bounds how long a caller waits for the reader goroutine to
// read what a peek found, before writing its request anyway.
const settleWait = 10 * time.Millisecond

// readOwn reads replies on the caller's goroutine until call is answered,
// then gives the read role back: to the reader goroutine if more requests
// were written meanwhile, or up, if none were. A read error is handed to
// the reader goroutine, which ends the connection as if it had hit the
// error itself, and fails call with everything else in flight. If ctx ends
// while no reply is arriving, the reader goroutine takes over and the
// caller returns; once a reply has begun, it is read to its end first.
func (p *Pipe) readOwn(ctx context.Context, c *conn, call *Call) {
	l := c.loop
	var stop func() bool
	if ctx.Done() != nil {
		stop = context.AfterFunc(ctx, c.interrupt)
	}
	c.live.owner = true
	for {
		var v resp.Value
		err := l.readOne(&v)
		if err == nil {
			var got *Call
			if got, err = l.handle(&v); err == nil {
				if got == call {
					break
				}
				continue
			}
		}
		if err != errInterrupted {
			l.handedErr = err
		}
		break
	}
	c.live.owner = false
	if stop != nil {
		stop()
	}
	l.settle()
	p.stats.OwnReads.Add(1)
	f := c.fl
	f.mu.Lock()
	if l.handedErr != nil || !l.idle() || len(f.calls) > 0 || f.stop {
		f.role = roleReader
		f.kickReader()
	} else {
		f.release()
	}
	f.mu.Unlock()
}

// quiet reports whether nothing waits on the idle connection's socket. The
// caller holds the read role, so nobody reads meanwhile; a read deadline
// left over from the last request would fail the peek, so it goes first
// (the request about to be written sets a new one).
func (c *conn) quiet() bool {
	c.fl.mu.Lock()
	if c.fl.armed {
		c.fl.armed = false
		c.conn.SetReadDeadline(time.Time{})
	}
	c.fl.mu.Unlock()
	return c.peek.quiet()
}

// interrupt cuts a caller's read short when its context ends (see
// liveReader.Read).
func (c *conn) interrupt() {
	c.live.interrupted.Store(true)
	c.conn.SetReadDeadline(aLongTimeAgo)
}

var aLongTimeAgo = time.Unix(1, 0)

// replaced signals that the connection's replacement was attempted: the
// first dial after it was lost succeeded or failed, or the pipe will not
// dial again.
func (c *conn) replaced() { c.nextOnce.Do(func() { close(c.next) }) }
