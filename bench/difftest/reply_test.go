package difftest

// Replies in one canonical form, so that a zipline result and a go-redis
// result of the same command compare as strings: values are rendered, errors
// are reduced to their class and the server's text.

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/ziplinekv/zipline"
)

// kind is the class of a reply.
type kind uint8

const (
	kVal      kind = iota // a value (rendered in text)
	kNil                  // a null reply: missing key, field or element
	kErr                  // an error reply from the server (text: its message)
	kRefused              // zipline's *CommandError: refused before sending
	kTxFailed             // a transaction aborted by WATCH
	kClient               // any other error: a client-side failure, never equal
	kSkipped              // not run (go-redis's side of a command zipline refused)
)

type reply struct {
	kind kind
	text string
}

func val(s string) reply { return reply{kVal, s} }

var nilReply = reply{kind: kNil}

func (r reply) String() string {
	switch r.kind {
	case kVal:
		return r.text
	case kNil:
		return "(nil)"
	case kErr:
		return "(error) " + r.text
	case kRefused:
		return "(refused by zipline) " + r.text
	case kTxFailed:
		return "(transaction aborted)"
	case kSkipped:
		return "(not sent)"
	}
	return "(client error) " + r.text
}

// class is the coarse shape of a reply, for grouping discrepancies.
func (r reply) class() string {
	switch r.kind {
	case kVal:
		return "value"
	case kNil:
		return "nil"
	case kErr:
		p, _, _ := strings.Cut(r.text, " ")
		return p
	case kRefused:
		return "refused"
	case kTxFailed:
		return "txfailed"
	case kSkipped:
		return "skipped"
	}
	return "client-error"
}

func sameReply(a, b reply) bool {
	return a.kind == b.kind && a.kind != kClient && a.text == b.text
}

// zErr classifies an error from zipline.
func zErr(err error) reply {
	var se *zipline.ServerError
	var ce *zipline.CommandError
	var ae *zipline.ArgumentError
	switch {
	case errors.Is(err, zipline.Nil):
		return nilReply
	case errors.As(err, &ce):
		return reply{kRefused, ce.Command}
	case errors.As(err, &ae):
		return reply{kRefused, ae.Command + ": " + ae.Reason}
	case errors.Is(err, zipline.ErrTxFailed):
		return reply{kind: kTxFailed}
	case errors.As(err, &se):
		return reply{kErr, errText(se.Message)}
	}
	return reply{kClient, err.Error()}
}

// errText is a server error's text, without the arguments an unknown
// command's error quotes back ("ERR unknown command 'X', with args
// beginning with: ..."): zipline sends values compressed, so the quoted
// bytes differ although the error is the same.
func errText(msg string) string {
	// go-redis replaces the server's NOSCRIPT text with its own
	// ErrNoScript ("NOSCRIPT No matching script. Please use EVAL.",
	// scripting_commands.go), where Valkey says "NOSCRIPT No matching
	// script.": the class is what both servers say alike.
	if strings.HasPrefix(msg, "NOSCRIPT ") {
		return "NOSCRIPT (no matching script)"
	}
	if i := strings.Index(msg, ", with args beginning with:"); i >= 0 {
		return msg[:i]
	}
	return msg
}

// gErr classifies an error from go-redis.
func gErr(err error) reply {
	var re redis.Error
	switch {
	case errors.Is(err, redis.Nil):
		return nilReply
	case errors.Is(err, redis.TxFailedErr):
		return reply{kind: kTxFailed}
	case errors.As(err, &re):
		return reply{kErr, errText(re.Error())}
	}
	return reply{kClient, err.Error()}
}

// Renderings of values. Strings are quoted, so "" differs from (nil).

func vstr(s string) string    { return strconv.Quote(s) }
func vbytes(b []byte) string  { return strconv.Quote(string(b)) }
func vint(n int64) string     { return "(integer) " + strconv.FormatInt(n, 10) }
func vbool(b bool) string     { return "(bool) " + strconv.FormatBool(b) }
func vfloat(f float64) string { return "(float) " + strconv.FormatFloat(f, 'g', -1, 64) }

func vlist(elems []string, unordered bool) string {
	if unordered {
		elems = slices.Clone(elems)
		slices.Sort(elems)
	}
	return "[" + strings.Join(elems, ", ") + "]"
}

