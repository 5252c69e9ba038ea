package resp

import (
	"math"
	"strconv"
	"unsafe"
)

// Type is the kind of a reply, named by its RESP type byte.
type Type byte

// Reply types. RESP2 servers send only the first five; a RESP2 null bulk
// string or null array is reported as Null, like RESP3's "_".
const (
	SimpleString Type = '+'
	SimpleError  Type = '-'
	Integer      Type = ':'
	BulkString   Type = '$'
	Array        Type = '*'
	Null         Type = '_'
	Double       Type = ','
	Boolean      Type = '#'
	BlobError    Type = '!'
	Verbatim     Type = '='
	BigNumber    Type = '('
	Map          Type = '%'
	Set          Type = '~'
	Push         Type = '>'
	attribute    Type = '|' // parsed and dropped: nothing in zipline uses reply attributes
)

func (t Type) String() string {
	switch t {
	case SimpleString:
		return "simple string"
	case SimpleError:
		return "simple error"
	case Integer:
		return "integer"
	case BulkString:
		return "bulk string"
	case Array:
		return "array"
	case Null:
		return "null"
	case Double:
		return "double"
	case Boolean:
		return "boolean"
	case BlobError:
		return "blob error"
	case Verbatim:
		return "verbatim string"
	case BigNumber:
		return "big number"
	case Map:
		return "map"
	case Set:
		return "set"
	case Push:
		return "push"
	case 0:
		return "none"
	}
	return "type " + strconv.QuoteRune(rune(t))
}

// Value is one parsed reply. It is a plain struct, not an interface, so a
// reply with no aggregate costs at most the allocation of its bytes.
//
// Which fields mean something depends on the type: strings, errors, verbatim
// strings and big numbers use the bytes; integers, booleans and doubles the
// number; arrays, sets, pushes and maps the elements (a map's are key, value,
// key, value...).
type Value struct {
	typ   Type
	num   int64 // Integer; Boolean as 0/1; Double as IEEE bits; Verbatim format packed in 3 bytes
	str   []byte
	elems []Value
}

// Simple strings that arrive on almost every connection are shared, so that
// +OK costs no allocation. Their bytes must not be modified.
var internedSimple = [...][]byte{[]byte("OK"), []byte("QUEUED"), []byte("PONG")}

// Constructors, used by tests and by code that synthesizes replies.

// StringValue returns a bulk string reply.
func StringValue(b []byte) Value { return Value{typ: BulkString, str: b} }

// IntValue returns an integer reply.
func IntValue(n int64) Value { return Value{typ: Integer, num: n} }

// NullValue returns a null reply.
func NullValue() Value { return Value{typ: Null} }

// ErrorValue returns a simple error reply with the given text.
func ErrorValue(text string) Value { return Value{typ: SimpleError, str: []byte(text)} }

// ArrayValue returns an array reply.
func ArrayValue(elems []Value) Value { return Value{typ: Array, elems: elems} }

// Type reports the reply's type; the zero Value has type 0.
func (v Value) Type() Type { return v.typ }

// IsNull reports whether the reply is a null (RESP3 "_", RESP2 "$-1" or "*-1").
func (v Value) IsNull() bool { return v.typ == Null }

// IsError reports whether the reply is a simple or blob error.
func (v Value) IsError() bool { return v.typ == SimpleError || v.typ == BlobError }

// Bytes returns the bytes of a string-like reply (simple, bulk, verbatim,
// big number, error), or nil. Bulk string bytes belong to the caller; simple
// string bytes may be shared and must not be modified.
func (v Value) Bytes() []byte { return v.str }

// Shared reports whether Bytes may alias memory owned by the package, in
// which case a caller that hands the bytes out must copy them first.
func (v Value) Shared() bool { return v.typ == SimpleString }

// Int returns the number of an integer reply, or 1/0 for a boolean.
func (v Value) Int() int64 { return v.num }

// Float returns the number of a double reply.
func (v Value) Float() float64 { return math.Float64frombits(uint64(v.num)) }

// Bool returns the value of a boolean reply.
func (v Value) Bool() bool { return v.num != 0 }

// Elems returns the elements of an array, set, push or map reply; a map's
// keys and values alternate.
func (v Value) Elems() []Value { return v.elems }

// VerbatimFormat returns the three-letter format of a verbatim string
// ("txt", "mkd"), or "".
func (v Value) VerbatimFormat() string {
	if v.typ != Verbatim {
		return ""
	}
	f := [3]byte{byte(v.num >> 16), byte(v.num >> 8), byte(v.num)}
	return string(f[:])
}

// String returns a short human-readable form for logs and test failures.
func (v Value) String() string {
	switch v.typ {
	case SimpleString, BulkString, Verbatim, BigNumber:
		return strconv.Quote(unsafeString(v.str))
	case SimpleError, BlobError:
		return "error(" + string(v.str) + ")"
	case Integer:
		return strconv.FormatInt(v.num, 10)
	case Boolean:
		return strconv.FormatBool(v.Bool())
	case Double:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	case Null:
		return "nil"
	case Array, Set, Push, Map:
		b := []byte{'['}
		for i, e := range v.elems {
			if i > 0 {
				b = append(b, ' ')
			}
			b = append(b, e.String()...)
		}
		return string(append(b, ']'))
	}
	return v.typ.String()
}

func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
