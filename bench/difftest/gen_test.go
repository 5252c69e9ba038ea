package difftest

// The random inputs: a small key space shared by every type, and values
// chosen to sit on the edges (empty, around the compression threshold,
// long and compressible, binary, numeric).

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

type gen struct {
	r   *rand.Rand
	now time.Time // fixed for a run, so that both sides get the same times

	xms  int64 // the millisecond part of the next explicit stream ID
	nexp int   // expiries set under a condition so far (condExpiry)
}

func (g *gen) intn(n int) int { return g.r.IntN(n) }

func pick[T any](g *gen, xs ...T) T { return xs[g.intn(len(xs))] }

// Keys: 23 names. Each type prefers its own band of k0..k19, and the bands
// overlap, so commands of one type often meet a key of another
// (WRONGTYPE). One key in five is drawn from all of them, including the
// empty name and one with a space and non-ASCII bytes.
var allKeys = []string{
	"k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9",
	"k10", "k11", "k12", "k13", "k14", "k15", "k16", "k17", "k18", "k19",
	"", "ü k", "\x00\xff",
}

type keyBand uint8

const (
	bandStr keyBand = iota
	bandHash
	bandList
	bandSet
	bandZset
	bandStream
	bandGeo
	bandHLL
	bandAny
)

var bands = [...][]string{
	bandStr:  {"k0", "k1", "k2", "k3", "k4", "k5"},
	bandHash: {"k4", "k5", "k6", "k7", "k8"},
	bandList: {"k7", "k8", "k9", "k10", "k11"},
	bandSet:  {"k10", "k11", "k12", "k13"},
	bandZset: {"k12", "k13", "k14", "k15", "k0"},
	// Streams mostly on keys of their own; geo sets are sorted sets, and
	// share the sorted sets' keys; HyperLogLogs are strings, and share a
	// string key (where PFADD meets values that are not HyperLogLogs).
	bandStream: {"k16", "k16", "k17"},
	bandGeo:    {"k18", "k18", "k14", "k15"},
	bandHLL:    {"k19", "k19", "k19", "k5"},
	bandAny:    allKeys,
}

// crossKeys are the keys a command picks outside its band: all but the
// one key each of streams, geo sets and HyperLogLogs keeps to itself
// (k16, k18, k19), which the other families would otherwise take over so
// often that those commands would mostly meet WRONGTYPE. Commands on any
// key (DEL, RENAME, COPY, RESTORE...) still reach them.
var crossKeys = slices.DeleteFunc(slices.Clone(allKeys), func(k string) bool { return k == "k16" || k == "k18" || k == "k19" })

func (g *gen) key(b keyBand) string {
	if g.intn(5) == 0 {
		return pick(g, crossKeys...)
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
		// The zero expiries set none, as go-redis's 0 does (string_commands.go, Expiry).
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

// Streams. IDs are explicit, since the servers' clocks differ and "*"
// would make different IDs on each: mostly increasing, sometimes equal to
// or below the stream's last ID (an error both servers must give), with
// the sequence number given or left to the server ("5-*").

func (g *gen) streamAddID() string {
	g.xms += int64(g.intn(3))
	if g.xms == 0 {
		g.xms = 1
	}
	switch g.intn(8) {
	case 0:
		return fmt.Sprintf("%d-*", g.xms)
	case 1:
		return fmt.Sprintf("%d-%d", g.xms, 1+g.intn(3))
	case 2:
		return "0-0" // never valid
	}
	return fmt.Sprintf("%d-0", g.xms)
}

// streamID is an ID a read, trim, delete or acknowledgement names: one the
// stream has or had, one between, an end, or not an ID at all.
func (g *gen) streamID() string {
	back := g.xms - int64(g.intn(6))
	switch g.intn(12) {
	case 0:
		return "-"
	case 1:
		return "+"
	case 2:
		return "0"
	case 3:
		return fmt.Sprintf("(%d-0", back)
	case 4:
		return fmt.Sprintf("%d", back)
	case 5:
		return "not-an-id"
	case 6:
		return fmt.Sprintf("%d-1", back)
	}
	return fmt.Sprintf("%d-0", back)
}

// streamEntryID is an exact entry ID (XDEL, XACK, XCLAIM take no ranges).
func (g *gen) streamEntryID() string {
	if g.intn(10) == 0 {
		return pick(g, "0-0", "99999999-0", "bad")
	}
	return fmt.Sprintf("%d-%d", g.xms-int64(g.intn(5)), pick(g, 0, 0, 0, 1))
}

func (g *gen) streamEntryIDs(lo, hi int) []string {
	out := make([]string, lo+g.intn(hi-lo+1))
	for i := range out {
		out[i] = g.streamEntryID()
	}
	return out
}

// streamFields returns 1..3 distinct fields with values: go-redis reads an
// entry's fields into a map, so repeated fields would compare by their
// last value only.
func (g *gen) streamFields() ([]string, [][]byte) {
	fs := slices.Clone(fields[:5])
	g.r.Shuffle(len(fs), func(i, j int) { fs[i], fs[j] = fs[j], fs[i] })
	fs = fs[:1+g.intn(3)]
	vs := make([][]byte, len(fs))
	for i := range vs {
		vs[i] = g.elem()
	}
	return fs, vs
}

func (g *gen) group() string    { return pick(g, "g1", "g1", "g2") }
func (g *gen) consumer() string { return pick(g, "c1", "c2", "c3") }

// Geo positions: real places, the poles' limit, and one longitude out of
// range (an error on both servers).
var geoPoints = [][2]float64{
	{13.361389, 38.115556}, {15.087269, 37.502669}, {2.349014, 48.864716}, {-122.27652, 37.805186},
	{0, 0}, {179.999, 85.05112878}, {-179.999, -85.05112878}, {13.4, 38.2}, {200, 10},
}

func (g *gen) geoPoint() (lon, lat float64) { p := pick(g, geoPoints...); return p[0], p[1] }

func (g *gen) geoUnit() string { return pick(g, "m", "km", "mi", "ft") }

// geoSearchUnit is a search's unit: mostly one in which its sizes reach
// from one place to another.
func (g *gen) geoSearchUnit() string { return pick(g, "km", "km", "km", "mi", "m") }

// condExpiry is a time to live set under a condition (EXPIRE ... GT, LT,
// NX, XX; HEXPIRE likewise). GT and LT compare the new expiry with the
// current one, and two expiries the same distance from two moments a few
// milliseconds apart compare by those milliseconds, which differ between
// the servers. So each such duration is new: at least 7 s from any other
// this run sets (1,500 s upwards, cycling below 3,250 s), and away from the
// durations the other commands set (100..1,100 s, and an hour either side
// of the run's start). Zero and negative durations delete.
func (g *gen) condExpiry() time.Duration {
	switch g.intn(10) {
	case 0:
		return 0
	case 1:
		return -5 * time.Second
	}
	g.nexp++
	d := 1500*time.Second + time.Duration(g.nexp%250)*7*time.Second
	if g.intn(3) == 0 {
		d += 500 * time.Millisecond
	}
	return d
}

// condExpireAt is a time to expire at under a condition: in the past
// (deletes), or ten hours and more ahead, beyond every relative expiry.
func (g *gen) condExpireAt() time.Time {
	if g.intn(4) == 0 {
		return g.now.Add(-time.Hour).Truncate(time.Millisecond)
	}
	g.nexp++
	return g.now.Add(10*time.Hour + time.Duration(g.nexp%250)*7*time.Second).Truncate(time.Millisecond)
}
