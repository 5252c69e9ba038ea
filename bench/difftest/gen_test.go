package difftest

// The random inputs: a small key space shared by every type, and values
// chosen to sit on the edges (empty, around the compression threshold,
// long and compressible, binary, numeric).

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"
)

type gen struct {
	r   *rand.Rand
	now time.Time // fixed for a run, so that both sides get the same times
}

func (g *gen) intn(n int) int { return g.r.IntN(n) }

func pick[T any](g *gen, xs ...T) T { return xs[g.intn(len(xs))] }

// Keys: 18 names. Each type prefers its own band of k0..k15, and the bands
// overlap, so commands of one type often meet a key of another
// (WRONGTYPE). One key in five is drawn from all of them, including the
// empty name and one with a space and non-ASCII bytes.
var allKeys = []string{
	"k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9",
	"k10", "k11", "k12", "k13", "k14", "k15", "", "ü k", "\x00\xff",
}

type keyBand uint8

const (
	bandStr keyBand = iota
	bandHash
	bandList
	bandSet
	bandZset
	bandAny
)

var bands = [...][]string{
	bandStr:  {"k0", "k1", "k2", "k3", "k4", "k5"},
	bandHash: {"k4", "k5", "k6", "k7", "k8"},
	bandList: {"k7", "k8", "k9", "k10", "k11"},
	bandSet:  {"k10", "k11", "k12", "k13"},
	bandZset: {"k12", "k13", "k14", "k15", "k0"},
	bandAny:  allKeys,
}

func (g *gen) key(b keyBand) string {
	if g.intn(5) == 0 {
		return pick(g, allKeys...)
	}
	return pick(g, bands[b]...)
}

// scanKey is key, with the empty name more often: HSCAN, SSCAN and ZSCAN
// of "" are iterations zipline must not mistake for a SCAN.
func (g *gen) scanKey(b keyBand) string {
	if g.intn(8) == 0 {
		return ""
	}
	return g.key(b)
}

// keys returns lo..hi keys (repeats allowed, as callers may send them).
func (g *gen) keys(b keyBand, lo, hi int) []string {
	n := lo + g.intn(hi-lo+1)
	ks := make([]string, n)
	for i := range ks {
		ks[i] = g.key(b)
	}
	return ks
}

// numbers are stored as strings so that INCR and INCRBYFLOAT meet them: in
// and out of int64's range, with leading zeros and spaces, floats short and
// long, and long runs of one digit, which compress. Floats stay within
// float64's range: the servers compute in long double, and a result past
// 1.8e308 (INCRBYFLOAT on "1e400") is one neither client can read.
var numbers = []string{
	"0", "1", "-1", "42", "007", "100", " 1", "1.0", "123456789012",
	"9223372036854775807", "-9223372036854775808", "9223372036854775808",
	"11111111111111111", "22222222222222222", "1111111111111111111", "-5555555555555555",
	"3.14", "-0.5", "1e3", "2.50000000000000000000", "1111111111.1111111111", "0.1000000000000000000000",
	// What strtold reads, and so INCRBYFLOAT, but INCR does not.
	"0x1A", "0x1p3", "1E5", ".5", "5.", "+5", "-0", "Infinity", "-inf", "1e-5", "1e308",
	"000000000000000000000000000001", "0000000000000000000000000000000001.5", "1.00000000000000000000000000000000e+00",
	"nan", "0x", "1e", "1.2.3", "١٢",
}

var words = []string{"a", "b", "c", "hello", "v1", "value-2", "x y z", "é", "\x00", "\r\n"}

// record is a JSON record: repeated, it makes long values that compress.
func record(i int) string {
	return fmt.Sprintf(`{"id":%d,"name":"user-%d","tags":["a","b","c"],"active":true}`, i, i)
}

// value returns a stored value.
func (g *gen) value() []byte {
	switch g.intn(20) {
	case 0:
		return nil // the empty string, as a nil slice
	case 1, 2:
		return []byte{}
	case 3, 4, 5:
		return []byte(pick(g, words...))
	case 6, 7, 8:
		return []byte(pick(g, numbers...))
	case 9, 10, 11:
		return []byte(strings.Repeat(record(g.intn(3)), 1+g.intn(12)))
	case 12:
		switch g.intn(24) {
		case 0: // large: past the reader's buffers
			return []byte(strings.Repeat(record(g.intn(100)), 1000+g.intn(1000)))
		case 1: // large and incompressible
			b := make([]byte, 40_000+g.intn(40_000))
			for i := range b {
				b[i] = byte(g.r.Uint32())
			}
			return b
		case 2, 3:
			return g.fakeEnvelope()
		}
		return []byte(strings.Repeat(record(g.intn(100)), 40+g.intn(60))) // a few KB
	case 13:
		b := make([]byte, 1+g.intn(80)) // incompressible binary
		for i := range b {
			b[i] = byte(g.r.Uint32())
		}
		return b
	case 14:
		p := make([]byte, 1+g.intn(4)) // compressible binary
		for i := range p {
			p[i] = byte(g.r.Uint32())
		}
		return []byte(strings.Repeat(string(p), 4+g.intn(30)))
	case 15, 16:
		return []byte(strings.Repeat(pick(g, "a", "ab", "xyz", "0"), 3+g.intn(20))) // around MinSize
	default:
		const alnum = "abcdefghijklmnopqrstuvwxyz0123456789"
		b := make([]byte, 4+g.intn(20))
		for i := range b {
			b[i] = alnum[g.intn(len(alnum))]
		}
		return b
	}
}

// elemPool is a few list elements and hash values that recur, so that
// LREM, LINSERT's pivot and LPOS find them.
var elemPool = []string{"a", "b", "", "c", "42", "11111111111111111", strings.Repeat(record(7), 3), strings.Repeat("ab", 12), "k1", "k2", "3.5"}

