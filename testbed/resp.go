package testbed

import (
	"bufio"
	"encoding"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"
)

// Value is a reply as the test bed's own small client reads it (Server.Do):
// independent of the client under test, so that a test that inspects a
// server through it does not lean on the code it tests. RESP2 and RESP3
// replies both read into it; attributes are dropped.
type Value struct {
	kind  byte // the RESP type byte: '+', '-', ':', '$', '*', '_', ',', '#', '%', '~', '>', '=', '(', '!'
	str   []byte
	num   int64
	elems []Value
}

// Bytes returns a string reply's bytes (simple, bulk, verbatim, error), or
// nil.
func (v Value) Bytes() []byte { return v.str }

// Int returns an integer reply, or 1/0 for a boolean.
func (v Value) Int() int64 { return v.num }

// Float returns a double reply, or a number in a string reply.
func (v Value) Float() float64 {
	if v.kind == ',' {
		return math.Float64frombits(uint64(v.num))
	}
	f, _ := strconv.ParseFloat(string(v.str), 64)
	return f
}

// Elems returns an aggregate reply's elements (a map's keys and values
// alternate).
func (v Value) Elems() []Value { return v.elems }

// IsNull reports whether the reply is a null.
func (v Value) IsNull() bool { return v.kind == '_' }

// IsError reports whether the reply is an error.
func (v Value) IsError() bool { return v.kind == '-' || v.kind == '!' }

// String formats the reply for test failures.
func (v Value) String() string {
	switch v.kind {
	case '+', '$', '=', '(':
		return strconv.Quote(string(v.str))
	case '-', '!':
		return "error(" + string(v.str) + ")"
	case ':', '#':
		return strconv.FormatInt(v.num, 10)
	case ',':
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	case '_':
		return "nil"
	}
	b := []byte{'['}
	for i, e := range v.elems {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, e.String()...)
	}
	return string(append(b, ']'))
}

// appendCommand encodes a command of any arguments (encoded as zipline's
// Do encodes them) as a RESP array of bulk strings.
func appendCommand(dst []byte, args []any) ([]byte, error) {
	dst = fmt.Appendf(dst, "*%d\r\n", len(args))
	for i, a := range args {
		var s string
		switch x := a.(type) {
		case string:
			s = x
		case []byte:
			s = string(x)
		case nil:
		case int:
			s = strconv.Itoa(x)
		case int64:
			s = strconv.FormatInt(x, 10)
		case uint64:
			s = strconv.FormatUint(x, 10)
		case float64:
			s = strconv.FormatFloat(x, 'f', -1, 64)
		case bool:
			s = "0"
			if x {
				s = "1"
			}
		case time.Duration:
			s = strconv.FormatInt(x.Nanoseconds(), 10)
		case encoding.BinaryMarshaler:
			b, err := x.MarshalBinary()
			if err != nil {
				return nil, fmt.Errorf("testbed: argument %d: %w", i, err)
			}
			s = string(b)
		default:
			return nil, fmt.Errorf("testbed: argument %d: unsupported type %T", i, a)
		}
		dst = fmt.Appendf(dst, "$%d\r\n%s\r\n", len(s), s)
	}
	return dst, nil
}

// maxReply bounds what readValue reads, so that a broken server cannot make
// a test exhaust memory.
const maxReply = 1 << 30

// readValue reads one reply.
func readValue(r *bufio.Reader) (Value, error) {
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return Value{}, err
		}
		if len(line) < 3 || line[len(line)-2] != '\r' {
			return Value{}, errors.New("testbed: malformed reply line")
		}
		kind, body := line[0], string(line[1:len(line)-2])
		switch kind {
		case '+', '-':
			return Value{kind: kind, str: []byte(body)}, nil
		case ':', '(':
			n, _ := strconv.ParseInt(body, 10, 64)
			return Value{kind: kind, num: n, str: []byte(body)}, nil
		case '#':
			v := Value{kind: kind}
			if body == "t" {
				v.num = 1
			}
			return v, nil
		case ',':
			f, _ := strconv.ParseFloat(body, 64)
			return Value{kind: kind, num: int64(math.Float64bits(f))}, nil
		case '_':
			return Value{kind: '_'}, nil
		case '$', '=', '!':
			n, err := strconv.Atoi(body)
			if err != nil || n > maxReply {
				return Value{}, fmt.Errorf("testbed: bad length %q", body)
			}
			if n < 0 {
				return Value{kind: '_'}, nil
			}
			b := make([]byte, n+2)
			if _, err := io.ReadFull(r, b); err != nil {
				return Value{}, err
			}
			b = b[:n]
			if kind == '=' && len(b) >= 4 {
				b = b[4:] // the verbatim string's format
			}
			return Value{kind: kind, str: b}, nil
		case '*', '~', '>', '%', '|':
			n, err := strconv.Atoi(body)
			if err != nil || n > maxReply {
				return Value{}, fmt.Errorf("testbed: bad length %q", body)
			}
			if n < 0 {
				return Value{kind: '_'}, nil
			}
			if kind == '%' || kind == '|' {
				n *= 2
			}
			v := Value{kind: kind, elems: make([]Value, 0, min(n, 1024))}
			for range n {
				e, err := readValue(r)
				if err != nil {
					return Value{}, err
				}
				v.elems = append(v.elems, e)
			}
			if kind == '|' {
				continue // an attribute: the reply follows it
			}
			return v, nil
		default:
			return Value{}, fmt.Errorf("testbed: unknown reply type %q", kind)
		}
	}
}
