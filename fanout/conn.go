package fanout

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"github.com/ziplinekv/zipline/fanout/internal/wsproto"
)

// TryWriter is implemented by connections that can take a write without
// blocking the caller: TryWrite writes what the connection accepts now and
// returns how much that was, with a nil error when the rest must wait. The
// hub's writer goroutines write to such connections directly, batching
// whatever is queued, and hand a connection that cannot take everything
// to a goroutine of its own until it catches up. The hub provides this for
// TCP and Unix connections itself; a connection without it gets a
// goroutine for each burst of writes.
type TryWriter interface {
	TryWrite(p []byte) (n int, err error)
}

// deflateMode is what a connection negotiated.
type deflateMode uint8

const (
	deflateOff       deflateMode = iota
	deflateStateless             // server_no_context_takeover: every frame stands alone
	deflateShared                // context takeover: shared stream frames once in step
)

// Close codes the hub sends.
const (
	closeGoingAway = wsproto.CloseGoingAway
	closePolicy    = wsproto.ClosePolicyViolation
)

// deliverResult says what deliver did with a message.
type deliverResult uint8

const (
	skipped     deliverResult = iota // the connection is closing
	queued                           // queued; a writer already has the connection
	queuedReady                      // queued; the caller must hand the connection to its worker
	droppedFull                      // the queue was full
)

// conn is one WebSocket connection. Its reader runs in ServeHTTP's
// goroutine; its writes run on its worker, or on a goroutine of its own
// (drain) when it has no TryWriter or when a write would block.
type conn struct {
	h       *Hub
	nc      net.Conn
	tw      TryWriter // nil: always drain
	worker  int       // index in h.workers, or -1 without tw
	deflate deflateMode
	subs    []subscription // touched by the reader goroutine only

	// The queue holds data frames, at most QueueSize of them (twice that
	// for a moment after a short write puts frames back), and control
	// frames, bounded too: one close frame at most (closing), and at most
	// one pong that no writer has taken (pong), plus one that a short
	// write put back.
	mu       sync.Mutex
	queue    [][]byte // frames to write; queue[0] may be partly written
	off      int      // bytes of queue[0] already written
	data     int      // data frames in queue, for QueueSize
	pong     int      // 1 + the index in queue of the pong no writer has taken yet; 0: none
	spare    []byte   // a written pong's buffer, for the next one
	busy     bool     // a worker or drain has the connection
	draining bool     // the writer is drain, not a worker
	closing  bool     // a close frame is queued; no more data
	dead     bool     // the socket failed or was closed
	flushed  chan struct{}
	sync     syncState
}

type subscription struct {
	ch *channel
	m  *member
}

// deliver queues m's frame for c. The caller holds the channel's lock.
func (c *conn) deliver(m *message) ([]byte, deliverResult) {
	c.mu.Lock()
	if c.closing || c.dead {
		c.mu.Unlock()
		return nil, skipped
	}
	if c.data >= c.h.opts.QueueSize {
		c.mu.Unlock()
		if c.h.opts.SlowConsumer == Disconnect {
			c.h.stats.slowClosed.Add(1)
			c.closeWith(closePolicy, "slow consumer")
		}
		return nil, droppedFull
	}
	f := m.frameFor(c)
	c.queue = append(c.queue, f)
	c.data++
	res := c.scheduleLocked()
	c.mu.Unlock()
	if res == queuedReady && c.worker < 0 {
		c.startDrain()
		res = queued
	}
	return f, res
}

// scheduleLocked marks c busy if it was idle, and says whether the caller
// must hand it to a writer.
func (c *conn) scheduleLocked() deliverResult {
	if c.busy {
		return queued
	}
	c.busy = true
	if c.worker < 0 {
		c.draining = true
	}
	return queuedReady
}

// closeWith queues a close frame after whatever is queued, stops further
// data, and bounds how long the client may take to answer: the reader
// gives up after CloseTimeout and drops the connection.
func (c *conn) closeWith(code uint16, reason string) {
	c.mu.Lock()
	if c.closing || c.dead {
		c.mu.Unlock()
		return
	}
	c.closing = true
	c.flushed = make(chan struct{})
	f := wsproto.AppendHeader(nil, true, false, wsproto.OpClose, 0, nil)
	f = wsproto.AppendClose(f, code, reason)
	f[1] = byte(len(f) - 2)
	c.queue = append(c.queue, f)
	res := c.scheduleLocked()
	c.mu.Unlock()
	c.nc.SetReadDeadline(time.Now().Add(c.h.opts.CloseTimeout))
	c.hand(res)
}

