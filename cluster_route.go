package zipline

// This file routes a cluster's requests: each command to its slot's node,
// one pipeline per node, following MOVED and ASK and retrying what the
// cluster could not serve yet.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ziplinekv/zipline/internal/resp"
)

// isReplicaFor reports whether n was chosen as a replica for ci (a read
// sent to a replica).
func (n *node) isReplicaFor(c *cluster, ci wireCommand) bool {
	if !ci.readOnly || ci.slot < 0 {
		return false
	}
	r := c.routes[ci.slot].Load()
	return r != nil && r.primary != n
}

// target picks the node for a command: the slot's primary, or, for a read
// with Options.ReadFrom asking for it, a replica. Keyless commands go to
// any primary. nil means nobody serves the slot now.
func (c *cluster) target(ci wireCommand) *node {
	slot := ci.slot
	if slot < 0 {
		slot = int32(c.rr.Add(1) % slotCount)
	}
	r := c.routes[slot].Load()
	if r == nil {
		return nil
	}
	if !ci.readOnly {
		return r.primary
	}
	return c.s.readTarget(r.primary, r.replicas, c.replicaPick, &c.rr)
}

func (c *cluster) send(ctx context.Context, r *request) error {
	if r.tx {
		return c.sendTx(ctx, r)
	}
	return c.sendEach(ctx, r)
}

// flight is one request's way through the cluster: a reply or an error per
// command, and what each still needs. It holds only per-command state, and
// nothing ever stores its slices elsewhere: for a request of one command
// (GET, SET: nearly all of them) they then point at arrays on sendEach's
// stack and at the request's own room for one reply, and the whole way
// through the cluster allocates nothing.
type flight struct {
	replies []resp.Value
	errs    []error
	done    []bool
	ask     []string // an ASK target, per command
	primary []bool   // a replica turned the read away: the primary serves it
	// resent is a command sent once more: a read lost with its
	// connection, or a script a demoted primary ran as a replica.
	resent []bool
}

// takeFlight returns a flight for n commands on s's arrays, zeroed, and
// room for the indexes of n commands.
func takeFlight(s *flightState, n int) (flight, []int) {
	if cap(s.replies) < n {
		*s = flightState{replies: make([]resp.Value, n), errs: make([]error, n), flags: make([]bool, 3*n),
			ask: make([]string, n), idx: make([]int, n)}
	}
	s.replies, s.errs, s.flags, s.ask = s.replies[:n], s.errs[:n], s.flags[:3*n], s.ask[:n]
	clear(s.flags)
	return flight{replies: s.replies, errs: s.errs, done: s.flags[:n:n], ask: s.ask, primary: s.flags[n : 2*n : 2*n],
		resent: s.flags[2*n:]}, s.idx[:n]
}

