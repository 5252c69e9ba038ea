package difftest

// Geo sets, bitmaps, HyperLogLogs, the string commands beyond GET and SET,
// and the key commands beyond the core ones.

import (
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/ziplinekv/zipline"
)

// Geo: coordinates and distances are compared to 5 and 4 decimal places
// (about a metre, a tenth of a millimetre): both clients read the same
// digits, but a server computes them from a 52-bit geohash, and the
// comparison should not hang on the last bits of a double.
func vcoord(lon, lat float64) string {
	return "(" + strconv.FormatFloat(lon, 'f', 5, 64) + ", " + strconv.FormatFloat(lat, 'f', 5, 64) + ")"
}

func vdist(d float64) string { return "(dist) " + strconv.FormatFloat(d, 'f', 4, 64) }

func zGeoPos(ps []*zipline.GeoPos) string {
	out := make([]string, len(ps))
	for i, p := range ps {
		if p == nil {
			out[i] = "(nil)"
		} else {
			out[i] = vcoord(p.Longitude, p.Latitude)
		}
	}
	return vlist(out, false)
}

func gGeoPos(c *redis.GeoPosCmd) string {
	out := make([]string, len(c.Val()))
	for i, p := range c.Val() {
		if p == nil {
			out[i] = "(nil)"
		} else {
			out[i] = vcoord(p.Longitude, p.Latitude)
		}
	}
	return vlist(out, false)
}

// vgeoloc renders what a GEOSEARCH asked for, in its order.
func vgeoloc(name string, lon, lat, dist float64, hash int64, coord, withDist, withHash bool) string {
	s := vstr(name)
	if withDist {
		s += " " + vdist(dist)
	}
	if withHash {
		s += fmt.Sprintf(" (hash) %d", hash)
	}
	if coord || lon != 0 || lat != 0 { // not asked for: both clients give zero
		s += " " + vcoord(lon, lat)
	}
	return s
}

func (g *gen) geoQuery() (zipline.GeoSearchQuery, redis.GeoSearchQuery, string) {
	var q zipline.GeoSearchQuery
	var desc []any
	if g.intn(2) == 0 {
		// Members GEOADD places, mostly; "" reads as FROMLONLAT in both
		// clients.
		q.Member = pick(g, "m1", "m2", "a", g.member())
		desc = append(desc, "FROMMEMBER", q.Member)
	} else {
		q.Longitude, q.Latitude = g.geoPoint()
		desc = append(desc, "FROMLONLAT", q.Longitude, q.Latitude)
	}
	q.Unit = g.geoSearchUnit()
	if g.intn(2) == 0 {
		q.Radius = pick(g, 0.5, 10.0, 200.0, 1000.0, 20000.0)
		desc = append(desc, "BYRADIUS", q.Radius, q.Unit)
	} else {
		q.BoxWidth, q.BoxHeight = pick(g, 1.0, 400.0, 5000.0), pick(g, 1.0, 400.0, 40000.0)
		desc = append(desc, "BYBOX", q.BoxWidth, q.BoxHeight, q.Unit)
	}
	q.Sort = pick(g, "", "ASC", "DESC")
	if q.Sort != "" {
		desc = append(desc, q.Sort)
	}
	if g.intn(3) == 0 {
		q.Count = pick[int64](g, 1, 2, 5)
		q.Any = g.intn(4) == 0
		desc = append(desc, "COUNT", q.Count)
		if q.Any {
			desc = append(desc, "ANY")
		}
	}
	gq := redis.GeoSearchQuery{Member: q.Member, Longitude: q.Longitude, Latitude: q.Latitude,
		Radius: q.Radius, RadiusUnit: q.Unit, BoxWidth: q.BoxWidth, BoxHeight: q.BoxHeight, BoxUnit: q.Unit,
		Sort: q.Sort, Count: int(q.Count), CountAny: q.Any}
	return q, gq, cmdline("", desc...)
}

