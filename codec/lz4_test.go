package codec

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pierrec/lz4/v4"
)

// lz4Malformed are LZ4 blocks (hex) that must be refused, with the length
// each declares: more than lz4CheckRatio times the block, so that Decode
// checks it before allocating, and within lz4MaxRatio, so that only the
// walk of the block's sequences can find the fault. The fault of those
// marked start can only be at the start of a block.
var lz4Malformed = []struct {
	name, block string
	declared    int
	start       bool
}{
	{"literal length extension runs out", "f0ffff", 300, false},
	{"literals run past the block", "50616263", 500, false},
	{"token with a match length after the last literals", "1441", 100, false},
	{"offset cut short", "144101", 100, false},
	{"offset 0", "1441" + "0000" + "00", 100, false},
	{"offset before the start of the output", "1441" + "0200" + "00", 100, true},
	{"offset before the start, later", "2041" + "42" + "0400" + "00", 100, true},
	{"match length extension runs out", "1f41" + "0100" + "ffff", 700, false},
	{"decodes to less than declared", "1f41" + "0100" + "10", 100, false},
	{"decodes to more than declared", "1f41" + "0100" + "ff10", 200, false},
	{"literal length beyond the declared length", "f0" + strings.Repeat("ff", 20) + "00", 3000, false},
	{"expands far past the declared length", "1f41" + "0100" + strings.Repeat("ff", 100) + "00", 20000, false},
}

// lz4MalformedLarge returns the malformed block of tc far into a value:
// after 300 KiB of valid matches, or, for a fault at the start, followed by
// zeros (never reached) that keep the declared length within lz4MaxRatio
// of the block.
func lz4MalformedLarge(tb testing.TB, i int) []byte {
	tc := lz4Malformed[i]
	const prefix = 300 << 10
	declared := prefix + tc.declared
	var block []byte
	if tc.start {
		block = append(mustHex(tb, tc.block), make([]byte, declared/lz4MaxRatio)...)
	} else {
		block = append(lz4Expanding(0, prefix, false)[4:], mustHex(tb, tc.block)...)
	}
	if declared > lz4MaxRatio*len(block) || declared <= lz4CheckRatio*len(block) {
		tb.Fatalf("%s: declared %d for a block of %d bytes", tc.name, declared, len(block))
	}
	return envelope(LZ4, binary.LittleEndian.AppendUint32(nil, uint32(declared)), block)
}

// TestLZ4BlockLenMalformed: the walk refuses each malformed block, without
// allocating, and so does Decode, for the block alone and after 300 KiB of
// valid block: it returns the stored value, and into a dst with room for
// the stored value only, it allocates nothing. A valid block declaring
// 300 KiB does allocate there, which shows that the count would see it.
func TestLZ4BlockLenMalformed(t *testing.T) {
	c := mustNew(t, LZ4)
	for i, tc := range lz4Malformed {
		block := mustHex(t, tc.block)
		if tc.declared > lz4MaxRatio*len(block) || tc.declared <= lz4CheckRatio*len(block) {
			t.Fatalf("%s: declared %d for a block of %d bytes", tc.name, tc.declared, len(block))
		}
		var n int
		if allocs := testing.AllocsPerRun(20, func() { n = lz4BlockLen(block, tc.declared) }); n == tc.declared || allocs != 0 {
			t.Errorf("%s: lz4BlockLen = %d (declared %d), %.0f allocations", tc.name, n, tc.declared, allocs)
		}
		alone := envelope(LZ4, binary.LittleEndian.AppendUint32(nil, uint32(tc.declared)), block)
		for _, stored := range [][]byte{alone, lz4MalformedLarge(t, i)} {
			what := fmt.Sprintf("%s (declares %d)", tc.name, binary.LittleEndian.Uint32(stored[5:]))
			if int(binary.LittleEndian.Uint32(stored[5:])) <= len(stored) {
				t.Fatalf("%s: the stored value's room would hold the plaintext", what)
			}
			dst := make([]byte, 0, len(stored))
			var got []byte
			var err error
			allocs := testing.AllocsPerRun(20, func() { got, err = c.Decode(dst, stored) })
			if err != nil || !bytes.Equal(got, stored) {
				t.Errorf("%s: Decode = %s, %v; want the stored bytes", what, short(got), err)
			}
			if allocs != 0 {
				t.Errorf("%s: Decode allocates %.0f times before refusing the block", what, allocs)
			}
		}
	}
	// The control: a valid block declaring 300 KiB.
	stored := envelope(LZ4, lz4Expanding(300<<10, 300<<10, false))
	dst := make([]byte, 0, len(stored))
	var got []byte
	allocs := testing.AllocsPerRun(20, func() { got, _ = c.Decode(dst, stored) })
	if allocs < 1 || len(got) != 300<<10 {
		t.Errorf("valid block: %.0f allocations, %d bytes", allocs, len(got))
	}
}

