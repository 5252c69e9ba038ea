package codec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"
	"syscall"
	"testing"
)

// The documents of bench/codecref (the comparison with libzstd and
// liblz4), built the same way from the same files: 100B is the "repo"
// object of the 4th GitHub event, 2KB the smallest tweet, 64KB a JSON
// array of the 30 GitHub events and then tweets while within 64 KiB.
type refDoc struct {
	name string
	data []byte
}

func refDocs(tb testing.TB) []refDoc {
	tb.Helper()
	compact := func(r json.RawMessage) []byte {
		var b bytes.Buffer
		if err := json.Compact(&b, r); err != nil {
			tb.Fatal(err)
		}
		return b.Bytes()
	}
	var events []json.RawMessage
	if err := json.Unmarshal(readFile(tb, "../testbed/corpus/realjson/github_events.json"), &events); err != nil || len(events) < 30 {
		tb.Fatalf("github_events.json: %d events, %v", len(events), err)
	}
	var tw struct {
		Statuses []json.RawMessage `json:"statuses"`
	}
	if err := json.Unmarshal(readFile(tb, "../testbed/corpus/realjson/twitter.json"), &tw); err != nil || len(tw.Statuses) == 0 {
		tb.Fatalf("twitter.json: %v", err)
	}
	var ev struct {
		Repo json.RawMessage `json:"repo"`
	}
	if err := json.Unmarshal(events[3], &ev); err != nil {
		tb.Fatal(err)
	}
	var mid []byte
	for _, t := range tw.Statuses {
		if c := compact(t); mid == nil || len(c) < len(mid) {
			mid = c
		}
	}
	big := []byte{'['}
	for _, e := range events {
		big = append(append(big, compact(e)...), ',')
	}
	for _, t := range tw.Statuses {
		c := compact(t)
		if len(big)+len(c)+1 > 64<<10 {
			break
		}
		big = append(append(big, c...), ',')
	}
	big[len(big)-1] = ']'
	return []refDoc{{"100B", compact(ev.Repo)}, {"2KB", mid}, {"64KB", big}}
}

// stripContentSize rewrites a stored zstd value zipline wrote (one frame,
// single segment, with a content size) into the form GLIDE writes: no
// content size, and the 2 MiB window of libzstd's level 3 when streaming
// (window descriptor 0x58, as in testdata/glide/zstd_1.bin). The blocks
// are unchanged.
func stripContentSize(tb testing.TB, stored []byte) []byte {
	tb.Helper()
	f := stored[headerSize:]
	fhd := f[4]
	if fhd&0x03 != 0 {
		tb.Fatalf("frame header %#x names a dictionary", fhd)
	}
	hdr := 5 // magic, descriptor
	if fhd&0x20 == 0 {
		hdr++ // window descriptor
	}
	switch fhd >> 6 {
	case 0:
		if fhd&0x20 != 0 {
			hdr++
		}
	case 1:
		hdr += 2
	case 2:
		hdr += 4
	case 3:
		hdr += 8
	}
	out := append([]byte(nil), stored[:headerSize]...)
	out = append(out, f[:4]...)
	out = append(out, fhd&0x04, 0x58) // no content size, not single segment, 2 MiB; checksum flag kept
	return append(out, f[hdr:]...)
}

// BenchmarkRef runs what bench/codecref compares with the C libraries,
// for profiles: go test -run '^$' -bench Ref/zstd-enc/2KB -cpuprofile cpu.out
func BenchmarkRef(b *testing.B) {
	zc, lc := mustNew(b, Zstd), mustNew(b, LZ4)
	for _, d := range refDocs(b) {
		zs, _ := zc.Encode(nil, d.data)
		ls, _ := lc.Encode(nil, d.data)
		gs := stripContentSize(b, zs)
		if got, err := zc.Decode(nil, gs); err != nil || !bytes.Equal(got, d.data) {
			b.Fatalf("%s: the stripped frame does not decode: %v", d.name, err)
		}
		for _, k := range []struct {
			name string
			f    func(dst []byte) []byte
		}{
			{"zstd-enc", func(dst []byte) []byte { dst, _ = zc.Encode(dst, d.data); return dst }},
			{"zstd-dec", func(dst []byte) []byte { dst, _ = zc.Decode(dst, zs); return dst }},
			{"zstd-dec-glide", func(dst []byte) []byte { dst, _ = zc.Decode(dst, gs); return dst }},
			{"lz4-enc", func(dst []byte) []byte { dst, _ = lc.Encode(dst, d.data); return dst }},
			{"lz4-dec", func(dst []byte) []byte { dst, _ = lc.Decode(dst, ls); return dst }},
		} {
			b.Run(k.name+"/"+d.name, func(b *testing.B) {
				dst := make([]byte, 0, 2*len(d.data)+1024)
				b.SetBytes(int64(len(d.data)))
				b.ReportAllocs()
				for b.Loop() {
					dst = k.f(dst[:0])
				}
			})
		}
	}
}

// manyDocs returns n different ~1.9 KB JSON-like values: windows of the
// 64KB document at different offsets, so that, as in a client's traffic,
// consecutive values differ (encoding one value again and again keeps the
// match finder's table entries it touches in the cache).
func manyDocs(tb testing.TB, n int) [][]byte {
	big := refDocs(tb)[2].data
	const size = 1900
	out := make([][]byte, n)
	for i := range out {
		off := (i * 617) % (len(big) - size)
		out[i] = big[off : off+size]
	}
	return out
}

// BenchmarkConcurrentEncode encodes ~1.9 KB JSON values from many
// goroutines at once, as a client's 64 callers do (issue 34's demo cell:
// 64 goroutines), each value different from the last ("rotating") or
// always the same ("same"). ns/op is wall time per value over all
// goroutines: with GOMAXPROCS busy Ps, CPU per value is about ns/op ×
// GOMAXPROCS.
func BenchmarkConcurrentEncode(b *testing.B) {
	docs := manyDocs(b, 256)
	for _, be := range []Backend{Zstd, LZ4} {
		c := mustNew(b, be)
		for _, g := range []int{1, 64} {
			for _, rotate := range []bool{false, true} {
				name := map[bool]string{false: "same", true: "rotating"}[rotate]
				b.Run(fmt.Sprintf("%v/%s/goroutines=%d", be, name, g), func(b *testing.B) {
					b.SetBytes(int64(len(docs[0])))
					b.ReportAllocs()
					var wg sync.WaitGroup
					per := b.N/g + 1
					cpu0 := processCPUTime()
					b.ResetTimer()
					for w := range g {
						wg.Add(1)
						go func() {
							defer wg.Done()
							dst := make([]byte, 0, 2*len(docs[0]))
							for i := range per {
								doc := docs[0]
								if rotate {
									doc = docs[(w*31+i)%len(docs)]
								}
								dst, _ = c.Encode(dst[:0], doc)
							}
						}()
					}
					wg.Wait()
					b.StopTimer()
					b.ReportMetric(float64(processCPUTime()-cpu0)/float64(per*g), "cpu-ns/op")
				})
			}
		}
	}
}

// processCPUTime returns the process's user and system CPU time in ns.
func processCPUTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