// sendEach sends every command of r to its slot's owner, one pipeline per
// node, following redirects and retrying what the cluster could not serve
// yet, until every command has its reply or a final error.
func (c *cluster) sendEach(ctx context.Context, r *request) error {
	n := len(r.cmds)
	var f flight
	// many is f when the request has several commands: its slices are on
	// the heap, and only it is shared with sendGroups's goroutines, so
	// that the arrays a one-command request uses stay on this stack.
	var many flight
	var done, primary, resent [1]bool
	var ask [1]string
	var idx [1]int
	replies, errs := r.one.replies[:], r.one.errs[:]
	allIdx := idx[:]
	if n == 1 {
		f = flight{replies: replies, errs: errs, done: done[:], ask: ask[:], primary: primary[:], resent: resent[:]}
	} else {
		many, allIdx = takeFlight(&r.scratch().many, n)
		replies, errs = many.replies, many.errs
		f = many
	}
	backoff := retryBackoffMin
	var downSince time.Time // when a shard first could not serve (see FailoverWait)
	for round := 0; ; round++ {
		// Commands for one node, the common case, go straight to it;
		// those for several go to each in parallel.
		var only *node
		onlyIdx := allIdx[:0]
		var groups []nodeGroup
		waitTopology := false
		for i := range n {
			if f.done[i] {
				continue
			}
			var nd *node
			if f.ask[i] != "" {
				var err error
				if nd, err = c.node(ctx, f.ask[i]); err != nil {
					f.ask[i] = ""
					waitTopology = true
					f.errs[i] = err
					continue
				}
			} else {
				ci := r.cmds[i]
				ci.readOnly = ci.readOnly && !f.primary[i]
				nd = c.target(ci)
			}
			switch {
			case nd == nil:
				waitTopology = true
				f.errs[i] = errNoOwner
			case groups != nil:
				groups = addToGroup(groups, nd, i, n)
			case only == nil || only == nd:
				only = nd
				onlyIdx = append(onlyIdx, i)
			default:
				// Room for every command left in each group: a group
				// never grows by reallocation.
				groups = append(make([]nodeGroup, 0, 4), nodeGroup{only, append(make([]int, 0, n), onlyIdx...)},
					nodeGroup{nd, append(make([]int, 0, n-i), i)})
			}
		}
		var retry int
		var when again
		switch {
		case groups != nil:
			retry, when = c.sendGroups(ctx, r, &many, groups)
		case only != nil:
			retry, when = c.sendGroup(ctx, r, &f, only, onlyIdx)
		}
		if retry == 0 && !waitTopology {
			break
		}
		if round == maxRedirects {
			f.failWaiting(errTooManyRedirects)
			break
		}
		if waitTopology {
			c.askRefresh()
			when = againOnRoutes
		}
		limit, over := c.failoverLeft(&downSince, when)
		if over {
			f.failWaiting(ErrShardDown)
			break
		}
		if when == againNow && round == 0 {
			// Every command to send again was told where to go (MOVED,
			// ASK, or a replica's refusal that sends a read to the
			// primary): the first time, it goes now. A pause here held
			// every call behind a failover back by the backoff, on top of
			// the server's own. Redirected again, it backs off: nodes
			// that disagree about a slot for a moment must not bounce a
			// command through every round at once.
			continue
		}
		if err := c.wait(ctx, &backoff, when, limit); err != nil {
			f.failRest(notSentErr(err))
			break
		}
	}
	// The replies go to r from where they were made, not from f: f's
	// slices are never copied out (see flight).
	return finish(r, replies, errs)
}

// nodeGroup is the commands of a request bound for one node.
type nodeGroup struct {
	nd  *node
	idx []int
}

// addToGroup adds command i to nd's group, or starts one with room for
// the n-i commands that may follow. Nodes are few: a linear search.
func addToGroup(groups []nodeGroup, nd *node, i, n int) []nodeGroup {
	for k := range groups {
		if groups[k].nd == nd {
			groups[k].idx = append(groups[k].idx, i)
			return groups
		}
	}
	return append(groups, nodeGroup{nd, append(make([]int, 0, n-i), i)})
}

// sendGroups sends each node its pipeline, in parallel, and sorts the
// replies: final, redirected or to retry. It returns how many commands
// need another round, and when the round may go (see sendGroup). The
// first group goes from this goroutine, the others each from one of their
// own. They share f's arrays, each writing only its own commands' entries,
// so nothing needs merging afterwards.
func (c *cluster) sendGroups(ctx context.Context, r *request, f *flight, groups []nodeGroup) (retry int, when again) {
	var others struct {
		wg    sync.WaitGroup
		mu    sync.Mutex
		retry int
		when  again
	}
	for _, g := range groups[1:] {
		part := *f // the slices, not the variable: f stays where it is
		others.wg.Add(1)
		go func() {
			defer others.wg.Done()
			retry, when := c.sendGroup(ctx, r, &part, g.nd, g.idx)
			others.mu.Lock()
			others.retry += retry
			others.when = max(others.when, when)
			others.mu.Unlock()
		}()
	}
	retry, when = c.sendGroup(ctx, r, f, groups[0].nd, groups[0].idx)
	others.wg.Wait()
	return retry + others.retry, max(when, others.when)
}

