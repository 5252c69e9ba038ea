package codec

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// flushedFrame returns one zstd frame of the chunks, as a streaming writer
// makes it: no content size, a checksum, the given window, and a block per
// chunk (the writer is flushed after each). Each compressed block might
// decode to 128 KiB as far as its header tells, so the frame's bound
// overstates its output about 128 times for 1 KiB chunks.
func flushedFrame(tb testing.TB, window int, chunks [][]byte) []byte {
	tb.Helper()
	var buf bytes.Buffer
	w, err := zstd.NewWriter(&buf, zstd.WithWindowSize(window), zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(true))
	if err != nil {
		tb.Fatal(err)
	}
	for _, c := range chunks {
		if _, err := w.Write(c); err != nil {
			tb.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	var h zstd.Header
	if err := h.Decode(buf.Bytes()); err != nil || h.HasFCS || !h.HasCheckSum || h.WindowSize != uint64(window) {
		tb.Fatalf("frame header: %+v, %v", h, err)
	}
	return buf.Bytes()
}

func textChunks(seed uint64, n, size int) (chunks [][]byte, plain []byte) {
	r := rand.New(rand.NewPCG(seed, 9))
	for range n {
		c := compressible(r, size)
		chunks = append(chunks, c)
		plain = append(plain, c...)
	}
	return chunks, plain
}

// TestZstdOverBound covers frames whose bound exceeds the limit but whose
// output does not, on each way Decode takes for them, and the exact limit
// on each: the first frame with a window over the limit (a copy that
// declares the limit as its content size, checksum checked by a second
// pass), the first frame otherwise (the limited decoder), and a later
// frame (a copy that declares what the limit leaves).
func TestZstdOverBound(t *testing.T) {
	chunks, plain := textChunks(1, 100, 1024)
	wide := flushedFrame(t, 1<<20, chunks) // window 1 MiB
	full := zstdHostileFrame(zstdWindow8M, -1, 0, 12)
	fullPlain := zstdHostilePlain(0, 12)
	for _, tc := range []struct {
		name     string
		payload  [][]byte
		want     []byte
		minLimit int64 // the limit used is this, this-1 (too large) and more
	}{
		{"window over the limit", [][]byte{wide}, plain, int64(len(plain))},
		{"window within the limit", [][]byte{flushedFrame(t, 64<<10, chunks)}, plain, int64(len(plain))},
		{"later frame over what is left", [][]byte{full, wide}, append(bytes.Clone(fullPlain), plain...), int64(len(fullPlain) + len(plain))},
		{"skippable frames around", [][]byte{skippableFrame(5), wide, skippableFrame(0)}, plain, int64(len(plain))},
	} {
		stored := envelope(Zstd, tc.payload...)
		for _, limit := range []int64{tc.minLimit, tc.minLimit + 1, tc.minLimit + 200<<10, tc.minLimit - 1} {
			c := mustNew(t, Zstd, WithMaxDecompressedSize(limit))
			if s, err := c.decs[0].(*zstdDecompressor).scan(stored[5:]); err != nil || s.bound <= uint64(limit)+zstdBlockMax {
				t.Fatalf("%s: bound %d for limit %d, %v: not the path under test", tc.name, s.bound, limit, err)
			}
			got, err := c.Decode([]byte("pre"), stored)
			if limit < int64(len(tc.want)) {
				if !errors.Is(err, ErrTooLarge) || string(got) != "pre" {
					t.Errorf("%s, limit %d: %s, %v; want ErrTooLarge", tc.name, limit, short(got), err)
				}
				continue
			}
			if err != nil || string(got[:3]) != "pre" || !bytes.Equal(got[3:], tc.want) {
				t.Errorf("%s, limit %d: %s, %v", tc.name, limit, short(got), err)
			}
			if max := 3 + limit + zstdBlockMax + zstdOverAlloc; int64(cap(got)) > max {
				t.Errorf("%s, limit %d: capacity %d, more than %d", tc.name, limit, cap(got), max)
			}
		}
	}
	// A later frame that declares more than the limit leaves, after one
	// whose bound overstates it: too large, as DecodeAll alone says, not
	// decoded from a copy that declares the budget (it declares already).
	first, firstPlain := zstdHostileFrame(zstdWindow8M, -1, 16, 12), zstdHostilePlain(16, 12)
	declares := zstdHostileFrame(zstdWindow8M, 8*zstdTestBlockMax, 0, 8)
	for _, left := range []int64{100, 8*zstdTestBlockMax - 1, 8 * zstdTestBlockMax} {
		limit := int64(len(firstPlain)) + left
		got, err := mustNew(t, Zstd, WithMaxDecompressedSize(limit)).Decode(nil, envelope(Zstd, first, declares))
		if fits := left == 8*zstdTestBlockMax; fits != (err == nil) || !fits && !errors.Is(err, ErrTooLarge) || fits && len(got) != int(limit) {
			t.Errorf("frame declaring %d with %d left of the limit: %d bytes, %v", 8*zstdTestBlockMax, left, len(got), err)
		}
	}
	// A wrong checksum, on the path that checks it in a second pass.
	bad := bytes.Clone(wide)
	bad[len(bad)-1] ^= 1
	stored := envelope(Zstd, bad)
	if got, err := mustNew(t, Zstd, WithMaxDecompressedSize(int64(len(plain)+1))).Decode(nil, stored); err != nil || !bytes.Equal(got, stored) {
		t.Errorf("bad checksum: %s, %v; want the stored bytes", short(got), err)
	}
}

// skippableFrame returns a skippable frame with n bytes of content.
func skippableFrame(n int) []byte {
	return append([]byte{0x50, 0x2a, 0x4d, 0x18, byte(n), 0, 0, 0}, make([]byte, n)...)
}

// TestZstdShrink: a value whose bound is far above its output, but within
// the limit, is decoded into memory of its bound and handed back in memory
// of its size.
func TestZstdShrink(t *testing.T) {
	chunks, plain := textChunks(2, 40, 1024)
	stored := envelope(Zstd, flushedFrame(t, 1<<20, chunks)) // bound 5 MiB, 40 KiB of text
	got, err := mustNew(t, Zstd).Decode(nil, stored)
	if err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("%s, %v", short(got), err)
	}
	if cap(got) > 2*len(plain) {
		t.Errorf("%d bytes in a slice of capacity %d", len(got), cap(got))
	}
}

// TestZstdScanAgreesWithDecodeAll: reading the headers first changes no
// result. Each payload, and each of its prefixes and many one-byte
// mutations, decodes as klauspost's DecodeAll alone decodes it (with no
// limit but zstdMaxWindow): to the same bytes, or, where DecodeAll fails,
// returned as stored. An empty payload is the exception: invalid, as in
// libzstd, where DecodeAll returns nothing. Both stop at 128 MiB, which
// also keeps DecodeAll from allocating what a mutated content size says.
func TestZstdScanAgreesWithDecodeAll(t *testing.T) {
	ref, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(zstdMaxWindow), zstd.WithDecoderMaxMemory(zstdMaxWindow))
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	chunks, _ := textChunks(3, 5, 300)
	ours, _ := mustNew(t, Zstd).Encode(nil, jsonDoc(t))
	payloads := [][]byte{
		ours[5:],
		flushedFrame(t, 1<<10, chunks),
		zstdHostileFrame(zstdWindow2M, -1, 2, 1),
		zstdHostileFrame(zstdWindow2M, 8+zstdTestBlockMax, 2, 1),
		append(skippableFrame(3), zstdHostileFrame(zstdWindow2M, -1, 1, 0)...),
		append(zstdHostileFrame(zstdWindow2M, -1, 1, 0), skippableFrame(3)...),
	}
	bins, _ := filepath.Glob(filepath.Join(vectors(t), "*zstd*.bin"))
	for _, name := range bins {
		if v := readFile(t, name); IsCompressed(v) {
			payloads = append(payloads, v[5:])
		}
	}
	c := mustNew(t, Zstd, WithMaxDecompressedSize(zstdMaxWindow))
	r := rand.New(rand.NewPCG(4, 4))
	mutations := 150
	if raceEnabled {
		mutations = 40 // the race detector makes each about ten times slower
	}
	var checked, decoded int
	check := func(what string, p []byte) {
		t.Helper()
		checked++
		want, refErr := ref.DecodeAll(p, nil)
		stored := envelope(Zstd, p)
		got, err := c.Decode(nil, stored)
		switch {
		case err != nil:
			// Only a declared size (a mutated content size field) may be too
			// large; DecodeAll then fails too, on the size mismatch.
			if !errors.Is(err, ErrTooLarge) || refErr == nil {
				t.Fatalf("%s: %v; DecodeAll: %d bytes, %v", what, err, len(want), refErr)
			}
		case refErr != nil || len(p) == 0:
			if !bytes.Equal(got, stored) {
				t.Fatalf("%s: decoded %d bytes; DecodeAll: %v", what, len(got), refErr)
			}
		default:
			decoded++
			if !bytes.Equal(got, want) {
				t.Fatalf("%s: %s; DecodeAll: %s", what, short(got), short(want))
			}
		}
	}
	for i, p := range payloads {
		for n := 0; n <= len(p); n++ {
			if n == 64 && len(p) > 64+16 {
				n = len(p) - 16 // the headers, then the last blocks and checksum
			}
			check(fmt.Sprintf("payload %d cut to %d bytes", i, n), p[:n])
		}
		for j := range mutations {
			at := j % len(p)
			if j >= 2*min(len(p), 40) { // the headers first, then anywhere
				at = r.IntN(len(p))
			}
			m := bytes.Clone(p)
			m[at] ^= byte(1 << (j % 8))
			check(fmt.Sprintf("payload %d, byte %d ^ %#x", i, at, 1<<(j%8)), m)
		}
	}
	t.Logf("%d payloads checked, %d decoded", checked, decoded)
}

