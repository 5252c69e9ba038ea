package fanout_test

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/ziplinekv/zipline/fanout"
	"github.com/ziplinekv/zipline/fanout/wsclient"
)

// Shared mode engages on a channel where some messages do not shrink: a
// message deflate cannot compress still keeps a connection's window equal
// to the channel stream's, so it does not restart the connection's 32 KiB
// catch-up. With one message in seven random (the field trial had 14 in
// 92), connections that join at the start and half-way through both reach
// the shared frames, read every message intact, and shared mode sends
// clearly fewer bytes than stateless.
func TestSharedModeWithIncompressibleMessages(t *testing.T) {
	json := messages(t, 420)
	rng := rand.New(rand.NewPCG(12, 92))
	msgs := make([][]byte, len(json))
	random := 0
	for i := range msgs {
		if i%7 == 3 {
			b := make([]byte, 1024)
			for k := range b {
				b[k] = byte(rng.Uint32())
			}
			msgs[i] = b
			random++
			continue
		}
		msgs[i] = json[i]
	}
	const join = 210 // when the second client joins
	wire := map[fanout.Compression]int64{}
	for _, mode := range []fanout.Compression{fanout.Shared, fanout.Stateless} {
		th := newTestHub(t, fanout.Options{Compression: mode, SharedMinSubscribers: 1})
		first := th.dial(t, wsclient.Options{}, "a")
		var late *wsclient.Conn
		lateStart := int64(0)
		for i, m := range msgs {
			if i == join {
				late = th.dial(t, wsclient.Options{}, "a")
				lateStart = late.WireBytes()
			}
			th.Broadcast("a", m)
			for _, c := range []*wsclient.Conn{first, late} {
				if c == nil {
					continue
				}
				if got := read(t, c); !bytes.Equal(got, m) {
					t.Fatalf("%v: message %d (random: %v) arrived as %.40q", mode, i, i%7 == 3, got)
				}
			}
		}
		st := th.Stats()
		wire[mode] = first.WireBytes() + late.WireBytes() - lateStart
		t.Logf("%v: %d messages (%d random), %d wire bytes: %+v", mode, len(msgs), random, wire[mode], st)
		if mode != fanout.Shared {
			continue
		}
		// A client gets the shared frames once it has received 32 KiB of
		// the channel in order, random messages included: about 25
		// messages after it joins. Until then, it needs the frame without
		// history, one compression per message beside the stream's.
		want, catchUp := 0, 0
		for _, from := range []int{0, join} {
			acc := 0
			for _, m := range msgs[from:] {
				if acc >= 32<<10 {
					want++
					continue
				}
				acc += len(m)
				catchUp++
			}
		}
		if st.SharedFrames < uint64(want) {
			t.Errorf("%d deliveries used the shared frame, want %d: shared mode did not engage", st.SharedFrames, want)
		}
		if st.Compressions > uint64(len(msgs)+catchUp) {
			t.Errorf("%d compressions for %d broadcasts, want at most %d: the clients kept needing frames without history",
				st.Compressions, len(msgs), len(msgs)+catchUp)
		}
	}
	if r := float64(wire[fanout.Shared]) / float64(wire[fanout.Stateless]); r > 0.8 {
		t.Errorf("shared mode sent %.2f of stateless mode's bytes, want at most 0.80", r)
	}
}
