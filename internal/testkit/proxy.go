package testkit

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"testing"
	"time"
)

// Direction names one way through a Proxy.
type Direction uint8

const (
	// ToClient is server → client: replies and pushes.
	ToClient Direction = 1 << iota
	// ToServer is client → server: commands.
	ToServer
	// Both is ToClient and ToServer, for the switches that take it
	// (SetLatency, Freeze, Thaw, SetBlackhole).
	Both = ToClient | ToServer
)

func (d Direction) String() string {
	switch d {
	case ToClient:
		return "server→client"
	case ToServer:
		return "client→server"
	case Both:
		return "both ways"
	}
	return fmt.Sprintf("Direction(%d)", uint8(d))
}

// index is the slot of a single direction in per-direction arrays.
func (d Direction) index() int {
	if d == ToServer {
		return 1
	}
	return 0
}

// Proxy is a TCP proxy in front of one server that breaks the connections
// through it on demand, for fault tests. Each accepted connection is
// forwarded to the target given to NewProxy, and to nothing else.
//
// Switches (SetLatency, Freeze, Thaw, SetBlackhole) and armed faults (Arm,
// Inject, ResetAll) take effect at run time on every current connection, and
// on every later one, unless their documentation says otherwise. All methods
// are safe for concurrent use.
//
// # Forwarding
//
// In each direction of each connection a reader goroutine reads chunks (one
// read each, up to 32 KiB) into a queue and a writer goroutine forwards them
// in order. Faults apply at the moment a chunk is taken from the queue for
// forwarding (except a blackhole, which drops bytes as they are read).
// While more than 1 MiB is queued in a direction the reader stops reading,
// so a sender facing a frozen or slow proxy eventually blocks, as it would
// on a real network. An end of stream (the peer closed or reset its side) is
// queued like data and forwarded as a FIN once the bytes before it have
// gone; when both directions have ended the connection is closed. A client
// connecting while the target is down is reset (see ProxyStats.Refused).
//
// A typical test:
//
//	srv := testkit.NewServer(t, testkit.Config{})
//	p := testkit.NewProxy(t, srv.Addr)
//	// ... point the client under test at p.Addr() ...
//	cut := p.Arm(testkit.Cut{After: 3, Reset: true, MaxConns: 1}) // 3 bytes into the next reply
//	// ... a command fails; the client reconnects, and the new connection works ...
//	<-cut.Fired()
//
// # Offsets
//
// Cut.After, Corrupt.At and Inject.After count the bytes of one connection in
// one direction that the proxy forwards after Arm is called. On a connection
// open at that moment the count starts with the first byte taken for
// forwarding after Arm returns; bytes still held (frozen or delayed) count,
// because they have not been forwarded yet. On a connection accepted later it
// starts with the connection's first byte. Bytes dropped by a blackhole and
// injected bytes do not count. Offsets are exact whatever the chunking: the
// proxy splits chunks where a fault falls.
type Proxy struct {
	target string
	ln     net.Listener
	ctx    context.Context // cancelled by Close; bounds dials
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once

	mu       sync.Mutex
	closed   bool
	conns    map[*conn]struct{}
	dirs     [2]dirState
	triggers []*Trigger // armed for future connections
	stats    ProxyStats
	changed  chan struct{} // closed and replaced when stats change
}

type dirState struct {
	latency   time.Duration
	frozen    bool
	blackhole bool
}

// ProxyStats are a Proxy's counters. Byte counts are totals over all
// connections since the proxy started. A byte is counted in FromClient or
// FromServer before it can be forwarded, and in ToServer or ToClient once
// the write has returned, which can be just after the peer has read it: to
// act on a count, Wait for it.
type ProxyStats struct {
	Accepted int64 // connections accepted and connected to the target
	Refused  int64 // connections accepted, then reset because the target could not be dialled
	Open     int64 // connections open now (a connection cut with FIN stays open until its client closes)

	FromClient int64 // bytes read from clients
	ToServer   int64 // bytes written to the target
	FromServer int64 // bytes read from the target
	ToClient   int64 // bytes written to clients, not counting injected bytes
}

// Chunk and queue sizes.
const (
	readSize  = 32 << 10
	maxQueued = 1 << 20
)

