package codec

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// meanRatios encodes each value with each Codec, checks that reader reads it
// back, and returns the mean stored/original size per Codec (a value stored
// as is counts 1).
func meanRatios(t *testing.T, values [][]byte, reader *Codec, codecs ...*Codec) []float64 {
	t.Helper()
	sums := make([]float64, len(codecs))
	for _, v := range values {
		for i, c := range codecs {
			stored, _ := c.Encode(nil, v)
			if back, err := reader.Decode(nil, stored); err != nil || !bytes.Equal(back, v) {
				t.Fatalf("%v: round trip of %s: %s, %v", c.Backend(), short(v), short(back), err)
			}
			sums[i] += float64(len(stored)) / float64(len(v))
		}
	}
	for i := range sums {
		sums[i] /= float64(len(values))
	}
	return sums
}

// TestDictRatio: on small JSON records a trained dictionary stores about a
// third of what plain zstd stores at the same level.
func TestDictRatio(t *testing.T) {
	zs, zd, lz := mustNew(t, Zstd), mustNew(t, ZstdDict), mustNew(t, LZ4)
	reader := mustNew(t, LZ4, WithDictionary(testDict(t)))
	test := records(2, 200*len(recordSizes)) // not the training records
	t.Logf("dictionary: %d bytes, trained on 1000 generated records; mean stored/original per value, header included", len(testDict(t)))
	t.Logf("%-8s %8s %8s %10s %8s", "size", "mean len", "zstd", "zstd+dict", "lz4")
	for i, size := range recordSizes {
		var values [][]byte
		n := 0
		for j := i; j < len(test); j += len(recordSizes) {
			values = append(values, test[j])
			n += len(test[j])
		}
		r := meanRatios(t, values, reader, zs, zd, lz)
		t.Logf("%-8s %8d %8.3f %10.3f %8.3f", fmt.Sprint(size, " B"), n/len(values), r[0], r[1], r[2])
		// Measured 0.46/0.35/0.30/0.26 with the dictionary against
		// 1.00/0.93/0.65/0.47 without.
		if limit := []float64{0.55, 0.45, 0.60, 0.70}[i] * r[0]; r[1] > limit {
			t.Errorf("%d B: zstd+dict stores %.3f, want below %.3f (zstd %.3f)", size, r[1], limit, r[0])
		}
	}

	t.Run("corpus", func(t *testing.T) {
		recs := corpusRecords(t)
		train, test := recs[:len(recs)/2], recs[len(recs)/2:]
		d, err := TrainDictionary(train, 0)
		if err != nil {
			t.Fatal(err)
		}
		zd := mustNew(t, ZstdDict, WithDictionary(d))
		n := 0
		for _, v := range test {
			n += len(v)
		}
		r := meanRatios(t, test, zd, zs, zd, lz)
		t.Logf("%s: trained on %d records, tested on %d (mean %d B); dictionary %d bytes",
			filepath.Base(corpusPath), len(train), len(test), n/len(test), len(d))
		t.Logf("%-8s %8s %8s %10s %8s", "corpus", "mean len", "zstd", "zstd+dict", "lz4")
		t.Logf("%-8s %8d %8.3f %10.3f %8.3f", "random", n/len(test), r[0], r[1], r[2])
		// Measured 0.27 against 0.72.
		if r[1] > 0.35 || r[1] > 0.5*r[0] {
			t.Errorf("zstd+dict stores %.3f, zstd %.3f", r[1], r[0])
		}
	})
}

