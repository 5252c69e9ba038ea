package analyze

import (
	"fmt"
	"math"
	"strconv"
)

// This file is the memory model: what one key, one bucket field or one
// bucket costs on a given server, in bytes of used_memory. A server's
// used_memory counts the usable size of each allocation (the allocator's
// size class, not the bytes asked for), so every structure is priced as
// the allocations the server makes for it, rounded by the server's
// allocator. Which allocations a structure takes depends on the server:
//
//   - Redis (every version here) and Valkey before 8.1 keep a dictionary
//     entry per key (24 bytes: key, value and next pointers), the key as
//     an sds string of its own, and a value object (16 bytes) that either
//     embeds a short string (embstr, up to 44 bytes), holds an integer in
//     its pointer (or is a shared integer, below 10000, costing nothing),
//     or points to a string of its own. A TTL adds an entry in the
//     expires dictionary.
//   - Valkey 8.1 and later keep one object per key that embeds the key and
//     the expiry, and the value too while the whole object stays within
//     128 bytes (the expiry aside; a value counts at least 4 bytes); a
//     larger value is a string of its own.
//     The keyspace table holds pointers in 64-byte buckets of seven.
//
// A hash kept as a listpack (a bucket) is one such key whose value is the
// listpack, one allocation of the listpack's exact length, whose entries
// are encoded as the listpack format says (see listpackEntry). On Valkey 9,
// a hash with a field that has a TTL is a hashtable, whose fields cost
// about as much as keys: those costs are measured (Profile.VolatileField).
//
// The constants of each Profile were measured on a real server by
// TestCostTable (costtable_test.go), which writes testdata/costs.json; the
// test that needs no server, TestModelMatchesTable, holds the model to
// those measurements. The main dictionary's own table (8 bytes a slot on
// Redis) changes only when the number of keys crosses a power of two, or
// falls below a tenth of the table, so it is priced apart (TableBytes).

// Allocator is the allocator a server was built with, as INFO memory's
// mem_allocator names it.
type Allocator string

// The allocators whose size classes the model knows.
const (
	Jemalloc Allocator = "jemalloc" // Redis and Valkey's default build, Debian's redis-server
	Libc     Allocator = "libc"     // glibc malloc (a build with MALLOC=libc, such as .tools/bin/valkey-server)
)

// usable returns the usable size of an allocation of n bytes: what
// used_memory counts for it.
func (a Allocator) usable(n int) int {
	if a == Libc {
		return glibcUsable(n)
	}
	return jemallocUsable(n)
}

// jemallocUsable rounds n to jemalloc's size classes with a 16-byte
// quantum (Debian's build): 8, then multiples of 16 up to 128, then four
// classes per doubling (160, 192, 224, 256, 320...), large sizes alike.
func jemallocUsable(n int) int {
	switch {
	case n <= 8:
		return 8
	case n <= 128:
		return (n + 15) &^ 15
	}
	step := 16
	for step*8 < n {
		step *= 2
	}
	return (n + step - 1) / step * step
}

// glibcUsable is glibc's malloc_usable_size for a request of n bytes: a
// chunk of the request plus an 8-byte header, rounded up to 16 (at least
// 32), less the header. (Large requests may be mapped pages instead, a
// little more; the measured ValueExtra covers them.)
func glibcUsable(n int) int {
	return max(32, (n+8+15)&^15) - 8
}

// Model says how a Profile's server lays out its keys.
type Model string

// The models (see the file's comment).
const (
	DictModel  Model = "dict"  // Redis, Valkey before 8.1
	KVObjModel Model = "kvobj" // Valkey 8.1 and later
)

// Profile is what the model needs to price structures on one kind of
// server. Profiles are measured (see costtable_test.go) and chosen by
// ProfileFor.
type Profile struct {
	// Name identifies the profile: "redis-7.0-jemalloc".
	Name      string    `json:"name"`
	Model     Model     `json:"model"`
	Allocator Allocator `json:"allocator"`
	// Measured names the server the constants were measured on; empty for
	// a profile derived from another (ProfileFor says which).
	Measured string `json:"measured,omitempty"`
	// KeyExtra is what each key costs beyond its allocations, on average:
	// on Valkey, the keyspace table's overflow buckets, freed with their
	// keys (a few bytes); 0 on Redis.
	KeyExtra float64 `json:"key_extra"`
	// HashExtra is the same for a hash key (a bucket).
	HashExtra float64 `json:"hash_extra"`
	// ValueExtra corrects the cost of a value kept as a string of its own
	// (not embedded), by its length: from each length on, what the
	// measurements show beyond the allocation the model prices (Valkey 9.1
	// spends 16 bytes more on values of 109 to 116 bytes, and about 11
	// more from 1 KB on). Sorted by length.
	ValueExtra []ValueCost `json:"value_extra,omitempty"`
	// VolatileField prices one field of a hashtable-encoded hash whose
	// fields have TTLs (Valkey 9), measured by field and value length;
	// nil where the server has no field TTL or keeps such hashes compact.
	VolatileField []FieldCost `json:"volatile_field,omitempty"`
	// FieldTTLCompact says the server keeps a hash with TTL'd fields in a
	// compact encoding (Redis 7.4's listpackex), each field paying for its
	// expiry in the listpack: estimated, not measured.
	FieldTTLCompact bool `json:"-"`
}