// queuePong answers a ping, unless c is closing. An idle connection with a
// TryWriter gets its pong at once, written by the caller (the reader)
// without blocking, so a client that reads gets a pong for every ping.
// Otherwise the pong waits in the queue, and a newer ping replaces its
// payload instead of queueing another pong: RFC 6455 section 5.5.3 lets a
// pong answer only the most recent ping, and a client that pings without
// reading then holds one pong in the hub, not one per ping.
func (c *conn) queuePong(payload []byte) {
	c.mu.Lock()
	if c.closing || c.dead {
		c.mu.Unlock()
		return
	}
	if c.pong > 0 {
		// No writer has taken it: the frame is c's alone, rewritten in
		// place (its capacity holds any control payload).
		i := c.pong - 1
		c.queue[i] = appendPong(c.queue[i][:0], payload)
		c.mu.Unlock()
		return
	}
	f := c.spare
	c.spare = nil
	if f == nil {
		f = make([]byte, 0, 2+wsproto.MaxControlPayload)
	}
	f = appendPong(f, payload)
	if !c.busy && c.tw != nil {
		// Idle: nothing is queued and no writer has c, so the caller
		// becomes its writer for this frame.
		c.busy = true
		c.mu.Unlock()
		c.writePong(f)
		return
	}
	c.queue = append(c.queue, f)
	c.pong = len(c.queue)
	res := c.scheduleLocked()
	c.mu.Unlock()
	c.hand(res)
}

// appendPong appends a pong frame carrying payload (at most 125 bytes).
func appendPong(dst, payload []byte) []byte {
	dst = wsproto.AppendHeader(dst, true, false, wsproto.OpPong, len(payload), nil)
	return append(dst, payload...)
}

