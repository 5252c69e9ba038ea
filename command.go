package zipline

import (
	"encoding"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/ziplinekv/zipline/internal/resp"
)

// A command is one Redis command, built once by its definition (getCmd,
// setCmd, ...) and then run by a Client method, queued by a Batch method, or
// queued inside a Tx: the one place that says which command it is (its row
// of the spec, which routing, compression and the connection's rules read),
// which arguments are keys, which reply types can answer it and how its
// reply becomes a Go value.
type command[T any] struct {
	spec *commandSpec
	args []arg // after the name, and a subcommand's name
	dec  *decoder[T]
	// block is set on blocking commands (BLPOP, XREAD BLOCK...): how long
	// the server may hold the reply, negative for without limit; zero for
	// every other command. Blocking commands run on a dedicated connection,
	// whose I/O timeout is extended by it.
	block time.Duration
}

// define builds a command. Definitions call it with the arguments on the
// stack: once inlined into a Client or Batch method, nothing escapes.
func define[T any](dec *decoder[T], spec *commandSpec, args ...arg) command[T] {
	return command[T]{spec: spec, args: args, dec: dec}
}

// defineBlocking builds a command that may wait up to timeout server-side
// (0: without limit).
func defineBlocking[T any](dec *decoder[T], timeout time.Duration, spec *commandSpec, args ...arg) command[T] {
	c := command[T]{spec: spec, args: args, dec: dec, block: timeout}
	if timeout <= 0 {
		c.block = -1
	}
	return c
}

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

func str(s string) arg    { return arg{kind: argString, s: s} }
func keyArg(k string) arg { return arg{kind: argKey, s: k} }
func bin(b []byte) arg    { return arg{kind: argBytes, s: unsafeString(b)} }
func num(n int64) arg     { return arg{kind: argInt, n: n} }
func flt(f float64) arg   { return arg{kind: argFloat, n: int64(math.Float64bits(f))} }
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

// Command classes, from a command's row: whether the shared connection
// may carry it.
type connClass uint8

const (
	classPlain connClass = iota
	// classBlocking commands hold the connection until data arrives, which
	// would stall every other caller of a shared connection: they run on a
	// dedicated connection from the pool.
	classBlocking
	// classConnState commands change the connection's state (database,
	// credentials, transactions, tracking); on the shared connection that
	// would leak into every caller, so they are only allowed on a Client
	// from Dedicated or Watch.
	classConnState
	// classForbidden commands switch the connection into another protocol
	// mode (pub/sub, MONITOR, replication) or end it; they are never sent.
	classForbidden
)

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