var geoRows = []row{
	{"GEOADD", 6, func(g *gen) *op {
		k := g.key(bandGeo)
		ms := g.members(1, 3)
		zl := make([]zipline.GeoLocation, len(ms))
		gl := make([]*redis.GeoLocation, len(ms))
		desc := cmdline("GEOADD", k)
		for i, m := range ms {
			lon, lat := g.geoPoint()
			zl[i] = zipline.GeoLocation{Name: m, Longitude: lon, Latitude: lat}
			gl[i] = &redis.GeoLocation{Name: m, Longitude: lon, Latitude: lat}
			desc += cmdline("", lon, lat, m)
		}
		o := &op{name: "GEOADD", desc: desc, keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.GeoAdd(ctx, k, gl...) }}
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) { return c.GeoAdd(ctx, k, zl...) },
			func(b zbat) fut[int64] { return b.GeoAdd(k, zl...) })
	}},
	{"GEOPOS", 3, func(g *gen) *op {
		k, ms := g.key(bandGeo), g.members(1, 3)
		o := &op{name: "GEOPOS", desc: cmdline("GEOPOS", k, ms), keys: []string{k}, gr: gRender(gGeoPos),
			g: func(ctx ctxT, c gcli) gcmd { return c.GeoPos(ctx, k, ms...) }}
		return typed(o, zGeoPos,
			func(ctx ctxT, c zcli) ([]*zipline.GeoPos, error) { return c.GeoPos(ctx, k, ms...) },
			func(b zbat) fut[[]*zipline.GeoPos] { return b.GeoPos(k, ms...) })
	}},
	{"GEODIST", 3, func(g *gen) *op {
		k, m1, m2, unit := g.key(bandGeo), g.member(), g.member(), g.geoUnit()
		o := &op{name: "GEODIST", desc: cmdline("GEODIST", k, m1, m2, unit), keys: []string{k},
			gr: gRender(func(c *redis.FloatCmd) string { return vdist(c.Val()) }),
			g:  func(ctx ctxT, c gcli) gcmd { return c.GeoDist(ctx, k, m1, m2, unit) }}
		return typed(o, vdist,
			func(ctx ctxT, c zcli) (float64, error) { return c.GeoDist(ctx, k, m1, m2, unit) },
			func(b zbat) fut[float64] { return b.GeoDist(k, m1, m2, unit) })
	}},
	{"GEOHASH", 2, func(g *gen) *op {
		k, ms := g.key(bandGeo), g.members(1, 3)
		o := &op{name: "GEOHASH", desc: cmdline("GEOHASH", k, ms), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.GeoHash(ctx, k, ms...) }}
		return typed(o, zStrings(false),
			func(ctx ctxT, c zcli) ([]string, error) { return c.GeoHash(ctx, k, ms...) },
			func(b zbat) fut[[]string] { return b.GeoHash(k, ms...) })
	}},
	{"GEOSEARCH", 3, func(g *gen) *op {
		k := g.key(bandGeo)
		q, gq, desc := g.geoQuery()
		o := &op{name: "GEOSEARCH", desc: cmdline("GEOSEARCH", k) + desc, keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.GeoSearch(ctx, k, &gq) }}
		return typed(o, zStrings(false),
			func(ctx ctxT, c zcli) ([]string, error) { return c.GeoSearch(ctx, k, q) },
			func(b zbat) fut[[]string] { return b.GeoSearch(k, q) })
	}},
	{"GEOSEARCH WITH", 3, func(g *gen) *op {
		k := g.key(bandGeo)
		q, gq, desc := g.geoQuery()
		lq := zipline.GeoSearchLocationQuery{GeoSearchQuery: q, WithCoord: g.intn(2) == 0, WithDist: g.intn(2) == 0, WithHash: g.intn(3) == 0}
		if !lq.WithCoord && !lq.WithDist && !lq.WithHash {
			// With none, the reply is names alone, which go-redis's
			// GeoSearchLocationCmd cannot read (it expects an array per
			// member): that is GEOSEARCH's row.
			lq.WithDist = true
		}
		glq := redis.GeoSearchLocationQuery{GeoSearchQuery: gq, WithCoord: lq.WithCoord, WithDist: lq.WithDist, WithHash: lq.WithHash}
		for _, w := range []struct {
			on   bool
			word string
		}{{lq.WithCoord, "WITHCOORD"}, {lq.WithDist, "WITHDIST"}, {lq.WithHash, "WITHHASH"}} {
			if w.on {
				desc += " " + w.word
			}
		}
		o := &op{name: "GEOSEARCH WITH", desc: cmdline("GEOSEARCH", k) + desc, keys: []string{k},
			gr: gRender(func(c *redis.GeoSearchLocationCmd) string {
				out := make([]string, len(c.Val()))
				for i, l := range c.Val() {
					out[i] = vgeoloc(l.Name, l.Longitude, l.Latitude, l.Dist, l.GeoHash, lq.WithCoord, lq.WithDist, lq.WithHash)
				}
				return vlist(out, false)
			}),
			g: func(ctx ctxT, c gcli) gcmd { return c.GeoSearchLocation(ctx, k, &glq) }}
		conv := func(ls []zipline.GeoLocation) string {
			out := make([]string, len(ls))
			for i, l := range ls {
				out[i] = vgeoloc(l.Name, l.Longitude, l.Latitude, l.Dist, l.GeoHash, lq.WithCoord, lq.WithDist, lq.WithHash)
			}
			return vlist(out, false)
		}
		return typed(o, conv,
			func(ctx ctxT, c zcli) ([]zipline.GeoLocation, error) { return c.GeoSearchLocation(ctx, k, lq) },
			func(b zbat) fut[[]zipline.GeoLocation] { return b.GeoSearchLocation(k, lq) })
	}},
	{"GEOSEARCHSTORE", 2, func(g *gen) *op {
		dst, src := g.key(bandGeo), g.key(bandGeo)
		q, gq, desc := g.geoQuery()
		storeDist := g.intn(3) == 0
		if storeDist {
			desc += " STOREDIST"
		}
		gsq := redis.GeoSearchStoreQuery{GeoSearchQuery: gq, StoreDist: storeDist}
		o := &op{name: "GEOSEARCHSTORE", desc: cmdline("GEOSEARCHSTORE", dst, src) + desc, keys: []string{dst, src},
			// go-redis takes the source first and the destination second.
			g: func(ctx ctxT, c gcli) gcmd { return c.GeoSearchStore(ctx, src, dst, &gsq) }}
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) { return c.GeoSearchStore(ctx, dst, src, q, storeDist) },
			func(b zbat) fut[int64] { return b.GeoSearchStore(dst, src, q, storeDist) })
	}},
}

// bitKey is a key for a bitmap: the strings' band, or a HyperLogLog's.
func (g *gen) bitKey() string { return g.key(pick(g, bandStr, bandStr, bandHLL)) }

