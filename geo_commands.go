package zipline

import (
	"github.com/ziplinekv/zipline/internal/resp"
)

// The geospatial commands. Each is defined once; go generate makes its
// Client and Batch methods (commands_gen.go). Distances are in Unit: "m",
// "km", "mi" or "ft" (the zero Unit is "m").

// GeoLocation is a member of a geo set, with what a search asked for.
type GeoLocation struct {
	Name      string
	Longitude float64 // with WithCoord (zero otherwise)
	Latitude  float64 // with WithCoord (zero otherwise)
	Dist      float64 // with WithDist, in the search's unit
	GeoHash   int64   // with WithHash: the 52-bit score
}

// GeoPos is a member's position.
type GeoPos struct {
	Longitude, Latitude float64
}

// GeoAdd adds members at their positions (Name, Longitude, Latitude of
// each location) and returns how many were new.
//
//zipline:twins GeoAdd
func geoAddCmd(key string, locations ...GeoLocation) command[int64] {
	args := make([]arg, 0, 1+3*len(locations))
	args = append(args, keyArg(key))
	for _, l := range locations {
		args = append(args, flt(l.Longitude), flt(l.Latitude), str(l.Name))
	}
	return define(decInt, specGEOADD, args...)
}

// GeoPos returns the positions of members; a missing member's is nil.
//
//zipline:twins GeoPos
func geoPosCmd(key string, members ...string) command[[]*GeoPos] {
	return define(decGeoPos, specGEOPOS, keyAnd(key, members)...)
}

// GeoDist returns the distance between two members in unit, or Nil if
// either is missing.
//
//zipline:twins GeoDist
func geoDistCmd(key, member1, member2, unit string) command[float64] {
	if unit == "" {
		unit = "m"
	}
	return define(decFloatOrNil, specGEODIST, keyArg(key), str(member1), str(member2), str(unit))
}

// GeoHash returns the geohash strings of members ("" for missing ones).
//
//zipline:twins GeoHash
func geoHashCmd(key string, members ...string) command[[]string] {
	return define(decStrings, specGEOHASH, keyAnd(key, members)...)
}

// GeoSearchQuery is where GEOSEARCH looks: from a member or a position,
// within a radius or a box, nearest first (Sort "ASC", the default when
// Count is set, or "DESC"), at most Count (Any: the first Count found, not
// the nearest).
type GeoSearchQuery struct {
	Member              string // from this member, or:
	Longitude, Latitude float64
	Radius              float64 // by radius, or:
	BoxWidth, BoxHeight float64
	Unit                string
	Sort                string
	Count               int64
	Any                 bool
}

func (q *GeoSearchQuery) appendTo(args []arg) []arg {
	if q.Member != "" {
		args = append(args, str("FROMMEMBER"), str(q.Member))
	} else {
		args = append(args, str("FROMLONLAT"), flt(q.Longitude), flt(q.Latitude))
	}
	unit := q.Unit
	if unit == "" {
		unit = "m"
	}
	if q.Radius > 0 {
		args = append(args, str("BYRADIUS"), flt(q.Radius), str(unit))
	} else {
		args = append(args, str("BYBOX"), flt(q.BoxWidth), flt(q.BoxHeight), str(unit))
	}
	if q.Sort != "" {
		args = append(args, str(q.Sort))
	}
	if q.Count > 0 {
		args = append(args, str("COUNT"), num(q.Count))
		if q.Any {
			args = append(args, str("ANY"))
		}
	}
	return args
}

// GeoSearch returns the names of the members a query finds.
//
//zipline:twins GeoSearch
func geoSearchCmd(key string, q GeoSearchQuery) command[[]string] {
	return define(decStrings, specGEOSEARCH, q.appendTo([]arg{keyArg(key)})...)
}

// GeoSearchLocationQuery is a GeoSearchQuery that also returns each
// member's position, distance and hash, as asked.
type GeoSearchLocationQuery struct {
	GeoSearchQuery
	WithCoord, WithDist, WithHash bool
}

// GeoSearchLocation returns the members a query finds, with what it asked
// for.
//
//zipline:twins GeoSearchLocation
func geoSearchLocationCmd(key string, q GeoSearchLocationQuery) command[[]GeoLocation] {
	args := q.appendTo([]arg{keyArg(key)})
	if q.WithCoord {
		args = append(args, str("WITHCOORD"))
	}
	if q.WithDist {
		args = append(args, str("WITHDIST"))
	}
	if q.WithHash {
		args = append(args, str("WITHHASH"))
	}
	return define(newGeoLocationDecoder(q.WithCoord, q.WithDist, q.WithHash), specGEOSEARCH, args...)
}

// GeoSearchStore stores what a query finds in dst, as a geo set (or, with
// storeDist, a sorted set of distances), and returns how many.
//
//zipline:twins GeoSearchStore
func geoSearchStoreCmd(dst, src string, q GeoSearchQuery, storeDist bool) command[int64] {
	args := q.appendTo([]arg{keyArg(dst), keyArg(src)})
	if storeDist {
		args = append(args, str("STOREDIST"))
	}
	return define(decInt, specGEOSEARCHSTORE, args...)
}

var decGeoPos = newDecoder(tsList, func(v resp.Value) ([]*GeoPos, error) {
	elems := v.Elems()
	out := make([]*GeoPos, len(elems))
	for i, e := range elems {
		if e.IsNull() || len(e.Elems()) != 2 {
			continue
		}
		lon, err := Value{e.Elems()[0]}.AsFloat64()
		if err != nil {
			return nil, err
		}
		lat, err := Value{e.Elems()[1]}.AsFloat64()
		if err != nil {
			return nil, err
		}
		out[i] = &GeoPos{Longitude: lon, Latitude: lat}
	}
	return out, nil
})

// geoLocationDecoders are GEOSEARCH's decoders by what it asked for: the
// reply's shape depends on it (a name alone, or [name, dist?, hash?,
// coord?]).
var geoLocationDecoders [8]*decoder[[]GeoLocation]

func init() {
	for i := range geoLocationDecoders {
		coord, dist, hash := i&1 != 0, i&2 != 0, i&4 != 0
		geoLocationDecoders[i] = newDecoder(tsList, func(v resp.Value) ([]GeoLocation, error) {
			return geoLocations(v, coord, dist, hash)
		})
	}
}

func newGeoLocationDecoder(coord, dist, hash bool) *decoder[[]GeoLocation] {
	i := 0
	if coord {
		i |= 1
	}
	if dist {
		i |= 2
	}
	if hash {
		i |= 4
	}
	return geoLocationDecoders[i]
}

func geoLocations(v resp.Value, coord, dist, hash bool) ([]GeoLocation, error) {
	return each(v, func(e resp.Value) (GeoLocation, error) {
		if !coord && !dist && !hash {
			return GeoLocation{Name: string(e.Bytes())}, nil
		}
		f := e.Elems()
		if len(f) == 0 {
			return GeoLocation{}, &TypeError{Want: "GeoLocation", Got: e.Type().String()}
		}
		l := GeoLocation{Name: string(f[0].Bytes())}
		f = f[1:]
		if dist && len(f) > 0 {
			l.Dist, _ = Value{f[0]}.AsFloat64()
			f = f[1:]
		}
		if hash && len(f) > 0 {
			l.GeoHash, _ = Value{f[0]}.AsInt64()
			f = f[1:]
		}
		if coord && len(f) > 0 {
			if c := f[0].Elems(); len(c) == 2 {
				l.Longitude, _ = Value{c[0]}.AsFloat64()
				l.Latitude, _ = Value{c[1]}.AsFloat64()
			}
		}
		return l, nil
	})
}
