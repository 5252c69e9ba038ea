package fanout_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/fanout"
	"github.com/ziplinekv/zipline/fanout/wsclient"
	"github.com/ziplinekv/zipline/internal/resp"
	"github.com/ziplinekv/zipline/internal/testkit"
)

// respSubscriber is the simplest RESP2 subscriber: one connection in
// subscribe mode, SUBSCRIBE and UNSUBSCRIBE written by hand, a reader
// goroutine that sorts confirmations from messages. It stands in for
// zipline's subscriber API as a fanout.Source, with a real server behind.
type respSubscriber struct {
	nc      net.Conn
	wmu     sync.Mutex
	acks    chan string
	msgs    chan fanout.Message
	done    chan struct{}
	changes chan string // "+ch" or "-ch", after the server confirmed
}

func dialSubscriber(t *testing.T, addr string) *respSubscriber {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	s := &respSubscriber{nc: nc, acks: make(chan string, 64), msgs: make(chan fanout.Message, 1024),
		done: make(chan struct{}), changes: make(chan string, 64)}
	go s.read()
	t.Cleanup(func() {
		nc.Close()
		<-s.done
	})
	return s
}

func (s *respSubscriber) read() {
	defer close(s.done)
	defer close(s.msgs)
	r := resp.NewReader(s.nc, 0, resp.Limits{})
	for {
		var v resp.Value
		if err := r.ReadValue(&v); err != nil {
			return
		}
		e := v.Elems()
		if len(e) != 3 {
			continue
		}
		switch string(e[0].Bytes()) {
		case "message":
			s.msgs <- fanout.Message{Channel: string(e[1].Bytes()), Payload: bytes.Clone(e[2].Bytes())}
		case "subscribe", "unsubscribe":
			s.acks <- string(e[0].Bytes()) + " " + string(e[1].Bytes())
		}
	}
}

func (s *respSubscriber) command(ctx context.Context, name string, channels []string) error {
	buf := resp.AppendArrayLen(nil, 1+len(channels))
	buf = resp.AppendBulkString(buf, name)
	for _, ch := range channels {
		buf = resp.AppendBulkString(buf, ch)
	}
	s.wmu.Lock()
	_, err := s.nc.Write(buf)
	s.wmu.Unlock()
	if err != nil {
		return err
	}
	sign := map[string]string{"SUBSCRIBE": "+", "UNSUBSCRIBE": "-"}[name]
	for range channels {
		select {
		case a := <-s.acks:
			s.changes <- sign + strings.Fields(a)[1]
		case <-ctx.Done():
			return ctx.Err()
		case <-s.done:
			return errors.New("subscriber connection closed")
		}
	}
	return nil
}

func (s *respSubscriber) Add(ctx context.Context, channels ...string) error {
	return s.command(ctx, "SUBSCRIBE", channels)
}

func (s *respSubscriber) Remove(ctx context.Context, channels ...string) error {
	return s.command(ctx, "UNSUBSCRIBE", channels)
}

func (s *respSubscriber) Messages(ctx context.Context) iter.Seq2[fanout.Message, error] {
	return func(yield func(fanout.Message, error) bool) {
		for {
			select {
			case m, ok := <-s.msgs:
				if !ok || !yield(m, nil) {
					return
				}
			case <-ctx.Done():
				return
			}
		}
	}
}

// waitChange waits for the subscriber to confirm a change.
func (s *respSubscriber) waitChange(t *testing.T, want string) {
	t.Helper()
	select {
	case got := <-s.changes:
		if got != want {
			t.Fatalf("subscription change %q, want %q", got, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("no subscription change, want %q", want)
	}
}

// The hub subscribes to a Redis channel when its first client arrives,
// relays what is published there, and unsubscribes after the last client
// leaves.
func TestRelayRedis(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{})
	sub := dialSubscriber(t, srv.Addr)
	th := newTestHub(t, fanout.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	relayCtx, stopRelay := context.WithCancel(ctx)
	relayed := make(chan error, 1)
	go func() { relayed <- th.Relay(relayCtx, sub) }()

	publish := func(ch string, payload []byte) int64 {
		t.Helper()
		v, err := srv.Do(ctx, "PUBLISH", ch, payload)
		if err != nil {
			t.Fatal(err)
		}
		return v.Int()
	}

	news := th.dial(t, wsclient.Options{}, "news")
	sub.waitChange(t, "+news")
	news2 := th.dial(t, wsclient.Options{}, "news")
	prices := th.dial(t, wsclient.Options{}, "prices")
	sub.waitChange(t, "+prices")
	if err := th.Relay(ctx, sub); !errors.Is(err, fanout.ErrRelaying) {
		t.Errorf("second Relay: %v, want ErrRelaying", err)
	}

	msgs := messages(t, 50)
	for _, m := range msgs {
		if n := publish("news", m); n != 1 {
			t.Fatalf("PUBLISH reached %d subscribers, want 1 (the hub)", n)
		}
	}
	publish("prices", []byte(`{"BTC":1}`))
	for _, c := range []*wsclient.Conn{news, news2} {
		for i, m := range msgs {
			if got := read(t, c); !bytes.Equal(got, m) {
				t.Fatalf("news message %d: got %.40q", i, got)
			}
		}
	}
	if got := read(t, prices); string(got) != `{"BTC":1}` {
		t.Fatalf("prices got %q", got)
	}

	// The last client of a channel leaves: the hub unsubscribes.
	prices.Close()
	sub.waitChange(t, "-prices")
	if n := publish("prices", []byte("nobody")); n != 0 {
		t.Errorf("PUBLISH prices reached %d after the last client left", n)
	}
	news.Close()
	if n := publish("news", []byte("still one")); n != 1 {
		t.Errorf("PUBLISH news reached %d with a client left", n)
	}
	if got := read(t, news2); string(got) != "still one" {
		t.Errorf("news2 got %q", got)
	}
	if got := fmt.Sprint(th.Channels()); got != "[news]" {
		t.Errorf("Channels() = %s", got)
	}
	if rs := th.RelayStats(); rs.Messages != 52 || rs.Errors != 0 {
		t.Errorf("RelayStats %+v, want 52 messages, no errors", rs)
	}
	stopRelay()
	if err := <-relayed; !errors.Is(err, context.Canceled) {
		t.Errorf("Relay returned %v, want context.Canceled", err)
	}
	if !slices.Equal(th.Channels(), []string{"news"}) {
		t.Errorf("Channels() = %v", th.Channels())
	}
}
