package fanout

import (
	"fmt"
	"testing"

	"github.com/ziplinekv/zipline/testbed/corpus"
)

// realMessages are ~1 KiB real JSON updates (pairs of random.json users).
func realMessages(tb testing.TB) [][]byte {
	msgs, err := corpus.RealMessages(1024)
	if err != nil {
		tb.Fatal(err)
	}
	return msgs
}

// BenchmarkBroadcast broadcasts one ~1 KiB real JSON message to every
// connection per op, and waits until each connection wrote it. Besides
// ns/op it reports µs per connection and the wire bytes per message over
// the payload (the compression ratio every client sees).
//
//	go test -run '^$' -bench Broadcast -benchtime 20x .
func BenchmarkBroadcast(b *testing.B) {
	msgs := realMessages(b)
	for _, n := range []int{10_000} {
		for _, newServer := range Servers() {
			b.Run(fmt.Sprintf("conns=%d/server=%s", n, newServer().Name()), func(b *testing.B) {
				s := newServer()
				w := newCounter()
				if err := s.Connect(n, w); err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				// Warm up past the shared context's 32 KiB, untimed.
				base := w.n.Load()
				for i := range 40 {
					s.Broadcast(msgs[i])
					if !w.wait(base + int64(n)*int64(i+1)) {
						b.Fatalf("warm-up: %d writes, want %d", w.n.Load()-base, n*(i+1))
					}
				}
				base, wire0 := w.n.Load(), s.WireBytes()
				payload := 0
				b.ReportAllocs()
				b.ResetTimer()
				for i := range b.N {
					m := msgs[(40+i)%len(msgs)]
					payload += len(m)
					s.Broadcast(m)
					if !w.wait(base + int64(n)*int64(i+1)) {
						b.Fatalf("broadcast %d: %d writes, want %d", i, w.n.Load()-base, n*(i+1))
					}
				}
				b.StopTimer()
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n)/1000, "µs/conn")
				b.ReportMetric(float64(s.WireBytes()-wire0)/float64(n)/float64(payload), "wire/payload")
			})
		}
	}
}
