package fanout_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/fanout"
	"github.com/ziplinekv/zipline/fanout/wsclient"
	"github.com/ziplinekv/zipline/internal/testkit"
)

// The hub subscribes to a Redis channel when its first client arrives,
// relays what is published there, and unsubscribes after the last client
// leaves.
func TestRelayRedis(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{})
	th := newTestHub(t, fanout.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client, err := zipline.New(zipline.Options{Addr: srv.Addr})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	sub, err := fanout.NewRedisSource(ctx, client)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	subscribed := func(ch string, want int64) {
		t.Helper()
		for i := 0; ; i++ {
			v, err := srv.Do(ctx, "PUBSUB", "NUMSUB", ch)
			if err == nil && v.Elems()[1].Int() == want {
				return
			}
			if i > 2500 {
				t.Fatalf("PUBSUB NUMSUB %s never reached %d", ch, want)
			}
			time.Sleep(2 * time.Millisecond) // polling server state, bounded
		}
	}
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
	subscribed("news", 1)
	news2 := th.dial(t, wsclient.Options{}, "news")
	prices := th.dial(t, wsclient.Options{}, "prices")
	subscribed("prices", 1)
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
	subscribed("prices", 0)
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
	// The subscriber connection is killed: the client re-subscribes, the
	// relay counts the gap, and messages flow again.
	if _, err := srv.Do(ctx, "CLIENT", "KILL", "TYPE", "pubsub"); err != nil {
		t.Fatal(err)
	}
	for i := 0; th.RelayStats().Gaps == 0; i++ {
		if i > 2500 {
			t.Fatal("the relay never saw the gap")
		}
		time.Sleep(2 * time.Millisecond) // polling the relay's counters, bounded
	}
	subscribed("news", 1)
	publish("news", []byte("after the gap"))
	if got := read(t, news2); string(got) != "after the gap" {
		t.Errorf("news2 after the gap got %q", got)
	}
	stopRelay()
	if err := <-relayed; !errors.Is(err, context.Canceled) {
		t.Errorf("Relay returned %v, want context.Canceled", err)
	}
	if !slices.Equal(th.Channels(), []string{"news"}) {
		t.Errorf("Channels() = %v", th.Channels())
	}
}
