package zipline

import (
	"math"
	"strconv"
	"time"

	"github.com/ziplinekv/zipline/internal/resp"
)

// A decoder turns a command's reply into its Go result. It also says which
// reply types can answer the command: the connection checks every reply
// against it, so a stream that slipped out of step is caught (and the
// connection dropped) instead of handing one caller another's value.
// Error replies never reach decode, and stored values arrive already
// expanded (see valueSpec).
type decoder[T any] struct {
	accepts resp.TypeSet
	decode  func(v resp.Value) (T, error)
	id      decoderID
}

// decoderID names a decoder without holding a pointer. A Future keeps it
// rather than the decoder: to escape analysis a command is one value, so
// keeping any pointer of it on the heap would send its argument array
// there too, an allocation per queued command.
type decoderID uint8

// decoders holds every decoder by its id. It is filled while the package
// initializes, by newDecoder, and only read afterwards.
var decoders []any

func newDecoder[T any](accepts resp.TypeSet, decode func(v resp.Value) (T, error)) *decoder[T] {
	d := &decoder[T]{accepts: accepts, decode: decode, id: decoderID(len(decoders))}
	if int(d.id) != len(decoders) {
		panic("zipline: more decoders than a decoderID can name")
	}
	decoders = append(decoders, d)
	return d
}

// decoderOf returns the decoder named id.
func decoderOf[T any](id decoderID) *decoder[T] { return decoders[id].(*decoder[T]) }

// Reply type sets. RESP2 and RESP3 spell some replies differently (a double
// is a bulk string in RESP2, a set an array), so a set names both.
var (
	tsStatus       = resp.Types(resp.SimpleString)
	tsQueued       = tsStatus // what answers every command queued inside MULTI
	tsStatusOrNull = resp.Types(resp.SimpleString, resp.Null)
	tsBulk         = resp.Types(resp.BulkString, resp.Null)
	tsText         = resp.Types(resp.BulkString, resp.SimpleString, resp.Verbatim, resp.Null)
	tsInt          = resp.Types(resp.Integer)
	tsIntOrNull    = resp.Types(resp.Integer, resp.Null)
	tsFloat        = resp.Types(resp.Double, resp.BulkString)
	tsFloatOrNull  = resp.Types(resp.Double, resp.BulkString, resp.Null)
	tsBool         = resp.Types(resp.Integer, resp.Boolean)
	tsList         = resp.Types(resp.Array, resp.Set)
	tsListOrNull   = resp.Types(resp.Array, resp.Set, resp.Null)
	tsMap          = resp.Types(resp.Map, resp.Array)
)

