package zipline

import (
	"github.com/ziplinekv/zipline/internal/pipe"
	"github.com/ziplinekv/zipline/internal/resp"
)

// The encoder: a typed command, or Do's, turned into RESP in a request's
// buffer, its stored values compressed as the Client's compression says
// (compression_plan.go), and what routing needs recorded beside it.

// add encodes one command into r: its name, then its arguments, the stored
// values among them compressed when the Client's view compresses their
// family (the row's valueSpec). expect is the set of reply types that
// can answer it. It returns how to expand the stored values in its reply.
//
// On a cluster it also records the slot of the command's keys. A command
// whose keys span several slots is refused with a *CrossSlotError, unless
// it can be split (MGET, MSET, DEL, UNLINK, EXISTS, TOUCH): then it is
// encoded as one command per slot, whose replies merge back into one.
func (c *Client) add(r *request, spec *commandSpec, args []arg, expect resp.TypeSet) (valueReply, error) {
	values, vr, err := c.lookupValues(spec, args)
	if err != nil {
		return vr, err
	}
	if vr.read != nil {
		// Answered from a read of the plaintext, which is what is sent and
		// what answers it (but inside MULTI, where +QUEUED does).
		spec, args = vr.read.spec, vr.read.args
		if expect != tsQueued {
			expect = vr.read.expect
		}
	}
	ci := wireCommand{slot: noSlot}
	if t := c.s.commandTable(); t != nil {
		if !hasKeys(args) {
			t.markKeys(spec, args)
		}
		ci.slot, ci.readOnly = argsSlot(args), t.readOnly(spec, args)
		if ci.slot == crossSlot {
			if spec.merge() != mergeNone {
				return vr, c.addSplit(r, spec, args, expect, values)
			}
			return vr, &CrossSlotError{Command: spec.fullName(), Slots: keySlots(args)}
		}
	} else if c.s.marksReads {
		ci.readOnly = spec.readOnly()
	}
	c.encode(r, spec, args, expect, values, ci)
	return vr, nil
}

// encode appends one command to r.
func (c *Client) encode(r *request, spec *commandSpec, args []arg, expect resp.TypeSet, values argSpan, ci wireCommand) {
	ci.start = len(r.call.Buf)
	c.appendCommand(r.call, spec, args, expect, values)
	ci.end = len(r.call.Buf)
	r.cmds = append(r.cmds, ci)
}

// appendCommand appends one command to call: its name (and subcommand's),
// then its arguments, the stored values among them (values) compressed as
// the Compression's rules say for the key before them (PUBLISH's channel,
// which is no key, is its first argument).
func (c *Client) appendCommand(call *pipe.Call, spec *commandSpec, args []arg, expect resp.TypeSet, values argSpan) {
	n := 1 + len(args)
	if spec.sub != "" {
		n++
	}
	call.Buf = resp.AppendArrayLen(call.Buf, n)
	call.Buf = resp.AppendBulkString(call.Buf, spec.name)
	if spec.sub != "" {
		call.Buf = resp.AppendBulkString(call.Buf, spec.sub)
	}
	owner := -1 // the key (or, with none, the channel) the values after it belong to
	for i := range args {
		if args[i].kind == argKey {
			owner = i
		}
		if values.has(i) {
			if w := c.codec.writer(args[max(owner, 0)].text()); w != nil {
				call.Buf = appendValue(w, call.Buf, args[i].valueBytes())
				continue
			}
		}
		call.Buf = appendArg(call.Buf, &args[i])
	}
	call.N++
	call.Expect = append(call.Expect, expect)
}
