package fanout_test

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/fanout"
	"github.com/ziplinekv/zipline/fanout/internal/wsproto"
)

// pingFloodEnv sets how long TestPingFloodMemory floods, as a
// time.ParseDuration string; the acceptance run is
// FANOUT_PING_FLOOD=10s go test -race -run TestPingFloodMemory ./fanout/
const pingFloodEnv = "FANOUT_PING_FLOOD"

// Clients that send pings as fast as they can and never read cost the hub
// a bounded amount of memory: the hub keeps at most the latest unsent pong
// per connection (RFC 6455 section 5.5.3 lets a pong answer only the most
// recent ping), so the pongs a full socket cannot take replace one another
// instead of piling up. Once the clients read again, the pongs come in
// order, and the last one answers the last ping.
//
// Four clients flood for 2 s by default, for FANOUT_PING_FLOOD when set;
// the connections outlive the flood (WriteTimeout is a minute), so nothing
// but the bound keeps the queues small. Memory is the process's heap and
// goroutine stacks after a collection, sampled through the flood; the
// client ends live in the same process and hold a fixed 64 KiB each.
func TestPingFloodMemory(t *testing.T) {
	flood := 2 * time.Second
	if s := os.Getenv(pingFloodEnv); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			t.Fatalf("%s=%q: want a positive duration", pingFloodEnv, s)
		}
		flood = d
	}
	const clients = 4
	const limit = 16 << 20
	th := startTestHub(t, fanout.Options{WriteTimeout: time.Minute, CloseTimeout: time.Second}, 4096)
	conns := make([]net.Conn, clients)
	// The hub's sockets have a small send buffer (startTestHub), so its
	// writes block soon. (Shrinking a client's receive buffer after the
	// connection is up retracts a window the hub already used: the
	// client's kernel then drops the hub's window updates along with its
	// data, and the flood stalls in TCP, not in the hub.)
	for i := range conns {
		conns[i] = rawUpgrade(t, th)
	}
	before := memInUse()

	// Each client writes batches of 500 pings, each carrying a sequence
	// number, with a zero mask key (valid, and it leaves payloads as
	// they are), until the flood ends.
	const perBatch = 500
	const payloadLen = wsproto.MaxControlPayload
	frameLen := 2 + 4 + payloadLen
	end := time.Now().Add(flood)
	var wg sync.WaitGroup
	last := make([]uint64, clients) // the last sequence number each client sent
	sent := make([]int, clients)
	errs := make([]error, clients)
	for i, nc := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			batch := make([]byte, perBatch*frameLen)
			var seq uint64
			for time.Now().Before(end) {
				for k := range perBatch {
					f := batch[k*frameLen : (k+1)*frameLen]
					f[0], f[1] = 0x89, 0x80|payloadLen // fin ping, masked, 125 bytes
					clear(f[2:6])
					seq++
					binary.BigEndian.PutUint64(f[6:], seq)
				}
				nc.SetWriteDeadline(end.Add(10 * time.Second))
				if _, err := nc.Write(batch); err != nil {
					errs[i] = err
					return
				}
				sent[i] += perBatch
			}
			last[i] = seq
		}()
	}
	peak := uint64(0)
	sample := func() {
		if m := memInUse(); m > peak {
			peak = m
		}
	}
	tick := time.NewTicker(flood / 8)
	for time.Now().Before(end) {
		<-tick.C // a measurement's pace, not synchronisation
		sample()
	}
	tick.Stop()
	wg.Wait()
	sample()
	grew := int64(peak) - int64(before)
	total := 0
	for i := range conns {
		if errs[i] != nil {
			t.Fatalf("client %d stopped flooding: %v", i, errs[i])
		}
		total += sent[i]
	}
	t.Logf("%d clients sent %d pings in %v (%.0f/s); the process grew by at most %.1f MiB",
		clients, total, flood, float64(total)/flood.Seconds(), float64(grew)/(1<<20))
	if grew >= limit {
		t.Errorf("the ping flood grew memory by %.1f MiB, want less than %d MiB", float64(grew)/(1<<20), limit>>20)
	}

	// The clients read now: pongs arrive in order, and the last one
	// answers the last ping.
	for i, nc := range conns {
		nc.SetReadDeadline(time.Now().Add(30 * time.Second))
		var got uint64
		pongs := 0
		for got < last[i] {
			var hdr [2]byte
			if _, err := io.ReadFull(nc, hdr[:]); err != nil {
				t.Fatalf("client %d: after %d pongs (last %d of %d): %v", i, pongs, got, last[i], err)
			}
			if hdr[0] != 0x8a || int(hdr[1]) != payloadLen {
				t.Fatalf("client %d: frame header % x, want a pong of %d bytes", i, hdr, payloadLen)
			}
			p := make([]byte, payloadLen)
			if _, err := io.ReadFull(nc, p); err != nil {
				t.Fatal(err)
			}
			seq := binary.BigEndian.Uint64(p)
			if seq <= got || seq > last[i] || !bytes.Equal(p[8:], make([]byte, payloadLen-8)) {
				t.Fatalf("client %d: pong %d after %d (last ping %d)", i, seq, got, last[i])
			}
			got = seq
			pongs++
		}
		t.Logf("client %d: %d pings, %d pongs", i, last[i], pongs)
	}
}