// sendGroup sends the commands idx of the request to one node, each
// preceded by ASKING when an ASK redirect sent it there. It returns how
// many commands need sending again, and when the next round may go: the
// latest any of them needs (see again). Those that never left (a
// connection down) wait like those of a cluster that is down.
func (c *cluster) sendGroup(ctx context.Context, r *request, f *flight, nd *node, idx []int) (retry int, when again) {
	sub := c.s.newRequest()
	defer sub.release()
	call := sub.call
	if p := r.call.Patience; p != 0 {
		call.Patience = p // stored only when it changes (see pipe.Call, line 3)
	}
	sub.blocking = r.blocking
	for _, i := range idx {
		if f.ask[i] != "" {
			call.Buf = append(call.Buf, askingCommand...)
			call.Expect = append(call.Expect, tsStatus)
			call.N++
		}
		ci := r.cmds[i]
		call.Buf = append(call.Buf, r.call.Buf[ci.start:ci.end]...)
		call.Expect = append(call.Expect, r.call.Expect[i])
		call.N++
	}
	err := nd.send(ctx, sub)
	if err != nil {
		for _, i := range idx {
			switch {
			case errors.Is(err, ErrNotSent) && ctx.Err() == nil:
				f.errs[i] = err
				retry++ // never reached the server: safe to send again
				when = againOnChange
				c.askRefresh()
			case errors.Is(err, ErrConnLost) && r.cmds[i].readOnly && !r.blocking && !f.resent[i] && ctx.Err() == nil:
				// A read lost with its connection changed nothing, run or
				// not: it goes once more, to the primary (a replica that
				// lost it may be restarting). One lost on the primary
				// waits like one that could not be sent.
				f.resent[i], f.primary[i], f.errs[i] = true, true, err
				retry++
				if nd.isReplicaFor(c, r.cmds[i]) {
					when = max(when, againNow)
				} else {
					when = max(when, againOnChange)
					c.askRefresh()
				}
			default:
				f.errs[i], f.done[i] = err, true
			}
		}
		return retry, when
	}
	k := 0
	for _, i := range idx {
		if f.ask[i] != "" {
			k++ // ASKING's +OK
			f.ask[i] = ""
		}
		v := sub.replies[k]
		k++
		if nd.isReplicaFor(c, r.cmds[i]) && v.IsError() && isRefusal(v) &&
			!strings.HasPrefix(unsafeString(v.Bytes()), "CLUSTERDOWN") {
			// A replica that is loading, or not (or no longer) a replica
			// of this slot: the primary serves the read; nothing to patch.
			f.primary[i], f.errs[i] = true, serverError(v)
			retry++
			when = max(when, againNow)
			continue
		}
		if v.IsError() && !r.cmds[i].readOnly && !f.resent[i] && c.s.opts.ReadFrom != ReadPrimary && isScriptOnReplica(v) {
			// A script for a node that has just become a replica: with
			// READONLY on the connection (replica reads) the node runs it
			// rather than answer MOVED, and its first write fails, so
			// nothing was written (Redis refuses it as READONLY: the
			// same). It goes once more, at the next routes (or after
			// minQueryInterval; a refresh may have to wait for its turn,
			// so FailoverWait does not cut this wait short): a script
			// that reaches for an undeclared key of another slot fails so
			// again, for good.
			f.resent[i], f.errs[i] = true, serverError(v)
			retry++
			when = max(when, againOnNewRoutes)
			c.askRefresh()
			continue
		}
		if again := c.redirected(ctx, f, i, v, nd); again != notAgain {
			f.errs[i] = serverError(v)
			if slot, ok := movedSlot(v); ok && r.cmds[i].slot == noSlot {
				// Routing found no keys (a module's command, unknown to the
				// table), but the server did: follow it to their slot,
				// rather than to any node again.
				r.cmds[i].slot = slot
			}
			retry++
			when = max(when, again)
			continue
		}
		f.replies[i], f.errs[i], f.done[i] = v, nil, true
	}
	return retry, when
}

