package fanout_test

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/fanout"
	"github.com/ziplinekv/zipline/fanout/wsclient"
)

// Every mode delivers every message intact, in order, to clients that
// negotiated each flavour of compression, including one that follows two
// channels (its window mixes them) and one that joins late (it starts with
// no history); and no mode compresses per connection.
func TestBroadcastModes(t *testing.T) {
	msgs := messages(t, 240)
	for _, mode := range []fanout.Compression{fanout.Shared, fanout.Stateless, fanout.Off} {
		t.Run(mode.String(), func(t *testing.T) {
			th := newTestHub(t, fanout.Options{Compression: mode, SharedMinSubscribers: 1})
			type client struct {
				name string
				c    *wsclient.Conn
				from int // first message index it gets
				chs  string
			}
			var clients []client
			add := func(name string, opts wsclient.Options, from int, chs ...string) {
				clients = append(clients, client{name, th.dial(t, opts, chs...), from, strings.Join(chs, ",")})
			}
			add("takeover-a", wsclient.Options{}, 0, "a")
			add("takeover-a2", wsclient.Options{}, 0, "a")
			add("nocontext-a", wsclient.Options{NoContextTakeover: true}, 0, "a")
			add("plain-a", wsclient.Options{NoCompression: true}, 0, "a")
			add("takeover-ab", wsclient.Options{}, 0, "a", "b")
			for i, m := range msgs {
				if i == 120 {
					add("late-a", wsclient.Options{}, 120, "a")
				}
				ch := "a"
				if i%7 == 3 {
					ch = "b"
				}
				th.Broadcast(ch, m)
			}
			for _, cl := range clients {
				want := 0
				for i := cl.from; i < len(msgs); i++ {
					if i%7 == 3 && !strings.Contains(cl.chs, "b") {
						continue
					}
					got := read(t, cl.c)
					if !bytes.Equal(got, msgs[i]) {
						t.Fatalf("%s: message %d: got %.60q, want %.60q", cl.name, i, got, msgs[i])
					}
					want++
				}
				if want == 0 {
					t.Fatalf("%s: nothing checked", cl.name)
				}
				ext := cl.c.Extensions()
				switch {
				case mode == fanout.Off || cl.name == "plain-a":
					if ext != "" {
						t.Errorf("%s: extensions %q, want none", cl.name, ext)
					}
				case !strings.Contains(ext, "permessage-deflate"):
					t.Errorf("%s: extensions %q, want permessage-deflate", cl.name, ext)
				case (mode == fanout.Stateless || cl.name == "nocontext-a") != strings.Contains(ext, "server_no_context_takeover"):
					t.Errorf("%s: extensions %q in mode %v", cl.name, ext, mode)
				}
			}
			st := th.Stats()
			if st.Broadcasts != uint64(len(msgs)) {
				t.Errorf("Broadcasts = %d, want %d", st.Broadcasts, len(msgs))
			}
			if st.Compressions > 2*st.Broadcasts {
				t.Errorf("%d compressions for %d broadcasts: more than once per wire form", st.Compressions, st.Broadcasts)
			}
			if mode == fanout.Shared && st.SharedFrames == 0 {
				t.Errorf("no delivery used a shared frame: %+v", st)
			}
			if mode == fanout.Off && st.Compressions != 0 {
				t.Errorf("%d compressions with compression off", st.Compressions)
			}
			t.Logf("%+v", st)
		})
	}
}

// Small messages go out uncompressed, whatever was negotiated.
func TestThreshold(t *testing.T) {
	th := newTestHub(t, fanout.Options{CompressionThreshold: 100})
	c := th.dial(t, wsclient.Options{}, "a")
	small := []byte(`{"price":42}`)
	th.Broadcast("a", small)
	if got := read(t, c); !bytes.Equal(got, small) {
		t.Fatalf("got %q", got)
	}
	// 2 bytes of header: the payload was not compressed.
	if st := th.Stats(); st.QueuedBytes != uint64(len(small)+2) || st.Compressions != 0 {
		t.Errorf("queued %d bytes with %d compressions, want %d and 0", st.QueuedBytes, st.Compressions, len(small)+2)
	}
	// A binary payload is sent as binary.
	bin := []byte{0xff, 0xfe, 0x00}
	th.Broadcast("a", bin)
	c.NetConn().SetReadDeadline(time.Now().Add(5 * time.Second))
	text, got, err := c.ReadMessage()
	if err != nil || text || !bytes.Equal(got, bin) {
		t.Errorf("got text=%v %q %v, want binary %q", text, got, err, bin)
	}
}

