package codec

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

func TestBackendString(t *testing.T) {
	for b, want := range map[Backend]string{Zstd: "zstd", LZ4: "lz4", ZstdDict: "zstd-dict", 0: "Backend(0)", 3: "Backend(3)", 0x80: "Backend(128)"} {
		if got := b.String(); got != want {
			t.Errorf("Backend(%d).String() = %q, want %q", uint8(b), got, want)
		}
	}
}

func TestNewValidates(t *testing.T) {
	bad := []struct {
		name string
		b    Backend
		opts []Option
	}{
		{"backend 0", 0, nil},
		{"backend 3", 3, nil},
		{"backend 0x80", 0x80, nil},
		{"zstd-dict level 23", ZstdDict, []Option{WithLevel(ZstdMaxLevel + 1)}},
		{"zstd level 23", Zstd, []Option{WithLevel(ZstdMaxLevel + 1)}},
		{"zstd level -131073", Zstd, []Option{WithLevel(ZstdMinLevel - 1)}},
		{"lz4 level 13", LZ4, []Option{WithLevel(LZ4MaxLevel + 1)}},
		{"lz4 level -129", LZ4, []Option{WithLevel(LZ4MinLevel - 1)}},
		{"lz4 with a zstd level", LZ4, []Option{WithLevel(22)}},
		{"min size 5", Zstd, []Option{WithMinSize(MinMinSize - 1)}},
		{"min size -1", LZ4, []Option{WithMinSize(-1)}},
		{"max size 0", Zstd, []Option{WithMaxDecompressedSize(0)}},
		{"max size -1", LZ4, []Option{WithMaxDecompressedSize(-1)}},
	}
	for _, tc := range bad {
		c, err := New(tc.b, tc.opts...)
		if err == nil || c != nil {
			t.Errorf("%s: New = %v, %v; want an error", tc.name, c, err)
		}
	}

	good := []struct {
		b     Backend
		opts  []Option
		level int
	}{
		{Zstd, nil, DefaultZstdLevel},
		{LZ4, nil, DefaultLZ4Level},
		{Zstd, []Option{WithLevel(ZstdMinLevel)}, ZstdMinLevel},
		{Zstd, []Option{WithLevel(ZstdMaxLevel)}, ZstdMaxLevel},
		{LZ4, []Option{WithLevel(LZ4MinLevel)}, LZ4MinLevel},
		{LZ4, []Option{WithLevel(LZ4MaxLevel)}, LZ4MaxLevel},
		{Zstd, []Option{nil, WithMinSize(MinMinSize), WithMaxDecompressedSize(1)}, DefaultZstdLevel},
		{ZstdDict, []Option{WithDictionary(testDict(t))}, DefaultZstdLevel},
		{ZstdDict, []Option{WithDictionary(testDict(t)), WithLevel(ZstdMinLevel)}, ZstdMinLevel},
	}
	for _, tc := range good {
		c, err := New(tc.b, tc.opts...)
		if err != nil {
			t.Errorf("New(%v) = %v", tc.b, err)
			continue
		}
		if c.Backend() != tc.b || c.Level() != tc.level {
			t.Errorf("New(%v): backend %v level %d, want %v %d", tc.b, c.Backend(), c.Level(), tc.b, tc.level)
		}
	}
	c := mustNew(t, Zstd)
	if c.MinSize() != DefaultMinSize || c.MaxDecompressedSize() != DefaultMaxDecompressedSize {
		t.Errorf("defaults: min %d max %d", c.MinSize(), c.MaxDecompressedSize())
	}
}

func TestZstdLevelMapping(t *testing.T) {
	for level, want := range map[int]string{
		ZstdMinLevel: "fastest", -5: "fastest", 1: "fastest", 2: "fastest",
		0: "default", 3: "default", 5: "default",
		6: "better", 9: "better",
		10: "best", 19: "best", ZstdMaxLevel: "best",
	} {
		if got := zstdEncoderLevel(level).String(); got != want {
			t.Errorf("zstd level %d maps to %s, want %s", level, got, want)
		}
	}
	procs := runtime.GOMAXPROCS(0)
	for l, want := range map[zstd.EncoderLevel]int{
		zstd.SpeedFastest: procs, zstd.SpeedDefault: procs,
		zstd.SpeedBetterCompression: min(procs, 8), zstd.SpeedBestCompression: min(procs, 4),
	} {
		if got := zstdEncoderWorkers(l); got != want {
			t.Errorf("%v: %d workers, want %d", l, got, want)
		}
	}
}