var (
	decValue      = newDecoder(resp.AnyType, func(v resp.Value) (Value, error) { return Value{v}, nil })
	decOK         = newDecoder(tsStatus, func(resp.Value) (bool, error) { return true, nil })
	decSetCond    = newDecoder(tsStatusOrNull, func(v resp.Value) (bool, error) { return !v.IsNull(), nil })
	decBytes      = newDecoder(tsBulk, func(v resp.Value) ([]byte, error) { return Value{v}.AsBytes() })
	decString     = newDecoder(tsText, func(v resp.Value) (string, error) { return Value{v}.AsString() })
	decStatus     = newDecoder(tsStatus, func(v resp.Value) (string, error) { return Value{v}.AsString() })
	decInt        = newDecoder(tsInt, func(v resp.Value) (int64, error) { return Value{v}.AsInt64() })
	decIntOrNil   = newDecoder(tsIntOrNull, func(v resp.Value) (int64, error) { return Value{v}.AsInt64() })
	decFloat      = newDecoder(tsFloat, func(v resp.Value) (float64, error) { return Value{v}.AsFloat64() })
	decFloatOrNil = newDecoder(tsFloatOrNull, func(v resp.Value) (float64, error) { return Value{v}.AsFloat64() })
	decBool       = newDecoder(tsBool, func(v resp.Value) (bool, error) { return Value{v}.AsBool() })
	decStrings    = newDecoder(tsList, func(v resp.Value) ([]string, error) { return Value{v}.AsStrings() })
	decBytesSlice = newDecoder(tsListOrNull, bytesSlice)
	decBools      = newDecoder(tsList, bools)
	decBytesMap   = newDecoder(tsMap, bytesMap)
	decFieldMap   = newDecoder(tsMap, func(v resp.Value) (FieldMap, error) { return bytesMap(v) })
	decStringMap  = newDecoder(tsMap, stringMap)
	decTTL        = newDecoder(tsInt, func(v resp.Value) (time.Duration, error) { return ttl(v, time.Second) })
	decPTTL       = newDecoder(tsInt, func(v resp.Value) (time.Duration, error) { return ttl(v, time.Millisecond) })
	decKeyValue   = newDecoder(tsListOrNull, keyValue)
	decZs         = newDecoder(tsList, zs)
	decZ          = newDecoder(tsListOrNull, z)
	decKeyZ       = newDecoder(tsListOrNull, keyZ)
	decScan       = newDecoder(resp.Types(resp.Array), scan)

	decInts       = newDecoder(tsListOrNull, ints)
	decIntsOrZero = newDecoder(tsList, func(v resp.Value) ([]int64, error) {
		elems := v.Elems()
		out := make([]int64, len(elems))
		for i, e := range elems {
			out[i] = e.Int() // a null (BITFIELD's OVERFLOW FAIL) is 0
		}
		return out, nil
	})
	decTTLs        = newDecoder(tsList, func(v resp.Value) ([]time.Duration, error) { return ttls(v, time.Second) })
	decPTTLs       = newDecoder(tsList, func(v resp.Value) ([]time.Duration, error) { return ttls(v, time.Millisecond) })
	decFieldValues = newDecoder(tsMap, fieldValues)
	decKeyValues   = newDecoder(tsListOrNull, keyValues)
	decFloatsOrNaN = newDecoder(tsList, floatsOrNaN)
	decRankScore   = newDecoder(tsListOrNull, rankScore)
	decKeyZs       = newDecoder(tsListOrNull, keyZs)
	// decFieldMaps reads an array of maps (pairs in RESP2) as strings,
	// numbers in decimal: ACL LOG's entries.
	decFieldMaps = newDecoder(tsList, func(v resp.Value) ([]map[string]string, error) {
		return each(v, func(e resp.Value) (map[string]string, error) {
			elems, err := pairs(e, "map[string]string")
			if err != nil {
				return nil, err
			}
			m := make(map[string]string, len(elems)/2)
			for i := 0; i < len(elems); i += 2 {
				m[string(elems[i].Bytes())], _ = Value{elems[i+1]}.AsString()
			}
			return m, nil
		})
	})
)

// ints reads an array of integers (HEXPIRE's codes, LPOS ... COUNT); a
// null (nothing found) is an empty slice.
func ints(v resp.Value) ([]int64, error) {
	if v.IsNull() {
		return nil, nil
	}
	elems := v.Elems()
	out := make([]int64, len(elems))
	for i, e := range elems {
		n, err := Value{e}.AsInt64()
		if err != nil {
			return nil, err
		}
		out[i] = n
	}
	return out, nil
}

// ttls reads an array of times to live (HTTL), -1 and -2 as NoExpiry and
// NoKey.
func ttls(v resp.Value, unit time.Duration) ([]time.Duration, error) {
	elems := v.Elems()
	out := make([]time.Duration, len(elems))
	for i, e := range elems {
		d, err := ttl(e, unit)
		if err != nil {
			return nil, err
		}
		out[i] = d
	}
	return out, nil
}

// fieldValues reads field, value pairs: a flat array (RESP2), or an array
// of pairs (RESP3 HRANDFIELD ... WITHVALUES).
func fieldValues(v resp.Value) ([]FieldValue, error) {
	elems := v.Elems()
	if len(elems) > 0 && elems[0].Type() == resp.Array {
		out := make([]FieldValue, len(elems))
		for i, p := range elems {
			pe := p.Elems()
			if len(pe) != 2 {
				return nil, &TypeError{Want: "[]FieldValue", Got: "pair of " + strconv.Itoa(len(pe))}
			}
			b, err := Value{pe[1]}.AsBytes()
			if err != nil {
				return nil, err
			}
			out[i] = FieldValue{Field: string(pe[0].Bytes()), Value: b}
		}
		return out, nil
	}
	elems, err := pairs(v, "[]FieldValue")
	if err != nil {
		return nil, err
	}
	out := make([]FieldValue, len(elems)/2)
	for i := range out {
		b, err := Value{elems[2*i+1]}.AsBytes()
		if err != nil {
			return nil, err
		}
		out[i] = FieldValue{Field: string(elems[2*i].Bytes()), Value: b}
	}
	return out, nil
}

// keyValues reads [key, [values...]] (LMPOP), or Nil.
func keyValues(v resp.Value) (KeyValues, error) {
	if v.IsNull() {
		return KeyValues{}, Nil
	}
	elems := v.Elems()
	if len(elems) != 2 {
		return KeyValues{}, &TypeError{Want: "KeyValues", Got: v.Type().String()}
	}
	vals, err := bytesSlice(elems[1])
	return KeyValues{Key: string(elems[0].Bytes()), Values: vals}, err
}