// bitRange is a BITCOUNT or BITPOS range in both clients' forms: none,
// bytes, or bits.
func (g *gen) bitRange() (zipline.BitRange, string) {
	switch g.intn(3) {
	case 0:
		return zipline.BitRange{}, ""
	case 1:
		s, e := pick[int64](g, 0, 1, -1, -3, 5), pick[int64](g, 0, 2, -1, 100)
		return zipline.Bytes(s, e), fmt.Sprintf(" %d %d", s, e)
	}
	s, e := pick[int64](g, 0, 3, 9, -5), pick[int64](g, 7, 15, -1, 1000)
	return zipline.Bits(s, e), fmt.Sprintf(" %d %d BIT", s, e)
}

// bitfieldOps are BITFIELD's operations in the server's syntax: get, set
// and increment fields of signed and unsigned types at bit and field
// offsets, under each overflow mode, and a type the server refuses.
func (g *gen) bitfieldOps(readOnly bool) []string {
	var ops []string
	for range 1 + g.intn(3) {
		typ := pick(g, "u8", "i8", "u1", "i5", "u4", "i16", "i64", "u63", "u64")
		off := pick(g, "0", "3", "#1", "#2", "100")
		if readOnly {
			ops = append(ops, "GET", typ, off)
			continue
		}
		switch g.intn(5) {
		case 0:
			ops = append(ops, "GET", typ, off)
		case 1, 2:
			ops = append(ops, "SET", typ, off, pick(g, "0", "1", "-1", "100", "255", "-129"))
		case 3:
			ops = append(ops, "INCRBY", typ, off, pick(g, "1", "-1", "100", "1000"))
		default:
			ops = append(ops, "OVERFLOW", pick(g, "WRAP", "SAT", "FAIL"), "INCRBY", typ, off, pick(g, "1", "200", "-200"))
		}
	}
	return ops
}

// Bitmaps work on the stored bytes: every one is refused while strings
// are compressed (spec_overlay.go, bitmap_commands.go).
var bitmapRows = []row{
	{"SETBIT", 4, func(g *gen) *op {
		k, off, v := g.bitKey(), pick[int64](g, 0, 1, 7, 8, 15, 100, 1000), g.intn(2)
		o := &op{name: "SETBIT", desc: cmdline("SETBIT", k, off, v), keys: []string{k}, refuse: famStrings,
			g: func(ctx ctxT, c gcli) gcmd { return c.SetBit(ctx, k, off, v) }}
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) { return c.SetBit(ctx, k, off, v) },
			func(b zbat) fut[int64] { return b.SetBit(k, off, v) })
	}},
	{"GETBIT", 2, func(g *gen) *op {
		k, off := g.bitKey(), pick[int64](g, 0, 1, 7, 8, 100, 100000)
		o := &op{name: "GETBIT", desc: cmdline("GETBIT", k, off), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.GetBit(ctx, k, off) }}
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) { return c.GetBit(ctx, k, off) },
			func(b zbat) fut[int64] { return b.GetBit(k, off) })
	}},
	{"BITCOUNT", 3, func(g *gen) *op {
		k := g.bitKey()
		r, rdesc := g.bitRange()
		var bc *redis.BitCount
		if r.Set {
			bc = &redis.BitCount{Start: r.Start, End: r.End}
			if r.Bit {
				bc.Unit = redis.BitCountIndexBit
			}
		}
		o := &op{name: "BITCOUNT", desc: cmdline("BITCOUNT", k) + rdesc, keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.BitCount(ctx, k, bc) }}
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) { return c.BitCount(ctx, k, r) },
			func(b zbat) fut[int64] { return b.BitCount(k, r) })
	}},
	{"BITPOS", 3, func(g *gen) *op {
		k, bit := g.bitKey(), g.intn(2)
		r, rdesc := g.bitRange()
		o := &op{name: "BITPOS", desc: cmdline("BITPOS", k, bit) + rdesc, keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd {
				switch {
				case !r.Set:
					return c.BitPos(ctx, k, int64(bit))
				case r.Bit:
					return c.BitPosSpan(ctx, k, int8(bit), r.Start, r.End, "bit")
				}
				return c.BitPos(ctx, k, int64(bit), r.Start, r.End)
			}}
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) { return c.BitPos(ctx, k, bit, r) },
			func(b zbat) fut[int64] { return b.BitPos(k, bit, r) })
	}},
	{"BITOP", 2, func(g *gen) *op {
		bop, dst := pick(g, "AND", "OR", "XOR", "NOT"), g.bitKey()
		srcs := []string{g.bitKey()}
		if bop != "NOT" {
			srcs = g.keys(bandStr, 1, 3)
		}
		o := &op{name: "BITOP " + bop, desc: cmdline("BITOP", bop, dst, srcs), keys: append([]string{dst}, srcs...), refuse: famStrings,
			g: func(ctx ctxT, c gcli) gcmd {
				switch bop {
				case "AND":
					return c.BitOpAnd(ctx, dst, srcs...)
				case "OR":
					return c.BitOpOr(ctx, dst, srcs...)
				case "XOR":
					return c.BitOpXor(ctx, dst, srcs...)
				}
				return c.BitOpNot(ctx, dst, srcs[0])
			}}
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) { return c.BitOp(ctx, bop, dst, srcs...) },
			func(b zbat) fut[int64] { return b.BitOp(bop, dst, srcs...) })
	}},
	{"BITFIELD", 3, func(g *gen) *op {
		k, ops := g.bitKey(), g.bitfieldOps(false)
		// go-redis's IntSliceCmd reads OVERFLOW FAIL's null as 0, as
		// zipline's BitField documents.
		o := &op{name: "BITFIELD", desc: cmdline("BITFIELD", k, ops), keys: []string{k}, refuse: famStrings,
			gr: gRender(func(c *redis.IntSliceCmd) string { return zInts(c.Val()) }),
			g:  func(ctx ctxT, c gcli) gcmd { return c.BitField(ctx, k, anys(ops)...) }}
		return typed(o, zInts,
			func(ctx ctxT, c zcli) ([]int64, error) { return c.BitField(ctx, k, ops...) },
			func(b zbat) fut[[]int64] { return b.BitField(k, ops...) })
	}},
	{"BITFIELD_RO", 1, func(g *gen) *op {
		k, ops := g.bitKey(), g.bitfieldOps(true)
		// go-redis's BitFieldRO takes (type, offset) pairs and adds each
		// GET itself.
		var pairs []any
		for i := 0; i+2 < len(ops); i += 3 {
			pairs = append(pairs, ops[i+1], ops[i+2])
		}
		o := &op{name: "BITFIELD_RO", desc: cmdline("BITFIELD_RO", k, ops), keys: []string{k}, refuse: famStrings,
			gr: gRender(func(c *redis.IntSliceCmd) string { return zInts(c.Val()) }),
			g:  func(ctx ctxT, c gcli) gcmd { return c.BitFieldRO(ctx, k, pairs...) }}
		return typed(o, zInts,
			func(ctx ctxT, c zcli) ([]int64, error) { return c.BitFieldRO(ctx, k, ops...) },
			func(b zbat) fut[[]int64] { return b.BitFieldRO(k, ops...) })
	}},
}

