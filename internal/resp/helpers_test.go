package resp

import (
	"strconv"
)

// encodeForTest writes v back in RESP3, so tests can check that parsing is
// lossless. (The client never sends replies; this lives with the tests.)
func encodeForTest(dst []byte, v Value) []byte {
	switch v.typ {
	case SimpleString, SimpleError, BigNumber:
		dst = append(dst, byte(v.typ))
		dst = append(dst, v.str...)
		return append(dst, '\r', '\n')
	case BulkString, BlobError:
		dst = append(dst, byte(v.typ))
		dst = strconv.AppendInt(dst, int64(len(v.str)), 10)
		dst = append(dst, '\r', '\n')
		dst = append(dst, v.str...)
		return append(dst, '\r', '\n')
	case Verbatim:
		dst = append(dst, '=')
		dst = strconv.AppendInt(dst, int64(len(v.str)+4), 10)
		dst = append(dst, '\r', '\n')
		dst = append(dst, v.VerbatimFormat()...)
		dst = append(dst, ':')
		dst = append(dst, v.str...)
		return append(dst, '\r', '\n')
	case Integer:
		dst = append(dst, ':')
		dst = strconv.AppendInt(dst, v.num, 10)
		return append(dst, '\r', '\n')
	case Boolean:
		if v.Bool() {
			return append(dst, "#t\r\n"...)
		}
		return append(dst, "#f\r\n"...)
	case Double:
		dst = append(dst, ',')
		dst = strconv.AppendFloat(dst, v.Float(), 'g', -1, 64)
		return append(dst, '\r', '\n')
	case Null:
		return append(dst, "_\r\n"...)
	case Array, Set, Push, Map:
		n := len(v.elems)
		if v.typ == Map {
			n /= 2
		}
		dst = append(dst, byte(v.typ))
		dst = strconv.AppendInt(dst, int64(n), 10)
		dst = append(dst, '\r', '\n')
		for _, e := range v.elems {
			dst = encodeForTest(dst, e)
		}
		return dst
	}
	return dst
}