// vmap renders a map from field to rendered value, in field order.
func vmap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var sb strings.Builder
	sb.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(vstr(k))
		sb.WriteString(": ")
		sb.WriteString(m[k])
	}
	sb.WriteByte('}')
	return sb.String()
}

func vz(member string, score float64) string { return vstr(member) + "@" + vfloat(score) }

// vttl renders a TTL by presence only: the two servers' clocks differ.
func vttl(d time.Duration) string {
	switch {
	case d == -2:
		return "(ttl) no key"
	case d == -1:
		return "(ttl) no expiry"
	case d < 0:
		return "(ttl) " + d.String()
	}
	return "(ttl) set"
}

// Converters from zipline's typed results.

func zBytes(b []byte) string { return vbytes(b) }

// zBytesOrNil renders MGET and HMGET elements, where nil means missing.
func zBytesOrNil(bs [][]byte) string {
	out := make([]string, len(bs))
	for i, b := range bs {
		if b == nil {
			out[i] = "(nil)"
		} else {
			out[i] = vbytes(b)
		}
	}
	return vlist(out, false)
}

// zBytesList renders a list of values that cannot be missing (LRANGE,
// HVALS): nil and empty are the same string there.
func zBytesList(unordered bool) func([][]byte) string {
	return func(bs [][]byte) string {
		out := make([]string, len(bs))
		for i, b := range bs {
			out[i] = vbytes(b)
		}
		return vlist(out, unordered)
	}
}

func zStrings(unordered bool) func([]string) string {
	return func(ss []string) string {
		out := make([]string, len(ss))
		for i, s := range ss {
			out[i] = vstr(s)
		}
		return vlist(out, unordered)
	}
}

func zBytesMap(m map[string][]byte) string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = vbytes(v)
	}
	return vmap(out)
}

func zBools(bs []bool) string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = vbool(b)
	}
	return vlist(out, false)
}

func zZs(zs []zipline.Z) string {
	out := make([]string, len(zs))
	for i, z := range zs {
		out[i] = vz(z.Member, z.Score)
	}
	return vlist(out, false)
}

func zZ(z zipline.Z) string { return vz(z.Member, z.Score) }

func zKeyZ(z zipline.KeyZ) string {
	return vlist([]string{vstr(z.Key), vstr(z.Member), vfloat(z.Score)}, false)
}

func zKeyValue(kv zipline.KeyValue) string {
	return vlist([]string{vstr(kv.Key), vbytes(kv.Value)}, false)
}

// zOK renders the Future[bool] of a command that replies +OK (SET, MSET,
// LSET, LTRIM, RENAME in a Batch): true once done.
func zOK(ok bool) string {
	if ok {
		return vstr("OK")
	}
	return vbool(false)
}

// zValue renders a Value (Do, scripts). pairs reads an array of
// alternating fields and values as a map (RESP2's HGETALL), unordered sorts
// a list.
func zValue(unordered, pairs bool) func(zipline.Value) string {
	return func(v zipline.Value) string { return zAny(v, unordered, pairs) }
}

func zAny(v zipline.Value, unordered, pairs bool) string {
	if err := v.Err(); err != nil {
		return "(error) " + err.Error()
	}
	switch v.Kind() {
	case "null":
		return "(nil)"
	case "integer":
		n, _ := v.AsInt64()
		return vint(n)
	case "double":
		f, _ := v.AsFloat64()
		return vfloat(f)
	case "boolean":
		b, _ := v.AsBool()
		return vbool(b)
	case "map":
		m, err := v.AsMap()
		if err != nil {
			return "(bad map) " + err.Error()
		}
		out := make(map[string]string, len(m))
		for k, e := range m {
			out[k] = zAny(e, false, false)
		}
		return vmap(out)
	case "array", "set", "push":
		elems, err := v.AsSlice()
		if err != nil {
			return "(bad array) " + err.Error()
		}
		if pairs && len(elems)%2 == 0 {
			out := make(map[string]string, len(elems)/2)
			for i := 0; i < len(elems); i += 2 {
				k, _ := elems[i].AsString()
				out[k] = zAny(elems[i+1], false, false)
			}
			return vmap(out)
		}
		out := make([]string, len(elems))
		for i, e := range elems {
			out[i] = zAny(e, false, false)
		}
		return vlist(out, unordered)
	}
	b, err := v.AsBytes()
	if err != nil {
		return fmt.Sprintf("(%s) %v", v.Kind(), err)
	}
	return vbytes(b)
}

