package zipline

import (
	"time"

	"github.com/ziplinekv/zipline/internal/resp"
)

// Decoders shared by typed Client methods and Batch futures. Each receives
// a reply that is not an error reply.

func decValue(_ *Client, v resp.Value) (Value, error) { return Value{v}, nil }

// decOK accepts +OK (and any other status) as success.
func decOK(_ *Client, v resp.Value) (bool, error) {
	if v.IsNull() {
		return false, Nil
	}
	return true, nil
}

// decSetCond reads SET NX/XX: OK when written, null when the condition
// failed.
func decSetCond(_ *Client, v resp.Value) (bool, error) { return !v.IsNull(), nil }

func decBytes(_ *Client, v resp.Value) ([]byte, error) { return Value{v}.AsBytes() }

func decString(_ *Client, v resp.Value) (string, error) { return Value{v}.AsString() }

func decInt(_ *Client, v resp.Value) (int64, error) { return Value{v}.AsInt64() }

func decFloat(_ *Client, v resp.Value) (float64, error) { return Value{v}.AsFloat64() }

func decBool(_ *Client, v resp.Value) (bool, error) { return Value{v}.AsBool() }

func decStrings(_ *Client, v resp.Value) ([]string, error) { return Value{v}.AsStrings() }

// decBytesSlice reads an array of strings, keeping null elements as nil
// (MGET, HMGET).
func decBytesSlice(c *Client, v resp.Value) ([][]byte, error) {
	if v.IsNull() {
		return nil, Nil
	}
	elems := v.Elems()
	out := make([][]byte, len(elems))
	for i, e := range elems {
		if e.IsNull() {
			continue
		}
		b, err := decBytes(c, e)
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}

// decBools reads an array of integers as booleans (SMISMEMBER).
func decBools(_ *Client, v resp.Value) ([]bool, error) {
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

// decBytesMap reads a map (RESP3) or flat array of pairs (RESP2) of
// strings, such as HGETALL's.
func decBytesMap(c *Client, v resp.Value) (map[string][]byte, error) {
	switch v.Type() {
	case resp.Map, resp.Array:
	default:
		return nil, Value{v}.check("map[string][]byte")
	}
	elems := v.Elems()
	if len(elems)%2 != 0 {
		return nil, &TypeError{Want: "map[string][]byte", Got: "array of odd length"}
	}
	m := make(map[string][]byte, len(elems)/2)
	for i := 0; i < len(elems); i += 2 {
		b, err := decBytes(c, elems[i+1])
		if err != nil {
			return nil, err
		}
		m[string(elems[i].Bytes())] = b
	}
	return m, nil
}

// NoExpiry is the TTL of a key that exists and has no expiry.
const NoExpiry time.Duration = -1

// decTTL reads TTL (seconds) and decPTTL (milliseconds): -2 means the key
// does not exist (Nil), -1 that it has no expiry (NoExpiry).
func decTTL(_ *Client, v resp.Value) (time.Duration, error)  { return ttl(v, time.Second) }
func decPTTL(_ *Client, v resp.Value) (time.Duration, error) { return ttl(v, time.Millisecond) }

func ttl(v resp.Value, unit time.Duration) (time.Duration, error) {
	n, err := Value{v}.AsInt64()
	switch {
	case err != nil:
		return 0, err
	case n == -2:
		return 0, Nil
	case n == -1:
		return NoExpiry, nil
	}
	return time.Duration(n) * unit, nil
}

// KeyValue is an element popped from one of several keys (BLPOP, BRPOP,
// LMPOP's first element).
type KeyValue struct {
	Key   string
	Value []byte
}

func decKeyValue(c *Client, v resp.Value) (KeyValue, error) {
	if v.IsNull() {
		return KeyValue{}, Nil // timed out
	}
	elems := v.Elems()
	if len(elems) != 2 {
		return KeyValue{}, &TypeError{Want: "KeyValue", Got: v.Type().String()}
	}
	b, err := decListValue(c, elems[1])
	return KeyValue{Key: string(elems[0].Bytes()), Value: b}, err
}

// Z is a sorted-set member with its score.
type Z struct {
	Member string
	Score  float64
}

// decZs reads members with scores: RESP3 sends [member, score] pairs,
// RESP2 a flat array member, score, member, score...
func decZs(_ *Client, v resp.Value) ([]Z, error) {
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

// decZ reads one member with its score (ZPOPMIN with no count in RESP3 is
// a flat pair; BZPOPMIN adds the key first).
func decZ(c *Client, v resp.Value) (Z, error) {
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

func decKeyZ(_ *Client, v resp.Value) (KeyZ, error) {
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

// decScan reads a SCAN-family page: [cursor, [elements...]].
func decScan(_ *Client, v resp.Value) (scanPage, error) {
	elems := v.Elems()
	if v.Type() != resp.Array || len(elems) != 2 {
		return scanPage{}, &TypeError{Want: "scan page", Got: v.Type().String()}
	}
	return scanPage{cursor: string(elems[0].Bytes()), items: elems[1].Elems()}, nil
}

type scanPage struct {
	cursor string
	items  []resp.Value
}

// Stored values pass through the Client's value decoding (compression),
// tagged with their family.

func storedValue(f valueFamily) decoder[[]byte] {
	return func(c *Client, v resp.Value) ([]byte, error) {
		b, err := decBytes(c, v)
		if err != nil {
			return nil, err
		}
		return c.decodeValue(b, f)
	}
}

func storedValues(f valueFamily) decoder[[][]byte] {
	return func(c *Client, v resp.Value) ([][]byte, error) {
		out, err := decBytesSlice(c, v)
		if err != nil {
			return nil, err
		}
		for i, b := range out {
			if b == nil {
				continue
			}
			if out[i], err = c.decodeValue(b, f); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
}

var (
	decStored      = storedValue(familyStrings)
	decStoredSlice = storedValues(familyStrings)
	decHashValue   = storedValue(familyHashes)
	decHashValues  = storedValues(familyHashes)
	decListValue   = storedValue(familyLists)
	decListValues  = storedValues(familyLists)
)

// decHashMap reads HGETALL, expanding the values.
func decHashMap(c *Client, v resp.Value) (map[string][]byte, error) {
	m, err := decBytesMap(c, v)
	if err != nil {
		return nil, err
	}
	for k, b := range m {
		if m[k], err = c.decodeValue(b, familyHashes); err != nil {
			return nil, err
		}
	}
	return m, nil
}