func zInts(ns []int64) string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = vint(n)
	}
	return vlist(out, false)
}

// gIntBool renders an integer reply that zipline reads as a bool (PFADD,
// COPY, MSETEX, HSETEX, DELIFEQ): 0 and 1 as false and true, anything else
// as the number, so that it shows.
func gIntBool(c gcmd) reply {
	var n int64
	var err error
	switch x := c.(type) {
	case *redis.IntCmd:
		n, err = x.Result()
	case *redis.Cmd:
		n, err = x.Int64()
	default:
		return reply{kClient, fmt.Sprintf("difftest: gIntBool of %T", c)}
	}
	if err != nil {
		return gErr(err)
	}
	if n == 0 || n == 1 {
		return val(vbool(n == 1))
	}
	return val(vint(n))
}

var hllRows = []row{
	{"PFADD", 5, func(g *gen) *op {
		k, els := g.key(bandHLL), g.members(0, 3)
		o := &op{name: "PFADD", desc: cmdline("PFADD", k, els), keys: []string{k}, gr: gIntBool,
			g: func(ctx ctxT, c gcli) gcmd { return c.PFAdd(ctx, k, anys(els)...) }}
		return typed(o, vbool,
			func(ctx ctxT, c zcli) (bool, error) { return c.PFAdd(ctx, k, els...) },
			func(b zbat) fut[bool] { return b.PFAdd(k, els...) })
	}},
	{"PFCOUNT", 3, func(g *gen) *op {
		ks := g.keys(bandHLL, 1, 2)
		o := &op{name: "PFCOUNT", desc: cmdline("PFCOUNT", ks), keys: ks,
			g: func(ctx ctxT, c gcli) gcmd { return c.PFCount(ctx, ks...) }}
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) { return c.PFCount(ctx, ks...) },
			func(b zbat) fut[int64] { return b.PFCount(ks...) })
	}},
	{"PFMERGE", 2, func(g *gen) *op {
		dst, srcs := g.key(bandHLL), g.keys(bandHLL, 0, 2)
		o := &op{name: "PFMERGE", desc: cmdline("PFMERGE", dst, srcs), keys: append([]string{dst}, srcs...),
			g: func(ctx ctxT, c gcli) gcmd { return c.PFMerge(ctx, dst, srcs...) }}
		return typed(o, zOK,
			okOnly(func(ctx ctxT, c zcli) error { return c.PFMerge(ctx, dst, srcs...) }),
			func(b zbat) fut[bool] { return b.PFMerge(dst, srcs...) })
	}},
}

// casValue and casEqual are SET IFEQ's and DELIFEQ's values: a few short
// words, so that the comparison sometimes holds.
func (g *gen) casValue() []byte {
	if g.intn(2) == 0 {
		return []byte(pick(g, "a", "b", "hello"))
	}
	return g.value()
}

func (g *gen) casEqual() string { return pick(g, "a", "b", "hello", "") }

// expiryOption is an Expiry as the server's option and number, for
// go-redis's MSETEX and HSETEX options ("" for none).
func expiryOption(e expiry) (string, int64) {
	switch e.kind {
	case "EX":
		return "EX", int64(e.d / time.Second)
	case "PX":
		return "PX", e.d.Milliseconds()
	case "PXAT":
		return "PXAT", e.t.UnixMilli()
	case "KEEPTTL", "PERSIST":
		return e.kind, 0
	}
	return "", 0
}

func zExpOne(e expiry) zipline.Expiry {
	if x := zExp(e); len(x) > 0 {
		return x[0]
	}
	return zipline.Expiry{}
}