// The wire ratio of real JSON: shared context approaches context
// takeover's, stateless stays within 5 % of per-message deflate.
func TestWireRatio(t *testing.T) {
	msgs := messages(t, 400)
	ratio := map[fanout.Compression]float64{}
	for _, mode := range []fanout.Compression{fanout.Shared, fanout.Stateless} {
		th := newTestHub(t, fanout.Options{Compression: mode, SharedMinSubscribers: 1})
		c := th.dial(t, wsclient.Options{}, "a")
		start := c.WireBytes()
		// Warm up past the first 32 KiB, then measure.
		payload := 0
		for i, m := range msgs {
			th.Broadcast("a", m)
			read(t, c)
			if i == 99 {
				start = c.WireBytes()
			}
			if i > 99 {
				payload += len(m)
			}
		}
		ratio[mode] = float64(c.WireBytes()-start) / float64(payload)
		t.Logf("%v: wire/payload %.3f %+v", mode, ratio[mode], th.Stats())
	}
	if r := ratio[fanout.Stateless]; r > 0.58 {
		t.Errorf("stateless ratio %.3f, want at most 0.58", r)
	}
	if r := ratio[fanout.Shared]; r > 0.32 {
		t.Errorf("shared ratio %.3f, want at most 0.32", r)
	}
}

// A hub shuts down with a close frame to every client, drops a client
// that never answers after CloseTimeout, refuses new clients, and leaves
// no goroutine behind (TestMain checks).
func TestShutdown(t *testing.T) {
	th := newTestHub(t, fanout.Options{CloseTimeout: 300 * time.Millisecond})
	var cs []*wsclient.Conn
	for range 5 {
		cs = append(cs, th.dial(t, wsclient.Options{}, "a"))
	}
	mute := th.dial(t, wsclient.Options{}, "a") // never reads: never answers the close
	_ = mute
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- th.Shutdown(ctx) }()
	for i, c := range cs {
		c.NetConn().SetReadDeadline(time.Now().Add(5 * time.Second))
		_, _, err := c.ReadMessage()
		ce, ok := err.(*wsclient.CloseError)
		if !ok || ce.Code != 1001 {
			t.Errorf("client %d: %v, want close 1001", i, err)
		}
	}
	if err := <-done; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if st := th.Stats(); st.Conns != 0 {
		t.Errorf("%d connections after Shutdown", st.Conns)
	}
	if _, err := wsclient.Dial(ctx, th.url+"?channel=a", wsclient.Options{}); err == nil ||
		!strings.Contains(err.Error(), "503") {
		t.Errorf("dial after Shutdown: %v, want 503", err)
	}
	if n := th.Broadcast("a", []byte("x")); n != 0 {
		t.Errorf("Broadcast after Shutdown reached %d", n)
	}
}

// A client receives whatever is broadcast once its handshake has completed,
// on each of its channels: the hub subscribes it before the handshake
// response goes out. Many channels widen the window a wrong order leaves.
func TestNothingMissedAfterHandshake(t *testing.T) {
	th := newTestHub(t, fanout.Options{MaxChannels: 300})
	chs := make([]string, 300)
	for i := range chs {
		chs[i] = "ch" + strconv.Itoa(i)
	}
	for i := range 5 {
		c := th.dial(t, wsclient.Options{}, chs...)
		last := chs[len(chs)-1]
		msg := []byte(`{"n":` + strconv.Itoa(i) + `}`)
		th.Broadcast(last, msg)
		if got := read(t, c); !bytes.Equal(got, msg) {
			t.Fatalf("dial %d: got %q, want %q", i, got, msg)
		}
		c.Close()
	}
}

// In Shared mode a channel compresses through a stream of its own only
// while enough connections with context takeover follow it
// (SharedMinSubscribers), and gives the stream back below half of that;
// every message reaches every follower intact through each change.
func TestSharedStreamNeedsFollowers(t *testing.T) {
	th := newTestHub(t, fanout.Options{SharedMinSubscribers: 4})
	msgs := messages(t, 180)
	var clients []*wsclient.Conn
	next := 0 // the next message to broadcast
	broadcast := func(n int) {
		t.Helper()
		for range n {
			th.Broadcast("a", msgs[next])
			next++
		}
	}
	readAll := func(from int) {
		t.Helper()
		for _, c := range clients {
			for i := from; i < next; i++ {
				if got := read(t, c); !bytes.Equal(got, msgs[i]) {
					t.Fatalf("message %d: got %.40q", i, got)
				}
			}
		}
	}
	for range 3 {
		clients = append(clients, th.dial(t, wsclient.Options{}, "a"))
	}
	broadcast(60)
	readAll(0)
	if st := th.Stats(); st.SharedFrames != 0 || st.Compressions != st.Broadcasts {
		t.Fatalf("3 followers of 4 needed: %+v, want no stream (one compression per broadcast, no shared frame)", st)
	}
	clients = append(clients, th.dial(t, wsclient.Options{}, "a"))
	broadcast(60)
	readAll(60)
	shared := th.Stats().SharedFrames
	if shared == 0 {
		t.Fatalf("4 followers: %+v, want shared frames", th.Stats())
	}
	// Down to one follower, below half of four: the stream goes.
	for _, c := range clients[1:] {
		c.Close()
	}
	clients = clients[:1]
	deadline := time.Now().Add(5 * time.Second)
	for th.Stats().Conns != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the closed connections did not leave")
		}
		time.Sleep(2 * time.Millisecond) // waiting for the hub to see the closes, bounded
	}
	before := th.Stats()
	broadcast(60)
	readAll(120)
	if st := th.Stats(); st.SharedFrames != shared || st.Compressions-before.Compressions != 60 {
		t.Fatalf("one follower left: %+v (before %+v), want the stream gone", st, before)
	}
}
