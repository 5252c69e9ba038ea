package zipline

// This file routes the commands the servers say concern every shard or
// every node (their request_policy and response_policy tips, kept in each
// command's row by `make spec`): sent to each at once, their replies
// merged as the response policy says. DBSIZE on a cluster is the sum of
// its shards', FLUSHALL succeeds when every primary's does, SCRIPT EXISTS
// is true where every shard has the script. Commands split by their keys'
// slots (multi_shard: MGET, DEL) are crossslot.go's.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/ziplinekv/zipline/internal/cmdspec"
	"github.com/ziplinekv/zipline/internal/resp"
)

// fansOut reports whether the servers send the command to every shard or
// every node and say how to merge the replies. A special response policy
// (INFO, RANDOMKEY, LATENCY DOCTOR) has no merge a client could know for
// every reply, so such a command goes to one node, as a keyless command
// does by default; the typed methods of those that need more say so.
func (s *commandSpec) fansOut() bool {
	switch s.info.Request {
	case cmdspec.AllShards, cmdspec.AllNodes:
		return s.info.Response != cmdspec.ResponseSpecial
	}
	return false
}

// fanoutReason is why a Batch on a cluster refuses a command that fans
// out: a batch is one round trip, routed by its commands' slots.
const fanoutReason = "goes to every shard or node of a cluster, which a Batch does not do: run it on the Client"

// routes reports whether c is the shared Client of a cluster, whose
// requests are routed by slot (a Client from Dedicated is one connection).
func (c *Client) routes() bool { return c.carrier == c.s.top && c.s.commandTable() != nil }

// sendFanout sends a command that fans out (fansOut) to every shard's
// primary, and for all_nodes to every replica the Client holds a
// connection to too, all at once, and merges their replies by the
// command's response policy. On one server it is one call.
func (c *Client) sendFanout(ctx context.Context, spec *commandSpec, args []arg, expect resp.TypeSet, block time.Duration) (resp.Value, error) {
	allNodes := spec.info.Request == cmdspec.AllNodes
	targets := c.shards(allNodes)
	primaries := len(targets)
	if allNodes {
		primaries = len(c.shards(false)) // shards lists the primaries first
	}
	if len(targets) == 1 {
		return targets[0].sendOne(ctx, spec, args, expect, block)
	}
	replies := make([]resp.Value, len(targets))
	errs := make([]error, len(targets))
	// The goroutines get a copy of the row and of the arguments (which
	// routing may mark keys in): the caller's stay on its stack, where the
	// hot path's typed commands keep their argument arrays.
	row := *spec
	var wg sync.WaitGroup
	for i, t := range targets {
		own := slices.Clone(args)
		wg.Go(func() { replies[i], errs[i] = t.sendOne(ctx, &row, own, expect, block) })
	}
	wg.Wait()
	// A replica the client cannot reach now (restarting in a rolling
	// restart, its connection lost or not yet back) is left out: it holds
	// no data of its own, and what it missed (a script, a function) it is
	// given again when a command finds it missing there. A primary's
	// failure stays the command's.
	kept := primaries
	for i := primaries; i < len(targets); i++ {
		if err := errs[i]; !errors.Is(err, ErrNotSent) && !errors.Is(err, ErrConnLost) {
			replies[kept], errs[kept] = replies[i], errs[i]
			kept++
		}
	}
	return mergeReplies(spec, replies[:kept], errs[:kept])
}

// sendOne sends one command through c's carrier and returns its expanded
// reply, an error reply as an error.
func (c *Client) sendOne(ctx context.Context, spec *commandSpec, args []arg, expect resp.TypeSet, block time.Duration) (resp.Value, error) {
	v, vr, err := c.sendRequest(ctx, spec, args, expect, block)
	if err == nil && vr.shape != replyNone {
		v, err = vr.expand(v)
	}
	return v, err
}

// mergeReplies merges the replies of the nodes a command went to, as the
// servers' response policy for it says. An error (of a node, or its
// reply) is the command's, but where one success is enough
// (one_succeeded: SCRIPT KILL, where the nodes running no script answer
// NOTBUSY).
func mergeReplies(spec *commandSpec, replies []resp.Value, errs []error) (resp.Value, error) {
	policy := spec.info.Response
	if policy == cmdspec.OneSucceeded {
		for i, err := range errs {
			if err == nil {
				return replies[i], nil
			}
		}
		return resp.Value{}, errs[0]
	}
	for _, err := range errs {
		if err != nil {
			return resp.Value{}, err
		}
	}
	switch policy {
	case cmdspec.AllSucceeded:
		return replies[0], nil
	case cmdspec.ResponseDefault:
		// A keyless command's arrays, concatenated (KEYS, SLOWLOG GET).
		var all []resp.Value
		for _, v := range replies {
			if v.Type() != resp.Array && v.Type() != resp.Set {
				return replies[0], nil
			}
			all = append(all, v.Elems()...)
		}
		return resp.ArrayValue(all), nil
	}
	out := replies[0]
	for _, v := range replies[1:] {
		var err error
		if out, err = aggregate(policy, out, v); err != nil {
			return resp.Value{}, fmt.Errorf("zipline: %s: merging the nodes' replies (%s): %w", spec.fullName(), policy, err)
		}
	}
	return out, nil
}

// aggregate combines two replies of an aggregating policy: integers, or
// arrays of integers element by element (SCRIPT EXISTS).
func aggregate(policy cmdspec.ResponsePolicy, a, b resp.Value) (resp.Value, error) {
	if a.Type() == resp.Integer && b.Type() == resp.Integer {
		return resp.IntValue(combine(policy, a.Int(), b.Int())), nil
	}
	if a.Type() == resp.Array && b.Type() == resp.Array && len(a.Elems()) == len(b.Elems()) {
		out := make([]resp.Value, len(a.Elems()))
		for i := range out {
			var err error
			if out[i], err = aggregate(policy, a.Elems()[i], b.Elems()[i]); err != nil {
				return resp.Value{}, err
			}
		}
		return resp.ArrayValue(out), nil
	}
	return resp.Value{}, &TypeError{Want: "integers or arrays of integers of one length", Got: a.Type().String() + " and " + b.Type().String()}
}

func combine(policy cmdspec.ResponsePolicy, a, b int64) int64 {
	switch policy {
	case cmdspec.AggSum:
		return a + b
	case cmdspec.AggMin:
		return min(a, b)
	case cmdspec.AggMax:
		return max(a, b)
	case cmdspec.AggLogicalAnd:
		return boolInt(a != 0 && b != 0)
	case cmdspec.AggLogicalOr:
		return boolInt(a != 0 || b != 0)
	}
	return a
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