// NewProxy starts a proxy on 127.0.0.1:0 that forwards to target, and closes
// it when the test ends. Target must be a loopback address ("127.0.0.1:port",
// "[::1]:port" or "localhost:port"); anything else fails the test.
func NewProxy(tb testing.TB, target string) *Proxy {
	tb.Helper()
	p, err := newProxy(target)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { p.Close() })
	return p
}

func newProxy(target string) (*Proxy, error) {
	host, _, err := net.SplitHostPort(target)
	if err != nil {
		return nil, fmt.Errorf("testkit: proxy target %q: %w", target, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("testkit: proxy target %q is not a loopback address", target)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Proxy{
		target:  target,
		ln:      ln,
		ctx:     ctx,
		cancel:  cancel,
		conns:   make(map[*conn]struct{}),
		changed: make(chan struct{}),
	}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the address clients dial: 127.0.0.1:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Close stops listening, closes every connection and waits for all of the
// proxy's goroutines to exit. It is idempotent; NewProxy registers it with
// tb.Cleanup.
func (p *Proxy) Close() error {
	var err error
	p.once.Do(func() {
		p.cancel()
		err = p.ln.Close()
		p.mu.Lock()
		p.closed = true
		conns := make([]*conn, 0, len(p.conns))
		for c := range p.conns {
			conns = append(conns, c)
		}
		p.mu.Unlock()
		for _, c := range conns {
			c.close(false)
		}
		p.wg.Wait()
	})
	return err
}

// Stats returns the current counters.
func (p *Proxy) Stats() ProxyStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stats
}

// Wait blocks until cond holds for the counters, and returns them; or until
// ctx is done, and returns ctx's error with the last counters. cond is
// called again after every change, without locks held. It is how tests wait
// for traffic instead of sleeping:
//
//	mark := p.Stats()
//	// ... send a command ...
//	p.Wait(ctx, func(s testkit.ProxyStats) bool { return s.FromServer >= mark.FromServer+5 })
//	p.Wait(ctx, func(s testkit.ProxyStats) bool { return s.Accepted > mark.Accepted })
func (p *Proxy) Wait(ctx context.Context, cond func(ProxyStats) bool) (ProxyStats, error) {
	for {
		p.mu.Lock()
		s, ch := p.stats, p.changed
		p.mu.Unlock()
		if cond(s) {
			return s, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return s, ctx.Err()
		}
	}
}

// notifyLocked wakes Wait callers; p.mu is held.
func (p *Proxy) notifyLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// wakeLocked makes every writer look at the switches again; p.mu is held.
func (p *Proxy) wakeLocked() {
	for c := range p.conns {
		for _, h := range c.halves {
			signal(h.wake)
		}
	}
}

// set applies f to the state of each direction in dir and wakes the writers.
func (p *Proxy) set(dir Direction, f func(*dirState)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, d := range []Direction{ToClient, ToServer} {
		if dir&d != 0 {
			f(&p.dirs[d.index()])
		}
	}
	p.wakeLocked()
}

// SetLatency delays every chunk in dir by d from when the proxy read it
// (zero removes the delay). Chunks keep their order and are delayed in
// parallel, like packets on a long link, not one after another. A change
// applies to chunks already waiting too.
func (p *Proxy) SetLatency(dir Direction, d time.Duration) {
	p.set(dir, func(s *dirState) { s.latency = d })
}

// Freeze stops forwarding in dir: connections stay open, bytes (and ends of
// stream) arriving in dir are held, and nothing armed fires there. Thaw
// delivers what was held, in order.
func (p *Proxy) Freeze(dir Direction) { p.set(dir, func(s *dirState) { s.frozen = true }) }

// Thaw undoes Freeze in dir.
func (p *Proxy) Thaw(dir Direction) { p.set(dir, func(s *dirState) { s.frozen = false }) }

// SetBlackhole turns dropping in dir on or off. While on, bytes the proxy
// reads in dir are silently discarded as they arrive (counted in FromClient
// or FromServer, but never queued, forwarded or counted for offsets); bytes
// queued before stay queued. The connections stay open, and an end of stream
// is held rather than forwarded until the blackhole is turned off. Once Wait
// has seen FromServer (or FromClient) cover some bytes, they are gone.
func (p *Proxy) SetBlackhole(dir Direction, on bool) {
	p.set(dir, func(s *dirState) { s.blackhole = on })
}

// Heal removes every fault: no latency, nothing frozen or blackholed, every
// Trigger disarmed. Connections already cut or reset stay closed.
func (p *Proxy) Heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dirs = [2]dirState{}
	for _, t := range p.triggers {
		t.disarmed = true
	}
	p.triggers = nil
	for c := range p.conns {
		for _, h := range c.halves {
			for _, a := range h.armed {
				a.t.disarmed = true
			}
			h.armed = nil
		}
	}
	p.wakeLocked()
}

// ResetAll resets (RST) the client side of every current connection now and
// closes its server side. Held bytes are discarded.
func (p *Proxy) ResetAll() {
	p.mu.Lock()
	conns := make([]*conn, 0, len(p.conns))
	for c := range p.conns {
		conns = append(conns, c)
	}
	p.mu.Unlock()
	for _, c := range conns {
		c.close(true)
	}
}

// A Fault is a one-shot fault for Proxy.Arm: a Cut, a Corrupt or an Inject.
// It fires at most once on each connection.
type Fault interface {
	spec() spec
}

// Cut closes a connection's client side once After more bytes have been
// forwarded in Dir. Those bytes are delivered first, so a reply can be cut at
// an exact byte. The server side is closed too.
//
// With FIN (Reset false) the proxy shuts down its sending side towards the
// client, so the client reads the delivered bytes and then EOF; whatever the
// client sends afterwards is discarded until it closes the connection. With
// Reset the proxy waits (up to a second) until the kernel has delivered the
// bytes, then closes the client side with SO_LINGER 0, so the client reads
// them and then ECONNRESET. The server side is always closed normally.
//
// The zero Cut closes every new connection at once with FIN.
type Cut struct {
	Dir      Direction // ToClient (the zero value means ToClient) or ToServer
	After    int64     // bytes forwarded in Dir before the cut
	Reset    bool      // RST instead of FIN
	MaxConns int       // fire on at most this many connections; 0 means no limit
}

// Corrupt replaces the byte at offset At in Dir by Func(byte).
type Corrupt struct {
	Dir      Direction       // ToClient (the zero value means ToClient) or ToServer
	At       int64           // offset of the byte; 0 is the first byte counted
	Func     func(byte) byte // the replacement; nil inverts every bit
	MaxConns int             // corrupt at most this many connections; 0 means no limit
}

// Inject sends Data to the client right after After more bytes have been
// forwarded to it, before any further byte; with After 0, at once on current
// connections and before anything else on new ones. Injected bytes are not
// corrupted, cut or counted.
type Inject struct {
	After    int64
	Data     []byte
	MaxConns int // inject on at most this many connections; 0 means no limit
}

type faultKind uint8

// The order matters: at one offset a corruption applies to the next byte,
// an injection goes before a cut.
const (
	kindCorrupt faultKind = iota
	kindInject
	kindCut
)

type spec struct {
	kind  faultKind
	dir   Direction
	at    int64
	reset bool
	fn    func(byte) byte
	data  []byte
	max   int
}

func checkFault(name string, dir Direction, at int64, max int) Direction {
	if dir == 0 {
		dir = ToClient
	}
	if dir != ToClient && dir != ToServer {
		panic(fmt.Sprintf("testkit: %s needs ToClient or ToServer, not %v", name, dir))
	}
	if at < 0 || max < 0 {
		panic(fmt.Sprintf("testkit: %s with a negative offset or MaxConns", name))
	}
	return dir
}

func (f Cut) spec() spec {
	return spec{kind: kindCut, dir: checkFault("Cut", f.Dir, f.After, f.MaxConns), at: f.After, reset: f.Reset, max: f.MaxConns}
}

func (f Corrupt) spec() spec {
	fn := f.Func
	if fn == nil {
		fn = FlipBits(0xff)
	}
	return spec{kind: kindCorrupt, dir: checkFault("Corrupt", f.Dir, f.At, f.MaxConns), at: f.At, fn: fn, max: f.MaxConns}
}

func (f Inject) spec() spec {
	checkFault("Inject", ToClient, f.After, f.MaxConns)
	return spec{kind: kindInject, dir: ToClient, at: f.After, data: slices.Clone(f.Data), max: f.MaxConns}
}

// FlipBits returns a Corrupt.Func that XORs the byte with mask.
func FlipBits(mask byte) func(byte) byte { return func(b byte) byte { return b ^ mask } }

// ReplaceByte returns a Corrupt.Func that replaces the byte with b, e.g. a
// length digit with '9'.
func ReplaceByte(b byte) func(byte) byte { return func(byte) byte { return b } }

// Arm arms f on every current connection and every later one, until the
// Trigger is disarmed (or Heal) or has fired MaxConns times. Offsets count
// as described under Proxy.
func (p *Proxy) Arm(f Fault) *Trigger {
	return p.arm(f.spec(), true)
}

// Inject sends data to the client of every current connection, before any
// further forwarded byte. Unlike Arm(Inject{...}), it does not apply to later
// connections. The Trigger fires once the bytes are written.
func (p *Proxy) Inject(data []byte) *Trigger {
	return p.arm(Inject{Data: data}.spec(), false)
}

func (p *Proxy) arm(s spec, future bool) *Trigger {
	t := &Trigger{p: p, spec: s, fired: make(chan struct{})}
	p.mu.Lock()
	defer p.mu.Unlock()
	if future {
		p.triggers = append(p.triggers, t)
	}
	for c := range p.conns {
		if c.state == stateOpen {
			h := c.halves[s.dir.index()]
			h.armed = append(h.armed, armed{t: t, pos: h.taken + s.at})
			signal(h.wake)
		}
	}
	return t
}

// A Trigger is an armed Fault. Its methods are safe for concurrent use.
type Trigger struct {
	p     *Proxy
	spec  spec
	fired chan struct{} // closed on the first firing

	// Guarded by p.mu.
	claimed  int // connections it was planned on
	count    int // connections where it took effect
	disarmed bool
}

// Fired returns a channel closed once the fault has taken effect on a first
// connection: the corrupted or injected bytes have been written, or, for a
// Cut, the bytes before it have been written and the connection is being
// closed (a client reading it sees the end right after).
func (t *Trigger) Fired() <-chan struct{} { return t.fired }

// Count returns the number of connections the fault has taken effect on,
// in the sense of Fired.
func (t *Trigger) Count() int {
	t.p.mu.Lock()
	defer t.p.mu.Unlock()
	return t.count
}

// Disarm stops the fault from firing on any connection it has not fired on
// yet, including later ones.
func (t *Trigger) Disarm() {
	p := t.p
	p.mu.Lock()
	defer p.mu.Unlock()
	t.disarmed = true
	p.triggers = slices.DeleteFunc(p.triggers, func(x *Trigger) bool { return x == t })
}

// live reports whether t may still fire; p.mu is held.
func (t *Trigger) live() bool {
	return !t.disarmed && (t.spec.max == 0 || t.claimed < t.spec.max)
}

// armed is a Trigger on one half of one connection.
type armed struct {
	t   *Trigger
	pos int64 // the offset in the half's stream (counted by half.taken)
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	var backoff time.Duration
	for {
		nc, err := p.ln.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			// Out of descriptors, say, in a test that leaks them: keep
			// going, as net/http does, rather than stop serving.
			backoff = min(max(2*backoff, 5*time.Millisecond), 100*time.Millisecond)
			time.Sleep(backoff)
			continue
		}
		backoff = 0
		p.wg.Add(1)
		go p.open(nc.(*net.TCPConn))
	}
}