// Converters from go-redis results.

// gReply renders any go-redis command the table uses.
func gReply(c redis.Cmder, unordered, pairs bool) reply {
	if err := c.Err(); err != nil {
		return gErr(err)
	}
	switch x := c.(type) {
	case *redis.StringCmd:
		return val(vstr(x.Val()))
	case *redis.StatusCmd:
		return val(vstr(x.Val()))
	case *redis.IntCmd:
		return val(vint(x.Val()))
	case *redis.BoolCmd:
		return val(vbool(x.Val()))
	case *redis.FloatCmd:
		return val(vfloat(x.Val()))
	case *redis.DurationCmd:
		return val(vttl(x.Val()))
	case *redis.SliceCmd:
		return val(gAny(x.Val(), unordered, pairs))
	case *redis.StringSliceCmd:
		out := make([]string, len(x.Val()))
		for i, s := range x.Val() {
			out[i] = vstr(s)
		}
		return val(vlist(out, unordered))
	case *redis.BoolSliceCmd:
		out := make([]string, len(x.Val()))
		for i, b := range x.Val() {
			out[i] = vbool(b)
		}
		return val(vlist(out, unordered))
	case *redis.MapStringStringCmd:
		out := make(map[string]string, len(x.Val()))
		for k, v := range x.Val() {
			out[k] = vstr(v)
		}
		return val(vmap(out))
	case *redis.ZSliceCmd:
		out := make([]string, len(x.Val()))
		for i, z := range x.Val() {
			out[i] = vz(fmt.Sprint(z.Member), z.Score)
		}
		return val(vlist(out, unordered))
	case *redis.Cmd:
		return val(gAny(x.Val(), unordered, pairs))
	}
	return reply{kClient, fmt.Sprintf("difftest: no rendering for go-redis %T", c)}
}

func gAny(v any, unordered, pairs bool) string {
	switch x := v.(type) {
	case nil:
		return "(nil)"
	case string:
		return vstr(x)
	case int64:
		return vint(x)
	case float64:
		return vfloat(x)
	case bool:
		return vbool(x)
	case *big.Int:
		return vstr(x.String())
	case error:
		return "(error) " + x.Error()
	case []any:
		if pairs && len(x)%2 == 0 {
			out := make(map[string]string, len(x)/2)
			for i := 0; i < len(x); i += 2 {
				out[fmt.Sprint(x[i])] = gAny(x[i+1], false, false)
			}
			return vmap(out)
		}
		out := make([]string, len(x))
		for i, e := range x {
			out[i] = gAny(e, false, false)
		}
		return vlist(out, unordered)
	case map[any]any:
		out := make(map[string]string, len(x))
		for k, e := range x {
			out[fmt.Sprint(k)] = gAny(e, false, false)
		}
		return vmap(out)
	}
	return fmt.Sprintf("(go %T) %v", v, v)
}

// parseScore reads a score as the server sends it (RESP2: a string).
func parseScore(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case int64:
		return float64(x)
	case string:
		switch strings.ToLower(x) {
		case "inf", "+inf":
			return math.Inf(1)
		case "-inf":
			return math.Inf(-1)
		}
		f, err := strconv.ParseFloat(x, 64)
		if err != nil {
			return math.NaN()
		}
		return f
	}
	return math.NaN()
}

// show shortens a rendering for a report: long values are cut in the middle.
func show(s string) string {
	const max = 300
	if len(s) <= max {
		return s
	}
	return s[:200] + fmt.Sprintf(" …(%d bytes)… ", len(s)-280) + s[len(s)-80:]
}

// showPair shortens two different renderings for a report around where
// they first differ, so that the difference stays in view.
func showPair(a, b string) (string, string) {
	const whole = 300
	if len(a) <= whole && len(b) <= whole {
		return a, b
	}
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	cut := func(s string) string {
		from, to := max(0, i-120), min(len(s), i+120)
		out := s[from:to]
		if from > 0 {
			out = fmt.Sprintf("…(%d bytes)… ", from) + out
		}
		if to < len(s) {
			out += fmt.Sprintf(" …(%d bytes)", len(s)-to)
		}
		return out
	}
	return cut(a), cut(b)
}
