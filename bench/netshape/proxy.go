package netshape

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Proxy forwards TCP connections from its own loopback address to a
// target, moving at most a given rate: the fallback when no namespace can
// be shaped. One token bucket serves every connection and both
// directions, as the shaped loopback's single qdisc does.
type Proxy struct {
	ln     net.Listener
	target string
	bucket *bucket // nil: no limit
	bytes  atomic.Int64

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// proxyChunk is the most a proxy copies at once: small enough that the
// bucket meters the stream smoothly, big enough to cost few system calls.
const proxyChunk = 64 << 10

// NewProxy listens on a free loopback port and forwards every connection
// to target at most rate bits per second in all (0: no limit).
func NewProxy(target string, rate int64) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	if rate > 0 {
		p.bucket = newBucket(rate/8, max(rate/8/1000, minBurst))
	}
	p.wg.Go(p.accept)
	return p, nil
}

// Addr is the address clients dial.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Bytes returns the bytes forwarded so far, both directions.
func (p *Proxy) Bytes() int64 { return p.bytes.Load() }

// Close stops the proxy and closes every connection through it.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	err := p.ln.Close()
	p.wg.Wait()
	return err
}

// track registers c, or closes it and reports false when closing.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) accept() {
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		out, err := net.DialTimeout("tcp", p.target, 5*time.Second)
		if err != nil {
			in.Close()
			continue
		}
		if !p.track(in) || !p.track(out) {
			in.Close()
			out.Close()
			continue
		}
		p.wg.Go(func() { p.pipe(out, in) })
		p.wg.Go(func() { p.pipe(in, out) })
	}
}

// pipe copies src to dst through the bucket until either side fails,
// then closes both.
func (p *Proxy) pipe(dst, src net.Conn) {
	defer func() {
		dst.Close()
		src.Close()
		p.mu.Lock()
		delete(p.conns, dst)
		delete(p.conns, src)
		p.mu.Unlock()
	}()
	buf := make([]byte, proxyChunk)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if p.bucket != nil {
				p.bucket.take(n)
			}
			// Counted before the write, so a reader that has its bytes
			// sees them counted.
			p.bytes.Add(int64(n))
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// bucket is a token bucket: rate bytes per second, holding at most burst.
// Takers queue in order on its lock, so the rate is shared fairly enough.
type bucket struct {
	mu     sync.Mutex
	rate   float64 // bytes per second
	burst  float64
	tokens float64
	last   time.Time
}

func newBucket(rate, burst int64) *bucket {
	return &bucket{rate: float64(rate), burst: float64(burst), tokens: float64(burst), last: time.Now()}
}

// take spends n bytes, then waits until the bucket is out of debt.
// Sleeping under the lock makes the others wait their turn. A sleep that
// runs long is credited on the next take, since refills count from before
// it, so timer slack does not lower the rate.
func (b *bucket) take(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	b.tokens = min(b.burst, b.tokens+now.Sub(b.last).Seconds()*b.rate)
	b.last = now
	b.tokens -= float64(n)
	if b.tokens < 0 {
		time.Sleep(time.Duration(-b.tokens / b.rate * float64(time.Second)))
	}
}