var stringRows = []row{
	{"GETRANGE", 3, func(g *gen) *op {
		k, s, e := g.key(bandStr), pick[int64](g, 0, 1, -3, 5), pick[int64](g, -1, 0, 3, 100)
		o := &op{name: "GETRANGE", desc: cmdline("GETRANGE", k, s, e), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.GetRange(ctx, k, s, e) }}
		return typed(o, zBytes,
			func(ctx ctxT, c zcli) ([]byte, error) { return c.GetRange(ctx, k, s, e) },
			func(b zbat) fut[[]byte] { return b.GetRange(k, s, e) })
	}},
	{"SETRANGE", 3, func(g *gen) *op {
		k, off, v := g.key(bandStr), pick[int64](g, 0, 2, 70, -1), g.value()
		o := &op{name: "SETRANGE", desc: cmdline("SETRANGE", k, off, v), keys: []string{k}, refuse: famStrings,
			g: func(ctx ctxT, c gcli) gcmd { return c.SetRange(ctx, k, off, string(v)) }}
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) { return c.SetRange(ctx, k, off, v) },
			func(b zbat) fut[int64] { return b.SetRange(k, off, v) })
	}},
	{"LCS", 2, func(g *gen) *op {
		k1, k2 := g.key(bandStr), g.key(bandStr)
		if g.intn(2) == 0 {
			o := &op{name: "LCS LEN", desc: cmdline("LCS", k1, k2) + " LEN", keys: []string{k1, k2}, refuse: famStrings,
				gr: gRender(func(c *redis.LCSCmd) string { return vint(c.Val().Len) }),
				g:  func(ctx ctxT, c gcli) gcmd { return c.LCS(ctx, &redis.LCSQuery{Key1: k1, Key2: k2, Len: true}) }}
			return typed(o, vint,
				func(ctx ctxT, c zcli) (int64, error) { return c.LCSLen(ctx, k1, k2) },
				func(b zbat) fut[int64] { return b.LCSLen(k1, k2) })
		}
		o := &op{name: "LCS", desc: cmdline("LCS", k1, k2), keys: []string{k1, k2}, refuse: famStrings,
			gr: gRender(func(c *redis.LCSCmd) string { return vstr(c.Val().MatchString) }),
			g:  func(ctx ctxT, c gcli) gcmd { return c.LCS(ctx, &redis.LCSQuery{Key1: k1, Key2: k2}) }}
		return typed(o, zBytes,
			func(ctx ctxT, c zcli) ([]byte, error) { return c.LCS(ctx, k1, k2) },
			func(b zbat) fut[[]byte] { return b.LCS(k1, k2) })
	}},
	{"SET IFEQ", 3, func(g *gen) *op {
		// Valkey 8.1 (and Redis 8.4, not installed): Redis 7.0 answers a
		// syntax error. Refused while strings are compressed: the server
		// would compare the stored bytes.
		k, v, eq, e := g.key(bandStr), g.casValue(), g.casEqual(), g.setExpiry()
		a := gSetArgs(e, "IFEQ", false)
		a.MatchValue = eq
		o := &op{name: "SET IFEQ", desc: cmdline("SET", k, v) + e.String() + cmdline(" IFEQ", eq), keys: []string{k},
			refuse: famStrings, gr: statusToBool,
			g: func(ctx ctxT, c gcli) gcmd { return c.SetArgs(ctx, k, v, a) }}
		return typed(o, vbool,
			func(ctx ctxT, c zcli) (bool, error) { return c.SetIfEq(ctx, k, v, []byte(eq), zExp(e)...) },
			func(b zbat) fut[bool] { return b.SetIfEq(k, v, []byte(eq), zExp(e)...) })
	}},
	{"DELIFEQ", 2, func(g *gen) *op {
		// Valkey 9.0; go-redis has no DELIFEQ (its DelExArgs is Redis 8.4's
		// DELEX), so it goes through Do.
		k, eq := g.key(bandStr), g.casEqual()
		o := &op{name: "DELIFEQ", desc: cmdline("DELIFEQ", k, eq), keys: []string{k}, refuse: famStrings, gr: gIntBool,
			g: func(ctx ctxT, c gcli) gcmd { return goDo(ctx, c, "DELIFEQ", k, eq) }}
		return typed(o, vbool,
			func(ctx ctxT, c zcli) (bool, error) { return c.DelIfEq(ctx, k, []byte(eq)) },
			func(b zbat) fut[bool] { return b.DelIfEq(k, []byte(eq)) })
	}},
	{"MSETEX", 3, func(g *gen) *op {
		// Valkey 9.1 (and Redis 8.4): on Redis 7.0 zipline refuses it
		// before sending ("is not on this server", client.go notOnServer).
		ks := g.keys(bandStr, 1, 3)
		vs := make([][]byte, len(ks))
		for i := range vs {
			vs[i] = g.value()
		}
		e := g.setExpiry()
		kv, flat := keyValues(ks, vs)
		desc := cmdline("MSETEX", len(ks))
		for i, k := range ks {
			desc += cmdline("", k, vs[i])
		}
		desc += e.String()
		var ga redis.MSetEXArgs
		if mode, n := expiryOption(e); mode != "" {
			ga.Expiration = &redis.ExpirationOption{Mode: redis.ExpirationMode(mode), Value: n}
		}
		o := &op{name: "MSETEX", desc: desc, keys: ks, gr: gIntBool,
			g: func(ctx ctxT, c gcli) gcmd { return c.MSetEX(ctx, ga, flat...) }}
		return typed(o, vbool,
			func(ctx ctxT, c zcli) (bool, error) { return c.MSetEx(ctx, zExpOne(e), kv...) },
			func(b zbat) fut[bool] { return b.MSetEx(zExpOne(e), kv...) })
	}},
}