// TestDictReaders: a ZstdDict value reads back only with its dictionary,
// whatever the reading Codec's backend; every other Codec returns it as
// stored, without error.
func TestDictReaders(t *testing.T) {
	dictA := testDict(t)
	dictB, err := TrainDictionary(records(3, 1000), 0)
	if err != nil {
		t.Fatal(err)
	}
	w := mustNew(t, ZstdDict)
	other := mustNew(t, ZstdDict, WithDictionary(dictB))
	if w.DictionaryID() == other.DictionaryID() || w.DictionaryID() == 0 {
		t.Fatalf("dictionary IDs %d and %d", w.DictionaryID(), other.DictionaryID())
	}
	value := records(4, 2)[1]
	stored, ok := w.Encode(nil, value)
	if !ok || !bytes.Equal(stored[:5], []byte{0, 1, 2, 0, 0x81}) || !IsCompressed(stored) {
		t.Fatalf("Encode: %v, %s", ok, short(stored))
	}
	var h zstd.Header
	if err := h.Decode(stored[5:]); err != nil || h.DictionaryID != w.DictionaryID() || !h.HasFCS || h.HasCheckSum {
		t.Fatalf("frame header: %v, dictionary %d (want %d), FCS %v, checksum %v", err, h.DictionaryID, w.DictionaryID(), h.HasFCS, h.HasCheckSum)
	}

	for _, c := range []*Codec{w, mustNew(t, Zstd, WithDictionary(dictA)), mustNew(t, LZ4, WithDictionary(dictA)),
		mustNew(t, ZstdDict, WithLevel(19)), mustNew(t, Zstd, WithDictionary(dictB), WithDictionary(dictA))} {
		if got, err := c.Decode([]byte("pre"), stored); err != nil || string(got) != "pre"+string(value) {
			t.Errorf("%v with the dictionary: %s, %v", c.Backend(), short(got), err)
		}
	}
	for _, c := range []*Codec{mustNew(t, Zstd), mustNew(t, LZ4), other, mustNew(t, LZ4, WithDictionary(dictB))} {
		got, err := c.Decode([]byte("pre"), stored)
		if err != nil || string(got) != "pre"+string(stored) {
			t.Errorf("%v, dictionary %d: %s, %v; want the stored bytes", c.Backend(), c.DictionaryID(), short(got), err)
		}
		if s := c.Stats(); s.Invalid != 1 || s.Decompressed != 0 {
			t.Errorf("%v: stats %+v", c.Backend(), s)
		}
		// Nor is it compressed again.
		if out, ok := c.Encode(nil, stored); ok || !bytes.Equal(out, stored) {
			t.Errorf("%v: Encode wrapped a ZstdDict value", c.Backend())
		}
	}

	// The header id says which frames are which: a plain frame under 0x81
	// and a dictionary frame under 0x01 are both returned as stored.
	plainFrame, _ := mustNew(t, Zstd).Encode(nil, value)
	for _, s := range [][]byte{append([]byte{0, 1, 2, 0, 0x81}, plainFrame[5:]...), append([]byte{0, 1, 2, 0, 1}, stored[5:]...)} {
		for _, c := range []*Codec{w, mustNew(t, Zstd, WithDictionary(dictA))} {
			if got, err := c.Decode(nil, s); err != nil || !bytes.Equal(got, s) {
				t.Errorf("header id %#x, frame dictionary %d: %s, %v; want the stored bytes", s[4], frameDict(s), short(got), err)
			}
		}
	}
}

func frameDict(stored []byte) uint32 {
	var h zstd.Header
	h.Decode(stored[5:])
	return h.DictionaryID
}

// TestDictCorrupt: a damaged ZstdDict value is returned as stored when the
// damage shows, and never makes Decode fail or panic. Like GLIDE's zstd
// frames, ours carry no checksum, so damage inside the compressed data can
// go unnoticed.
func TestDictCorrupt(t *testing.T) {
	c := mustNew(t, ZstdDict)
	value := records(5, 3)[2]
	stored, ok := c.Encode(nil, value)
	if !ok {
		t.Fatal("not compressed")
	}
	for n := 0; n < len(stored); n++ {
		if got, err := c.Decode(nil, stored[:n]); err != nil || !bytes.Equal(got, stored[:n]) {
			t.Errorf("truncated to %d bytes: %s, %v", n, short(got), err)
		}
	}
	junk := append(bytes.Clone(stored), 0)
	if got, err := c.Decode(nil, junk); err != nil || !bytes.Equal(got, junk) {
		t.Errorf("trailing byte: %s, %v", short(got), err)
	}
	// The frame starts with its magic (4 bytes), its descriptor, a window
	// descriptor, which only sets a memory bound, and a 4-byte dictionary ID.
	var h zstd.Header
	if err := h.Decode(stored[headerSize:]); err != nil || h.SingleSegment || c.DictionaryID() < 1<<16 {
		t.Fatalf("frame layout: %v, single segment %v, dictionary ID %d", err, h.SingleSegment, c.DictionaryID())
	}
	undetected := 0
	for i := headerSize; i < len(stored); i++ {
		bad := bytes.Clone(stored)
		bad[i] ^= 0x55
		got, err := c.Decode(nil, bad)
		switch at := i - headerSize; {
		case err != nil:
			t.Errorf("byte %d damaged: %v", i, err)
		case at < 10 && at != 5 && !bytes.Equal(got, bad):
			t.Errorf("byte %d of the frame header damaged: decoded to %s", at, short(got))
		case !bytes.Equal(got, bad):
			undetected++
		}
	}
	t.Logf("%d of %d one-byte changes decoded to other data", undetected, len(stored)-headerSize)
}