// writePong writes the pong frame f to c, which the caller made busy with
// nothing queued, without blocking: what the socket does not take goes to
// drain, and frames queued meanwhile go to c's worker.
func (c *conn) writePong(f []byte) {
	n, err := c.tw.TryWrite(f)
	c.h.stats.wireBytes.Add(uint64(n))
	c.h.stats.writes.Add(1)
	if err != nil {
		c.fail(err)
		return
	}
	c.mu.Lock()
	if n < len(f) {
		c.putBackLocked([][]byte{f}, n)
		c.draining = true
		c.mu.Unlock()
		c.startDrain()
		return
	}
	c.spare = f[:0]
	if c.settleLocked() {
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	c.h.workers[c.worker].add([]*conn{c})
}

// hand gives c to its writer if scheduleLocked said so.
func (c *conn) hand(res deliverResult) {
	if res != queuedReady {
		return
	}
	if c.worker < 0 {
		c.startDrain()
		return
	}
	c.h.workers[c.worker].add([]*conn{c})
}

// take removes everything queued, for a writer, and the offset already
// written of the first frame.
func (c *conn) take(dst [][]byte) ([][]byte, int) {
	dst = append(dst, c.queue...)
	off := c.off
	clear(c.queue)
	c.queue, c.off = c.queue[:0], 0
	c.data, c.pong = 0, 0
	return dst, off
}

// settle is called by a writer that wrote everything it took: it releases
// c if nothing new was queued meanwhile, and reports whether it did.
func (c *conn) settleLocked() bool {
	if len(c.queue) > 0 && !c.dead {
		return false
	}
	c.busy, c.draining = false, false
	if c.closing && c.flushed != nil {
		close(c.flushed)
		c.flushed = nil
	}
	return true
}

// putBack returns unwritten frames to the front of c's queue after a short
// write: frames[0][off:] is where the write stopped.
func (c *conn) putBackLocked(frames [][]byte, off int) {
	data := 0
	for _, f := range frames {
		if len(f) > 0 && wsproto.Opcode(f[0]&0x0f) < wsproto.OpClose {
			data++
		}
	}
	c.queue = append(frames, c.queue...)
	c.off = off
	c.data += data
	if c.pong > 0 {
		c.pong += len(frames)
	}
}

// fail marks c dead after a write error and closes the socket; the reader
// then ends and cleans up.
func (c *conn) fail(err error) {
	c.mu.Lock()
	c.dead = true
	clear(c.queue)
	c.queue, c.data, c.off, c.pong = nil, 0, 0, 0
	c.busy, c.draining = false, false
	if c.flushed != nil {
		close(c.flushed)
		c.flushed = nil
	}
	c.mu.Unlock()
	if errors.Is(err, os.ErrDeadlineExceeded) {
		c.h.stats.slowClosed.Add(1)
	}
	c.h.log.Debug("fanout: write failed", "remote", c.nc.RemoteAddr(), "err", err)
	c.nc.Close()
}

func (c *conn) startDrain() {
	c.h.serving.Add(1)
	go c.drain()
}

// drain writes c's queue with blocking writes until it is empty, then
// returns c to its worker. It runs when c has no TryWriter, or when a
// worker's write would have blocked.
func (c *conn) drain() {
	defer c.h.serving.Done()
	var frames [][]byte
	for {
		c.mu.Lock()
		if c.dead || len(c.queue) == 0 {
			c.settleLocked()
			c.mu.Unlock()
			return
		}
		var off int
		frames, off = c.take(frames[:0])
		c.mu.Unlock()
		bufs := make(net.Buffers, len(frames))
		copy(bufs, frames)
		bufs[0] = bufs[0][off:]
		c.nc.SetWriteDeadline(time.Now().Add(c.h.opts.WriteTimeout))
		n, err := bufs.WriteTo(c.nc)
		c.h.stats.wireBytes.Add(uint64(n))
		c.h.stats.writes.Add(1)
		if err != nil {
			c.fail(err)
			return
		}
		clear(frames)
	}
}

// worker writes the connections handed to it, each queue in one write.
type worker struct {
	h    *Hub
	wake chan struct{}

	mu    sync.Mutex
	ready []*conn

	batch  []*conn
	frames [][]byte
	buf    []byte
}

// maxWrite caps how much a worker copies into one write.
const maxWrite = 256 << 10

func (w *worker) add(cs []*conn) {
	w.mu.Lock()
	w.ready = append(w.ready, cs...)
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *worker) run() {
	defer w.h.working.Done()
	for {
		select {
		case <-w.wake:
		case <-w.h.stop:
			return
		}
		for {
			w.mu.Lock()
			w.batch, w.ready = w.ready, w.batch[:0]
			w.mu.Unlock()
			if len(w.batch) == 0 {
				break
			}
			var wire, writes uint64
			for i, c := range w.batch {
				n, k := w.write(c)
				wire, writes = wire+n, writes+k
				w.batch[i] = nil
			}
			w.h.stats.wireBytes.Add(wire)
			w.h.stats.writes.Add(writes)
		}
	}
}

// write writes what is queued for c without blocking, and returns the
// bytes written and the write calls made. A connection that cannot take it
// all goes to drain.
func (w *worker) write(c *conn) (written, writes uint64) {
	for {
		c.mu.Lock()
		if c.dead || len(c.queue) == 0 {
			c.settleLocked()
			c.mu.Unlock()
			return written, writes
		}
		var off int
		w.frames, off = c.take(w.frames[:0])
		c.mu.Unlock()

		// Copy frames into one buffer, up to maxWrite, and write it; a
		// larger queue takes several rounds.
		i := 0
		for i < len(w.frames) {
			w.buf = w.buf[:0]
			start, startOff := i, off
			for ; i < len(w.frames) && (len(w.buf) == 0 || len(w.buf)+len(w.frames[i])-off <= maxWrite); i++ {
				w.buf = append(w.buf, w.frames[i][off:]...)
				off = 0
			}
			n, err := c.tw.TryWrite(w.buf)
			written += uint64(n)
			writes++
			if err != nil {
				clear(w.frames)
				c.fail(err)
				return written, writes
			}
			if n < len(w.buf) {
				// Find where the write stopped and give the rest to drain.
				j, o := start, startOff+n
				for o >= len(w.frames[j]) {
					o -= len(w.frames[j])
					j++
				}
				c.mu.Lock()
				c.putBackLocked(append([][]byte(nil), w.frames[j:]...), o)
				c.draining = true
				c.mu.Unlock()
				clear(w.frames)
				c.startDrain()
				return written, writes
			}
		}
		clear(w.frames)
	}
}

// readerFrom wraps the bytes a handshake read past the request, then the
// connection.
func readerFrom(buffered []byte, nc net.Conn) io.Reader {
	if len(buffered) == 0 {
		return nc
	}
	return io.MultiReader(bytes.NewReader(buffered), nc)
}