// floatsOrNaN reads an array of scores, NaN for nulls (ZMSCORE).
func floatsOrNaN(v resp.Value) ([]float64, error) {
	elems := v.Elems()
	out := make([]float64, len(elems))
	for i, e := range elems {
		if e.IsNull() {
			out[i] = math.NaN()
			continue
		}
		f, err := Value{e}.AsFloat64()
		if err != nil {
			return nil, err
		}
		out[i] = f
	}
	return out, nil
}

// rankScore reads [rank, score] (ZRANK ... WITHSCORE), or Nil.
func rankScore(v resp.Value) (RankScore, error) {
	if v.IsNull() {
		return RankScore{}, Nil
	}
	elems := v.Elems()
	if len(elems) != 2 {
		return RankScore{}, &TypeError{Want: "RankScore", Got: v.Type().String()}
	}
	f, err := Value{elems[1]}.AsFloat64()
	return RankScore{Rank: elems[0].Int(), Score: f}, err
}

// keyZs reads [key, [[member, score]...]] (ZMPOP), or Nil.
func keyZs(v resp.Value) (KeyZs, error) {
	if v.IsNull() {
		return KeyZs{}, Nil
	}
	elems := v.Elems()
	if len(elems) != 2 {
		return KeyZs{}, &TypeError{Want: "KeyZs", Got: v.Type().String()}
	}
	members, err := zs(elems[1])
	return KeyZs{Key: string(elems[0].Bytes()), Members: members}, err
}

