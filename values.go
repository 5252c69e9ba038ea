package zipline

import (
	"strconv"

	"github.com/ziplinekv/zipline/internal/resp"
)

// How a command's stored values are treated on a Client: which arguments
// to compress, how to expand its reply, which commands are refused because
// the server would read a compressed value.

// valueReply is how one sent command's reply is expanded: by which codec,
// where. The zero valueReply expands nothing.
type valueReply struct {
	vc    *valueCodec
	shape replyShape
}

// lookupValues returns how the Client's view treats a command's stored
// values: which arguments to compress and how to expand its reply. A
// command that cannot work on compressed values is refused.
func (c *Client) lookupValues(spec *commandSpec, args []arg) (argSpan, valueReply, error) {
	vc := c.codec
	if vc == nil {
		return argSpan{}, valueReply{}, nil
	}
	e := &spec.value
	if e.family == familyNone || !vc.covers(e.family) {
		return argSpan{}, valueReply{}, nil
	}
	if e.refuse || e.refuseWith != nil && e.refuseWith.in(args) >= 0 {
		return argSpan{}, valueReply{}, &CommandError{Command: spec.fullName(), Reason: "works on the stored bytes, " +
			"and compression is on: a compressed value would be corrupted or misread (use Client.Raw for values " +
			"stored uncompressed)"}
	}
	if e.sortsStored {
		if reason := sortRefusal(vc, args); reason != "" {
			return argSpan{}, valueReply{}, &CommandError{Command: spec.fullName(), Reason: reason}
		}
	}
	values := e.values
	if e.valuesNumKeys && len(args) > 0 {
		if n, err := strconv.Atoi(args[0].text()); err == nil && n > 0 {
			values = span(2, 2, n)
		}
	}
	if e.valuesAfter != nil {
		if i := e.valuesAfter.in(args); i >= 0 {
			values = every(i+3, 2)
		}
	}
	shape := e.reply
	if e.replyWith != nil && e.replyWith.in(args) < 0 || e.replyWithout != nil && e.replyWithout.in(args) >= 0 {
		shape = replyNone
	}
	return values, valueReply{vc: vc, shape: shape}, nil
}

// expand turns the stored values in a reply back into what the
// application wrote, in place, on the caller's goroutine.
func (vr valueReply) expand(v resp.Value) (resp.Value, error) {
	switch vr.shape {
	case replyValue:
		return vr.one(v)
	case replyValues:
		if v.Type() != resp.Array {
			return vr.one(v)
		}
		return v, vr.each(v.Elems(), 0, 1)
	case replyPairs:
		elems := v.Elems()
		if len(elems) > 0 && elems[0].Type() == resp.Array { // RESP3 HRANDFIELD: [[field, value]...]
			for _, p := range elems {
				if err := vr.each(p.Elems(), 1, 2); err != nil {
					return v, err
				}
			}
			return v, nil
		}
		return v, vr.each(elems, 1, 2)
	case replyKeyAndValue:
		return v, vr.each(v.Elems(), 1, 2)
	case replyKeyAndList:
		if e := v.Elems(); len(e) == 2 {
			return v, vr.each(e[1].Elems(), 0, 1)
		}
	case replyScanPairs:
		if e := v.Elems(); len(e) == 2 {
			return v, vr.each(e[1].Elems(), 1, 2)
		}
	case replyDeep:
		return vr.deep(v)
	}
	return v, nil
}

// deep expands every bulk string in v, at any depth.
func (vr valueReply) deep(v resp.Value) (resp.Value, error) {
	if v.Type() == resp.BulkString {
		return vr.one(v)
	}
	elems := v.Elems()
	for i := range elems {
		d, err := vr.deep(elems[i])
		if err != nil {
			return v, err
		}
		elems[i] = d
	}
	return v, nil
}

// sortRefusal says why SORT cannot run with these arguments while values
// are compressed, or "". SORT compares what it sorts by inside the server:
// the external weights BY reads (string values, or hash fields with "->",
// which compression may have stored compressed), or, without BY, the
// elements themselves (list elements, compressed with the Lists family).
// Compressed bytes compare as bytes with ALPHA, and numerically as 0
// (strtod stops at their first byte, NUL, and the server takes the empty
// prefix for a number): a sort the server would refuse for the plaintext
// succeeds in a wrong order. A number is never stored compressed, but the
// client cannot know that every weight is one. BY nosort does not sort.
func sortRefusal(vc *valueCodec, args []arg) string {
	by := sortBy.in(args)
	switch {
	case by >= 0 && by+1 < len(args) && !args[by+1].isWord("NOSORT"):
		return "sorts by stored values, and compression is on: the server would compare compressed bytes " +
			"(use Client.Raw for weights stored uncompressed)"
	case by < 0 && vc.covers(familyLists):
		return "sorts list elements, and the Lists family is compressed: the server would compare compressed " +
			"bytes (use Client.Raw for lists stored uncompressed)"
	case sortStore.in(args) >= 0 && sortGetsValues(args) && !vc.covers(familyLists):
		return "copies stored values into a list (GET ... STORE), and the Lists family is not compressed: the list " +
			"would hold compressed bytes that its reads do not expand (turn on Families Lists, or use Client.Raw)"
	}
	return ""
}

// sortGetsValues reports whether a SORT's GET options read stored values:
// any pattern but "#" (the element itself).
func sortGetsValues(args []arg) bool {
	for i := 1; i < len(args); i++ {
		if args[i].isWord("GET") && i+1 < len(args) && args[i+1].text() != "#" {
			return true
		}
		for _, t := range sortOptions {
			if args[i].isWord(t.word) {
				i += t.n // its arguments
				break
			}
		}
	}
	return false
}

func (vr valueReply) one(v resp.Value) (resp.Value, error) {
	if v.Type() != resp.BulkString {
		return v, nil
	}
	b, err := vr.vc.decodeValue(v.Bytes())
	if err != nil {
		return resp.Value{}, err
	}
	return resp.StringValue(b), nil
}

func (vr valueReply) each(elems []resp.Value, from, step int) error {
	for i := from; i < len(elems); i += step {
		d, err := vr.one(elems[i])
		if err != nil {
			return err
		}
		elems[i] = d
	}
	return nil
}
