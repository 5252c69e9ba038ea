package pipe

import (
	"errors"
	"net"
	"runtime"
	"time"
)

// maxKeptWriteBuf bounds the write buffer, which is kept between batches:
// one write copies at most this many bytes, and a deeper queue goes out in
// several writes.
const maxKeptWriteBuf = 1 << 20

// pingCommand is the idle health check.
var pingCommand = []byte("*1\r\n$4\r\nPING\r\n")

// writer holds the state of one connection's write loop.
type writer struct {
	buf  []byte      // small commands, copied back to back
	cuts []cut       // large commands, written in place between copies
	vecs net.Buffers // the writev vector; reused
}

// cut is a large command to be written from its own buffer, without a copy,
// at offset off of the small-command buffer.
type cut struct {
	off int
	b   []byte
}

// writeLoop sends queued calls until the connection fails or the pipe
// closes. Everything queued when it wakes goes out in one write; while that
// write is in the kernel new calls queue up and form the next batch.
func (p *Pipe) writeLoop(c *conn, fl *inflight) error {
	var (
		w      writer
		tick   <-chan time.Time
		active bool  // wrote since the last health-check tick
		load   int64 // callers on this connection, estimated (see below)
		last   int64 // calls in the last batch written
		bytes  int   // and their bytes
		// releaseAfter: the connection idled for a whole interval, and
		// the buffers a burst grew go once the health check is written
		// (the reader's once it has read the PONG).
		releaseAfter bool
	)
	if p.opts.HealthCheckInterval > 0 {
		t := time.NewTicker(p.opts.HealthCheckInterval)
		defer t.Stop()
		tick = t.C
	}
	for {
		p.mu.Lock()
		for len(p.queue) == 0 || p.directWriter {
			if p.state == stateClosed && len(p.queue) == 0 && !p.directWriter {
				p.mu.Unlock()
				return p.writeCloseMarker(&w, c, fl)
			}
			p.writerParked = true
			p.mu.Unlock()
			select {
			case <-p.kick:
			case <-fl.dead:
				return nil // the reader saw the failure and reports it
			case <-p.life.Done():
				// Closing: loop to drain the queue, then send the marker.
			case <-tick:
				if !active {
					// Idle for a whole interval: the buffers a burst grew
					// go back (the reader's once it has read the PONG),
					// and the next burst grows them again.
					releaseAfter = true // the health check's write
					c.idled.Store(true)
					p.mu.Lock()
					if len(p.queue) == 0 {
						p.queue, p.spare = nil, nil
					}
					p.mu.Unlock()
					p.queueHealthCheck()
				}
				active = false
			}
			p.mu.Lock()
			p.writerParked = false
		}
		// load estimates how many callers use this connection, without a
		// shared counter every call would have to update: calls queued or
		// in flight stand for one caller each, and the estimate keeps the
		// recent peak of that count (see callerEstimate).
		// The count alone misses every caller whose reply has just been
		// read and who is about to send again; at 64 callers it saw 8 and
		// wrote 8 requests per write where gathering wrote 16.
		out := fl.outstanding.Load()
		if est := callerEstimate(load, out+int64(len(p.queue))); est != load {
			load = est
			p.callers.Store(load)
		}
		if out > 0 && load > p.gatherAbove {
			// Many callers are waiting on this connection, so they will soon
			// send more: let them queue up before writing, rather than pay a
			// system call per request. With few callers the CPU is not the
			// limit and latency is, so their requests go out at once. With
			// very many sending small requests, the batch also waits while
			// the server is still busy with more than the last one (pace):
			// the server's pace sets the batch size, with no timer.
			p.mu.Unlock()
			p.gatherBatch(gatherYields(load))
			if load > p.paceAbove && bytes <= paceCallBytes*int(last) && !p.pace(fl, last) {
				return nil
			}
			p.mu.Lock()
		}
		batch := p.queue
		last = int64(len(batch))
		p.queue, p.spare = p.spare[:0], nil
		p.abandonedQueued = 0 // the loop below recycles them
		p.mu.Unlock()

		// Calls abandoned while queued are never written.
		live := batch[:0]
		for _, call := range batch {
			if call.markSent() {
				live = append(live, call)
			} else {
				call.Release()
			}
		}
		clear(batch[len(live):])
		bytes = 0
		for start := 0; start < len(live); {
			// Copy what the write needs out of the calls first: once in the
			// in-flight queue, a call can complete (the reader fails them all
			// when the connection dies) and be reused by its caller.
			chunk := live[start : start+w.prepare(live[start:])]
			bytes += w.size()
			// Calls enter the in-flight queue before their bytes reach the
			// wire: a reply can arrive before Write returns.
			if !fl.push(chunk, c.conn, p.opts.IOTimeout) {
				w.reset()
				p.unsent(live[start:])
				clear(batch)
				p.recycleQueueSlice(batch)
				return nil
			}
			start += len(chunk)
			active = true
			// Counted before the bytes leave: a reply can complete its call
			// before flush returns, and a caller that then reads the stats
			// must find its request among them.
			p.stats.wrote(len(chunk))
			if err := w.flush(c, p.opts.IOTimeout); err != nil {
				p.unsent(live[start:])
				clear(batch)
				return err
			}
		}
		clear(batch)
		p.recycleQueueSlice(batch)
		if releaseAfter {
			releaseAfter = false
			w.release()
		}
		if p.opts.MaxFlushDelay > 0 && len(live) > 1 {
			// Others are active: let the next batch fill up a little.
			time.Sleep(p.opts.MaxFlushDelay)
		}
	}
}

