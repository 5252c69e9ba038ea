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

// reply is one command's reply, and the error it stands for (an error
// reply, or one over the limits).
type reply struct {
	v   resp.Value
	err error
}

// replies returns a reply and error per command as the caller queued it.
func (s *shared) replies(r *request) []reply {
	replies, errs := r.merged()
	k := r.scratch()
	if cap(k.results) < len(replies) {
		k.results = make([]reply, len(replies))
	}
	out := k.results[:len(replies)]
	k.results = out
	for i, v := range replies {
		out[i] = reply{v, s.replyError(v)}
		if errs != nil && errs[i] != nil {
			out[i].err = errs[i]
		}
	}
	return out
}