// open dials the target for an accepted client and starts forwarding.
func (p *Proxy) open(client *net.TCPConn) {
	defer p.wg.Done()
	d := net.Dialer{Timeout: 5 * time.Second}
	sc, err := d.DialContext(p.ctx, "tcp", p.target)
	if err != nil {
		p.mu.Lock()
		p.stats.Refused++
		p.notifyLocked()
		p.mu.Unlock()
		client.SetLinger(0) // like a refused connection
		client.Close()
		return
	}
	server := sc.(*net.TCPConn)
	c := &conn{p: p, client: client, server: server, done: make(chan struct{})}
	for i, dir := range []Direction{ToClient, ToServer} {
		h := &half{c: c, dir: dir, wake: make(chan struct{}, 1), space: make(chan struct{}, 1)}
		h.src, h.dst = server, client
		if dir == ToServer {
			h.src, h.dst = client, server
		}
		c.halves[i] = h
	}

	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		client.Close()
		server.Close()
		return
	}
	p.conns[c] = struct{}{}
	for _, t := range p.triggers {
		if t.live() {
			h := c.halves[t.spec.dir.index()]
			h.armed = append(h.armed, armed{t: t, pos: t.spec.at})
		}
	}
	p.stats.Accepted++
	p.stats.Open++
	p.notifyLocked()
	p.wg.Add(4)
	p.mu.Unlock()

	for _, h := range c.halves {
		go h.read()
		go h.write()
	}
}