// ValueCost is one step of Profile.ValueExtra: values of From bytes and
// more (up to the next step) cost Bytes more.
type ValueCost struct {
	From  int     `json:"from"`
	Bytes float64 `json:"bytes"`
}

// valueExtra is ValueExtra's correction for a value of n bytes.
func (p *Profile) valueExtra(n int) float64 {
	var extra float64
	for _, v := range p.ValueExtra {
		if v.From > n {
			break
		}
		extra = v.Bytes
	}
	return extra
}

// FieldCost is one measured cell of Profile.VolatileField: a field of
// Field bytes with a value of Value bytes costs Bytes.
type FieldCost struct {
	Field int     `json:"field"`
	Value int     `json:"value"`
	Bytes float64 `json:"bytes"`
}

// sdsHeader is the header of an sds string of n bytes, as sdsnewlen picks
// it; short5 says a string under 32 bytes gets the 1-byte type-5 header
// (keys copied into the keyspace do; values do not).
func sdsHeader(n int, short5 bool) int {
	switch {
	case short5 && n > 0 && n < 32:
		return 1
	case n < 1<<8:
		return 3
	case n < 1<<16:
		return 5
	case n < 1<<32:
		return 9
	}
	return 17
}

// sdsAlloc is the usable size of an sds string of n bytes (header, bytes
// and terminating NUL).
func (p *Profile) sdsAlloc(n int, short5 bool) int {
	return p.Allocator.usable(sdsHeader(n, short5) + n + 1)
}

// Value is a stored value as the model sees it: its length, and whether
// the server stores it as an integer (see isRedisInt).
type Value struct {
	Len int
	Int bool
	// Small says the integer is below 10000, which Redis shares instead
	// of allocating (when its maxmemory policy allows).
	Small bool
}

// ValueOf describes b.
func ValueOf(b []byte) Value {
	n, ok := redisInt(b)
	return Value{Len: len(b), Int: ok, Small: ok && n >= 0 && n < 10000}
}

// StringKey returns the bytes a string key of keyLen bytes holding v
// costs, with a TTL or not. shared says the server shares small integers
// (Redis without an LRU or LFU maxmemory policy). The keyspace table's
// slot is not counted (see TableBytes).
func (p *Profile) StringKey(keyLen int, v Value, ttl, shared bool) float64 {
	a := p.Allocator
	if p.Model == KVObjModel {
		keyPart := 1 + sdsHeader(keyLen, true) + keyLen + 1 // a byte saying the header's size, then the sds
		exp := 0
		if ttl {
			exp = 8
		}
		if v.Int {
			return float64(a.usable(8+8+keyPart+exp)) + p.KeyExtra
		}
		// An embedded value takes at least 4 bytes (measured: a shorter
		// one costs as much).
		if embedded := 8 + keyPart + 3 + max(v.Len, 4) + 1; embedded <= 128 {
			return float64(a.usable(embedded+exp)) + p.KeyExtra
		}
		return float64(a.usable(8+8+keyPart+exp)+p.sdsAlloc(v.Len, false)) + p.valueExtra(v.Len) + p.KeyExtra
	}
	cost := a.usable(24) + p.sdsAlloc(keyLen, true)
	switch {
	case v.Int && v.Small && shared:
	case v.Int:
		cost += a.usable(16)
	case v.Len <= 44:
		cost += a.usable(16 + 3 + v.Len + 1)
	default:
		cost += a.usable(16) + p.sdsAlloc(v.Len, false)
	}
	if ttl {
		cost += a.usable(24)
	}
	extra := p.KeyExtra
	if !v.Int && v.Len > 44 {
		extra += p.valueExtra(v.Len)
	}
	return float64(cost) + extra
}

// HashKey returns what a hash key of keyLen bytes kept as a listpack of
// lpBytes costs, the listpack included.
func (p *Profile) HashKey(keyLen, lpBytes int) float64 {
	a := p.Allocator
	lp := a.usable(lpBytes)
	if p.Model == KVObjModel {
		keyPart := 1 + sdsHeader(keyLen, true) + keyLen + 1
		return float64(a.usable(8+8+keyPart)+lp) + p.HashExtra
	}
	return float64(a.usable(24)+p.sdsAlloc(keyLen, true)+a.usable(16)+lp) + p.HashExtra
}

