package zipline

import (
	"errors"
	"math"
	"strconv"
	"unsafe"

	"github.com/ziplinekv/zipline/internal/resp"
)

// Value is a reply, as returned by Do and by the futures of a Batch. Its
// As methods convert it to Go types. They return Nil for a null reply, the
// server's error for an error reply (possible inside arrays, e.g. the
// results of a transaction), and a *TypeError when the reply has another
// shape.
type Value struct {
	v resp.Value
}

// Kind returns the RESP type of the reply: "bulk string", "integer",
// "array", "map", "null", ...
func (v Value) Kind() string { return v.v.Type().String() }

// Err returns the error an error reply stands for (a *ServerError), or nil
// for any other reply: inside an array, such as a transaction's results,
// an element can be an error.
func (v Value) Err() error {
	if v.v.IsError() {
		return serverError(v.v)
	}
	return nil
}

// IsNil reports whether the reply is null.
func (v Value) IsNil() bool { return v.v.IsNull() }

// String formats the reply for logs and debugging.
func (v Value) String() string { return v.v.String() }

func (v Value) check(want string) error {
	switch {
	case v.v.IsNull():
		return Nil
	case v.v.IsError():
		return serverError(v.v)
	}
	return &TypeError{Want: want, Got: v.Kind()}
}

// AsBytes returns a string reply (bulk, simple or verbatim) or a big number
// as bytes. The slice belongs to the caller.
func (v Value) AsBytes() ([]byte, error) {
	switch v.v.Type() {
	case resp.BulkString, resp.Verbatim, resp.BigNumber:
		return v.v.Bytes(), nil
	case resp.SimpleString:
		return append([]byte(nil), v.v.Bytes()...), nil
	}
	return nil, v.check("[]byte")
}

// AsString returns a string reply, or the decimal form of a number.
func (v Value) AsString() (string, error) {
	switch v.v.Type() {
	case resp.BulkString, resp.SimpleString, resp.Verbatim, resp.BigNumber:
		return string(v.v.Bytes()), nil
	case resp.Integer:
		return strconv.FormatInt(v.v.Int(), 10), nil
	case resp.Double:
		return strconv.FormatFloat(v.v.Float(), 'g', -1, 64), nil
	}
	return "", v.check("string")
}

// AsInt64 returns an integer reply, or a string reply that holds a
// decimal integer (RESP2 sends numbers such as HGET results as strings).
func (v Value) AsInt64() (int64, error) {
	switch v.v.Type() {
	case resp.Integer, resp.Boolean:
		return v.v.Int(), nil
	case resp.BulkString, resp.SimpleString:
		n, err := strconv.ParseInt(unsafeString(v.v.Bytes()), 10, 64)
		if err != nil {
			return 0, &TypeError{Want: "int64", Got: numberError(err)}
		}
		return n, nil
	}
	return 0, v.check("int64")
}

// AsFloat64 returns a double reply, or a number in a string reply (RESP2
// sends scores and INCRBYFLOAT results as strings).
func (v Value) AsFloat64() (float64, error) {
	switch v.v.Type() {
	case resp.Double:
		return v.v.Float(), nil
	case resp.Integer:
		return float64(v.v.Int()), nil
	case resp.BulkString, resp.SimpleString:
		return parseFloat(v.v.Bytes())
	}
	return 0, v.check("float64")
}

// AsBool returns a boolean reply, an integer as n != 0, or true for +OK.
func (v Value) AsBool() (bool, error) {
	switch v.v.Type() {
	case resp.Boolean, resp.Integer:
		return v.v.Int() != 0, nil
	case resp.SimpleString:
		return string(v.v.Bytes()) == "OK", nil
	}
	return false, v.check("bool")
}

// AsSlice returns the elements of an array, set or push reply. A map's
// keys and values come alternately.
func (v Value) AsSlice() ([]Value, error) {
	switch v.v.Type() {
	case resp.Array, resp.Set, resp.Push, resp.Map:
		return wrapValues(v.v.Elems()), nil
	}
	return nil, v.check("[]Value")
}

// AsStrings returns an array of strings; null elements become "".
func (v Value) AsStrings() ([]string, error) {
	elems, err := v.AsSlice()
	if err != nil {
		return nil, err
	}
	out := make([]string, len(elems))
	for i, e := range elems {
		if e.IsNil() {
			continue
		}
		if out[i], err = e.AsString(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// AsInt64s returns an array of integers (a script's or function's
// {1, 2, 3}, SMISMEMBER's reply...), as go-redis's Int64Slice: an element
// that is not an integer, or a string that does not parse as one, is an
// error; null elements become 0.
func (v Value) AsInt64s() ([]int64, error) {
	return asSlice(v, Value.AsInt64)
}

// AsFloat64s returns an array of numbers, as go-redis's Float64Slice; null
// elements become 0.
func (v Value) AsFloat64s() ([]float64, error) {
	return asSlice(v, Value.AsFloat64)
}

// AsBools returns an array of booleans (integers 0 and 1, or RESP3
// booleans), as go-redis's BoolSlice; null elements become false.
func (v Value) AsBools() ([]bool, error) {
	return asSlice(v, Value.AsBool)
}

// asSlice converts each element of an array reply with as, nulls to T's
// zero value.
func asSlice[T any](v Value, as func(Value) (T, error)) ([]T, error) {
	elems, err := v.AsSlice()
	if err != nil {
		return nil, err
	}
	out := make([]T, len(elems))
	for i, e := range elems {
		if e.IsNil() {
			continue
		}
		if out[i], err = as(e); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// AsMap returns a map reply (RESP3), or an array of alternating keys and
// values (what RESP2 sends for HGETALL, CONFIG GET...), keyed by string.
func (v Value) AsMap() (map[string]Value, error) {
	switch v.v.Type() {
	case resp.Map, resp.Array:
	default:
		return nil, v.check("map[string]Value")
	}
	elems := v.v.Elems()
	if len(elems)%2 != 0 {
		return nil, &TypeError{Want: "map[string]Value", Got: "array of odd length"}
	}
	m := make(map[string]Value, len(elems)/2)
	for i := 0; i < len(elems); i += 2 {
		k, err := Value{elems[i]}.AsString()
		if err != nil {
			return nil, err
		}
		m[k] = Value{elems[i+1]}
	}
	return m, nil
}

// wrapValues converts without copying: Value is a struct holding exactly
// one resp.Value, so the two slice types have the same layout.
func wrapValues(vs []resp.Value) []Value {
	if len(vs) == 0 {
		return []Value{}
	}
	return unsafe.Slice((*Value)(unsafe.Pointer(unsafe.SliceData(vs))), len(vs))
}

func parseFloat(b []byte) (float64, error) {
	s := unsafeString(b)
	switch s {
	case "inf", "+inf":
		return math.Inf(1), nil
	case "-inf":
		return math.Inf(-1), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, &TypeError{Want: "float64", Got: numberError(err)}
	}
	return f, nil
}

// numberError says why a string reply is not the number asked for: it is
// no number, or one out of the Go type's range ("1e400" as a float64).
func numberError(err error) string {
	if errors.Is(err, strconv.ErrRange) {
		return "number out of range"
	}
	return "non-numeric string"
}

func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// unsafeBytes views s as bytes, which must not be modified.
func unsafeBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }
