package zipline

import (
	"math"

	"github.com/ziplinekv/zipline/internal/resp"
)

// arg is one command argument. Typed methods pass arguments as a variadic
// of these, which stays on the stack: no interface boxing, no allocation.
type arg struct {
	kind argKind
	s    string
	b    []byte
	n    int64 // an integer, or a float's bits
}

type argKind uint8

const (
	argString argKind = iota
	argBytes
	argInt
	argFloat
	// Stored values: the only arguments that compression applies to, each
	// tagged with the family that decides whether it does.
	argValue     // a string command's value (SET, MSET...)
	argHashValue // a hash field's value (HSET...)
	argListValue // a list element (LPUSH...)
	argMessage   // a pub/sub message (PUBLISH)
)

func str(s string) arg     { return arg{kind: argString, s: s} }
func bin(b []byte) arg     { return arg{kind: argBytes, b: b} }
func num(n int64) arg      { return arg{kind: argInt, n: n} }
func flt(f float64) arg    { return arg{kind: argFloat, n: int64(math.Float64bits(f))} }
func value(b []byte) arg   { return arg{kind: argValue, b: b} }
func hvalue(b []byte) arg  { return arg{kind: argHashValue, b: b} }
func lvalue(b []byte) arg  { return arg{kind: argListValue, b: b} }
func message(b []byte) arg { return arg{kind: argMessage, b: b} }
func strs(ss []string) []arg {
	out := make([]arg, len(ss))
	for i, s := range ss {
		out[i] = str(s)
	}
	return out
}

// appendCommand encodes name followed by args as one RESP command.
func (c *Client) appendCommand(dst []byte, name string, args []arg) []byte {
	dst = resp.AppendArrayLen(dst, 1+len(args))
	dst = resp.AppendBulkString(dst, name)
	for i := range args {
		dst = c.appendArg(dst, &args[i])
	}
	return dst
}

func (c *Client) appendArg(dst []byte, a *arg) []byte {
	switch a.kind {
	case argString:
		return resp.AppendBulkString(dst, a.s)
	case argInt:
		return resp.AppendBulkInt(dst, a.n)
	case argFloat:
		return resp.AppendBulkFloat(dst, math.Float64frombits(uint64(a.n)))
	case argValue:
		return c.appendValue(dst, a.b, familyStrings)
	case argHashValue:
		return c.appendValue(dst, a.b, familyHashes)
	case argListValue:
		return c.appendValue(dst, a.b, familyLists)
	case argMessage:
		return c.appendValue(dst, a.b, familyPubSub)
	}
	return resp.AppendBulk(dst, a.b)
}

// Command classes, for commands issued through Do. Typed methods know their
// own class.
type cmdClass uint8

const (
	classPlain cmdClass = iota
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

var commandClasses = map[string]cmdClass{
	"BLPOP": classBlocking, "BRPOP": classBlocking, "BRPOPLPUSH": classBlocking,
	"BLMOVE": classBlocking, "BLMPOP": classBlocking, "BZPOPMIN": classBlocking,
	"BZPOPMAX": classBlocking, "BZMPOP": classBlocking, "WAIT": classBlocking,
	"WAITAOF": classBlocking,

	"SELECT": classConnState, "AUTH": classConnState, "HELLO": classConnState,
	"WATCH": classConnState, "UNWATCH": classConnState, "MULTI": classConnState,
	"EXEC": classConnState, "DISCARD": classConnState, "READONLY": classConnState,
	"READWRITE": classConnState, "RESET": classConnState,

	"SUBSCRIBE": classForbidden, "PSUBSCRIBE": classForbidden, "SSUBSCRIBE": classForbidden,
	"UNSUBSCRIBE": classForbidden, "PUNSUBSCRIBE": classForbidden, "SUNSUBSCRIBE": classForbidden,
	"MONITOR": classForbidden, "SYNC": classForbidden, "PSYNC": classForbidden,
	"QUIT": classForbidden, "SHUTDOWN": classForbidden,
}

// clientSubcommands that change or break the connection. CLIENT REPLY OFF
// would leave callers waiting for replies that never come.
var clientSubcommands = map[string]cmdClass{
	"TRACKING": classConnState, "SETNAME": classConnState, "NO-EVICT": classConnState,
	"NO-TOUCH": classConnState, "SETINFO": classConnState,
	"REPLY": classForbidden,
}

// classify returns the class of a command given its upper-case name and
// its arguments.
func classify(name string, args []any) cmdClass {
	switch name {
	case "XREAD", "XREADGROUP":
		// Blocking only with a BLOCK option, which precedes STREAMS.
		for _, a := range args[1:] {
			s, ok := argText(a)
			if !ok {
				continue
			}
			if equalFold(s, "STREAMS") {
				break
			}
			if equalFold(s, "BLOCK") {
				return classBlocking
			}
		}
		return classPlain
	case "CLIENT":
		if len(args) > 1 {
			if s, ok := argText(args[1]); ok {
				var buf [16]byte
				return clientSubcommands[string(upper(buf[:0], s))]
			}
		}
	}
	return commandClasses[name]
}

func argText(a any) (string, bool) {
	switch x := a.(type) {
	case string:
		return x, true
	case []byte:
		return unsafeString(x), true
	}
	return "", false
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
