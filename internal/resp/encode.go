package resp

import (
	"encoding"
	"fmt"
	"math"
	"strconv"
)

// AppendArrayLen appends the header of a command with n arguments. Every
// command is an array of bulk strings, so this is followed by n Append calls.
func AppendArrayLen(dst []byte, n int) []byte {
	return appendLengthLine(dst, '*', n)
}

// AppendBulkString appends s as a bulk string.
func AppendBulkString(dst []byte, s string) []byte {
	dst = appendBulkHeader(dst, len(s))
	dst = append(dst, s...)
	return append(dst, '\r', '\n')
}

// AppendBulk appends b as a bulk string.
func AppendBulk(dst []byte, b []byte) []byte {
	dst = appendBulkHeader(dst, len(b))
	dst = append(dst, b...)
	return append(dst, '\r', '\n')
}

// AppendBulkInt appends the decimal form of n as a bulk string.
func AppendBulkInt(dst []byte, n int64) []byte {
	var tmp [20]byte
	return AppendBulk(dst, strconv.AppendInt(tmp[:0], n, 10))
}

// AppendBulkUint appends the decimal form of n as a bulk string.
func AppendBulkUint(dst []byte, n uint64) []byte {
	var tmp [20]byte
	return AppendBulk(dst, strconv.AppendUint(tmp[:0], n, 10))
}

// AppendBulkFloat appends f in the shortest form that parses back to the same
// float64. Infinities are written as "+inf" and "-inf", the spelling Redis
// accepts for scores and ranges.
func AppendBulkFloat(dst []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return AppendBulkString(dst, "+inf")
	case math.IsInf(f, -1):
		return AppendBulkString(dst, "-inf")
	}
	var tmp [32]byte
	return AppendBulk(dst, strconv.AppendFloat(tmp[:0], f, 'g', -1, 64))
}

// AppendBulkBool appends true as "1" and false as "0".
func AppendBulkBool(dst []byte, b bool) []byte {
	if b {
		return append(dst, "$1\r\n1\r\n"...)
	}
	return append(dst, "$1\r\n0\r\n"...)
}

func appendBulkHeader(dst []byte, n int) []byte {
	return appendLengthLine(dst, '$', n)
}

// appendLengthLine appends a header line: kind, the length n, CRLF. Almost
// every command writes a few of them, nearly all under 100 (argument
// counts, keys, small values), which are spelled here without a call into
// strconv: at hundreds of callers that call showed in the profile.
func appendLengthLine(dst []byte, kind byte, n int) []byte {
	switch {
	case uint(n) < 10:
		return append(dst, kind, byte('0'+n), '\r', '\n')
	case uint(n) < 100:
		return append(dst, kind, byte('0'+n/10), byte('0'+n%10), '\r', '\n')
	}
	dst = append(dst, kind)
	dst = strconv.AppendInt(dst, int64(n), 10)
	return append(dst, '\r', '\n')
}

// ArgTypeError reports an argument of a type that has no RESP encoding.
type ArgTypeError struct {
	Index int // position in the argument list
	Value any
}

func (e *ArgTypeError) Error() string {
	return fmt.Sprintf("resp: argument %d has unsupported type %T", e.Index, e.Value)
}

// AppendAny appends v as a bulk string. It accepts strings, byte slices, all
// integer and float types, bool, and encoding.BinaryMarshaler. Anything else,
// nil included, is an *ArgTypeError: guessing an encoding for an arbitrary
// value would store something the caller did not mean.
func AppendAny(dst []byte, index int, v any) ([]byte, error) {
	switch x := v.(type) {
	case string:
		return AppendBulkString(dst, x), nil
	case []byte:
		return AppendBulk(dst, x), nil
	case int:
		return AppendBulkInt(dst, int64(x)), nil
	case int64:
		return AppendBulkInt(dst, x), nil
	case int32:
		return AppendBulkInt(dst, int64(x)), nil
	case int16:
		return AppendBulkInt(dst, int64(x)), nil
	case int8:
		return AppendBulkInt(dst, int64(x)), nil
	case uint:
		return AppendBulkUint(dst, uint64(x)), nil
	case uint64:
		return AppendBulkUint(dst, x), nil
	case uint32:
		return AppendBulkUint(dst, uint64(x)), nil
	case uint16:
		return AppendBulkUint(dst, uint64(x)), nil
	case uint8:
		return AppendBulkUint(dst, uint64(x)), nil
	case float64:
		return AppendBulkFloat(dst, x), nil
	case float32:
		return AppendBulkFloat(dst, float64(x)), nil
	case bool:
		return AppendBulkBool(dst, x), nil
	case encoding.BinaryMarshaler:
		b, err := x.MarshalBinary()
		if err != nil {
			return dst, fmt.Errorf("resp: argument %d: %w", index, err)
		}
		return AppendBulk(dst, b), nil
	}
	return dst, &ArgTypeError{Index: index, Value: v}
}