// gatherBatch yields the processor while the queue keeps growing, up to
// yields times. Under load the goroutines that the reader has just woken
// run and queue their next requests, so one write carries many; when the
// queue stops growing the batch goes out. It costs no timer: a yield with
// nothing else runnable returns at once.
func (p *Pipe) gatherBatch(yields int) {
	p.mu.Lock()
	n := len(p.queue)
	p.mu.Unlock()
	for range yields {
		runtime.Gosched()
		p.mu.Lock()
		m := len(p.queue)
		p.mu.Unlock()
		if m == n {
			return
		}
		n = m
	}
}

// pace holds the next batch back while more than the last batch written
// is still unanswered: the server is busy with earlier ones, so callers go
// on queueing, and the next batch grows until the server catches up. This
// is redispipe's write timer without the timer: at 512 callers of 64 B
// GETs a server read took 340 requests instead of 140, the server's CPU
// per request fell by a tenth, and throughput rose 7 %, where redispipe's
// 150 µs timer costs a lone caller 150 µs a request. It waits for nothing
// that is not on its way: the reader signals when its replies bring the
// count down (replyLoop.settle), a dead connection or Close end the wait.
// It returns false when the connection died meanwhile.
func (p *Pipe) pace(fl *inflight, last int64) bool {
	if last == 0 || fl.outstanding.Load() <= last {
		return true
	}
	fl.paceAt.Store(last)
	if fl.outstanding.Load() <= last { // replies came before the store
		// The reader may have signalled meanwhile. That signal stays in
		// paced and lets a later batch go without waiting; taking it back
		// here (a compare-and-swap, then the signal) cost 5 % at 512
		// callers of 64 B GETs (0.95, 15 rounds), so it is left.
		fl.paceAt.Store(0)
		return true
	}
	select {
	case <-fl.paced:
	case <-fl.dead:
		return false
	case <-p.life.Done():
		fl.paceAt.Store(0)
	}
	return true
}

// paceCallBytes: the writer paces (see pace) only batches of small
// requests, at most this many bytes each on average. A server's system
// calls cost it most per request when requests are small; with 2 KiB SETs
// the server is bound by bytes, and holding a batch back leaves it waiting
// for them (0.66-0.73 at 64 callers, paced).
const paceCallBytes = 256

// paceCallersPerProc: the writer paces only above this many callers per
// processor. At 64 callers on 2 processors pacing lost 4 % (the writer's
// wake-up by the reader, per batch, for batches that were already big).
const paceCallersPerProc = 64

// callerEstimate updates the writer's estimate of the callers on a
// connection, given the calls queued or in flight now: the recent peak,
// decaying by an eighth per batch, and by at least one, so that it falls
// all the way once the load ends.
func callerEstimate(load, now int64) int64 {
	return max(now, load-(load+7)/8)
}

// gatherYields is how many times the writer yields to gather a batch for
// an estimated load of callers: one per callersPerYield, at least one and
// at most maxGatherYields. A yield lets every goroutine runnable on the
// processor run, so with tens of callers one yield already lets each caller
// the last read woke queue its next request; more yields wait for callers
// whose requests are still with the server, and the server idles meanwhile.
// With hundreds of callers the replies come in several reads, and more
// yields let the later ones join. Measured on 2 processors (go test -bench
// 'Parallel(Get|Set)', interleaved rounds): at 64 callers one yield was
// 1.10-1.20x faster than four; at 512, four stayed the better.
func gatherYields(load int64) int {
	return int(min(max(load/callersPerYield, 1), maxGatherYields))
}

const (
	callersPerYield = 64
	// maxGatherYields bounds how long gatherBatch can hold a batch back.
	maxGatherYields = 4
)

// gatherCallersPerProc sets when the writer gathers batches: only while
// more than this many callers per processor wait on the connection. Below
// that, the machine has CPU to spare and each gathering yield only adds
// latency. Measured on 2 processors (bench/RESULTS.md): at 8 callers,
// writing at once was 1.2-1.4x faster than gathering; from 16 callers up,
// gathering was faster: 1.15x at 16, 2.5x at 64.
const gatherCallersPerProc = 4

func (p *Pipe) recycleQueueSlice(s []*Call) {
	p.mu.Lock()
	if p.spare == nil {
		p.spare = s[:0]
	}
	p.mu.Unlock()
}

