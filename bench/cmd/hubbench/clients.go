package main

import (
	"bufio"
	"compress/flate"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// perSourceIP is how many connections share one client source address:
// connection i binds 127.0.0.(2 + i/perSourceIP), so that no address needs
// more ephemeral ports than the kernel's range (32768-60999) holds.
const perSourceIP = 20000

// readBuffer is each connection's read buffer: frames up to its size are
// read in place (the hub's frames of a 256-byte message are ~200 bytes).
const readBuffer = 1024

// wsKey and wsAccept are a fixed handshake key and the accept value it
// must get back (RFC 6455's example).
const (
	wsKey    = "dGhlIHNhbXBsZSBub25jZQ=="
	wsAccept = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
)

// clientStats is a client process's answer to "stats". Counters are
// cumulative; the coordinator takes differences.
type clientStats struct {
	Conns      int
	Received   uint64 // data messages
	Compressed uint64 // of which permessage-deflate compressed
	Bad        uint64 // messages that could not be inflated or carried no timestamp
	Closed     uint64 // connections that ended before "quit"
	FirstError string
	Hist       [][2]uint64     // delivery latency: [bucket, count]
	SecondMax  map[int64]int64 // the longest latency of the messages sent in each second (Unix seconds), ns
	CPU        time.Duration
	RSS        uint64
}

// connectReport is a client process's answer to "connect".
type connectReport struct {
	Conns      int           // connected
	Deflate    int           // of which negotiated permessage-deflate
	Failed     int           // connections that could not be made, after retries
	Retries    int           // dial or handshake attempts that failed and were retried
	FirstError string        // the first failure
	Took       time.Duration // from the command to the last connection
}

// clientProc is a client process: connections lo to hi-1 of the run.
type clientProc struct {
	lo, hi   int
	addrs    []string // the hubs' host:port, by hub index
	channels int

	mu    sync.Mutex
	conns []net.Conn
	first string // first error

	received, compressed, bad, closed atomic.Uint64
	quitting                          atomic.Bool
	hist                              atomicHist
	// secondMax[s % len] is the longest latency of the messages sent in
	// Unix second s, whose number is in second[s % len]: a timeline of the
	// worst deliveries, to tell a stall from a spread.
	second    [secondRing]atomic.Int64
	secondMax [secondRing]atomic.Int64
}

// secondRing is how many seconds the timeline keeps: more than a run's
// load phase and drain.
const secondRing = 4096

// recordSecond raises the longest latency of second s to d if it is longer.
func (p *clientProc) recordSecond(s, d int64) {
	i := s % secondRing
	if p.second[i].Load() != s {
		// A new second for this slot; a race with another goroutine of
		// the same second loses at most one sample's maximum.
		p.second[i].Store(s)
		p.secondMax[i].Store(0)
	}
	for {
		m := p.secondMax[i].Load()
		if d <= m || p.secondMax[i].CompareAndSwap(m, d) {
			return
		}
	}
}

// runClients is a client process.
func runClients(lo, hi, channels int, urls []string) error {
	signal.Ignore(os.Interrupt, syscall.SIGHUP) // the coordinator decides when to stop
	p := &clientProc{lo: lo, hi: hi, channels: channels}
	for _, u := range urls {
		p.addrs = append(p.addrs, strings.TrimSuffix(strings.TrimPrefix(u, "ws://"), "/ws"))
	}
	reply(bufio.NewWriter(os.Stdout), map[string]bool{"ready": true}, nil)
	serveCommands(func(command string) (any, error) {
		switch command {
		case "connect":
			return p.connect(), nil
		case "stats":
			return p.stats(), nil
		case "quit":
			p.quitting.Store(true)
			p.mu.Lock()
			for _, c := range p.conns {
				c.Close()
			}
			p.mu.Unlock()
			return nil, nil
		}
		return nil, errUnknown(command)
	})
	return nil
}

func (p *clientProc) fail(err error) {
	p.mu.Lock()
	if p.first == "" {
		p.first = err.Error()
	}
	p.mu.Unlock()
}

func (p *clientProc) stats() clientStats {
	p.mu.Lock()
	n, first := len(p.conns), p.first
	p.mu.Unlock()
	seconds := map[int64]int64{}
	for i := range p.second {
		if s := p.second[i].Load(); s != 0 {
			seconds[s] = p.secondMax[i].Load()
		}
	}
	return clientStats{
		Conns: n, Received: p.received.Load(), Compressed: p.compressed.Load(), Bad: p.bad.Load(),
		Closed: p.closed.Load(), FirstError: first, Hist: p.hist.snapshot(), SecondMax: seconds, CPU: cpuTime(), RSS: rss(),
	}
}

// connect opens the process's connections, 128 handshakes in flight at a
// time, each retried a few times, and starts each one's reader.
func (p *clientProc) connect() connectReport {
	start := time.Now()
	var r connectReport
	var mu sync.Mutex
	var next atomic.Int64
	next.Store(int64(p.lo))
	var wg sync.WaitGroup
	for range min(128, p.hi-p.lo) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= p.hi {
					return
				}
				var (
					nc      net.Conn
					br      *bufio.Reader
					deflate bool
					err     error
				)
				retries := 0
				for attempt := 0; attempt < 5; attempt++ {
					if nc, br, deflate, err = p.dial(i); err == nil {
						break
					}
					retries++
					time.Sleep(time.Duration(attempt+1) * 200 * time.Millisecond)
				}
				mu.Lock()
				r.Retries += retries
				if err != nil {
					r.Failed++
					if r.FirstError == "" {
						r.FirstError = err.Error()
					}
					mu.Unlock()
					continue
				}
				r.Conns++
				if deflate {
					r.Deflate++
				}
				mu.Unlock()
				p.mu.Lock()
				p.conns = append(p.conns, nc)
				p.mu.Unlock()
				go p.read(nc, br)
			}
		})
	}
	wg.Wait()
	r.Took = time.Since(start)
	return r
}