// TestGLIDEVectors decodes every value GLIDE stored, with Codecs of both
// backends: each reads both.
func TestGLIDEVectors(t *testing.T) {
	codecs := []*Codec{mustNew(t, Zstd), mustNew(t, LZ4), mustNew(t, LZ4, WithMaxDecompressedSize(1<<20))}
	for _, v := range glideVectors(t) {
		raw := strings.HasSuffix(v.name, "_3") || strings.HasSuffix(v.name, "_4")
		if raw != !IsCompressed(v.stored) {
			t.Errorf("%s: IsCompressed = %v", v.name, IsCompressed(v.stored))
		}
		if raw && !bytes.Equal(v.stored, v.want) {
			t.Errorf("%s: a raw vector differs from its plaintext", v.name)
		}
		for _, c := range codecs {
			got, err := c.Decode(nil, v.stored)
			if err != nil || !bytes.Equal(got, v.want) {
				t.Errorf("%s: %v codec: Decode = %s, %v; want %s", v.name, c.Backend(), short(got), err, short(v.want))
			}
		}
		got, err := codecs[0].Decode([]byte("prefix"), v.stored)
		if err != nil || string(got[:6]) != "prefix" || !bytes.Equal(got[6:], v.want) {
			t.Errorf("%s: Decode appending = %s, %v", v.name, short(got), err)
		}
	}
}

// TestGLIDEVectorsLZ4Identical checks that negative LZ4 levels produce
// liblz4's exact bytes, as GLIDE writes them.
func TestGLIDEVectorsLZ4Identical(t *testing.T) {
	dir := vectors(t)
	for _, tc := range []struct {
		level   int
		variant string
		vectors []string
	}{
		{-8, "lz4-l-8", []string{"1", "5"}},
		{0, "lz4", []string{"1", "2", "5"}}, // the default level: GLIDE's own bytes
	} {
		c := mustNew(t, LZ4, WithLevel(tc.level))
		for _, n := range tc.vectors {
			plain := readFile(t, filepath.Join(dir, n+".plain"))
			want := readFile(t, filepath.Join(dir, tc.variant+"_"+n+".bin"))
			got, ok := c.Encode(nil, plain)
			if !ok || !bytes.Equal(got, want) {
				t.Errorf("lz4 level %d on %s.plain: %d bytes (compressed %v), GLIDE stored %d bytes", tc.level, n, len(got), ok, len(want))
			}
		}
	}
}

// TestEncodeLikeGLIDE encodes each plaintext GLIDE encoded and checks that
// Encode makes the same decision, a header of the right form and a size
// close to GLIDE's.
func TestEncodeLikeGLIDE(t *testing.T) {
	dir := vectors(t)
	for _, b := range []Backend{Zstd, LZ4} {
		c := mustNew(t, b)
		for n := 1; n <= 5; n++ {
			name := filepath.Join(dir, string(rune('0'+n)))
			plain := readFile(t, name+".plain")
			glide := readFile(t, filepath.Join(dir, b.String()+"_"+string(rune('0'+n))+".bin"))
			got, ok := c.Encode(nil, plain)
			if ok != IsCompressed(glide) {
				t.Errorf("%v %d.plain: compressed %v, GLIDE %v", b, n, ok, IsCompressed(glide))
				continue
			}
			if !ok {
				if !bytes.Equal(got, plain) {
					t.Errorf("%v %d.plain: raw output differs from input", b, n)
				}
				continue
			}
			if !bytes.Equal(got[:5], []byte{0, 1, 2, 0, byte(b)}) {
				t.Errorf("%v %d.plain: header % x", b, n, got[:5])
			}
			// Sizes are comparable on real documents; on 64 × 'A' pierrec's
			// fast compressor takes 23 bytes where liblz4 takes 11.
			if (n == 1 || n == 5) && len(got) > len(glide)+len(glide)/20 {
				t.Errorf("%v %d.plain: %d bytes, GLIDE %d", b, n, len(got), len(glide))
			}
			t.Logf("%v %d.plain: %d -> %d bytes (GLIDE %d)", b, n, len(plain), len(got), len(glide))
		}
	}
}