// TestDictSizeCap: the maximum size holds for ZstdDict values as for zstd:
// before allocating when the frame declares its size, while decoding when
// it does not, whatever the frame's window.
func TestDictSizeCap(t *testing.T) {
	value := records(6, 4)[3]
	stored, _ := mustNew(t, ZstdDict).Encode(nil, value)
	n := int64(len(value))
	for limit, ok := range map[int64]bool{100: false, n - 1: false, n: true, 1 << 20: true} {
		c := mustNew(t, ZstdDict, WithMaxDecompressedSize(limit))
		got, err := c.Decode(nil, stored)
		if ok != (err == nil) || (!ok && (!errors.Is(err, ErrTooLarge) || got != nil)) {
			t.Errorf("limit %d: %s, %v", limit, short(got), err)
		}
	}
	if !raceEnabled {
		c := mustNew(t, ZstdDict, WithMaxDecompressedSize(100))
		if perCall := bytesPerCall(func() { c.Decode(nil, stored) }); perCall > 512 {
			t.Errorf("%d bytes allocated per refused Decode", perCall)
		}
	}

	// A streamed frame declares no size and asks for a 1 MiB window.
	var plain []byte
	for _, r := range records(7, 2000) {
		plain = append(plain, r...)
	}
	var buf bytes.Buffer
	w, err := zstd.NewWriter(&buf, zstd.WithEncoderDict(testDict(t)), zstd.WithWindowSize(1<<20), zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	w.Write(plain)
	w.Close()
	streamed := append([]byte{0, 1, 2, 0, 0x81}, buf.Bytes()...)
	var h zstd.Header
	if err := h.Decode(streamed[5:]); err != nil || h.HasFCS || h.WindowSize != 1<<20 || h.DictionaryID == 0 {
		t.Fatalf("streamed frame: %v, FCS %v, window %d, dictionary %d", err, h.HasFCS, h.WindowSize, h.DictionaryID)
	}
	n = int64(len(plain)) // about 1 MiB
	for limit, ok := range map[int64]bool{1000: false, n / 2: false, n - 1: false, n: true, 4 << 20: true} {
		c := mustNew(t, ZstdDict, WithMaxDecompressedSize(limit))
		got, err := c.Decode(nil, streamed)
		if ok != (err == nil) || (ok && !bytes.Equal(got, plain)) || (!ok && !errors.Is(err, ErrTooLarge)) {
			t.Errorf("streamed, limit %d: %d bytes, %v", limit, len(got), err)
		}
	}
}

func TestTrainDictionary(t *testing.T) {
	samples := records(1, 1000)
	a, err := TrainDictionary(samples, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Same samples, fresh slices: same bytes, and the same as testDict.
	again := make([][]byte, len(samples))
	for i, s := range samples {
		again[i] = bytes.Clone(s)
	}
	b, err := TrainDictionary(again, 0)
	if err != nil || !bytes.Equal(a, b) || !bytes.Equal(a, testDict(t)) {
		t.Fatalf("training is not deterministic: %d and %d bytes, %v", len(a), len(b), err)
	}
	d, err := zstd.InspectDictionary(a)
	if err != nil || d.ID() < 32768 || d.ID() >= 1<<31 || len(a) > DefaultDictionarySize {
		t.Fatalf("dictionary: %v, ID %d, %d bytes", err, d.ID(), len(a))
	}
	t.Logf("%d bytes, ID %d, %d bytes of content", len(a), d.ID(), d.ContentSize())

	value := records(8, 2)[1]
	for _, size := range []int{MinDictionarySize, 1000, 4 << 10, 64 << 10} {
		d, err := TrainDictionary(samples, size)
		if err != nil || len(d) > size {
			t.Errorf("maxSize %d: %d bytes, %v", size, len(d), err)
			continue
		}
		c := mustNew(t, ZstdDict, WithDictionary(d))
		stored, ok := c.Encode(nil, value)
		back, err := c.Decode(nil, stored)
		if err != nil || !bytes.Equal(back, value) {
			t.Errorf("maxSize %d: round trip: %v", size, err)
		}
		t.Logf("maxSize %5d: %5d bytes; a %d-byte record stores as %d (compressed %v)", size, len(d), len(value), len(stored), ok)
	}

	r := rand.New(rand.NewPCG(9, 9))
	distinct := make([][]byte, 20)
	for i := range distinct {
		distinct[i] = random(r, 8)
	}
	bad := []struct {
		name    string
		samples [][]byte
		maxSize int
		want    string
	}{
		{"nil", nil, 0, "0 usable samples"},
		{"9 samples", samples[:9], 0, "9 usable samples"},
		{"empty samples", make([][]byte, 1000), 0, "0 usable samples (of 1000)"},
		{"7-byte samples", slicesOf(samples, 7), 0, "0 usable samples"},
		{"nothing shared", distinct, 0, "share no content"},
		{"maxSize 511", samples, MinDictionarySize - 1, "below"},
		{"maxSize -1", samples, -1, "below"},
	}
	for _, tc := range bad {
		d, err := TrainDictionary(tc.samples, tc.maxSize)
		if err == nil || d != nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %d bytes, %v; want an error with %q", tc.name, len(d), err, tc.want)
		}
	}
}

// slicesOf returns the first n bytes of each sample.
func slicesOf(samples [][]byte, n int) [][]byte {
	out := make([][]byte, len(samples))
	for i, s := range samples {
		out[i] = s[:n]
	}
	return out
}

func TestWithDictionary(t *testing.T) {
	dict := testDict(t)
	if c, err := New(ZstdDict); err == nil || c != nil || !strings.Contains(err.Error(), "WithDictionary") {
		t.Errorf("ZstdDict without a dictionary: %v", err)
	}
	noID := bytes.Clone(dict)
	clear(noID[4:8])
	for name, d := range map[string][]byte{
		"nil": nil, "text": []byte("not a dictionary"), "raw content": dict[len(dict)-1000:],
		"truncated": dict[:20], "ID 0": noID,
	} {
		for _, b := range []Backend{ZstdDict, Zstd} {
			if c, err := New(b, WithDictionary(d)); err == nil || c != nil {
				t.Errorf("%v with dictionary %s: %v", b, name, err)
			}
		}
	}
	for _, level := range []int{ZstdMinLevel - 1, ZstdMaxLevel + 1} {
		if _, err := New(ZstdDict, WithDictionary(dict), WithLevel(level)); err == nil {
			t.Errorf("level %d accepted", level)
		}
	}

	// The Codec keeps its own copy.
	mine := bytes.Clone(dict)
	c, err := New(ZstdDict, WithDictionary(mine), WithLevel(ZstdMaxLevel))
	if err != nil {
		t.Fatal(err)
	}
	clear(mine)
	id, _ := zstd.InspectDictionary(dict)
	if c.Backend() != ZstdDict || c.Level() != ZstdMaxLevel || c.DictionaryID() != id.ID() || mustNew(t, Zstd).DictionaryID() != 0 {
		t.Errorf("Codec: %v level %d dictionary %d", c.Backend(), c.Level(), c.DictionaryID())
	}
	value := records(10, 2)[1]
	stored, ok := c.Encode(nil, value)
	if back, err := c.Decode(nil, stored); !ok || err != nil || !bytes.Equal(back, value) {
		t.Errorf("round trip after the caller's copy changed: %v, %v", ok, err)
	}

	// Damaged tables either fail New or make a Codec that still round trips.
	for i := 8; i < 300; i++ {
		bad := bytes.Clone(dict)
		bad[i] ^= 0xa5
		c, err := New(ZstdDict, WithDictionary(bad))
		if err != nil {
			continue
		}
		stored, _ := c.Encode(nil, value)
		if back, err := c.Decode(nil, stored); err != nil || !bytes.Equal(back, value) {
			t.Errorf("byte %d damaged: round trip: %v", i, err)
		}
	}
}

// TestDictZstdCLI: values and dictionaries are standard zstd: the zstd
// command line tool (libzstd) reads our values with our dictionary, we read
// its frames, and a dictionary from "zstd --train" works here.
func TestDictZstdCLI(t *testing.T) {
	bin, err := exec.LookPath("zstd")
	if err != nil {
		t.Skip("zstd command not found")
	}
	dir := t.TempDir()
	dictFile := filepath.Join(dir, "dict")
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	run := func(args ...string) []byte {
		out, err := exec.Command(bin, args...).Output()
		if err != nil {
			t.Fatalf("zstd %s: %v", strings.Join(args, " "), err)
		}
		return out
	}
	write("dict", testDict(t))
	c := mustNew(t, ZstdDict)
	for i, v := range records(11, 8) {
		stored, ok := c.Encode(nil, v)
		if !ok {
			continue
		}
		if got := run("-d", "-q", "-c", "-D", dictFile, write(fmt.Sprint("v", i, ".zst"), stored[5:])); !bytes.Equal(got, v) {
			t.Errorf("zstd -d of value %d: %s", i, short(got))
		}
		frame := run("-q", "-c", "-19", "-D", dictFile, write(fmt.Sprint("v", i), v))
		if got, err := c.Decode(nil, append([]byte{0, 1, 2, 0, 0x81}, frame...)); err != nil || !bytes.Equal(got, v) {
			t.Errorf("frame from zstd -19 -D: %s, %v", short(got), err)
		}
	}

	var files []string
	for i, s := range records(12, 1000) {
		files = append(files, write(fmt.Sprint("s", i), s))
	}
	trained := filepath.Join(dir, "trained")
	run(append([]string{"-q", "--train-fastcover=k=128,d=8", "--maxdict=16384", "-o", trained}, files...)...)
	cliDict, err := os.ReadFile(trained)
	if err != nil {
		t.Fatal(err)
	}
	cc, err := New(ZstdDict, WithDictionary(cliDict))
	if err != nil {
		t.Fatalf("dictionary from zstd --train: %v", err)
	}
	value := records(13, 2)[1]
	stored, ok := cc.Encode(nil, value)
	if back, err := cc.Decode(nil, stored); !ok || err != nil || !bytes.Equal(back, value) {
		t.Errorf("round trip with zstd's dictionary: %v, %v", ok, err)
	}
	if got := run("-d", "-q", "-c", "-D", trained, write("cli.zst", stored[5:])); !bytes.Equal(got, value) {
		t.Errorf("zstd -d with its own dictionary: %s", short(got))
	}
	ours, _ := c.Encode(nil, value)
	t.Logf("a %d-byte record: %d bytes with zstd's dictionary, %d with ours", len(value), len(stored), len(ours))
}

// DictionaryOf reads the dictionary a ZstdDict value names, from its
// headers alone, and nothing from other values.
func TestDictionaryOf(t *testing.T) {
	samples := records(5, 1000)
	dict, err := TrainDictionary(samples, 0)
	if err != nil {
		t.Fatal(err)
	}
	id, err := DictionaryIDOf(dict)
	if err != nil || id == 0 {
		t.Fatalf("DictionaryIDOf: %d, %v", id, err)
	}
	c, err := New(ZstdDict, WithDictionary(dict))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := New(Zstd)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range samples[:20] {
		v, ok := c.Encode(nil, s)
		if !ok {
			continue // not compressed: no dictionary named
		}
		if got, ok := DictionaryOf(v); !ok || got != id {
			t.Fatalf("DictionaryOf a ZstdDict value: %d %v, want %d", got, ok, id)
		}
		if p, ok := plain.Encode(nil, s); ok {
			if _, ok := DictionaryOf(p); ok {
				t.Fatal("DictionaryOf a plain zstd value names a dictionary")
			}
		}
		for n := range len(v) {
			if _, ok := DictionaryOf(v[:n]); ok && n < headerSize+6 {
				t.Fatalf("DictionaryOf read a dictionary from %d bytes", n)
			}
		}
	}
	if _, ok := DictionaryOf([]byte("plain text value")); ok {
		t.Fatal("DictionaryOf of a raw value")
	}
	if _, err := DictionaryIDOf([]byte("not a dictionary")); err == nil {
		t.Fatal("DictionaryIDOf accepted raw bytes")
	}
}