type connState uint8

const (
	stateOpen connState = iota
	stateCut            // cut with FIN: draining the client until it closes
	stateClosed
)

// conn is one proxied connection.
type conn struct {
	p      *Proxy
	client *net.TCPConn
	server *net.TCPConn
	halves [2]*half // by Direction.index
	done   chan struct{}
	state  connState // guarded by p.mu
}

// close closes both sides, with an RST towards the client if reset. It is
// idempotent.
func (c *conn) close(reset bool) {
	p := c.p
	p.mu.Lock()
	if c.state == stateClosed {
		p.mu.Unlock()
		return
	}
	c.state = stateClosed
	close(c.done)
	delete(p.conns, c)
	p.stats.Open--
	p.notifyLocked()
	p.mu.Unlock()
	if reset {
		c.client.SetLinger(0)
	}
	c.client.Close()
	c.server.Close()
}

// cut carries out a Cut whose bytes have been written.
func (c *conn) cut(reset bool) {
	p := c.p
	if reset {
		waitSent(c.client, time.Second)
		c.close(true)
		return
	}
	p.mu.Lock()
	if c.state != stateOpen {
		p.mu.Unlock()
		return
	}
	c.state = stateCut
	for _, h := range c.halves {
		signal(h.wake)
		signal(h.space) // the client's reader drains from now on
	}
	// If the client has already finished sending, nothing will drain.
	ended := c.halves[ToServer.index()].eof
	p.mu.Unlock()
	c.client.CloseWrite()
	c.server.Close()
	if ended {
		c.close(false)
	}
}

