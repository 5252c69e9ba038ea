package zipline

import (
	"context"
	"slices"
	"time"

	"github.com/ziplinekv/zipline/internal/pipe"
	"github.com/ziplinekv/zipline/internal/resp"
)

// callPool recycles the calls requests are encoded into.
type callPool = pipe.CallPool

func newCallPool() *callPool { return pipe.NewCallPool() }

// A request is what crosses the seam between the command layer and a
// carrier: one or more encoded commands in a pipe.Call, written together,
// and what routing needs to know about each without parsing them again.
// A Client method sends a request of one command; a Batch, one of many.
type request struct {
	s    *shared
	call *pipe.Call    // nil while a carrier holds it, and after a failed send
	cmds []wireCommand // one per command in call, MULTI and EXEC included
	// tx: the commands are wrapped in MULTI ... EXEC.
	tx bool
	// blocking: a command may wait server-side (BLPOP...), so the request
	// needs a connection of its own.
	blocking bool
	// sentOn is the pipe a successful sendOn sent call on, whose pushes
	// call.PushesBefore counts; nil for a request whose commands went in
	// other requests (a cluster's, one per node).
	sentOn *pipe.Pipe
	// replies, after a successful send: one per command, in order; errs,
	// when some commands failed and others did not (a cluster's nodes fail
	// one by one), the error of each, nil for those that have a reply.
	replies []resp.Value
	errs    []error
	// splits, on a cluster, are the commands add cut into one per slot
	// (MGET, DEL...): their replies are merged back into one (see merge).
	splits []split
	// kept is what a request of several commands keeps, empty, for the
	// next one when it goes back to its pool; nil until it is needed, so
	// that the requests of single commands stay small.
	kept *requestScratch
	// one holds replies and errs for a request of one command on a
	// cluster, which gets them without allocating (see flight).
	one struct {
		replies [1]resp.Value
		errs    [1]error
	}
}

// wireCommand is what the seam knows of one command.
type wireCommand struct {
	start, end int   // its bytes in call.Buf
	slot       int32 // on a cluster: its keys' hash slot, noSlot or crossSlot
	readOnly   bool  // on a cluster: a replica may serve it
}

func (s *shared) newRequest() *request {
	r := s.requests.Get().(*request)
	if r.call == nil {
		r.call = s.calls.Get()
	}
	return r
}

// release returns the request to its pool, with its call when it still
// has one: a request and its call go round together, one pool trip for
// both. Reply bytes already handed out stay valid: the parser allocates
// them per reply.
func (r *request) release() {
	if r.call != nil {
		r.call.Reset()
	}
	r.cmds = r.cmds[:0]
	r.tx, r.blocking, r.sentOn = false, false, nil
	r.replies, r.errs, r.splits = nil, nil, nil
	if r.kept != nil {
		r.kept.release()
	}
	r.one.replies[0], r.one.errs[0] = resp.Value{}, nil
	r.s.requests.Put(r)
}

// requestScratch is what a request of several commands keeps for the next
// one, so that a Batch does not grow or allocate them again every time.
type requestScratch struct {
	// queued is a Batch's list of its commands' Futures (see Batch.request
	// and Exec).
	queued []queued
	// results is Batch.Exec's reply per command (shared.replies).
	results []reply
	// many is what a cluster sends a request of several commands with
	// (see flight).
	many flightState
}

// scratch returns r's requestScratch, making it the first time.
func (r *request) scratch() *requestScratch {
	if r.kept == nil {
		r.kept = new(requestScratch)
	}
	return r.kept
}

// maxKeptQueued bounds each list a request keeps for the next one: one
// huge batch does not pin its lists for good.
const maxKeptQueued = 1024

// keepQueued keeps a Batch's list of Futures, emptied, for the next Batch
// on this request; Exec hands it over once the Futures are settled.
func (k *requestScratch) keepQueued(q []queued) {
	if cap(q) <= maxKeptQueued {
		clear(q)
		k.queued = q[:0]
	}
}

// release empties what the scratch holds, and drops arrays too large to
// keep (see maxKeptQueued); queued was emptied by keepQueued.
func (k *requestScratch) release() {
	k.many.release()
	if cap(k.results) > maxKeptQueued {
		k.results = nil
	}
	clear(k.results)
}

// flightState is the arrays of a cluster's flight (cluster_route.go) for a
// request of several commands, and the index of each: a request keeps them
// (requestScratch.many), so that a Batch sent through a cluster does not
// allocate them again every time.
type flightState struct {
	replies []resp.Value
	errs    []error
	flags   []bool // done, then primary
	ask     []string
	idx     []int
}