// TestLZ4BlockLenValid: every block pierrec/lz4 decodes, the walk measures
// to its exact length, and refuses with a maximum one byte short.
func TestLZ4BlockLenValid(t *testing.T) {
	type blk struct {
		name  string
		block []byte
		n     int
	}
	var blocks []blk
	// GLIDE's own blocks (liblz4's default, accelerated and HC modes).
	bins, _ := filepath.Glob(filepath.Join(vectors(t), "*lz4*.bin"))
	for _, name := range bins {
		if v := readFile(t, name); IsCompressed(v) {
			blocks = append(blocks, blk{filepath.Base(name), v[9:], int(binary.LittleEndian.Uint32(v[5:]))})
		}
	}
	// Round trips at several sizes and levels: random (all literals),
	// text, and runs, whose matches overlap their own output (offset 1..3
	// shorter than the match).
	r := rand.New(rand.NewPCG(7, 7))
	sizes := []int{1, 4, 15, 16, 19, 255, 270, 4096, 65535, 65536, 65537, 1 << 20}
	if raceEnabled {
		sizes = sizes[:len(sizes)-2] // compressing 1 MiB at level 9 takes seconds under -race
	}
	for _, size := range sizes {
		for kind, plain := range map[string][]byte{
			"random": random(r, size),
			"text":   compressible(r, size),
			"run":    bytes.Repeat([]byte("abc"), size/3+1)[:size],
		} {
			for _, level := range []int{LZ4MinLevel, 0, 1, 9} {
				z := lz4Compressor{level: level}
				block := make([]byte, lz4.CompressBlockBound(size))
				n, err := z.compressBlock(plain, block)
				if err != nil {
					t.Fatal(err)
				}
				if n == 0 { // incompressible: write it as literals only
					n = lz4LiteralsOnly(block[:0], plain)
				}
				blocks = append(blocks, blk{fmt.Sprintf("%s/%d/level %d", kind, size, level), block[:n], size})
			}
		}
	}
	// Hand-made: the empty block (a lone token), a block ending with a
	// match (pierrec/lz4 accepts it, liblz4 does not), a match reaching
	// back exactly to the start, and long overlapping ones.
	blocks = append(blocks,
		blk{"empty", []byte{0}, 0},
		blk{"literals only, 1 byte", []byte{0x10, 'x'}, 1},
		blk{"ends with a match", lz4Expanding(0, 100, false)[4:], 100},
		blk{"offset back to the start", mustHex(t, "30616263"+"0300"+"00"), 7},
		blk{"1 MiB of one byte", lz4Expanding(0, 1<<20, false)[4:], 1 << 20},
	)
	for _, b := range blocks {
		// What pierrec/lz4 makes of it, into exactly n bytes.
		want := make([]byte, b.n)
		if b.n > 0 {
			if got, err := lz4.UncompressBlock(b.block, want); err != nil || got != b.n {
				t.Fatalf("%s: pierrec/lz4 decodes %d bytes, %v; want %d", b.name, got, err, b.n)
			}
		}
		if got := lz4BlockLen(b.block, b.n); got != b.n {
			t.Errorf("%s: lz4BlockLen = %d, want %d", b.name, got, b.n)
		}
		if b.n > 0 {
			if got := lz4BlockLen(b.block, b.n-1); got != -1 {
				t.Errorf("%s: lz4BlockLen with max %d = %d, want -1", b.name, b.n-1, got)
			}
		}
		// Decode agrees, validating (no room in dst) or not (room).
		if b.n > 0 {
			stored := envelope(LZ4, binary.LittleEndian.AppendUint32(nil, uint32(b.n)), b.block)
			c := mustNew(t, LZ4)
			for _, dst := range [][]byte{nil, make([]byte, 0, b.n)} {
				if got, err := c.Decode(dst, stored); err != nil || !bytes.Equal(got, want) {
					t.Errorf("%s: Decode (dst cap %d) = %s, %v", b.name, cap(dst), short(got), err)
				}
			}
		}
	}
}