// half is one direction of a conn.
type half struct {
	c        *conn
	dir      Direction
	src, dst *net.TCPConn
	wake     chan struct{} // signals the writer
	space    chan struct{} // signals the reader that the queue shrank

	// Guarded by p.mu.
	queue  []chunk
	queued int
	eof    bool // src ended; forwarded once the queue is empty
	eofAt  time.Time
	taken  int64 // bytes taken for forwarding (the offset counter)
	armed  []armed
	ended  bool // the end of stream was forwarded
}

type chunk struct {
	b  []byte
	at time.Time // when it was read
}

// signal makes a non-blocking send on a channel of capacity 1.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

func (h *half) read() {
	c, p := h.c, h.c.p
	defer p.wg.Done()
	buf := make([]byte, readSize)
	for {
		n, err := h.src.Read(buf)
		p.mu.Lock()
		if n > 0 {
			if h.dir == ToServer {
				p.stats.FromClient += int64(n)
			} else {
				p.stats.FromServer += int64(n)
			}
			p.notifyLocked()
			if c.state == stateOpen && !p.dirs[h.dir.index()].blackhole {
				h.queue = append(h.queue, chunk{b: slices.Clone(buf[:n]), at: time.Now()})
				h.queued += n
				signal(h.wake)
			}
		}
		if err != nil {
			h.eof, h.eofAt = true, time.Now()
			signal(h.wake)
			drained := c.state == stateCut && h.dir == ToServer
			p.mu.Unlock()
			if drained {
				c.close(false) // the client closed a connection cut with FIN
			}
			return
		}
		full := h.queued >= maxQueued && c.state == stateOpen
		p.mu.Unlock()
		if full {
			select {
			case <-h.space:
			case <-c.done:
			}
		}
	}
}

// op is one step of forwarding, done without the lock.
type op struct {
	data    []byte // bytes to write
	counted bool   // forwarded bytes (not injected)
	cut     bool
	reset   bool
	fire    []*Trigger // taking effect with this op: marked after the write, or before the cut
}

// step is what plan decided.
type step struct {
	ops    []op
	again  bool          // plan again at once
	wait   time.Duration // otherwise wait for a wake-up, or this long if > 0
	finish bool          // forward the end of stream
	exit   bool          // the connection is cut or closed
}