// vexpireTime renders EXPIRETIME by presence: the servers' clocks differ.
func vexpireTime(t time.Time) string {
	if t.IsZero() {
		return "(expiretime) none"
	}
	return "(expiretime) set"
}

// gExpireTime renders go-redis's EXPIRETIME and PEXPIRETIME, which it
// reads into a DurationCmd: -2 (no key) as zipline's Nil, -1 as none.
func gExpireTime(c gcmd) reply {
	d, err := c.(*redis.DurationCmd).Result()
	switch {
	case err != nil:
		return gErr(err)
	case d == -2:
		return nilReply
	case d == -1:
		return val(vexpireTime(time.Time{}))
	}
	return val(vexpireTime(time.Unix(1, 0)))
}

func gExpireCond(ctx ctxT, c gcli, k string, d time.Duration, cond zipline.ExpireCond) gcmd {
	if d%time.Second != 0 {
		return goDo(ctx, c, "PEXPIRE", k, d.Milliseconds(), string(cond))
	}
	switch cond {
	case zipline.IfNoExpiry:
		return c.ExpireNX(ctx, k, d)
	case zipline.IfExpiry:
		return c.ExpireXX(ctx, k, d)
	case zipline.IfLater:
		return c.ExpireGT(ctx, k, d)
	}
	return c.ExpireLT(ctx, k, d)
}

// gBool renders a BoolCmd, or a Do whose integer reply zipline reads as a
// bool.
func gBool(c gcmd) reply {
	if x, ok := c.(*redis.BoolCmd); ok {
		return gReply(x, false, false)
	}
	return gIntBool(c)
}

// sortArgs is a typed SORT's options in both clients' forms, with the
// keys its patterns may read and the family it is refused under (as
// sortForm's, compression_plan.go sortRefusal).
func (g *gen) sortArgs() (zipline.SortArgs, *redis.Sort, []string, family, bool, string) {
	var a zipline.SortArgs
	a.By = pick(g, "", "", "nosort", "*")
	a.Alpha = g.intn(2) == 0
	a.Desc = g.intn(3) == 0
	nosort := a.By == "nosort" || a.By == "*" && a.Alpha
	if !nosort && g.intn(2) == 0 {
		a.Offset, a.Count = pick[int64](g, 0, 1), pick[int64](g, 2, 3)
	}
	for range g.intn(3) {
		a.Get = append(a.Get, pick(g, "#", "*"))
	}
	gs := &redis.Sort{By: a.By, Offset: a.Offset, Count: a.Count, Get: a.Get, Alpha: a.Alpha}
	if a.Desc {
		gs.Order = "DESC"
	}
	var desc []any
	if a.By != "" {
		desc = append(desc, "BY", a.By)
	}
	if a.Count != 0 {
		desc = append(desc, "LIMIT", a.Offset, a.Count)
	}
	for _, p := range a.Get {
		desc = append(desc, "GET", p)
	}
	if a.Desc {
		desc = append(desc, "DESC")
	}
	if a.Alpha {
		desc = append(desc, "ALPHA")
	}
	refuse := famNone
	switch a.By {
	case "*":
		refuse = famStrings
	case "":
		refuse = famLists
	}
	return a, gs, []string{"k1", "k2", "k3"}, refuse, nosort, cmdline("", desc...)
}