// ipBindAddressNoPort is Linux's IP_BIND_ADDRESS_NO_PORT (linux/in.h).
const ipBindAddressNoPort = 24

// bindAddressNoPort sets IP_BIND_ADDRESS_NO_PORT on a socket about to be
// bound to a source address: the kernel then picks the port at connect,
// for the whole 4-tuple, rather than at bind, for the address alone. A
// bind-time pick slows down as the address's ports fill up, and fails on
// ports that the previous run's connections still hold in TIME_WAIT (the
// clients close first), even though those went to other hub ports.
func bindAddressNoPort(network, address string, c syscall.RawConn) error {
	var serr error
	err := c.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IP, ipBindAddressNoPort, 1)
	})
	if err != nil {
		return err
	}
	return serr
}

// dial opens connection i: to hub i mod H, from 127.0.0.(2 + i/20000),
// for channel "ch:<i mod C>", offering permessage-deflate as browsers do
// (context takeover both ways).
func (p *clientProc) dial(i int) (net.Conn, *bufio.Reader, bool, error) {
	addr := p.addrs[i%len(p.addrs)]
	d := net.Dialer{
		LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(2+i/perSourceIP))},
		Timeout:   10 * time.Second,
		Control:   bindAddressNoPort,
	}
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, nil, false, err
	}
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	req := fmt.Sprintf("GET /ws?channel=ch:%d HTTP/1.1\r\nHost: %s\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"+
		"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: %s\r\n"+
		"Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n\r\n", i%p.channels, addr, wsKey)
	if _, err := io.WriteString(nc, req); err != nil {
		nc.Close()
		return nil, nil, false, err
	}
	br := bufio.NewReaderSize(nc, readBuffer)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		nc.Close()
		return nil, nil, false, fmt.Errorf("connection %d: handshake: %w", i, err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols || resp.Header.Get("Sec-WebSocket-Accept") != wsAccept {
		nc.Close()
		return nil, nil, false, fmt.Errorf("connection %d: handshake: %s", i, resp.Status)
	}
	nc.SetDeadline(time.Time{})
	ext := resp.Header.Get("Sec-WebSocket-Extensions")
	return nc, br, strings.Contains(ext, "permessage-deflate"), nil
}