func (g *gen) elem() []byte {
	if g.intn(2) == 0 {
		return []byte(pick(g, elemPool...))
	}
	return g.value()
}

func (g *gen) elems(lo, hi int) [][]byte {
	out := make([][]byte, lo+g.intn(hi-lo+1))
	for i := range out {
		out[i] = g.elem()
	}
	return out
}

var fields = []string{"f1", "f2", "f3", "f4", "", "name", "n", "ü", strings.Repeat("long-field-", 8)}

func (g *gen) field() string { return pick(g, fields...) }

func (g *gen) fields(lo, hi int) []string {
	out := make([]string, lo+g.intn(hi-lo+1))
	for i := range out {
		out[i] = g.field()
	}
	return out
}

var members = []string{"m1", "m2", "m3", "m4", "m5", "", "a", "b", "42", "\x00\xff", strings.Repeat("long-member-", 8), "k1", "k3", "7"}

func (g *gen) member() string { return pick(g, members...) }

func (g *gen) members(lo, hi int) []string {
	out := make([]string, lo+g.intn(hi-lo+1))
	for i := range out {
		out[i] = g.member()
	}
	return out
}

func (g *gen) score() float64 {
	switch g.intn(20) {
	case 0:
		return math.Inf(1)
	case 1:
		return math.Inf(-1)
	case 2:
		return 1e10
	case 3:
		return 0.1
	case 4:
		return math.NaN()
	}
	return pick(g, 0, 1, -1, 1.5, -2.25, 3, 100)
}

// bound is a score bound in Redis's syntax.
func (g *gen) bound() string {
	return pick(g, "-inf", "+inf", "0", "1", "(1", "1.5", "(3", "100", "-1")
}

func (g *gen) index() int64 { return pick[int64](g, -100, -3, -2, -1, 0, 0, 1, 1, 2, 3, 100) }

func (g *gen) incr() int64 {
	return pick[int64](g, 1, 1, -1, 5, -100, 1<<40, math.MaxInt64, math.MinInt64)
}

func (g *gen) incrFloat() float64 { return pick(g, 0.5, -1.25, 3, 1e10, 0.1, -7) }

// expiry is one choice of SET's or GETEX's expiry, for both clients.
type expiry struct {
	kind string // "", EX, PX, KEEPTTL, PXAT, PERSIST
	d    time.Duration
	t    time.Time
}

func (e expiry) String() string {
	switch e.kind {
	case "":
		return ""
	case "EX0":
		return " (EX(0): none)"
	case "ZERO":
		return " (Expiry{}: none)"
	case "ATZERO":
		return " (ExpireAt(time.Time{}): none)"
	case "EX":
		return fmt.Sprintf(" EX %d", int64(e.d/time.Second))
	case "PX":
		return fmt.Sprintf(" PX %d", e.d.Milliseconds())
	case "PXAT":
		return fmt.Sprintf(" PXAT %d", e.t.UnixMilli())
	}
	return " " + e.kind
}

// Expiries are long, so nothing expires during a run (the two servers'
// clocks are not in step); times are a second into a millisecond so that
// go-redis sends PXAT, as zipline does.
func (g *gen) setExpiry() expiry {
	switch g.intn(12) {
	case 4:
		return expiry{kind: "PXAT", t: g.now.Add(-time.Hour).Truncate(time.Second).Add(456 * time.Millisecond)}
	case 5:
		// The zero expiries set none, as go-redis's 0 does (strings.go, Expiry).
		return expiry{kind: pick(g, "EX0", "ZERO", "ATZERO")}
	case 0:
		return expiry{kind: "EX", d: time.Duration(100+g.intn(1000)) * time.Second}
	case 1:
		return expiry{kind: "PX", d: time.Duration(100_000+g.intn(1000_000)) * time.Millisecond}
	case 2:
		return expiry{kind: "KEEPTTL"}
	case 3:
		return expiry{kind: "PXAT", t: g.now.Add(time.Hour).Truncate(time.Second).Add(123 * time.Millisecond)}
	}
	return expiry{}
}

func (g *gen) getExExpiry() expiry {
	if g.intn(5) == 0 {
		return expiry{kind: "PERSIST"}
	}
	e := g.setExpiry()
	if e.kind == "KEEPTTL" {
		e = expiry{}
	}
	return e
}

// expireDur is EXPIRE's argument: zero and negative ones delete the key.
func (g *gen) expireDur() time.Duration {
	return pick(g, 0, -5*time.Second, 100*time.Second, 100500*time.Millisecond, 1000*time.Second, 1000*time.Second)
}

// fakeEnvelope returns a value that starts with GLIDE's header but is not a
// valid frame: zipline stores it as it is, and reads it back as it is ("A
// corrupt envelope is also returned as stored", README, "Transparent
// compression"). An LZ4 one declares a small size: the README's one read
// error is "a value that would expand past MaxDecompressedSize ...,
// detected before allocating when the size is declared", which random
// bytes would declare more often than not, and that documented error is
// not a difference worth finding again and again.
func (g *gen) fakeEnvelope() []byte {
	id := pick[byte](g, 0x01, 0x02, 0x81, 0x03)
	b := []byte{0x00, 0x01, 0x02, 0x00, id}
	if id == 0x02 {
		n := 1 + g.intn(1000)
		// The declared size, then a token announcing more literals than
		// there are bytes: a truncated block.
		b = append(b, byte(n), byte(n>>8), 0, 0, 0xf0)
	}
	for range g.intn(40) {
		b = append(b, byte(g.r.Uint32()))
	}
	return b
}