var askingCommand = resp.AppendBulkString(resp.AppendArrayLen(nil, 1), "ASKING")

// again says whether, and when, a command goes again. The values are
// ordered: a round goes when the command that must wait longest may.
type again int

const (
	notAgain again = iota // it ran, or failed for good
	againNow              // MOVED or ASK: the reply names where to go
	// againLater is after the backoff: TRYAGAIN and LOADING, which end
	// on the server, not with a change of the routes.
	againLater
	// againOnNewRoutes is at the next change of the routes, and at most
	// minQueryInterval, FailoverWait aside: the slot has a primary the
	// routes do not know yet (a script run by a demoted primary).
	againOnNewRoutes
	// againOnChange is after the backoff, or at the next change of the
	// routes if that comes first: CLUSTERDOWN, MASTERDOWN, or a node
	// that cannot be reached. A failover ends with the failover watch
	// installing the promoted replica, and the calls held back go to it
	// at once, not up to a backoff (200 ms) later.
	againOnChange
	// againOnRoutes is at the next change of the routes, and at most
	// minQueryInterval: no node serves the slot.
	againOnRoutes
)

// redirected handles a reply that says the command did not run here: MOVED
// and ASK point elsewhere; TRYAGAIN, CLUSTERDOWN, LOADING and MASTERDOWN
// mean later. It reports whether and when the command goes again. from is
// the node that answered.
func (c *cluster) redirected(ctx context.Context, f *flight, i int, v resp.Value, from *node) again {
	if !v.IsError() {
		return notAgain
	}
	msg := unsafeString(v.Bytes())
	prefix, rest, _ := strings.Cut(msg, " ")
	switch prefix {
	case "MOVED", "ASK":
		slotText, addr, ok := strings.Cut(rest, " ")
		slot, err := strconv.Atoi(slotText)
		if !ok || err != nil || slot < 0 || slot >= slotCount {
			return notAgain
		}
		addr = c.redirectAddr(addr)
		if prefix == "MOVED" {
			c.moved(ctx, int32(slot), addr, from)
		} else {
			f.ask[i] = addr
		}
		return againNow
	case "TRYAGAIN", "LOADING":
		return againLater
	case "CLUSTERDOWN", "MASTERDOWN":
		c.askRefresh()
		return againOnChange
	}
	return notAgain
}

// isScriptOnReplica reports whether v is a script's first write refused by
// a node that serves its slot only as a replica: Valkey's "ERR Attempted
// to access a non local key in a cluster node script", Redis's "READONLY
// You can't write against a read only replica".
func isScriptOnReplica(v resp.Value) bool {
	msg := unsafeString(v.Bytes())
	return v.IsError() && (strings.HasPrefix(msg, "READONLY ") || strings.Contains(msg, "access a non local key"))
}

// movedSlot returns the slot of a MOVED reply.
func movedSlot(v resp.Value) (int32, bool) {
	rest, ok := strings.CutPrefix(unsafeString(v.Bytes()), "MOVED ")
	if !v.IsError() || !ok {
		return 0, false
	}
	slotText, _, _ := strings.Cut(rest, " ")
	slot, err := strconv.Atoi(slotText)
	if err != nil || slot < 0 || slot >= slotCount {
		return 0, false
	}
	return int32(slot), true
}

// redirectAddr completes a redirect's address: a server that does not know
// its own host name sends ":port".
func (c *cluster) redirectAddr(addr string) string {
	if strings.HasPrefix(addr, ":") && len(c.seeds) > 0 {
		host, _, _ := strings.Cut(c.seeds[0], ":")
		return host + addr
	}
	return addr
}