func (h *half) write() {
	c, p := h.c, h.c.p
	defer p.wg.Done()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		s := h.plan()
		switch {
		case s.exit:
			return
		case s.finish:
			h.finish()
			return
		}
		for _, o := range s.ops {
			if o.cut {
				h.done(o)
				c.cut(o.reset)
				break
			}
			if _, err := h.dst.Write(o.data); err != nil {
				c.close(false)
				return
			}
			h.done(o)
		}
		if s.again {
			continue
		}
		var tc <-chan time.Time
		if s.wait > 0 {
			timer.Reset(s.wait)
			tc = timer.C
		}
		select {
		case <-h.wake:
		case <-tc:
		case <-c.done:
		}
	}
}

// done counts the bytes of an op just written and marks its triggers fired.
func (h *half) done(o op) {
	p := h.c.p
	if !o.counted && len(o.fire) == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if o.counted {
		if h.dir == ToServer {
			p.stats.ToServer += int64(len(o.data))
		} else {
			p.stats.ToClient += int64(len(o.data))
		}
		p.notifyLocked()
	}
	for _, t := range o.fire {
		if t.count++; t.count == 1 {
			close(t.fired)
		}
	}
}

// plan decides under the lock what the writer does next.
func (h *half) plan() (s step) {
	c, p := h.c, h.c.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if c.state != stateOpen {
		return step{exit: true}
	}
	st := p.dirs[h.dir.index()]
	if st.frozen {
		return step{}
	}
	now := time.Now()
	var data []byte
	if len(h.queue) > 0 {
		head := h.queue[0]
		if due := head.at.Add(st.latency); now.Before(due) {
			s.wait = due.Sub(now)
		} else {
			h.queue[0] = chunk{}
			h.queue = h.queue[1:]
			h.queued -= len(head.b)
			signal(h.space)
			s.again = true
			data = head.b
		}
	}

	// Fire what falls within the bytes taken, or at their end.
	start, end := h.taken, h.taken+int64(len(data))
	var due []armed
	keep := h.armed[:0]
	for _, a := range h.armed {
		switch {
		case !a.t.live():
			// dropped
		case a.pos < end || a.pos == end && a.t.spec.kind != kindCorrupt:
			due = append(due, a)
		default:
			keep = append(keep, a)
		}
	}
	h.armed = keep
	slices.SortStableFunc(due, func(x, y armed) int {
		return cmp.Or(cmp.Compare(x.pos, y.pos), cmp.Compare(x.t.spec.kind, y.t.spec.kind))
	})
	written := start
	var corrupted []*Trigger // fire with the write of their byte
	forward := func(to int64) {
		if to > written {
			s.ops = append(s.ops, op{data: data[written-start : to-start], counted: true, fire: corrupted})
			written, corrupted = to, nil
		}
	}
	for _, a := range due {
		t := a.t
		t.claimed++
		s.again = true
		switch t.spec.kind {
		case kindCorrupt:
			data[a.pos-start] = t.spec.fn(data[a.pos-start])
			corrupted = append(corrupted, t)
		case kindInject:
			forward(a.pos)
			s.ops = append(s.ops, op{data: t.spec.data, fire: []*Trigger{t}})
		case kindCut:
			// Nothing after the cut is forwarded, and later faults on
			// this connection never fire.
			forward(a.pos)
			s.ops = append(s.ops, op{cut: true, reset: t.spec.reset, fire: []*Trigger{t}})
			h.taken = a.pos
			return s
		}
	}
	forward(end)
	h.taken = end
	if s.again || len(h.queue) > 0 || !h.eof || st.blackhole {
		return s
	}
	if due := h.eofAt.Add(st.latency); now.Before(due) {
		return step{wait: due.Sub(now)}
	}
	return step{finish: true}
}

// finish forwards the end of the stream as a FIN, and closes the connection
// once both directions have ended.
func (h *half) finish() {
	c, p := h.c, h.c.p
	if err := h.dst.CloseWrite(); err != nil && !errors.Is(err, net.ErrClosed) {
		c.close(false)
		return
	}
	p.mu.Lock()
	h.ended = true
	both := c.halves[0].ended && c.halves[1].ended
	p.mu.Unlock()
	if both {
		c.close(false)
	}
}
