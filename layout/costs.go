package layout

import (
	"strconv"
	"strings"
)

// Costs prices keys on one kind of server, in bytes of used_memory: what a
// plain string key and a bucket holding a listpack cost there (Debian's jemalloc build of Redis, whose
// quantum is 16 B; official builds put a key about 8 B lower). A server
// counts the usable size of each allocation (its allocator's size class,
// not the bytes asked for), so every structure is priced as the
// allocations the server makes for it:
//
//   - Redis, and Valkey before 8.1, keep per key a dictionary entry (24
//     bytes), the name as an sds string, and a value object (16 bytes) that
//     embeds a string of up to 44 bytes, holds an integer (integers below
//     10,000 are shared and cost nothing), or points to a string of its
//     own.
//   - Valkey 8.1 and later keep one object per key that embeds the name,
//     and the value too while the whole stays within 128 bytes.
//
// A bucket is such a key whose value is a listpack, one allocation of its
// exact length. The keyspace table's share per key (Table) was measured
// with 100,000 keys: TestCostsMatchServer holds the model to real servers
// (Redis 7.0 with Debian's jemalloc, Valkey 9.1 with libc malloc) within
// 3 B a plain key and 1.5 B a bucketed pair.
//
// Costs is what a planner needs: Estimate and New's warnings use it, and
// "zipline analyze" can (CostsFor a Server described by hand, or
// Store.Costs).
type Costs struct {
	// Server is what the costs are for.
	Server Server
	// Table is the keyspace table's share of a key, in bytes: 8 bytes a
	// slot in Redis's dictionary (a power of two, 0.76 full at 100,000
	// keys); Valkey's table of 64-byte buckets of seven and their
	// overflow.
	Table float64
	// kvobj: Valkey 8.1's one allocation per key.
	kvobj bool
	// libc: glibc malloc's sizes, not jemalloc's.
	libc bool
}

// CostsFor returns the costs on srv. A server whose kind, version or
// allocator is unknown is priced as Redis 7 with jemalloc.
func CostsFor(srv Server) Costs {
	c := Costs{Server: srv, Table: 10.5, libc: strings.HasPrefix(srv.Allocator, "libc")}
	if srv.Kind == "valkey" && srv.atLeast(8, 1) {
		c.kvobj, c.Table = true, 14.5
	}
	return c
}

// Costs returns the costs on the Store's server.
func (s *Store) Costs() Costs { return CostsFor(s.server) }

// usable is the usable size of an allocation of n bytes.
func (c Costs) usable(n int) int {
	if c.libc {
		// glibc: the request plus an 8-byte header, rounded to 16, at
		// least 32, less the header.
		return max(32, (n+8+15)&^15) - 8
	}
	// jemalloc with a 16-byte quantum (Debian's build): 8, multiples of
	// 16 up to 128, then four classes per doubling.
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

// sdsHeader is the header of an sds string of n bytes; a key name under
// 32 bytes gets the 1-byte type-5 header, a value does not.
func sdsHeader(n int, name bool) int {
	switch {
	case name && n < 32:
		return 1
	case n < 1<<8:
		return 3
	case n < 1<<16:
		return 5
	}
	return 9
}

// Key returns what a plain string key with a name of nameLen bytes and
// value costs, its share of the keyspace table included.
func (c Costs) Key(nameLen int, value []byte) float64 {
	n, isInt := listpackInt(value)
	if c.kvobj {
		name := 1 + sdsHeader(nameLen, true) + nameLen + 1
		if isInt {
			return float64(c.usable(16+name)) + c.Table
		}
		if embedded := 8 + name + 3 + max(len(value), 4) + 1; embedded <= 128 {
			return float64(c.usable(embedded)) + c.Table
		}
		return float64(c.usable(16+name)+c.usable(sdsHeader(len(value), false)+len(value)+1)) + c.Table
	}
	cost := c.usable(24) + c.usable(sdsHeader(nameLen, true)+nameLen+1)
	switch {
	case isInt && n >= 0 && n < 10000: // a shared integer
	case isInt:
		cost += c.usable(16)
	case len(value) <= 44:
		cost += c.usable(16 + 3 + len(value) + 1)
	default:
		cost += c.usable(16) + c.usable(sdsHeader(len(value), false)+len(value)+1)
	}
	return float64(cost) + c.Table
}

// Bucket returns what a bucket key with a name of nameLen bytes costs
// whose listpack is listpackBytes long (see ListpackBytes).
func (c Costs) Bucket(nameLen, listpackBytes int) float64 {
	lp := c.usable(listpackBytes)
	if c.kvobj {
		return float64(c.usable(16+1+sdsHeader(nameLen, true)+nameLen+1)+lp) + c.Table
	}
	return float64(c.usable(24)+c.usable(sdsHeader(nameLen, true)+nameLen+1)+c.usable(16)+lp) + c.Table
}

// Pair returns what one key costs in a bucket of fill keys like it (field
// and value as stored): its listpack entries and its share of the bucket.
func (c Costs) Pair(fill int, field, value []byte) float64 {
	fill = max(fill, 1)
	lp := ListpackBytes(fill, ListpackEntry(field)+ListpackEntry(value))
	return c.Bucket(6, lp) / float64(fill)
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
		case n >= -(1<<31) && n < 1<<31:
			enc = 5
		default:
			enc = 9
		}
	} else {
		switch n := len(b); {
		case n < 64:
			enc = 1 + n
		case n < 4096:
			enc = 2 + n
		default:
			enc = 5 + n
		}
	}
	switch {
	case enc <= 127:
		return enc + 1
	case enc < 16383:
		return enc + 2
	case enc < 2097151:
		return enc + 3
	}
	return enc + 4
}

// listpackInt reports whether the server stores b as an integer: a
// canonical decimal int64 of at most 20 bytes.
func listpackInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 20 || (b[0] == '0' && len(b) > 1) || (b[0] == '-' && (len(b) == 1 || b[1] == '0')) {
		return 0, false
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	return n, err == nil
}
