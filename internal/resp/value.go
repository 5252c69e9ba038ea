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

	// Oversize is not a RESP type: it stands for a reply the Reader skipped
	// because it exceeded a limit whose size was announced up front (a bulk
	// string's length, an aggregate's element count). The stream stays in
	// step, so only the command it answers fails. See Value.Oversize.
	Oversize Type = 1
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
	case Oversize:
		return "reply over a limit"
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

// Oversize returns what the Reader knows of a reply it skipped for
// exceeding a limit (see the Oversize type), or nil for any other reply.
func (v Value) Oversize(lim Limits) *LimitError {
	if v.typ != Oversize {
		return nil
	}
	lim = lim.withDefaults()
	e := &LimitError{What: string(v.str), Size: v.num, Limit: lim.MaxBulkLen}
	if e.What == whatAggregate {
		e.Limit = lim.MaxAggregateLen
	}
	return e
}

// Describe names the reply's type and size without its content, for errors
// and logs, which must never carry stored values.
func (v Value) Describe() string {
	switch v.typ {
	case SimpleString, SimpleError, BulkString, BlobError, Verbatim, BigNumber:
		return v.typ.String() + " of " + strconv.Itoa(len(v.str)) + " bytes"
	case Array, Set, Push, Map:
		return v.typ.String() + " of " + strconv.Itoa(len(v.elems)) + " elements"
	}
	return v.typ.String()
}

// Type reports the reply's type; the zero Value has type 0.
func (v Value) Type() Type { return v.typ }

// Failed reports whether a reply of this type stands for a failure: an
// error reply, or a reply over the limits (Oversize).
func (t Type) Failed() bool { return t == SimpleError || t == BlobError || t == Oversize }

// IsNull reports whether the reply is a null (RESP3 "_", RESP2 "$-1" or "*-1").
func (v Value) IsNull() bool { return v.typ == Null }

// IsError reports whether the reply is a simple or blob error.
func (v Value) IsError() bool { return v.typ == SimpleError || v.typ == BlobError }

// Bytes returns the bytes of a string-like reply (simple, bulk, verbatim,
// big number, error), or nil. Bulk string bytes belong to the caller (the
// bulk strings of one aggregate may share one allocation, each capped at
// its own length, so writing or appending to one never touches another);
// simple string bytes may be shared and must not be modified.
func (v Value) Bytes() []byte { return v.str }

// Shared reports whether Bytes may alias memory owned by the package, in
// which case a caller that hands the bytes out must copy them first.
func (v Value) Shared() bool { return v.typ == SimpleString }

// Small reports whether v keeps at most n bytes alive: it has no elements,
// and its bytes, if any, sit in an array of at most n.
func (v Value) Small(n int) bool { return v.elems == nil && cap(v.str) <= n }

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

// TypeSet is a set of reply types: the replies that can answer a command.
// Matching every reply against its command's set is how a connection
// notices a stream that has slipped out of step (RESP has no checksum), so
// a value is never handed to the wrong caller. Error replies can answer any
// command and are always accepted, as are Oversize stand-ins.
type TypeSet uint32

// Types returns the set of the given types.
func Types(ts ...Type) TypeSet {
	var s TypeSet
	for _, t := range ts {
		s |= t.bit()
	}
	return s
}

// AnyType accepts every reply: for commands whose reply zipline does not
// know (Do with an arbitrary command).
const AnyType TypeSet = 1<<32 - 1

// Accepts reports whether a reply of type t can answer a command expecting
// s. The empty set accepts everything.
func (s TypeSet) Accepts(t Type) bool {
	return s == 0 || t.bit()&(s|alwaysAccepted) != 0
}

const alwaysAccepted = 1<<bitSimpleError | 1<<bitBlobError | 1<<bitOversize

// Bit positions of the types in a TypeSet.
const (
	bitSimpleString = iota
	bitSimpleError
	bitInteger
	bitBulkString
	bitArray
	bitNull
	bitDouble
	bitBoolean
	bitBlobError
	bitVerbatim
	bitBigNumber
	bitMap
	bitSet
	bitPush
	bitOversize
)

func (t Type) bit() TypeSet {
	switch t {
	case SimpleString:
		return 1 << bitSimpleString
	case SimpleError:
		return 1 << bitSimpleError
	case Integer:
		return 1 << bitInteger
	case BulkString:
		return 1 << bitBulkString
	case Array:
		return 1 << bitArray
	case Null:
		return 1 << bitNull
	case Double:
		return 1 << bitDouble
	case Boolean:
		return 1 << bitBoolean
	case BlobError:
		return 1 << bitBlobError
	case Verbatim:
		return 1 << bitVerbatim
	case BigNumber:
		return 1 << bitBigNumber
	case Map:
		return 1 << bitMap
	case Set:
		return 1 << bitSet
	case Push:
		return 1 << bitPush
	case Oversize:
		return 1 << bitOversize
	}
	return 0
}