// edgeExpect is the policy of notes §5, "Recommendation for our reader".
var edgeExpect = map[string]string{
	"e:garbage_after_zstd_hdr": "raw",
	"e:unknown_backend_03":     "raw",
	"e:future_version_07":      "plain",
	"e:header_only_zstd":       "raw",
	"e:header_only_lz4":        "raw",
	// 0x7fffffff is above the 512 MiB limit: the size check comes first,
	// as for l:claimed_600MB.
	"e:lz4_size_too_big":   "too large",
	"e:lz4_bad_block":      "raw",
	"e:short_4bytes_magic": "raw",
	"l:claimed_bigger":     "raw", // exact length, like GLIDE 2.6.0
	"l:claimed_smaller":    "raw",
	"l:claimed_exact":      "plain",
	"l:claimed_600MB":      "too large",
	"z:two":                "plain twice",
	"z:trail":              "raw",
}

type edgeCase struct {
	Key       string `json:"key"`
	StoredHex string `json:"stored_hex"`
}

func edgeCases(tb testing.TB) (plain []byte, cases []edgeCase) {
	tb.Helper()
	var f struct {
		Plain string     `json:"plaintext_ascii"`
		Cases []edgeCase `json:"cases"`
	}
	if err := json.Unmarshal(readFile(tb, filepath.Join(vectors(tb), "edge_cases.json")), &f); err != nil {
		tb.Fatal(err)
	}
	if len(f.Cases) == 0 || f.Plain == "" {
		tb.Fatal("edge_cases.json: no cases")
	}
	return []byte(f.Plain), f.Cases
}

func TestEdgeCases(t *testing.T) {
	plain, cases := edgeCases(t)
	seen := map[string]bool{}
	for _, b := range []Backend{Zstd, LZ4} {
		c := mustNew(t, b)
		for _, ec := range cases {
			seen[ec.Key] = true
			want, ok := edgeExpect[ec.Key]
			if !ok {
				t.Errorf("%s: new case in edge_cases.json; add its expected outcome", ec.Key)
				continue
			}
			stored := mustHex(t, ec.StoredHex)
			dst := []byte("keep")
			got, err := c.Decode(dst, stored)
			switch want {
			case "too large":
				if !errors.Is(err, ErrTooLarge) || string(got) != "keep" {
					t.Errorf("%v %s: Decode = %s, %v; want ErrTooLarge", b, ec.Key, short(got), err)
				}
				continue
			case "raw":
				want = string(stored)
			case "plain":
				want = string(plain)
			case "plain twice":
				want = string(plain) + string(plain)
			}
			if err != nil || string(got) != "keep"+want {
				t.Errorf("%v %s: Decode = %s, %v; want %s", b, ec.Key, short(got), err, short([]byte(want)))
			}
		}
	}
	for k := range edgeExpect {
		if !seen[k] {
			t.Errorf("%s: expected in edge_cases.json", k)
		}
	}
}

// TestTooLargeDoesNotAllocate checks that a declared size over the limit is
// refused before the plaintext is allocated.
func TestTooLargeDoesNotAllocate(t *testing.T) {
	_, cases := edgeCases(t)
	c := mustNew(t, LZ4)
	for _, ec := range cases {
		if edgeExpect[ec.Key] != "too large" {
			continue
		}
		stored := mustHex(t, ec.StoredHex)
		if _, err := c.Decode(nil, stored); !errors.Is(err, ErrTooLarge) {
			t.Fatalf("%s: %v", ec.Key, err)
		}
		if perCall := bytesPerCall(func() { c.Decode(nil, stored) }); perCall > 1024 {
			t.Errorf("%s: %d bytes allocated per Decode, want only the error", ec.Key, perCall)
		}
	}
}

