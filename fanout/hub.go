package fanout

import (
	"context"
	"errors"
	"log/slog"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/ziplinekv/zipline/fanout/internal/wsproto"
)

// ErrClosed is returned by Hub methods called after Shutdown.
var ErrClosed = errors.New("fanout: hub closed")

// A Hub broadcasts messages on named channels to the WebSocket connections
// subscribed to them. It is an http.Handler: a client connects with
// GET /path?channel=news&channel=prices and from then on receives every
// message broadcast on those channels, until it or the hub closes. Messages
// come from Broadcast, or from a Source through Relay.
//
// Each broadcast is framed, and compressed, once per wire form rather than
// once per connection, and written by a few writer goroutines that batch
// whatever is queued for a connection into one write. A connection costs a
// few kilobytes while idle, compressed or not: no connection owns a
// compressor.
type Hub struct {
	opts Options
	log  *slog.Logger

	mu       sync.Mutex
	channels map[string]*channel
	conns    map[*conn]struct{}
	closed   bool
	relaying bool
	demand   chan struct{} // kicked when the set of channels changes

	workers []*worker
	next    atomic.Uint32 // round-robin worker assignment
	serving sync.WaitGroup
	working sync.WaitGroup
	stop    chan struct{}

	deflaters sync.Pool // *deflater without history
	streams   sync.Pool // *deflater for channel streams, reset

	stats      counters
	relayStats relayCounters

	// onMessage, if set, gets each data message a client sends, on its
	// reader's goroutine. Only tests set it (the Autobahn echo server).
	onMessage func(c *conn, op wsproto.Opcode, payload []byte)
}

// channel is one channel with at least one subscriber.
type channel struct {
	name string
	refs int // subscribers, under Hub.mu; the channel is removed at 0

	mu       sync.Mutex // serializes broadcasts: order, and the stream
	subs     []*member
	takeover int     // subscribers with context takeover
	stream   *stream // the shared context, while takeover is high enough (Options.SharedMinSubscribers)
	ready    [][]*conn
}

// member is one connection's subscription to one channel.
type member struct {
	c   *conn
	idx int // position in channel.subs, under channel.mu
}

// New returns a Hub with the given options. It starts its writer
// goroutines, one per processor; Shutdown stops them.
func New(opts Options) *Hub {
	h := &Hub{
		opts:     opts.withDefaults(),
		channels: make(map[string]*channel),
		conns:    make(map[*conn]struct{}),
		demand:   make(chan struct{}, 1),
		stop:     make(chan struct{}),
	}
	h.log = h.opts.Logger
	n := max(1, runtime.GOMAXPROCS(0))
	for range n {
		w := &worker{h: h, wake: make(chan struct{}, 1)}
		h.workers = append(h.workers, w)
		h.working.Add(1)
		go w.run()
	}
	return h
}

// Broadcast sends payload to every connection subscribed to channel and
// returns how many it was queued for. It does not wait for the writes, and
// it does not keep payload. Broadcasts on one channel are delivered in the
// order of their calls; broadcasts on different channels run in parallel.
func (h *Hub) Broadcast(channel string, payload []byte) int {
	h.mu.Lock()
	ch := h.channels[channel]
	h.mu.Unlock()
	if ch == nil {
		return 0
	}
	if h.opts.Encode != nil {
		payload = h.opts.Encode(channel, payload)
	}
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if len(ch.subs) == 0 {
		return 0
	}
	m := h.prepare(ch, payload)
	if len(ch.ready) != len(h.workers) {
		ch.ready = make([][]*conn, len(h.workers))
	}
	var n, dropped int
	var wire int64
	for _, s := range ch.subs {
		switch f, res := s.c.deliver(m); res {
		case queued, queuedReady:
			n++
			wire += int64(len(f))
			if res == queuedReady && s.c.worker >= 0 {
				ch.ready[s.c.worker] = append(ch.ready[s.c.worker], s.c)
			}
		case droppedFull:
			dropped++
		}
	}
	for i, list := range ch.ready {
		if len(list) > 0 {
			h.workers[i].add(list)
			clear(list)
			ch.ready[i] = list[:0]
		}
	}
	st := &h.stats
	st.broadcasts.Add(1)
	st.deliveries.Add(uint64(n))
	st.dropped.Add(uint64(dropped))
	st.compressions.Add(uint64(m.compressions))
	st.sharedFrames.Add(uint64(m.sharedSends))
	st.payloadBytes.Add(uint64(n) * uint64(len(payload)))
	st.queuedBytes.Add(uint64(wire))
	return n
}