var keyRows = []row{
	{"EXPIRE cond", 4, func(g *gen) *op {
		k, d := g.key(bandAny), g.condExpiry()
		cond := pick(g, zipline.IfNoExpiry, zipline.IfExpiry, zipline.IfLater, zipline.IfSooner)
		name := "EXPIRE"
		n := int64(d / time.Second)
		if d%time.Second != 0 {
			name, n = "PEXPIRE", d.Milliseconds()
		}
		o := &op{name: name + " " + string(cond), desc: cmdline(name, k, n, string(cond)), keys: []string{k}, gr: gBool,
			g: func(ctx ctxT, c gcli) gcmd { return gExpireCond(ctx, c, k, d, cond) }}
		return typed(o, vbool,
			func(ctx ctxT, c zcli) (bool, error) { return c.ExpireIf(ctx, k, d, cond) },
			func(b zbat) fut[bool] { return b.ExpireIf(k, d, cond) })
	}},
	{"PEXPIRE", 2, func(g *gen) *op {
		k, d := g.key(bandAny), g.expireDur()
		o := &op{name: "PEXPIRE", desc: cmdline("PEXPIRE", k, d.Milliseconds()), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.PExpire(ctx, k, d) }}
		return typed(o, vbool,
			func(ctx ctxT, c zcli) (bool, error) { return c.PExpire(ctx, k, d) },
			func(b zbat) fut[bool] { return b.PExpire(k, d) })
	}},
	{"PEXPIREAT cond", 2, func(g *gen) *op {
		// go-redis has no conditional EXPIREAT: Do.
		k, t := g.key(bandAny), g.condExpireAt()
		// The zero condition is none: PEXPIREAT as ExpireAt sends it.
		cond := pick(g, zipline.IfNoExpiry, zipline.IfExpiry, zipline.IfLater, zipline.IfSooner, "")
		goArgs := []any{"PEXPIREAT", k, t.UnixMilli()}
		if cond != "" {
			goArgs = append(goArgs, string(cond))
		}
		o := &op{name: "PEXPIREAT " + string(cond), desc: cmdline("PEXPIREAT", k, t.UnixMilli(), string(cond)), keys: []string{k}, gr: gIntBool,
			g: func(ctx ctxT, c gcli) gcmd { return goDo(ctx, c, goArgs...) }}
		return typed(o, vbool,
			func(ctx ctxT, c zcli) (bool, error) { return c.ExpireAtIf(ctx, k, t, cond) },
			func(b zbat) fut[bool] { return b.ExpireAtIf(k, t, cond) })
	}},
	{"EXPIRETIME", 3, func(g *gen) *op {
		k, ms := g.key(bandAny), g.intn(2) == 0
		name := "EXPIRETIME"
		if ms {
			name = "PEXPIRETIME"
		}
		o := &op{name: name, desc: cmdline(name, k), keys: []string{k}, gr: gExpireTime,
			g: func(ctx ctxT, c gcli) gcmd {
				if ms {
					return c.PExpireTime(ctx, k)
				}
				return c.ExpireTime(ctx, k)
			}}
		return typed(o, vexpireTime,
			func(ctx ctxT, c zcli) (time.Time, error) {
				if ms {
					return c.PExpireTime(ctx, k)
				}
				return c.ExpireTime(ctx, k)
			},
			func(b zbat) fut[time.Time] {
				if ms {
					return b.PExpireTime(k)
				}
				return b.ExpireTime(k)
			})
	}},
	{"RENAMENX", 3, func(g *gen) *op {
		k, nk := g.key(bandAny), g.key(bandAny)
		o := &op{name: "RENAMENX", desc: cmdline("RENAMENX", k, nk), keys: []string{k, nk}, moves: famStrings,
			g: func(ctx ctxT, c gcli) gcmd { return c.RenameNX(ctx, k, nk) }}
		return typed(o, vbool,
			func(ctx ctxT, c zcli) (bool, error) { return c.RenameNX(ctx, k, nk) },
			func(b zbat) fut[bool] { return b.RenameNX(k, nk) })
	}},
	{"COPY", 3, func(g *gen) *op {
		// go-redis's Copy always names the database (DB 0); zipline's
		// copies within the client's.
		src, dst, replace := g.key(bandAny), g.key(bandAny), g.intn(2) == 0
		desc := cmdline("COPY", src, dst)
		if replace {
			desc += " REPLACE"
		}
		o := &op{name: "COPY", desc: desc, keys: []string{src, dst}, gr: gIntBool, moves: famStrings,
			g: func(ctx ctxT, c gcli) gcmd { return c.Copy(ctx, src, dst, 0, replace) }}
		return typed(o, vbool,
			func(ctx ctxT, c zcli) (bool, error) { return c.Copy(ctx, src, dst, replace) },
			func(b zbat) fut[bool] { return b.Copy(src, dst, replace) })
	}},
	{"DUMP", 2, func(g *gen) *op {
		// Payloads are compared by presence: a compressed value is
		// serialized as stored (key_commands.go, Dump); a stream's holds its
		// consumers' times; and a set's holds its members in the order
		// of its encoding, which the harness's own reconciling (SPOP's
		// swap, a repair) can change. DUMP+RESTORE checks the payloads
		// by what they restore.
		k := g.key(bandAny)
		o := &op{name: "DUMP", desc: cmdline("DUMP", k), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.Dump(ctx, k) }}
		o.same = func(ctx ctxT, r *runner, z, g reply) bool {
			return z.kind == g.kind && (z.kind == kVal || sameReply(z, g))
		}
		return typed(o, zBytes,
			func(ctx ctxT, c zcli) ([]byte, error) { return c.Dump(ctx, k) },
			func(b zbat) fut[[]byte] { return b.Dump(k) })
	}},
	{"DUMP+RESTORE", 3, func(g *gen) *op {
		// The round trip: each client restores its own server's DUMP to
		// another key (zipline's payload holds the value as stored, maybe
		// compressed, and restores it so).
		src, dst := g.key(bandAny), g.key(bandAny)
		ttl := pick(g, 0, 0, 1000*time.Second)
		replace := g.intn(2) == 0
		desc := fmt.Sprintf("DUMP %q, then RESTORE %q %d <payload>", src, dst, ttl.Milliseconds())
		if replace {
			desc += " REPLACE"
		}
		o := &op{name: "DUMP+RESTORE", desc: desc, keys: []string{src, dst}, solo: true}
		o.z = func(ctx ctxT, c zcli) reply {
			data, err := c.Dump(ctx, src)
			if err != nil {
				return zErr(err)
			}
			if replace {
				err = c.RestoreReplace(ctx, dst, ttl, data)
			} else {
				err = c.Restore(ctx, dst, ttl, data)
			}
			if err != nil {
				return zErr(err)
			}
			return val(vstr("OK"))
		}
		o.gd = func(ctx ctxT, c gcli) reply {
			data, err := c.Dump(ctx, src).Result()
			if err != nil {
				return gErr(err)
			}
			if replace {
				return gReply(c.RestoreReplace(ctx, dst, ttl, data), false, false)
			}
			return gReply(c.Restore(ctx, dst, ttl, data), false, false)
		}
		return o
	}},
	{"OBJECT ENCODING", 2, func(g *gen) *op {
		// Compression changes how long values are, and so how the
		// server stores them (embstr or raw, listpack or hashtable):
		// encodings are compared only with compression off.
		k := g.key(bandAny)
		o := &op{name: "OBJECT ENCODING", desc: cmdline("OBJECT ENCODING", k), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.ObjectEncoding(ctx, k) }}
		o.same = func(ctx ctxT, r *runner, z, g reply) bool {
			if r.m.comp == "off" {
				return sameReply(z, g)
			}
			return z.kind == g.kind && (z.kind == kVal || sameReply(z, g))
		}
		return typed(o, vstr,
			func(ctx ctxT, c zcli) (string, error) { return c.ObjectEncoding(ctx, k) },
			func(b zbat) fut[string] { return b.ObjectEncoding(k) })
	}},
	{"SORT typed", 5, func(g *gen) *op {
		k := g.key(pick(g, bandList, bandSet, bandZset))
		a, gs, patKeys, refuse, nosort, desc := g.sortArgs()
		keys := append([]string{k}, patKeys...)
		ties := func(o *op) *op {
			if a.Alpha && a.By == "" {
				return sortTies(o, k)
			}
			return o
		}
		switch form := g.intn(4); {
		case form == 0 && !nosort:
			dst := g.key(bandList)
			// go-redis's SortStore leaves STORE out for the key "" (and
			// then reads SORT's array as the count): Do sends it.
			o := ties(&op{name: "SORT STORE", desc: cmdline("SORT", k) + desc + cmdline(" STORE", dst), keys: append(keys, dst),
				refuse: storeRefusal(refuse, a.By, a.Get), refuseAlways: true,
				g: func(ctx ctxT, c gcli) gcmd {
					if dst == "" {
						return goDo(ctx, c, append(sortDoArgs("SORT", k, a), "STORE", dst)...)
					}
					return c.SortStore(ctx, k, dst, gs)
				}})
			return typed(o, vint,
				func(ctx ctxT, c zcli) (int64, error) { return c.SortStore(ctx, k, dst, a) },
				func(b zbat) fut[int64] { return b.SortStore(k, dst, a) })
		case form == 1:
			// go-redis's SortRO reads into a StringSliceCmd, where GET of
			// a missing key reads as "": Do keeps the null.
			o := ties(&op{name: "SORT_RO", desc: cmdline("SORT_RO", k) + desc, keys: keys, refuse: refuse, refuseAlways: true, unordered: nosort,
				g: func(ctx ctxT, c gcli) gcmd { return goDo(ctx, c, sortDoArgs("SORT_RO", k, a)...) }})
			return typed(o, zSortResult(nosort),
				func(ctx ctxT, c zcli) ([][]byte, error) { return c.SortRO(ctx, k, a) },
				func(b zbat) fut[[][]byte] { return b.SortRO(k, a) })
		}
		o := ties(&op{name: "SORT", desc: cmdline("SORT", k) + desc, keys: keys, refuse: refuse, refuseAlways: true, unordered: nosort,
			g: func(ctx ctxT, c gcli) gcmd { return c.SortInterfaces(ctx, k, gs) }})
		return typed(o, zSortResult(nosort),
			func(ctx ctxT, c zcli) ([][]byte, error) { return c.Sort(ctx, k, a) },
			func(b zbat) fut[[][]byte] { return b.Sort(k, a) })
	}},
}