// TestMaxDecompressedSize: a limit below the plaintext fails, on every path,
// and the same bytes still decode under a larger limit.
func TestMaxDecompressedSize(t *testing.T) {
	plain, cases := edgeCases(t) // 208 bytes
	var stored [][]byte
	for _, b := range []Backend{Zstd, LZ4} {
		out, ok := mustNew(t, b).Encode(nil, plain)
		if !ok {
			t.Fatalf("%v: 208-byte plaintext not compressed", b)
		}
		stored = append(stored, out)
	}
	for _, ec := range cases {
		if ec.Key == "l:claimed_exact" || ec.Key == "e:future_version_07" { // no content size
			stored = append(stored, mustHex(t, ec.StoredHex))
		}
	}
	small := mustNew(t, Zstd, WithMaxDecompressedSize(100))
	exact := mustNew(t, LZ4, WithMaxDecompressedSize(208))
	big := mustNew(t, LZ4)
	for _, s := range stored {
		if got, err := small.Decode(nil, s); !errors.Is(err, ErrTooLarge) || got != nil {
			t.Errorf("%s: limit 100: %s, %v; want ErrTooLarge", short(s), short(got), err)
		} else if !strings.Contains(err.Error(), "100") {
			t.Errorf("error does not say the limit: %v", err)
		}
		for _, c := range []*Codec{exact, big} {
			if got, err := c.Decode(nil, s); err != nil || !bytes.Equal(got, plain) {
				t.Errorf("%s: limit %d: %s, %v", short(s), c.MaxDecompressedSize(), short(got), err)
			}
		}
	}
	// Concatenated frames count together.
	var two []byte
	for _, ec := range cases {
		if ec.Key == "z:two" {
			two = mustHex(t, ec.StoredHex)
		}
	}
	for limit, ok := range map[int64]bool{415: false, 416: true, 1 << 20: true, 200 << 20: true, 100: false} {
		_, err := mustNew(t, Zstd, WithMaxDecompressedSize(limit)).Decode(nil, two)
		if ok != (err == nil) || (err != nil && !errors.Is(err, ErrTooLarge)) {
			t.Errorf("z:two with limit %d: %v", limit, err)
		}
	}
}

// TestSmallLimitLargeWindow: GLIDE's frames ask for a 2 MiB window whatever
// their size. A smaller limit must still read them (klauspost's decoder
// would refuse the window).
func TestSmallLimitLargeWindow(t *testing.T) {
	dir := vectors(t)
	stored := readFile(t, filepath.Join(dir, "zstd_2.bin")) // 64 × 'A', window 2 MiB
	for _, limit := range []int64{64, 1000, 1 << 20, zstdMaxWindow - 1} {
		c := mustNew(t, Zstd, WithMaxDecompressedSize(limit))
		if got, err := c.Decode(nil, stored); err != nil || string(got) != strings.Repeat("A", 64) {
			t.Errorf("limit %d: %s, %v", limit, short(got), err)
		}
	}
	if _, err := mustNew(t, Zstd, WithMaxDecompressedSize(63)).Decode(nil, stored); !errors.Is(err, ErrTooLarge) {
		t.Errorf("limit 63: %v", err)
	}
	// Limit exactly the plaintext of a frame with no content size, on the
	// path that grows dst: 2005 fits, 2004 does not.
	zs1 := readFile(t, filepath.Join(dir, "zstd_1.bin"))
	for limit, ok := range map[int64]bool{2004: false, 2005: true} {
		got, err := mustNew(t, LZ4, WithMaxDecompressedSize(limit)).Decode(make([]byte, 0, 10), zs1)
		if ok != (err == nil) || (ok && len(got) != 2005) {
			t.Errorf("zstd_1 limit %d: %d bytes, %v", limit, len(got), err)
		}
	}
}

// TestDecodeKeepsCapacity: decoding into a slice with more room than the
// limit hands all of it back.
func TestDecodeKeepsCapacity(t *testing.T) {
	plain, _ := edgeCases(t)
	stored, _ := mustNew(t, Zstd).Encode(nil, plain)
	c := mustNew(t, Zstd, WithMaxDecompressedSize(1000))
	dst := make([]byte, 3, 5000)
	got, err := c.Decode(dst, stored)
	if err != nil || cap(got) != 5000 || &got[0] != &dst[0] || !bytes.Equal(got[3:], plain) {
		t.Errorf("Decode: len %d cap %d, %v", len(got), cap(got), err)
	}
}

