package zipline

import (
	"strconv"
	"time"
)

// The time-to-live arguments commands share: Expiry (SET, GETEX, HSETEX,
// HGETEX...) and ExpireCond (EXPIRE, HEXPIRE... NX, XX, GT, LT).

// Expiry sets a key's time to live, in Set and GetEx. The zero Expiry sets
// none, as does EX(0): go-redis's Set takes 0 for "no expiration", and so
// does zipline's. (In GetEx, go-redis's 0 means PERSIST; zipline's zero
// Expiry leaves the expiry as it is: pass Persist().) An Expiry with no
// meaning the server would take (a negative duration, a time before 1970)
// fails the command with an *ArgumentError before anything is sent, as do
// two expiries for one command.
type Expiry struct {
	opt string // "" for none
	n   int64
}

// EX expires the key after d: whole seconds are sent as EX, anything finer
// as PX milliseconds. EX(0) sets no expiry; a negative d is refused.
func EX(d time.Duration) Expiry {
	if d%time.Second == 0 && d != 0 {
		return Expiry{"EX", int64(d / time.Second)}
	}
	return PX(d)
}

// PX expires the key after d, with millisecond precision. A positive d
// under a millisecond is rounded up to one: the server would refuse 0, or
// (EXPIRE) delete the key. PX(0) sets no expiry; a negative d is refused.
func PX(d time.Duration) Expiry {
	if d == 0 {
		return Expiry{}
	}
	return Expiry{"PX", millis(d)}
}

// TTL returns the time to live e sets (for ExpireAt, from now), or zero if
// it sets none (KeepTTL, the zero Expiry): for stores that take a duration
// rather than an Expiry, such as an adapter from Set's signature to a
// SetEX.
func (e Expiry) TTL() time.Duration {
	switch e.opt {
	case "EX":
		return time.Duration(e.n) * time.Second
	case "PX":
		return time.Duration(e.n) * time.Millisecond
	case "PXAT":
		return time.Until(time.UnixMilli(e.n))
	}
	return 0
}

// millis converts d to whole milliseconds, rounding a positive d under one
// millisecond up to 1.
func millis(d time.Duration) int64 {
	if d > 0 && d < time.Millisecond {
		return 1
	}
	return int64(d / time.Millisecond)
}

// ExpireAt expires the key at t (PXAT). The zero time sets no expiry, as
// in go-redis's SetArgs; a time in the past expires the key at once.
func ExpireAt(t time.Time) Expiry {
	if t.IsZero() {
		return Expiry{}
	}
	return Expiry{"PXAT", t.UnixMilli()}
}

// KeepTTL keeps the key's current time to live when Set overwrites it (Set
// only).
func KeepTTL() Expiry { return Expiry{opt: "KEEPTTL"} }

// Persist removes the key's time to live (GetEx only).
func Persist() Expiry { return Expiry{opt: "PERSIST"} }

// appendExpiry appends the one expiry among exp to args for the command
// name (SET or GETEX), or returns why it cannot: zero Expiry values set
// none, and any other must be one the command takes, with a positive
// number.
func appendExpiry(args []arg, exp []Expiry, name string) ([]arg, error) {
	var e *Expiry
	for i := range exp {
		switch {
		case exp[i].opt == "":
		case e != nil:
			return args, &ArgumentError{Command: name, Reason: "more than one expiry (" + e.opt + " and " + exp[i].opt + ")"}
		default:
			e = &exp[i]
		}
	}
	switch {
	case e == nil:
		return args, nil
	case e.opt == "KEEPTTL" && name != "SET" && name != "HSETEX", e.opt == "PERSIST" && name != "GETEX" && name != "HGETEX":
		return args, &ArgumentError{Command: name, Reason: e.opt + " is not an expiry " + name + " takes"}
	case e.opt == "KEEPTTL", e.opt == "PERSIST":
		return append(args, str(e.opt)), nil
	case e.n <= 0:
		return args, &ArgumentError{Command: name, Reason: "expiry " + e.opt + " " + strconv.FormatInt(e.n, 10) +
			" is not positive (a zero Expiry, EX(0) or PX(0), sets none)"}
	}
	return append(args, str(e.opt), num(e.n)), nil
}

// ExpireCond makes setting an expiry conditional (EXPIRE, HEXPIRE ... NX,
// XX, GT or LT). The zero ExpireCond sets it whatever the key has.
type ExpireCond string

// The conditions. A key without an expiry counts as expiring never (later
// than any time), as the server counts it.
const (
	IfNoExpiry ExpireCond = "NX" // only when there is none
	IfExpiry   ExpireCond = "XX" // only when there is one
	IfLater    ExpireCond = "GT" // only when later than the current one
	IfSooner   ExpireCond = "LT" // only when sooner than the current one
)

// expireArgs is a key, d (in seconds, or milliseconds when finer: the spec
// says which), and cond. A positive d under a millisecond is rounded up to
// one: PEXPIRE 0 would delete the key.
func expireArgs(buf []arg, key string, d time.Duration, cond ExpireCond, inSeconds, inMillis *commandSpec) (*commandSpec, []arg) {
	spec, n := inSeconds, int64(d/time.Second)
	if d%time.Second != 0 {
		spec, n = inMillis, millis(d)
	}
	args := append(buf, keyArg(key), num(n))
	if cond != "" {
		args = append(args, str(string(cond)))
	}
	return spec, args
}