// TestDecodersKeepNoOutput: after large values are decoded and dropped,
// the live heap is back where it was: neither the pooled zstd decoders nor
// anything else keeps a buffer of the output's size.
func TestDecodersKeepNoOutput(t *testing.T) {
	if testing.Short() {
		t.Skip("decodes 3 × 32 MiB")
	}
	const size = 32 << 20
	values := []struct {
		c      *Codec
		stored []byte
	}{
		{mustNew(t, Zstd), envelope(Zstd, zstdHostileFrame(zstdWindow8M, -1, 0, size/zstdTestBlockMax))},
		{mustNew(t, Zstd, WithMaxDecompressedSize(size/2)), envelope(Zstd, zstdHostileFrame(zstdWindow8M, -1, 0, size/zstdTestBlockMax))},
		{mustNew(t, LZ4), envelope(LZ4, lz4Expanding(size, size, false))},
	}
	live := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	for _, v := range values {
		v.c.Decode(nil, []byte{}) // nothing: keeps v.c and its decoders reachable below
	}
	before := live()
	for i, v := range values {
		out, err := v.c.Decode(nil, v.stored)
		if len(out) < size/2 && err == nil {
			t.Fatalf("%v: %d bytes, %v", v.c.Backend(), len(out), err)
		}
		out = nil
		t.Logf("after %d: %d KiB", i, live()>>10)
	}
	after := live()
	t.Logf("live heap %d KiB before, %d KiB after", before>>10, after>>10)
	if after > before+4<<20 {
		t.Errorf("live heap grew by %d KiB after decoding", (after-before)>>10)
	}
	runtime.KeepAlive(values)
}
