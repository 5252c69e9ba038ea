package zipline

import (
	"encoding"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/ziplinekv/zipline/internal/resp"
)

// Command arguments as commands carry them (arg), and option words found
// where options stand (option). Below the spec and the commands: both read
// arguments through these.

// arg is one command argument. Commands pass arguments as a slice of these,
// which stays on the stack: no interface boxing, no allocation. It is kept
// small (32 bytes), since every command's argument array is zeroed and
// copied on the way: a byte slice is held in s as a read-only view of the
// caller's bytes (see bin), which the command only reads, before it
// returns.
type arg struct {
	kind argKind
	s    string
	n    int64 // an integer, or a float's bits
}

type argKind uint8

const (
	argString argKind = iota
	argKey            // a key: a string that routing hashes to a slot
	argBytes
	argInt
	argFloat
	argSlot // a slot number, which routing follows as it would a key's slot
)

func str(s string) arg { return arg{kind: argString, s: s} }

func keyArg(k string) arg { return arg{kind: argKey, s: k} }

func bin(b []byte) arg { return arg{kind: argBytes, s: unsafeString(b)} }

func num(n int64) arg { return arg{kind: argInt, n: n} }

func flt(f float64) arg { return arg{kind: argFloat, n: int64(math.Float64bits(f))} }

func slotArg(n int64) arg { return arg{kind: argSlot, n: n} }

func keyArgs(ks []string) []arg {
	out := make([]arg, len(ks))
	for i, k := range ks {
		out[i] = keyArg(k)
	}
	return out
}

// keyAnd returns key followed by rest, each as a plain string.
func keyAnd(key string, rest []string) []arg {
	args := make([]arg, 0, 1+len(rest))
	args = append(args, keyArg(key))
	for _, s := range rest {
		args = append(args, str(s))
	}
	return args
}

// text returns the argument as a string, for inspecting options and names
// (the compression table, classify); numbers are formatted.
func (a *arg) text() string {
	switch a.kind {
	case argString, argKey, argBytes:
		return a.s
	case argInt, argSlot:
		return strconv.FormatInt(a.n, 10)
	}
	return strconv.FormatFloat(math.Float64frombits(uint64(a.n)), 'f', -1, 64)
}

// isWord reports whether the argument is the option word w (upper case),
// compared without regard to case.
func (a *arg) isWord(w string) bool {
	switch a.kind {
	case argString, argKey, argBytes:
		return equalFold(a.s, w)
	}
	return false
}

// appendArg encodes one argument as a bulk string.
func appendArg(dst []byte, a *arg) []byte {
	switch a.kind {
	case argInt, argSlot:
		return resp.AppendBulkInt(dst, a.n)
	case argFloat:
		return resp.AppendBulkFloat(dst, math.Float64frombits(uint64(a.n)))
	}
	return resp.AppendBulkString(dst, a.s)
}

// anyArg converts one of Do's arguments. It accepts what go-redis accepts,
// encoded the same way: strings and byte slices as they are, integers,
// floats and bools (as 1 or 0) in decimal, a time.Duration as its
// nanoseconds, a time.Time in RFC 3339 with nanoseconds, nil as the empty
// string, and anything implementing encoding.BinaryMarshaler.
func anyArg(i int, v any) (arg, error) {
	switch x := v.(type) {
	case string:
		return str(x), nil
	case []byte:
		return bin(x), nil
	case nil:
		return str(""), nil
	case int:
		return num(int64(x)), nil
	case int64:
		return num(x), nil
	case int32:
		return num(int64(x)), nil
	case int16:
		return num(int64(x)), nil
	case int8:
		return num(int64(x)), nil
	case uint:
		return uintArg(uint64(x)), nil
	case uint64:
		return uintArg(x), nil
	case uint32:
		return num(int64(x)), nil
	case uint16:
		return num(int64(x)), nil
	case uint8:
		return num(int64(x)), nil
	case float64:
		return flt(x), nil
	case float32:
		return flt(float64(x)), nil
	case bool:
		if x {
			return num(1), nil
		}
		return num(0), nil
	case time.Duration:
		return num(x.Nanoseconds()), nil
	case time.Time:
		return str(x.Format(time.RFC3339Nano)), nil
	case encoding.BinaryMarshaler:
		b, err := x.MarshalBinary()
		if err != nil {
			return arg{}, fmt.Errorf("argument %d: %w", i, err)
		}
		return bin(b), nil
	}
	return arg{}, &resp.ArgTypeError{Index: i, Value: v}
}

func uintArg(n uint64) arg {
	if n <= math.MaxInt64 {
		return num(int64(n))
	}
	return str(strconv.FormatUint(n, 10))
}

// upper appends the ASCII upper case of s to dst.
func upper(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if 'a' <= ch && ch <= 'z' {
			ch -= 'a' - 'A'
		}
		dst = append(dst, ch)
	}
	return dst
}

func equalFold(s, upperWord string) bool {
	if len(s) != len(upperWord) {
		return false
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if 'a' <= ch && ch <= 'z' {
			ch -= 'a' - 'A'
		}
		if ch != upperWord[i] {
			return false
		}
	}
	return true
}

// strArgs is each string as an argument.
func strArgs(ss []string) []arg {
	args := make([]arg, len(ss))
	for i, s := range ss {
		args[i] = str(s)
	}
	return args
}

// An option is a word a command takes among its options, found only where
// options stand: from the argument at index from on, stepping over the
// value of each option that has one. A key, a MATCH pattern or a field
// that happens to spell the word is not the option (HSCAN novalues 0 MATCH
// novalues returns values).
type option struct {
	word  string
	from  int
	takes []optionArgs // the other options, with how many arguments each takes
	until string       // the word that ends the options, if any
}

// optionArgs is an option word that takes n arguments.
type optionArgs struct {
	word string
	n    int
}

// in returns the index of the option among args, or -1.
func (o *option) in(args []arg) int {
	for i := o.from; i < len(args); i++ {
		if args[i].isWord(o.word) {
			return i
		}
		if o.until != "" && args[i].isWord(o.until) {
			break
		}
		for _, t := range o.takes {
			if args[i].isWord(t.word) {
				i += t.n // its arguments
				break
			}
		}
	}
	return -1
}

// valueBytes returns a stored value's bytes, whatever its argument kind.
func (a *arg) valueBytes() []byte {
	switch a.kind {
	case argBytes, argString, argKey:
		return unsafeBytes(a.s)
	}
	return []byte(a.text())
}