// unsent handles calls taken for a write that never happened because the
// connection died first. They were not sent, so they are safe to retry.
func (p *Pipe) unsent(calls []*Call) {
	if !p.opts.WaitForReconnect {
		for _, c := range calls {
			c.complete(notSent(ErrNotConnected))
		}
		return
	}
	var keep []*Call
	for _, c := range calls {
		if c.state.CompareAndSwap(stateSent, stateQueued) {
			keep = append(keep, c)
		} else {
			c.Release() // abandoned meanwhile
		}
	}
	p.mu.Lock()
	p.queue = append(keep, p.queue...)
	p.mu.Unlock()
}

// errClosing ends a connection's loops after a graceful close.
var errClosing = errors.New("pipe: closing")

// writeCloseMarker sends a final PING. Replies come back in order, so when
// the reader sees the marker's reply, every request written before it has
// been answered and the connection can go.
func (p *Pipe) writeCloseMarker(w *writer, c *conn, fl *inflight) error {
	call := p.NewCall()
	call.Buf = append(call.Buf, pingCommand...)
	call.N = 1
	call.detached = true
	call.closeMarker = true
	call.state.Store(stateSent)
	calls := []*Call{call}
	w.prepare(calls)
	if !fl.push(calls, c.conn, p.opts.IOTimeout) {
		w.reset()
		call.Release()
		return nil
	}
	if err := w.flush(c, p.opts.IOTimeout); err != nil {
		return err
	}
	return errClosing
}

func (p *Pipe) queueHealthCheck() {
	call := p.NewCall()
	call.Buf = append(call.Buf, pingCommand...)
	call.N = 1
	call.detached = true
	p.mu.Lock()
	p.queue = append(p.queue, call)
	p.mu.Unlock()
}

// prepare gathers the bytes of the longest prefix of calls that fits one
// write, and returns its length (at least 1). Small commands are copied into
// one buffer, up to maxKeptWriteBuf, so a deep queue of big batches never
// builds a buffer the size of the queue; large ones are written from their
// own buffers through writev, so a big value is never copied. (A call's
// buffer that large is never reused by the pool, so it stays intact until
// written even if the call completes first.)
func (w *writer) prepare(calls []*Call) int {
	w.buf, w.cuts = w.buf[:0], w.cuts[:0]
	for i, c := range calls {
		if len(c.Buf) >= largeBuf {
			w.cuts = append(w.cuts, cut{off: len(w.buf), b: c.Buf})
			continue
		}
		if i > 0 && len(w.buf)+len(c.Buf) > maxKeptWriteBuf {
			return i
		}
		if len(w.buf)+len(c.Buf) > cap(w.buf) {
			w.grow(len(c.Buf))
		}
		w.buf = append(w.buf, c.Buf...)
	}
	return len(calls)
}

// grow makes room for n more bytes in buf. It doubles the buffer, but never
// past maxKeptWriteBuf, so the buffer is kept for the next batch: append's
// own growth rounds up past that bound, and a buffer dropped for it was
// regrown, copy by copy, for every large batch (at 512 callers of 2 KiB
// SETs that was 4.5 KB of garbage per request and a fifth of the CPU in
// the collector).
func (w *writer) grow(n int) {
	need := len(w.buf) + n
	size := min(max(2*cap(w.buf), need, minWriteBuf), maxKeptWriteBuf)
	w.buf = append(make([]byte, 0, max(size, need)), w.buf...)
}

// minWriteBuf is the write buffer's first size: enough for a few small
// commands; a burst doubles it. An idle connection's health check, the
// first write after its buffers were released, needs no more.
const minWriteBuf = 256

// size is the bytes prepare gathered.
func (w *writer) size() int {
	n := len(w.buf)
	for _, ct := range w.cuts {
		n += len(ct.b)
	}
	return n
}

// release drops the buffers, on a connection found idle.
func (w *writer) release() {
	*w = writer{}
}

// reset drops what prepare gathered without writing it.
func (w *writer) reset() {
	clear(w.cuts)
	w.buf, w.cuts = w.buf[:0], w.cuts[:0]
}

// flush writes what prepare gathered, in one system call.
func (w *writer) flush(c *conn, timeout time.Duration) error {
	c.extendWriteDeadline(timeout)
	nc := c.conn
	var err error
	if len(w.cuts) == 0 {
		_, err = nc.Write(w.buf)
	} else {
		w.vecs = w.vecs[:0]
		prev := 0
		for _, ct := range w.cuts {
			if ct.off > prev {
				w.vecs = append(w.vecs, w.buf[prev:ct.off])
			}
			w.vecs = append(w.vecs, ct.b)
			prev = ct.off
		}
		if prev < len(w.buf) {
			w.vecs = append(w.vecs, w.buf[prev:])
		}
		vecs := w.vecs // WriteTo consumes its receiver
		_, err = vecs.WriteTo(nc)
		clear(w.vecs)
	}
	w.reset()
	return err
}
