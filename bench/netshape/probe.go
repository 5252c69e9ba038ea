package netshape

import (
	"context"
	"errors"
	"io"
	"net"
	"time"
)

// probeChunk is what Probe writes at a time.
const probeChunk = 256 << 10

// Probe measures a path's throughput: one TCP connection over loopback, in
// the namespace this process runs in, sending as fast as it can for d.
// With rate > 0 the data goes through a Proxy limited to rate, as on the
// fallback path. It returns the rate the receiver saw, in bits per second,
// counted from its first byte to its last, so the bucket's initial burst
// is left out.
func Probe(ctx context.Context, d time.Duration, rate int64) (float64, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	addr := ln.Addr().String()
	if rate > 0 {
		px, err := NewProxy(addr, rate)
		if err != nil {
			return 0, err
		}
		defer px.Close()
		addr = px.Addr()
	}
	type result struct {
		bytes       int64
		first, last time.Time
		err         error
	}
	got := make(chan result, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- result{err: err}
			return
		}
		defer c.Close()
		var r result
		buf := make([]byte, probeChunk)
		for {
			n, err := c.Read(buf)
			if n > 0 {
				// Bytes count from the end of the first read.
				now := time.Now()
				if r.first.IsZero() {
					r.first = now
				} else {
					r.bytes += int64(n)
				}
				r.last = now
			}
			if err != nil {
				if !errors.Is(err, io.EOF) {
					r.err = err
				}
				got <- r
				return
			}
		}
	}()
	c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return 0, err
	}
	chunk := make([]byte, probeChunk)
	end := time.Now().Add(d)
	c.SetWriteDeadline(end.Add(5 * time.Second))
	for time.Now().Before(end) && ctx.Err() == nil {
		if _, err := c.Write(chunk); err != nil {
			c.Close()
			return 0, err
		}
	}
	c.Close()
	select {
	case r := <-got:
		if r.err != nil {
			return 0, r.err
		}
		span := r.last.Sub(r.first).Seconds()
		if span <= 0 {
			return 0, errors.New("netshape: probe received too little to measure")
		}
		return float64(r.bytes) * 8 / span, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}