// sortTies makes o, a SORT ... ALPHA without BY of the key k, accept two
// replies in different orders where the order is the server's own: ALPHA
// compares elements with strcoll, as C strings, so the members "" and
// "\x00\xff" compare equal and keep the order SORT read them in, which
// differs between the servers for a set (a hashtable's order follows the
// process's random hash seed; a listpack's, the harness's reconciling of
// SPOP) and for a sorted set (SORT reads one through its dict). Such
// replies must hold the same bytes; whatever a STORE wrote is then copied
// from go-redis's server to zipline's.
func sortTies(o *op, k string) *op {
	var tied bool
	o.same = func(ctx ctxT, r *runner, z, g reply) bool {
		tied = false
		if sameReply(z, g) {
			return true
		}
		if z.kind != kVal || g.kind != kVal || !sameBytes(z.text, g.text) {
			return false
		}
		switch typ, _ := r.rc.Type(ctx, k).Result(); typ {
		case "set":
			in, _ := r.rc.SMIsMember(ctx, k, "", "\x00\xff").Result()
			tied = len(in) == 2 && in[0] && in[1]
		case "zset":
			sc, _ := r.rc.Do(ctx, "ZMSCORE", k, "", "\x00\xff").Slice()
			tied = len(sc) == 2 && sc[0] != nil && sc[1] != nil
		}
		return tied
	}
	o.after = func(ctx ctxT, r *runner) {
		if tied {
			r.repair(ctx, o.keys)
		}
	}
	return o
}

// sameBytes reports whether a and b hold the same bytes in any order.
func sameBytes(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	var n [256]int
	for i := range len(a) {
		n[a[i]]++
		n[b[i]]--
	}
	return n == [256]int{}
}

func sortDoArgs(name, k string, a zipline.SortArgs) []any {
	args := []any{name, k}
	if a.By != "" {
		args = append(args, "BY", a.By)
	}
	if a.Offset != 0 || a.Count != 0 {
		args = append(args, "LIMIT", a.Offset, a.Count)
	}
	for _, p := range a.Get {
		args = append(args, "GET", p)
	}
	if a.Desc {
		args = append(args, "DESC")
	}
	if a.Alpha {
		args = append(args, "ALPHA")
	}
	return args
}

// zSortResult renders SORT's elements, nil where GET found no key.
func zSortResult(unordered bool) func([][]byte) string {
	return func(bs [][]byte) string {
		out := make([]string, len(bs))
		for i, b := range bs {
			if b == nil {
				out[i] = "(nil)"
			} else {
				out[i] = vbytes(b)
			}
		}
		return vlist(out, unordered)
	}
}