func TestEncodeRules(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	for _, b := range []Backend{Zstd, LZ4, ZstdDict} {
		c := mustNew(t, b)
		check := func(name string, src []byte, wantCompressed bool) []byte {
			t.Helper()
			out, ok := c.Encode([]byte("pre"), src)
			if string(out[:3]) != "pre" {
				t.Fatalf("%v %s: dst prefix lost", b, name)
			}
			out = out[3:]
			if ok != wantCompressed {
				t.Errorf("%v %s: compressed = %v, want %v", b, name, ok, wantCompressed)
			}
			if ok {
				if !bytes.Equal(out[:5], []byte{0, 1, 2, 0, byte(b)}) || len(out) >= len(src) {
					t.Errorf("%v %s: %d -> %d bytes, header % x", b, name, len(src), len(out), out[:5])
				}
			} else if !bytes.Equal(out, src) {
				t.Errorf("%v %s: stored form differs from input", b, name)
			}
			back, err := c.Decode(nil, out)
			if err != nil || !bytes.Equal(back, src) {
				t.Errorf("%v %s: round trip failed: %v", b, name, err)
			}
			return out
		}
		check("63 × A", bytes.Repeat([]byte("A"), 63), false)
		check("64 × A", bytes.Repeat([]byte("A"), 64), true)
		check("random 1 KiB", random(r, 1024), false)
		check("empty", nil, false)
		env := check("JSON", jsonDoc(t), true)
		// Already enveloped, with any known id: stored as is.
		for _, id := range []byte{1, 2, 0x81} {
			v := append([]byte{0, 1, 2, 0, id}, bytes.Repeat([]byte("x"), 200)...)
			if out, ok := c.Encode(nil, v); ok || !bytes.Equal(out, v) {
				t.Errorf("%v: enveloped id %d was compressed again", b, id)
			}
		}
		if out, ok := c.Encode(nil, env); ok || !bytes.Equal(out, env) {
			t.Errorf("%v: Encode of its own output compressed again", b)
		}
		// An unknown id or a short magic is just data.
		check("magic + id 3", append([]byte{0, 1, 2, 0, 3}, bytes.Repeat([]byte("x"), 200)...), true)
		check("magic + id 0x80", append([]byte{0, 1, 2, 0, 0x80}, bytes.Repeat([]byte("x"), 200)...), true)
		// A minimum size of 6 compresses 6 bytes only if that helps: it can't.
		c6 := mustNew(t, b, WithMinSize(MinMinSize))
		if _, ok := c6.Encode(nil, []byte("AAAAAA")); ok {
			t.Errorf("%v: 6 bytes compressed", b)
		}
		if _, ok := c6.Encode(nil, bytes.Repeat([]byte("A"), 40)); !ok {
			t.Errorf("%v: 40 × A not compressed with min size 6", b)
		}
	}
}

func TestStats(t *testing.T) {
	dir := vectors(t)
	c := mustNew(t, Zstd)
	plain := readFile(t, filepath.Join(dir, "1.plain"))
	out, _ := c.Encode([]byte("dst"), plain)
	out = out[3:]
	c.Encode(nil, []byte("short"))
	c.Decode(nil, out)
	c.Decode(nil, readFile(t, filepath.Join(dir, "lz4_1.bin")))
	c.Decode(nil, []byte("plain data"))
	c.Decode(nil, []byte{0, 1, 2, 0, 1, 0xff, 0xff, 0xff, 0xff})
	want := Stats{
		Compressed: 1, Skipped: 1, BytesIn: uint64(len(plain)), BytesOut: uint64(len(out)),
		Decompressed: 2, BytesDecompressed: 2 * uint64(len(plain)), Invalid: 1,
	}
	if got := c.Stats(); got != want {
		t.Errorf("Stats = %+v\nwant    %+v", got, want)
	}
}

// TestLZ4InputLimit: LZ4 inputs over i32::MAX are stored as is, decided
// before Encode reserves room for them.
func TestLZ4InputLimit(t *testing.T) {
	c := lz4Compressor{}
	if c.bound(1<<31-1) != lz4SizeLen+lz4.CompressBlockBound(1<<31-1) || c.bound(1<<31) >= 0 {
		t.Errorf("bound: %d, %d", c.bound(1<<31-1), c.bound(1<<31))
	}
}

