package main

import (
	"context"
	"fmt"
	"iter"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/ziplinekv/zipline/fanout"
	"github.com/ziplinekv/zipline/internal/resp"
)

// redisSource is a fanout.Source over one RESP2 connection in subscribe
// mode, with reconnects (each one reported as a gap). It stands in until
// zipline's subscriber API exists; then `zipline fanout` relays from
// c.Subscribe instead, and this file goes.
type redisSource struct {
	addr           string
	username, pass string
	log            *slog.Logger
	msgs           chan fanout.Message

	mu   sync.Mutex
	want map[string]bool
	nc   net.Conn // nil while disconnected

	cancel context.CancelFunc
	done   chan struct{}
}

func newRedisSource(ctx context.Context, addr, username, password string, log *slog.Logger) *redisSource {
	ctx, cancel := context.WithCancel(ctx)
	s := &redisSource{addr: addr, username: username, pass: password, log: log, want: map[string]bool{},
		msgs: make(chan fanout.Message, 4096), cancel: cancel, done: make(chan struct{})}
	go s.run(ctx)
	return s
}

// Close disconnects and stops the source.
func (s *redisSource) Close() {
	s.cancel()
	<-s.done
}

// Add subscribes to channels; while disconnected it records them for the
// next connection. It does not wait for the server's confirmation.
func (s *redisSource) Add(ctx context.Context, channels ...string) error {
	return s.change(true, channels)
}

// Remove unsubscribes from channels.
func (s *redisSource) Remove(ctx context.Context, channels ...string) error {
	return s.change(false, channels)
}

func (s *redisSource) change(add bool, channels []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ch := range channels {
		if add {
			s.want[ch] = true
		} else {
			delete(s.want, ch)
		}
	}
	if s.nc == nil {
		return nil
	}
	cmd := "UNSUBSCRIBE"
	if add {
		cmd = "SUBSCRIBE"
	}
	s.nc.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_, err := s.nc.Write(respCommand(cmd, channels...))
	return err
}

func respCommand(name string, args ...string) []byte {
	b := resp.AppendArrayLen(nil, 1+len(args))
	b = resp.AppendBulkString(b, name)
	for _, a := range args {
		b = resp.AppendBulkString(b, a)
	}
	return b
}

// Messages yields what the server pushes until ctx ends or the source is
// closed.
func (s *redisSource) Messages(ctx context.Context) iter.Seq2[fanout.Message, error] {
	return func(yield func(fanout.Message, error) bool) {
		for {
			select {
			case m := <-s.msgs:
				if !yield(m, nil) {
					return
				}
			case <-ctx.Done():
				return
			case <-s.done:
				return
			}
		}
	}
}

// run connects, subscribes and reads until ctx ends, reconnecting with
// backoff; every reconnect is a gap.
func (s *redisSource) run(ctx context.Context) {
	defer close(s.done)
	backoff := 50 * time.Millisecond
	for first := true; ctx.Err() == nil; first = false {
		if !first {
			select {
			case s.msgs <- fanout.Message{Gap: true}:
			default:
			}
		}
		err := s.session(ctx)
		if ctx.Err() != nil {
			return
		}
		s.log.Warn("fanout: redis subscriber disconnected", "err", err, "retry", backoff)
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

// session is one connection's life.
func (s *redisSource) session(ctx context.Context) error {
	var d net.Dialer
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	nc, err := d.DialContext(dctx, "tcp", s.addr)
	cancel()
	if err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { nc.Close() })
	defer stop()
	defer nc.Close()
	r := resp.NewReader(nc, 0, resp.Limits{})
	if s.pass != "" {
		args := []string{s.pass}
		if s.username != "" {
			args = []string{s.username, s.pass}
		}
		nc.SetDeadline(time.Now().Add(5 * time.Second))
		nc.Write(respCommand("AUTH", args...))
		var v resp.Value
		if err := r.ReadValue(&v); err != nil {
			return err
		}
		if v.IsError() {
			return fmt.Errorf("AUTH: %s", v.Bytes())
		}
		nc.SetDeadline(time.Time{})
	}
	s.mu.Lock()
	s.nc = nc
	var chans []string
	for ch := range s.want {
		chans = append(chans, ch)
	}
	if len(chans) > 0 {
		nc.Write(respCommand("SUBSCRIBE", chans...))
	}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.nc = nil
		s.mu.Unlock()
	}()
	for {
		var v resp.Value
		if err := r.ReadValue(&v); err != nil {
			return err
		}
		if v.IsError() {
			return fmt.Errorf("redis: %s", v.Bytes())
		}
		e := v.Elems()
		if len(e) == 3 && string(e[0].Bytes()) == "message" {
			m := fanout.Message{Channel: string(e[1].Bytes()), Payload: append([]byte(nil), e[2].Bytes()...)}
			select {
			case s.msgs <- m:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
}