// VolatileFieldCost returns what one field of a hashtable-encoded hash
// with TTL'd fields costs, interpolated from the measured cells (nearest
// field length, then linear in the value's length).
func (p *Profile) VolatileFieldCost(field, value int) float64 {
	cells := p.VolatileField
	if len(cells) == 0 {
		return math.NaN()
	}
	best := -1
	for _, c := range cells {
		if best < 0 || abs(c.Field-field) < abs(best-field) {
			best = c.Field
		}
	}
	var lo, hi *FieldCost
	for i := range cells {
		c := &cells[i]
		if c.Field != best {
			continue
		}
		if c.Value <= value && (lo == nil || c.Value > lo.Value) {
			lo = c
		}
		if c.Value >= value && (hi == nil || c.Value < hi.Value) {
			hi = c
		}
	}
	switch {
	case lo == nil && hi == nil:
		return math.NaN()
	case lo == nil:
		return hi.Bytes - float64(hi.Value-value)
	case hi == nil:
		return lo.Bytes + float64(value-lo.Value)
	case hi.Value == lo.Value:
		return lo.Bytes
	}
	f := float64(value-lo.Value) / float64(hi.Value-lo.Value)
	return lo.Bytes + f*(hi.Bytes-lo.Bytes) + float64(field-best)
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// TableBytes returns the bytes of the keyspace's table (or the expires
// table) holding n entries, grown to that size from empty, and the table's
// size in slots. Only DictModel's tables are priced (8 bytes a slot, a
// power of two at least n): Valkey's hashtable is counted per key
// (KeyExtra).
func (p *Profile) TableBytes(n int64) (bytes float64, slots int64) {
	if p.Model != DictModel || n <= 0 {
		return 0, 0
	}
	slots = 4
	for slots < n {
		slots *= 2
	}
	return float64(8 * slots), slots
}

// TableAfter returns the slots of a DictModel table of `slots` slots once
// its entries fall to n: the server shrinks it (in its cron) only when
// fewer than a tenth of the slots are used.
func (p *Profile) TableAfter(slots, n int64) int64 {
	if p.Model != DictModel || slots == 0 {
		return slots
	}
	if slots > 4 && n*100/slots < 10 {
		_, s := p.TableBytes(max(n, 1))
		return s
	}
	// Growth happens when entries reach the size.
	for slots < n {
		slots *= 2
	}
	return slots
}

// listpackEntry returns the bytes one entry holding s takes in a
// listpack: the encoding byte(s), the data, and the back length. A string
// that is a canonical 64-bit integer is stored as an integer of 1 to 9
// bytes.
func listpackEntry(s []byte) int {
	var enc int
	if n, ok := redisInt(s); ok {
		switch {
		case n >= 0 && n <= 127:
			enc = 1
		case n >= -4096 && n <= 4095:
			enc = 2
		case n >= -32768 && n <= 32767:
			enc = 3
		case n >= -(1<<23) && n <= 1<<23-1:
			enc = 4
		case n >= math.MinInt32 && n <= math.MaxInt32:
			enc = 5
		default:
			enc = 9
		}
	} else {
		enc = listpackStringEntry(len(s))
	}
	return enc + listpackBacklen(enc)
}

// listpackStringEntry is the encoding and data of a string entry of n
// bytes, without its back length.
func listpackStringEntry(n int) int {
	switch {
	case n < 64:
		return 1 + n
	case n < 4096:
		return 2 + n
	}
	return 5 + n
}

func listpackBacklen(n int) int {
	switch {
	case n <= 127:
		return 1
	case n < 16383:
		return 2
	case n < 2097151:
		return 3
	case n < 268435455:
		return 4
	}
	return 5
}

// listpackOverhead is a listpack's header (total bytes, element count)
// and end byte.
const listpackOverhead = 7

// redisInt reports whether the server would store s as an integer: at
// most 20 bytes, a canonical decimal int64 (no leading zero, no plus sign,
// no "-0"), as string2ll reads it.
func redisInt(s []byte) (int64, bool) {
	if len(s) == 0 || len(s) > 20 {
		return 0, false
	}
	if len(s) == 1 && s[0] == '0' {
		return 0, true
	}
	i := 0
	if s[0] == '-' {
		i = 1
		if len(s) == 1 {
			return 0, false
		}
	}
	if s[i] < '1' || s[i] > '9' {
		return 0, false
	}
	for _, c := range s[i:] {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(string(s), 10, 64)
	return n, err == nil
}

// String describes the profile for reports.
func (p *Profile) String() string {
	if p.Measured != "" {
		return fmt.Sprintf("%s (measured on %s)", p.Name, p.Measured)
	}
	return p.Name
}