// TestLZ4Empty: a declared length of 0 decodes only from the token 0x00, as
// in liblz4, and never reaches pierrec's decoder with a nil dst (which
// faulted: testdata/fuzz/FuzzDecode/4323d06c0bcf3a8e).
func TestLZ4Empty(t *testing.T) {
	dec, err := New(LZ4)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		stored string
		ok     bool
	}{
		{"\x00\x01\x02\x00\x02\x00\x00\x00\x00\x00", true},
		{"\x00\x01\x02\x00\x02\x00\x00\x00\x00\x00\x00", false},
		{"\x00\x01\x02\x00\x02\x00\x00\x00\x00\x10", false},
		{"\x00\x01\x020\x02\x00\x00\x00\x00000000000000000000", false},
	} {
		got, err := dec.Decode(nil, []byte(tc.stored))
		if err != nil || (tc.ok && len(got) != 0) || (!tc.ok && string(got) != tc.stored) {
			t.Errorf("%x: %x, %v", tc.stored, got, err)
		}
	}
}

// TestZstdFrame: our frames carry the content size (so readers can check the
// limit before allocating) and, like GLIDE's, no checksum.
func TestZstdFrame(t *testing.T) {
	for _, level := range roundTripLevels[Zstd] {
		out, ok := mustNew(t, Zstd, WithLevel(level)).Encode(nil, jsonDoc(t))
		var h zstd.Header
		if err := h.Decode(out[5:]); !ok || err != nil {
			t.Fatalf("level %d: %v, %v", level, ok, err)
		}
		if !h.HasFCS || h.FrameContentSize != uint64(len(jsonDoc(t))) || h.HasCheckSum {
			t.Errorf("level %d: content size %v %d, checksum %v", level, h.HasFCS, h.FrameContentSize, h.HasCheckSum)
		}
	}
}

// TestRunningLimitMemory: a frame without content size stops near the limit,
// or near its window when that is larger, not at the 128 MiB decoders' end.
func TestRunningLimitMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("encodes 32 MiB")
	}
	var buf bytes.Buffer
	w, err := zstd.NewWriter(&buf, zstd.WithWindowSize(2<<20), zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	w.Write(make([]byte, 32<<20))
	w.Close()
	stored := append([]byte{0, 1, 2, 0, 1}, buf.Bytes()...)
	var h zstd.Header
	if err := h.Decode(stored[5:]); err != nil || h.HasFCS || h.WindowSize != 2<<20 {
		t.Fatalf("frame: %v, FCS %v, window %d", err, h.HasFCS, h.WindowSize)
	}
	for _, limit := range []int64{1000, 1 << 20, 4 << 20} {
		c := mustNew(t, Zstd, WithMaxDecompressedSize(limit))
		c.Decode(nil, stored) // build the decoders
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := c.Decode(nil, stored)
		runtime.ReadMemStats(&after)
		if !errors.Is(err, ErrTooLarge) {
			t.Errorf("limit %d: %v", limit, err)
		}
		// Appending grows the output by 1.25× at a time: the allocations
		// add up to about 5× the final size.
		if got, want := after.TotalAlloc-before.TotalAlloc, uint64(max(limit, 2<<20))*8; got > want {
			t.Errorf("limit %d: %d bytes allocated, want at most %d", limit, got, want)
		}
	}
}

// TestLZ4ImpossibleSize: a declared length within the limit that the block
// cannot reach (over 255 bytes per byte of block) is invalid, found before
// allocating it.
func TestLZ4ImpossibleSize(t *testing.T) {
	stored := mustHex(t, "0001020002"+"00000019"+"7f7b226b223a22780100b150787878227d") // 400 MiB from 17 bytes
	c := mustNew(t, Zstd)
	got, err := c.Decode(nil, stored)
	if err != nil || !bytes.Equal(got, stored) {
		t.Errorf("Decode = %s, %v; want the stored bytes", short(got), err)
	}
	if n := bytesPerCall(func() { c.Decode(nil, stored) }); n > 1<<10 {
		t.Errorf("%d bytes allocated per Decode", n)
	}
}
