package fanout_test

import (
	"io"
	"net"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/fanout"
)

// An idle connection that negotiated compression costs at most 32 KiB of
// the process's memory (heap and goroutine stacks), measured over 2,000
// connections on loopback. The figure includes the client ends, which
// live in the same process, so the hub's share is smaller still.
func TestIdleMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 2,000 connections")
	}
	const n = 2000
	th := newTestHub(t, fanout.Options{})
	// Warm up: the first connection creates the channel and its stream.
	conns := make([]net.Conn, 0, n+1)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	conns = append(conns, rawUpgradeDeflate(t, th))
	before := memInUse()
	for range n {
		conns = append(conns, rawUpgradeDeflate(t, th))
	}
	// Every connection is registered before its 101 is written, so all n
	// are counted now.
	if got := th.Stats().Conns; got != n+1 {
		t.Fatalf("%d connections, want %d", got, n+1)
	}
	after := memInUse()
	per := float64(after-before) / n
	t.Logf("%.0f bytes per idle compressed connection (heap + stacks, both ends)", per)
	if per > 32<<10 {
		t.Errorf("%.0f bytes per idle connection, want at most 32 KiB", per)
	}
	runtime.KeepAlive(conns)
}

// Many channels with few followers each, as when a hub serves one
// channel per user or per document: a connection still costs at most
// 8 KiB once every channel has had a message, both ends counted. Shared
// mode gives a channel a compressor of its own (about 0.8 MiB) only once
// SharedMinSubscribers follow it; with one per channel, 1,000 channels of
// two took about 400 KiB per connection.
func TestIdleMemoryManyChannels(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 2,000 connections")
	}
	const channels, per = 1000, 2
	th := newTestHub(t, fanout.Options{})
	conns := make([]net.Conn, 0, channels*per)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	payload := []byte(strings.Repeat(`{"user":"someone","event":"typing","at":1733600000},`, 20)) // 1 KiB, compressible
	before := memInUse()
	for i := range channels * per {
		conns = append(conns, rawUpgradeDeflateTo(t, th, "doc"+strconv.Itoa(i%channels)))
	}
	wire0 := th.Stats().WireBytes // the handshakes'
	for i := range channels {
		if n := th.Broadcast("doc"+strconv.Itoa(i), payload); n != per {
			t.Fatalf("channel %d: queued for %d, want %d", i, n, per)
		}
	}
	// Wait until the writers have handed every message to the sockets
	// (bounded): the queues then hold nothing.
	deadline := time.Now().Add(10 * time.Second)
	for st := th.Stats(); st.WireBytes-wire0 < st.QueuedBytes; st = th.Stats() {
		if time.Now().After(deadline) {
			t.Fatalf("messages not written: %+v", th.Stats())
		}
		time.Sleep(5 * time.Millisecond) // waiting for the writer goroutines, bounded
	}
	after := memInUse()
	perConn := float64(after-before) / (channels * per)
	t.Logf("%.0f bytes per connection, %d channels of %d, after a message on each (heap + stacks, both ends)", perConn, channels, per)
	if perConn > 8<<10 {
		t.Errorf("%.0f bytes per connection, want at most 8 KiB", perConn)
	}
	runtime.KeepAlive(conns)
}

func memInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc + m.StackInuse
}

// rawUpgradeDeflate opens a connection that negotiates permessage-deflate
// with context takeover, holding nothing but the socket on the client side.
func rawUpgradeDeflate(t *testing.T, th *testHub) net.Conn {
	t.Helper()
	return rawUpgradeDeflateTo(t, th, "idle")
}

// rawUpgradeDeflateTo is rawUpgradeDeflate on channel.
func rawUpgradeDeflateTo(t *testing.T, th *testHub, channel string) net.Conn {
	t.Helper()
	nc, err := net.Dial("tcp", th.srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(nc, "GET /ws?channel="+channel+" HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"+
		"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"+
		"Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n\r\n")
	nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	var buf [512]byte
	got := 0
	for got < 4 || string(buf[got-4:got]) != "\r\n\r\n" {
		k, err := nc.Read(buf[got:])
		if err != nil {
			t.Fatal(err)
		}
		got += k
		if got == len(buf) {
			t.Fatalf("handshake response too long: %q", buf[:got])
		}
	}
	if string(buf[:12]) != "HTTP/1.1 101" || !contains(buf[:got], "permessage-deflate") {
		t.Fatalf("handshake: %q", buf[:got])
	}
	return nc
}

func contains(b []byte, s string) bool { return strings.Contains(string(b), s) }