// release drops what the replies and errors point to, and arrays too
// large to keep (see maxKeptQueued).
func (s *flightState) release() {
	if cap(s.replies) > maxKeptQueued {
		*s = flightState{}
		return
	}
	clear(s.replies)
	clear(s.errs)
	clear(s.ask)
}

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

func hasKeys(args []arg) bool {
	for i := range args {
		if args[i].routes() {
			return true
		}
	}
	return false
}

// routes reports whether the argument says where the command goes: a key,
// or a slot named outright (CLUSTER COUNTKEYSINSLOT).
func (a *arg) routes() bool { return a.kind == argKey || a.kind == argSlot }

// slot is the slot a key or slot argument stands for.
func (a *arg) slot() int32 {
	if a.kind != argSlot {
		return keySlot(a.s)
	}
	if a.n < 0 || a.n >= slotCount {
		return noSlot // no such slot: any node says so
	}
	return int32(a.n)
}

// argsSlot returns the slot of the key (and slot) arguments: noSlot
// without any, crossSlot when they differ.
func argsSlot(args []arg) int32 {
	slot := noSlot
	for i := range args {
		if !args[i].routes() {
			continue
		}
		switch s := args[i].slot(); {
		case slot == noSlot:
			slot = s
		case s != slot:
			return crossSlot
		}
	}
	return slot
}

// keySlots lists the distinct slots of the key arguments, for errors.
func keySlots(args []arg) []int32 {
	var out []int32
	for i := range args {
		if args[i].routes() {
			if s := args[i].slot(); !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// slots lists the slots of the request's commands, for errors.
func (r *request) slots() []int32 {
	var out []int32
	for _, ci := range r.cmds {
		if ci.slot >= 0 && !slices.Contains(out, ci.slot) {
			out = append(out, ci.slot)
		}
	}
	return out
}

// valueBytes returns a stored value's bytes, whatever its argument kind.
func (a *arg) valueBytes() []byte {
	switch a.kind {
	case argBytes, argString, argKey:
		return unsafeBytes(a.s)
	}
	return []byte(a.text())
}

// wait extends how long the request's replies may take: a blocking command
// may hold them up to d (negative: without limit).
func (r *request) wait(d time.Duration) {
	switch p := &r.call.Patience; {
	case *p < 0:
	case d < 0:
		*p = -1
	default:
		*p += d
	}
	r.blocking = true
}

// sendOn sends r on one connection. While the pipe has the call, r does
// not: after a failure the pipe recycles it.
func (r *request) sendOn(ctx context.Context, p *pipe.Pipe) error {
	call := r.call
	r.call = nil
	if err := p.Do(ctx, call); err != nil {
		return err
	}
	r.call, r.replies, r.sentOn = call, call.Replies(), p
	return nil
}

// readOnly reports whether every command of r only reads (as marked when
// encoded), so that a replica may serve it.
func (r *request) readOnly() bool {
	if r.tx || len(r.cmds) == 0 {
		return false
	}
	for _, ci := range r.cmds {
		if !ci.readOnly {
			return false
		}
	}
	return true
}

// copyTo puts r's commands into sub, a fresh request, for a carrier that
// may have to send them more than once: a call is gone once a send of it
// fails.
func (r *request) copyTo(sub *request) {
	c := sub.call
	c.Buf = append(c.Buf, r.call.Buf...)
	c.Expect = append(c.Expect, r.call.Expect...)
	c.N = r.call.N
	if p := r.call.Patience; p != 0 {
		c.Patience = p // stored only when it changes (see pipe.Call)
	}
	sub.blocking = r.blocking
}

// adopt takes the call and replies of sub, a copy of r that was sent;
// sub gets r's call, to release.
func (r *request) adopt(sub *request) {
	r.call, sub.call = sub.call, r.call
	r.replies, r.errs = sub.replies, sub.errs
}

// replyError turns a reply that is an error, or a stand-in for a reply
// over the configured limits, into the error its caller gets.
func (s *shared) replyError(v resp.Value) error {
	if !v.Type().Failed() {
		return nil
	}
	return s.errorOf(v)
}

// errorOf is replyError for a reply that is an error or an oversize
// stand-in.
func (s *shared) errorOf(v resp.Value) error {
	if v.IsError() {
		return serverError(v)
	}
	le := v.Oversize(s.limits)
	return &ReplyLimitError{What: le.What, Size: le.Size, Limit: le.Limit}
}