// bytesSlice reads an array of strings, keeping null elements as nil
// (MGET, HMGET).
func bytesSlice(v resp.Value) ([][]byte, error) {
	if v.IsNull() {
		return nil, Nil
	}
	elems := v.Elems()
	out := make([][]byte, len(elems))
	for i, e := range elems {
		if e.IsNull() {
			continue
		}
		b, err := Value{e}.AsBytes()
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}

// bools reads an array of integers as booleans (SMISMEMBER).
func bools(v resp.Value) ([]bool, error) {
	elems, err := Value{v}.AsSlice()
	if err != nil {
		return nil, err
	}
	out := make([]bool, len(elems))
	for i, e := range elems {
		if out[i], err = e.AsBool(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// bytesMap reads a map (RESP3) or flat array of pairs (RESP2) of strings,
// such as HGETALL's.
func bytesMap(v resp.Value) (map[string][]byte, error) {
	elems, err := pairs(v, "map[string][]byte")
	if err != nil {
		return nil, err
	}
	m := make(map[string][]byte, len(elems)/2)
	for i := 0; i < len(elems); i += 2 {
		b, err := Value{elems[i+1]}.AsBytes()
		if err != nil {
			return nil, err
		}
		m[string(elems[i].Bytes())] = b
	}
	return m, nil
}

// stringMap reads a map of strings (CONFIG GET).
func stringMap(v resp.Value) (map[string]string, error) {
	elems, err := pairs(v, "map[string]string")
	if err != nil {
		return nil, err
	}
	m := make(map[string]string, len(elems)/2)
	for i := 0; i < len(elems); i += 2 {
		s, err := Value{elems[i+1]}.AsString()
		if err != nil {
			return nil, err
		}
		m[string(elems[i].Bytes())] = s
	}
	return m, nil
}

func pairs(v resp.Value, want string) ([]resp.Value, error) {
	switch v.Type() {
	case resp.Map, resp.Array:
	default:
		return nil, Value{v}.check(want)
	}
	elems := v.Elems()
	if len(elems)%2 != 0 {
		return nil, &TypeError{Want: want, Got: "array of odd length"}
	}
	return elems, nil
}

// NoExpiry is what TTL and PTTL return for a key that exists and has no
// expiry, and NoKey what they return for a key that does not exist: the
// server's -1 and -2, as go-redis returns them (as Durations of -1 and -2
// nanoseconds), with a nil error.
const (
	NoExpiry time.Duration = -1
	NoKey    time.Duration = -2
)

func ttl(v resp.Value, unit time.Duration) (time.Duration, error) {
	n, err := Value{v}.AsInt64()
	switch {
	case err != nil:
		return 0, err
	case n == -2:
		return NoKey, nil
	case n == -1:
		return NoExpiry, nil
	}
	return time.Duration(n) * unit, nil
}

// KeyValue is an element popped from one of several keys (BLPOP, BRPOP),
// or a key and its value (MSET).
type KeyValue struct {
	Key   string
	Value []byte
}

func keyValue(v resp.Value) (KeyValue, error) {
	if v.IsNull() {
		return KeyValue{}, Nil // timed out
	}
	elems := v.Elems()
	if len(elems) != 2 {
		return KeyValue{}, &TypeError{Want: "KeyValue", Got: v.Type().String()}
	}
	b, err := Value{elems[1]}.AsBytes()
	return KeyValue{Key: string(elems[0].Bytes()), Value: b}, err
}

// Z is a sorted-set member with its score.
type Z struct {
	Member string
	Score  float64
}

// zs reads members with scores: RESP3 sends [member, score] pairs, RESP2 a
// flat array member, score, member, score...
func zs(v resp.Value) ([]Z, error) {
	elems, err := Value{v}.AsSlice()
	if err != nil {
		return nil, err
	}
	if len(elems) > 0 && len(elems[0].v.Elems()) == 2 {
		out := make([]Z, len(elems))
		for i, e := range elems {
			if out[i], err = pairToZ(e.v.Elems()[0], e.v.Elems()[1]); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	if len(elems)%2 != 0 {
		return nil, &TypeError{Want: "[]Z", Got: "array of odd length"}
	}
	out := make([]Z, len(elems)/2)
	for i := range out {
		if out[i], err = pairToZ(elems[2*i].v, elems[2*i+1].v); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// z reads one member with its score (ZPOPMIN with no count in RESP3 is a
// flat pair; RESP2 a flat array too).
func z(v resp.Value) (Z, error) {
	if v.IsNull() {
		return Z{}, Nil
	}
	elems := v.Elems()
	switch len(elems) {
	case 0:
		return Z{}, Nil
	case 2:
		return pairToZ(elems[0], elems[1])
	case 1:
		if p := elems[0].Elems(); len(p) == 2 {
			return pairToZ(p[0], p[1])
		}
	}
	return Z{}, &TypeError{Want: "Z", Got: v.Type().String()}
}

// KeyZ is a sorted-set member popped from one of several keys (BZPOPMIN).
type KeyZ struct {
	Key string
	Z
}

func keyZ(v resp.Value) (KeyZ, error) {
	if v.IsNull() {
		return KeyZ{}, Nil
	}
	elems := v.Elems()
	if len(elems) != 3 {
		return KeyZ{}, &TypeError{Want: "KeyZ", Got: v.Type().String()}
	}
	z, err := pairToZ(elems[1], elems[2])
	return KeyZ{Key: string(elems[0].Bytes()), Z: z}, err
}

func pairToZ(member, score resp.Value) (Z, error) {
	f, err := Value{score}.AsFloat64()
	return Z{Member: string(member.Bytes()), Score: f}, err
}

// scan reads a SCAN-family page: [cursor, [elements...]].
func scan(v resp.Value) (scanPage, error) {
	elems := v.Elems()
	if len(elems) != 2 {
		return scanPage{}, &TypeError{Want: "scan page", Got: v.Type().String()}
	}
	return scanPage{cursor: string(elems[0].Bytes()), items: elems[1].Elems()}, nil
}

type scanPage struct {
	cursor string
	items  []resp.Value
}

// each decodes every element of an array with f.
func each[T any](v resp.Value, f func(resp.Value) (T, error)) ([]T, error) {
	elems := v.Elems()
	out := make([]T, len(elems))
	for i, e := range elems {
		var err error
		if out[i], err = f(e); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// eachNonNull is each, skipping null elements (XAUTOCLAIM before 7.0
// answered deleted entries with nulls).
func eachNonNull[T any](v resp.Value, f func(resp.Value) (T, error)) ([]T, error) {
	var out []T
	for _, e := range v.Elems() {
		if e.IsNull() {
			continue
		}
		x, err := f(e)
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, nil
}

// fieldMap reads a map (RESP3) or flat array of pairs (RESP2) by name.
func fieldMap(v resp.Value) map[string]resp.Value {
	e := v.Elems()
	m := make(map[string]resp.Value, len(e)/2)
	for i := 0; i+1 < len(e); i += 2 {
		m[string(e[i].Bytes())] = e[i+1]
	}
	return m
}

// FieldValue is one field of a hash and its value.
type FieldValue struct {
	Field string
	Value []byte
}

// KeyValues are elements popped from one of several keys (LMPOP, BLMPOP).
type KeyValues struct {
	Key    string
	Values [][]byte
}

// RankScore is a member's rank with its score.
type RankScore struct {
	Rank  int64
	Score float64
}

// KeyZs are members popped from one of several sorted sets (ZMPOP,
// BZMPOP).
type KeyZs struct {
	Key     string
	Members []Z
}