// read reads the connection's frames until it closes. Data messages go to
// message; pings are answered; a close frame is answered and ends it.
func (p *clientProc) read(nc net.Conn, br *bufio.Reader) {
	var (
		window     []byte // the last 32 KiB inflated: the hub's stream may refer to it
		frag       []byte // a fragmented message so far
		fragDeflat bool
		big        []byte // a frame larger than the read buffer
	)
	defer nc.Close()
	for {
		b0, err := br.ReadByte()
		if err != nil {
			p.ended(err)
			return
		}
		b1, err := br.ReadByte()
		if err != nil {
			p.ended(err)
			return
		}
		n := int(b1 & 0x7f)
		switch n {
		case 126, 127:
			k := 2
			if n == 127 {
				k = 8
			}
			ext, err := br.Peek(k)
			if err != nil {
				p.ended(err)
				return
			}
			n = 0
			for _, b := range ext {
				n = n<<8 | int(b)
			}
			br.Discard(k)
		}
		if b1&0x80 != 0 {
			p.ended(errors.New("masked frame from the server"))
			return
		}
		var payload []byte
		peeked := n <= br.Size()
		if peeked {
			payload, err = br.Peek(n)
		} else {
			if cap(big) < n {
				big = make([]byte, n)
			}
			payload = big[:n]
			_, err = io.ReadFull(br, payload)
		}
		if err != nil {
			p.ended(err)
			return
		}
		now := time.Now()
		fin, rsv1, op := b0&0x80 != 0, b0&0x40 != 0, b0&0x0f
		switch op {
		case 0x1, 0x2: // text, binary
			if fin {
				p.message(payload, rsv1, &window, now)
			} else {
				frag, fragDeflat = append(frag[:0], payload...), rsv1
			}
		case 0x0: // continuation
			frag = append(frag, payload...)
			if fin {
				p.message(frag, fragDeflat, &window, now)
				frag = frag[:0]
			}
		case 0x8: // close: answer it with its code
			nc.Write(clientFrame(0x8, payload[:min(len(payload), 2)]))
			p.ended(io.EOF)
			return
		case 0x9: // ping
			nc.Write(clientFrame(0xa, payload))
		}
		if peeked {
			br.Discard(n)
		}
		if big != nil && cap(big) > 64<<10 {
			big = nil // not kept past an outsized frame
		}
	}
}

// ended counts a connection that closed while the run still wanted it.
func (p *clientProc) ended(err error) {
	if p.quitting.Load() {
		return
	}
	p.closed.Add(1)
	p.fail(fmt.Errorf("connection ended: %w", err))
}

// clientFrame is a masked (zero key) client frame with a short payload.
func clientFrame(op byte, payload []byte) []byte {
	f := []byte{0x80 | op, 0x80 | byte(len(payload)), 0, 0, 0, 0}
	return append(f, payload...)
}

// message takes one data message: it counts it, inflates it if it was
// compressed (through the connection's window, since the hub may send a
// channel's shared-context frames), reads the publisher's timestamp from
// its start and records the delivery latency, measured from the publisher's
// send to the arrival of the message's last frame.
func (p *clientProc) message(payload []byte, compressed bool, window *[]byte, arrived time.Time) {
	p.received.Add(1)
	text := payload
	var inf *inflater
	if compressed {
		p.compressed.Add(1)
		inf = inflaters.Get().(*inflater)
		defer inflaters.Put(inf)
		out, err := inf.inflate(payload, *window)
		if err != nil {
			p.bad.Add(1)
			p.fail(fmt.Errorf("inflate: %w", err))
			return
		}
		*window = appendWindow(*window, out)
		text = out
	}
	sent, ok := parseStamp(text)
	if !ok {
		p.bad.Add(1)
		p.fail(fmt.Errorf("message without a timestamp: %.40q", text))
		return
	}
	d := arrived.UnixNano() - sent
	p.hist.record(time.Duration(d))
	p.recordSecond(sent/1e9, d)
}