// errNoOwner is why a command waited when no node served its slot.
var errNoOwner = errors.New("no node serves the slot")

// failoverLeft returns how long the next wait for a retry may last: what is
// left of this request's share of Options.FailoverWait since *since, the
// first time a shard could not serve (when is againOnChange or later;
// *since is set then), or -1 for no bound. over says that nothing is left:
// the request fails with ErrShardDown.
//
// The share is drawn at random between three quarters and all of
// FailoverWait, once per request (by setting *since back by the rest). A
// primary's death holds every caller that reaches its shard at once; with
// one wait for all, they would fail, come back and be held again in step,
// and the other shards would serve in bursts a FailoverWait apart with
// nothing between (rollingbench -timeline showed it). Spread, they come
// back a few at a time, as jittered retries do.
func (c *cluster) failoverLeft(since *time.Time, when again) (limit time.Duration, over bool) {
	wait := c.s.opts.FailoverWait
	if when < againOnChange || wait <= 0 {
		return -1, false
	}
	if since.IsZero() {
		*since = time.Now().Add(-rand.N(wait/4 + 1))
	}
	limit = wait - time.Since(*since)
	return limit, limit <= 0
}

// errTooManyRedirects ends a command still going round after maxRedirects
// rounds.
var errTooManyRedirects = errors.New("zipline: too many cluster redirects and retries")

// failWaiting fails every command still going round with err, saying what
// its last try met (a redirect, CLUSTERDOWN, a node that could not be
// reached). The reason is text, not a wrapped error: a redirect's error
// must not make the caller take the request for one the server answered.
func (f *flight) failWaiting(err error) {
	for i := range f.done {
		if !f.done[i] {
			e := err
			if f.errs[i] != nil {
				e = fmt.Errorf("%w; the last try: %v", err, f.errs[i])
			}
			f.errs[i], f.done[i] = e, true
		}
	}
}

// failRest fails every command not done yet with err, whatever it met on
// its way.
func (f *flight) failRest(err error) {
	for i := range f.done {
		if !f.done[i] {
			f.errs[i], f.done[i] = err, true
		}
	}
}

// finish leaves the replies in the request. If every command failed the
// same way, the request failed as a whole.
func finish(r *request, replies []resp.Value, errs []error) error {
	var first error
	all := true
	for _, err := range errs {
		if err == nil {
			all = false
		} else if first == nil {
			first = err
		}
	}
	if all && first != nil {
		return first
	}
	r.replies = replies
	if first != nil {
		r.errs = errs
	}
	return nil
}

// wait waits before a retry as when says (see again), and sets the next
// backoff: doubled, or the shortest after a change of the routes. A
// redirect that bounced, like againLater, waits out the backoff alone, so
// that nodes
// disagreeing about a slot for a moment (each MOVED changing the routes)
// do not run a command through every round at once. ctx bounds it, and
// limit when not negative.
func (c *cluster) wait(ctx context.Context, backoff *time.Duration, when again, limit time.Duration) error {
	d := *backoff/2 + rand.N(*backoff/2+1)
	var changed <-chan struct{}
	switch when {
	case againOnChange:
		changed = c.changes()
	case againOnRoutes, againOnNewRoutes:
		d, changed = minQueryInterval, c.changes()
	}
	if limit >= 0 {
		d = min(d, limit)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-c.life.Done():
		return ErrClosed
	case <-changed:
		// The routes changed (a failover's new primary installed): the
		// next wait starts again from the shortest, since the nodes may
		// still answer CLUSTERDOWN for a moment while they learn of it,
		// and a caller that had backed off to the longest would come back
		// up to 200 ms after they serve again.
		*backoff = retryBackoffMin
		return nil
	case <-t.C:
	}
	*backoff = min(2**backoff, retryBackoffMax)
	return nil
}