// lz4LiteralsOnly appends an LZ4 block holding plain as one literal run.
func lz4LiteralsOnly(dst, plain []byte) int {
	n := len(plain)
	if n < 15 {
		dst = append(dst, byte(n<<4))
	} else {
		dst = append(dst, 0xf0)
		for r := n - 15; ; r -= 255 {
			if r < 255 {
				dst = append(dst, byte(r))
				break
			}
			dst = append(dst, 0xff)
		}
	}
	return len(append(dst, plain...))
}

// TestLZ4BlockLenAgreesWithPierrec mutates valid blocks byte by byte: each
// mutant that pierrec/lz4 decodes to exactly n bytes, the walk accepts with
// length n, so validating first never refuses what decoding alone would
// have returned.
func TestLZ4BlockLenAgreesWithPierrec(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	plain := append(compressible(r, 3000), bytes.Repeat([]byte("z"), 300)...)
	block := make([]byte, lz4.CompressBlockBound(len(plain)))
	n, err := lz4Compressor{}.compressBlock(plain, block)
	if err != nil || n == 0 {
		t.Fatalf("compress: %d, %v", n, err)
	}
	block = block[:n]
	out := make([]byte, len(plain))
	var agreed, refused int
	for i := range block {
		for _, x := range []byte{0, 1, 0x0f, 0x10, 0xf0, 0xff, block[i] ^ 0x80} {
			m := bytes.Clone(block)
			m[i] = x
			for _, want := range []int{len(plain), len(plain) - 1, len(plain) + 1} {
				if want > len(out) {
					out = make([]byte, want)
				}
				got, err := lz4.UncompressBlock(m, out[:want])
				walked := lz4BlockLen(m, want)
				if err == nil && got == want {
					agreed++
					if walked != want {
						t.Fatalf("byte %d = %#x, length %d: pierrec/lz4 decodes it, lz4BlockLen = %d", i, x, want, walked)
					}
				} else if walked == -1 || walked != want {
					refused++
				}
			}
		}
	}
	t.Logf("%d mutants decoded by both, %d refused by the walk", agreed, refused)
	if agreed == 0 || refused == 0 {
		t.Errorf("the mutants exercise only one side: %d decoded, %d refused", agreed, refused)
	}
}

// TestLZ4CheckRatio: Decode checks a block before allocating exactly when
// it declares more than lz4CheckRatio times its size. At the ratio, a
// garbage block costs an allocation of its declared length (at most 16
// times the block, as a valid block of that size costs); one byte more,
// it is refused without one. Either way it is returned as stored.
func TestLZ4CheckRatio(t *testing.T) {
	block := lz4Expanding(0, 4000, true)[4:] // expands to 4000 bytes, then an offset of 0
	c := mustNew(t, LZ4)
	for declared, wantAllocs := range map[int]bool{lz4CheckRatio * len(block): true, lz4CheckRatio*len(block) + 1: false} {
		stored := envelope(LZ4, binary.LittleEndian.AppendUint32(nil, uint32(declared)), block)
		dst := make([]byte, 0, len(stored))
		var got []byte
		var err error
		allocs := testing.AllocsPerRun(20, func() { got, err = c.Decode(dst, stored) })
		if err != nil || !bytes.Equal(got, stored) {
			t.Errorf("declared %d: Decode = %s, %v; want the stored bytes", declared, short(got), err)
		}
		if (allocs > 0) != wantAllocs {
			t.Errorf("declared %d for a %d-byte block: %.0f allocations", declared, len(block), allocs)
		}
	}
}
