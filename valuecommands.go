package zipline

import (
	"strconv"

	"github.com/ziplinekv/zipline/internal/resp"
)

// valueSpec says where one command carries stored values: which
// arguments compression applies to, and where a reply holds values to
// expand (a command's overlay, spec_overlay.go). Typed methods, Batch, Tx
// and Do all encode through it (request.add), so a command compresses the
// same whichever way it is sent, as GLIDE's custom commands behave like its
// typed ones. A command with none stores and reads its arguments as they
// are. Everything is data, read by lookupValues: nothing here escapes the
// arguments it is given, so encoding stays allocation-free.
type valueSpec struct {
	family valueFamily
	// values are the arguments that are stored values.
	values argSpan
	// valuesAfter is the option after which, and its count, the values
	// are every other argument: HSETEX ... FIELDS n f v f v.
	valuesAfter *option
	// reply says where the reply holds stored values.
	reply replyShape
	// replyWith and replyWithout are the options that the reply's values
	// depend on: HRANDFIELD returns values only WITHVALUES, HSCAN unless
	// NOVALUES.
	replyWith, replyWithout *option
	// valuesNumKeys: the first argument is a count of key, value pairs
	// that follow, and the values are theirs (MSETEX numkeys k v k v EX 1).
	valuesNumKeys bool
	// refuse: the command works on stored bytes, so it is refused while its
	// family is compressed; refuseWith, only with this option (SET ...
	// IFEQ compares the stored bytes).
	refuse     bool
	refuseWith *option
	// sortsStored: the command (SORT) compares stored values, so it is
	// refused when they may be compressed (see sortRefusal).
	sortsStored bool
}

// argSpan selects arguments by index (the command name excluded): first,
// then every step-th after it, count of them (0: to the end); step 0
// selects first alone. The zero argSpan selects nothing.
type argSpan struct{ first, step, count int }

func (s argSpan) has(i int) bool {
	if s.count == 0 && s.step == 0 || i < s.first {
		return false
	}
	if s.step == 0 {
		return i == s.first
	}
	if (i-s.first)%s.step != 0 {
		return false
	}
	return s.count == 0 || (i-s.first)/s.step < s.count
}

// at selects argument i; every, from first on every step-th; span, count
// of them.
func at(i int) argSpan                    { return argSpan{i, 0, 1} }
func every(first, step int) argSpan       { return argSpan{first, step, 0} }
func span(first, step, count int) argSpan { return argSpan{first, step, count} }
func refused(f valueFamily) valueSpec     { return valueSpec{family: f, refuse: true} }

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

var (
	hscanNoValues        = &option{word: "NOVALUES", from: 2, takes: []optionArgs{{"MATCH", 1}, {"COUNT", 1}}}
	hrandfieldWithValues = &option{word: "WITHVALUES", from: 2}
	hsetexFields         = &option{word: "FIELDS", from: 1, takes: []optionArgs{{"EX", 1}, {"PX", 1}, {"EXAT", 1}, {"PXAT", 1}}}
	xreadBlock           = &option{word: "BLOCK", from: 0, takes: []optionArgs{{"COUNT", 1}}, until: "STREAMS"}
	xreadgroupBlock      = &option{word: "BLOCK", from: 3, takes: []optionArgs{{"COUNT", 1}}, until: "STREAMS"}
	sortOptions          = []optionArgs{{"BY", 1}, {"LIMIT", 2}, {"GET", 1}, {"STORE", 1}}
	sortBy               = &option{word: "BY", from: 1, takes: sortOptions}
	setIfEq              = &option{word: "IFEQ", from: 2, takes: []optionArgs{{"EX", 1}, {"PX", 1}, {"EXAT", 1}, {"PXAT", 1}}}
)

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

// replyShape says where a reply holds stored values.
type replyShape uint8

const (
	replyNone        replyShape = iota
	replyValue                  // a bulk string (GET)
	replyValues                 // an array of them (MGET), or one (LPOP with or without count)
	replyPairs                  // field, value pairs: a map, RESP2's flat array, or RESP3's [[f, v]...] (HGETALL, HRANDFIELD)
	replyKeyAndValue            // [key, value] (BLPOP)
	replyKeyAndList             // [key, [values...]] (LMPOP)
	replyScanPairs              // [cursor, [field, value, ...]] (HSCAN)
	replyDeep                   // any bulk string at any depth (EVAL, SORT ... GET)
)

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
	}
	return ""
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
