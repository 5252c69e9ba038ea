package zipline

import (
	"fmt"
	"strconv"

	"github.com/ziplinekv/zipline/internal/resp"
)

// How a command's stored values are treated on a Client: which arguments
// to compress, how to expand its reply, which commands are refused because
// the server would read a compressed value.

// valueReply is how one sent command's reply is expanded: by which codec,
// where; or, for a read answered on the plaintext, how. The zero
// valueReply expands nothing.
type valueReply struct {
	vc    *valueCodec
	shape replyShape
	read  *plainRead // shape replyRead: the command was sent as this read
}

// lookupValues returns how the Client's view treats a command's stored
// values: which arguments to compress and how to expand its reply. On a
// key in the compressed scope (Compression.Rules), a command that reads
// stored bytes is answered from the expanded value (the valueReply's read
// says what to send instead), and one that writes them, or a script, is
// refused.
func (c *Client) lookupValues(spec *commandSpec, args []arg) (argSpan, valueReply, error) {
	vc := c.codec
	if vc == nil {
		return argSpan{}, valueReply{}, nil
	}
	e := &spec.value
	if e.family == familyNone || !vc.covers(e.family) {
		return argSpan{}, valueReply{}, nil
	}
	guarded := e.refuse || e.read != readNone || e.script || e.refuseWith != nil && e.refuseWith.in(args) >= 0
	if (guarded || vc.rules != nil) && !hasKeys(args) {
		serverCommands(nil).markKeys(spec, args) // Do: the keys, from the command's key specs
	}
	if guarded {
		if key, ok := vc.scopedKey(args); ok {
			switch {
			case e.read != readNone:
				if r := newPlainRead(e.read, args); r != nil {
					return argSpan{}, valueReply{vc: vc, shape: replyRead, read: r}, nil
				}
				// Arguments the server refuses before it reads the value:
				// sent as they are, for the server's own error.
				return argSpan{}, valueReply{}, nil
			case e.script:
				return argSpan{}, valueReply{}, &CommandError{Command: spec.fullName(), Reason: fmt.Sprintf(
					"key %q is in the compressed scope: a script reads stored values as they are stored, "+
						"compressed or not by their size, so what it does would depend on a value's length. Keep the "+
						"keys scripts read plain with a rule (Compression.Rules: {Pattern: %s, Never: true}), or run "+
						"it through Client.Raw if it reads no stored value", key, scopeHint(key))}
			default:
				return argSpan{}, valueReply{}, &CommandError{Command: spec.fullName(), Reason: fmt.Sprintf(
					"key %q is in the compressed scope: the command works on the stored bytes, which may be "+
						"compressed, and would corrupt or misread them. Keep such keys plain with a rule "+
						"(Compression.Rules: {Pattern: %s, Never: true}), or use Client.Raw for values stored "+
						"uncompressed", key, scopeHint(key))}
			}
		}
		if !e.script {
			return argSpan{}, valueReply{}, nil // every key is plain: as on any server
		}
	}
	if e.moves && vc.rules != nil {
		if src, dst, ok := keyPair(args); ok && vc.compresses(src) && !vc.compresses(dst) {
			return argSpan{}, valueReply{}, &CommandError{Command: spec.fullName(), Reason: fmt.Sprintf(
				"would move the value of %q, in the compressed scope, to %q, which a rule keeps plain: that key "+
					"would then hold a value its readers may not be able to expand (read and write it instead, or "+
					"move it within one scope)", src, dst)}
		}
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
	case replyRead:
		return vr.read.answer(vr.vc, v)
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

// scopedKey returns the first key among args in the compressed scope.
func (vc *valueCodec) scopedKey(args []arg) (string, bool) {
	for i := range args {
		if args[i].kind == argKey && vc.compresses(args[i].s) {
			return args[i].s, true
		}
	}
	return "", false
}

// keyPair returns the first two keys among args: a move's source and
// destination.
func keyPair(args []arg) (src, dst string, ok bool) {
	n := 0
	for i := range args {
		if args[i].kind != argKey {
			continue
		}
		if n == 0 {
			src = args[i].s
		} else {
			return src, args[i].s, true
		}
		n++
	}
	return "", "", false
}