// parseStamp reads the UnixNano time at the start of a message:
// {"t":1234567890123456789,...
func parseStamp(b []byte) (int64, bool) {
	const prefix = `{"t":`
	if len(b) < len(prefix)+19 || string(b[:len(prefix)]) != prefix {
		return 0, false
	}
	var t int64
	for _, c := range b[len(prefix) : len(prefix)+19] {
		if c < '0' || c > '9' {
			return 0, false
		}
		t = t*10 + int64(c-'0')
	}
	return t, true
}

// windowSize is deflate's window: how far back a frame may refer.
const windowSize = 32 << 10

// appendWindow appends p to a connection's window, keeping its last
// 32 KiB; it lets the slice grow to 40 KiB before moving the tail down, so
// that a move happens once every 8 KiB of messages rather than on each.
func appendWindow(w, p []byte) []byte {
	const limit = windowSize + windowSize/4
	if len(p) >= windowSize {
		if cap(w) < windowSize {
			w = make([]byte, 0, windowSize)
		}
		return append(w[:0], p[len(p)-windowSize:]...)
	}
	if len(w)+len(p) > limit {
		drop := len(w) + len(p) - windowSize
		w = w[:copy(w, w[drop:])]
	}
	if len(w)+len(p) > cap(w) {
		nw := make([]byte, len(w), min(max(2*cap(w), len(w)+len(p), 512), limit))
		copy(nw, w)
		w = nw
	}
	return append(w, p...)
}

// inflater is a pooled decompressor: a connection holds only its window,
// and borrows a decompressor for each compressed message.
type inflater struct {
	fr  io.ReadCloser
	src twoPart
	out []byte
}

var inflaters = sync.Pool{New: func() any { return new(inflater) }}

// deflateTail completes a permessage-deflate message for a decompressor:
// the sync marker the sender stripped, then an empty final stored block,
// so that reading ends in io.EOF (RFC 7692 section 7.2.2).
var deflateTail = []byte{0x00, 0x00, 0xff, 0xff, 0x01, 0x00, 0x00, 0xff, 0xff}

// inflate decompresses one message with dict, the connection's window, as
// its history. The result is valid until the inflater's next use.
func (f *inflater) inflate(p, dict []byte) ([]byte, error) {
	f.src = twoPart{a: p, b: deflateTail}
	if f.fr == nil {
		f.fr = flate.NewReaderDict(&f.src, dict)
	} else if err := f.fr.(flate.Resetter).Reset(&f.src, dict); err != nil {
		return nil, err
	}
	f.out = f.out[:0]
	for {
		if len(f.out) == cap(f.out) {
			f.out = append(f.out, 0)[:len(f.out)]
		}
		n, err := f.fr.Read(f.out[len(f.out):cap(f.out)])
		f.out = f.out[:len(f.out)+n]
		if err == io.EOF {
			return f.out, nil
		}
		if err != nil {
			return nil, err
		}
		if len(f.out) > 16<<20 {
			return nil, errors.New("message over 16 MiB inflated")
		}
	}
}

// twoPart reads a, then b; it is an io.ByteReader, so that flate reads it
// directly rather than through a bufio.Reader of its own.
type twoPart struct{ a, b []byte }

func (r *twoPart) Read(p []byte) (int, error) {
	if len(r.a) == 0 {
		r.a, r.b = r.b, nil
		if len(r.a) == 0 {
			return 0, io.EOF
		}
	}
	n := copy(p, r.a)
	r.a = r.a[n:]
	return n, nil
}

func (r *twoPart) ReadByte() (byte, error) {
	if len(r.a) == 0 {
		r.a, r.b = r.b, nil
		if len(r.a) == 0 {
			return 0, io.EOF
		}
	}
	c := r.a[0]
	r.a = r.a[1:]
	return c, nil
}