// Channels returns the channels that have at least one subscriber, sorted.
func (h *Hub) Channels() []string {
	h.mu.Lock()
	out := make([]string, 0, len(h.channels))
	for name := range h.channels {
		out = append(out, name)
	}
	h.mu.Unlock()
	sort.Strings(out)
	return out
}

// subscribe adds c to channel name.
func (h *Hub) subscribe(c *conn, name string) *member {
	h.mu.Lock()
	ch := h.channels[name]
	if ch == nil {
		ch = &channel{name: name}
		h.channels[name] = ch
		h.kickDemand()
	}
	ch.refs++
	h.mu.Unlock()

	m := &member{c: c}
	ch.mu.Lock()
	m.idx = len(ch.subs)
	ch.subs = append(ch.subs, m)
	if c.deflate == deflateShared {
		ch.takeover++
		if ch.stream == nil && ch.takeover >= h.opts.SharedMinSubscribers {
			d, _ := h.streams.Get().(*deflater)
			if d == nil {
				d = newDeflater(h.opts.CompressionLevel)
			}
			ch.stream = &stream{d: d}
		}
	}
	ch.mu.Unlock()
	c.subs = append(c.subs, subscription{ch: ch, m: m})
	return m
}

// unsubscribe removes c's membership m from ch.
func (h *Hub) unsubscribe(ch *channel, m *member) {
	ch.mu.Lock()
	last := len(ch.subs) - 1
	moved := ch.subs[last]
	ch.subs[m.idx] = moved
	moved.idx = m.idx
	ch.subs[last] = nil
	ch.subs = ch.subs[:last]
	if m.c.deflate == deflateShared {
		ch.takeover--
		// Given back below half the threshold, not at it: a channel whose
		// followers come and go around it does not make and drop a stream,
		// with its followers' catch-up, at each.
		if ch.stream != nil && ch.takeover < max(1, (h.opts.SharedMinSubscribers+1)/2) {
			ch.stream.d.w.Reset(&ch.stream.d.buf)
			h.streams.Put(ch.stream.d)
			ch.stream = nil
		}
	}
	ch.mu.Unlock()

	h.mu.Lock()
	ch.refs--
	if ch.refs == 0 && h.channels[ch.name] == ch {
		delete(h.channels, ch.name)
		h.kickDemand()
	}
	h.mu.Unlock()
}

// kickDemand tells a running Relay that the set of channels changed. The
// caller holds h.mu.
func (h *Hub) kickDemand() {
	select {
	case h.demand <- struct{}{}:
	default:
	}
}

// Shutdown sends every connection a close frame (1001, going away), waits
// for the clients to answer or for CloseTimeout, then closes what is left
// and stops the hub's goroutines. New upgrade requests get 503 from the
// start. If ctx ends first, the remaining connections are dropped at once;
// Shutdown still returns only when nothing of the hub runs, and then
// returns ctx's error.
func (h *Hub) Shutdown(ctx context.Context) error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return ErrClosed
	}
	h.closed = true
	conns := make([]*conn, 0, len(h.conns))
	for c := range h.conns {
		conns = append(conns, c)
	}
	h.mu.Unlock()
	for _, c := range conns {
		c.closeWith(closeGoingAway, "server shutting down")
	}
	done := make(chan struct{})
	go func() {
		h.serving.Wait()
		close(done)
	}()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = ctx.Err()
		for _, c := range conns {
			c.nc.Close()
		}
		<-done
	}
	close(h.stop)
	h.working.Wait()
	return err
}
