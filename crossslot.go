package zipline

import (
	"cmp"
	"slices"
	"strings"

	"github.com/ziplinekv/zipline/internal/resp"
)

// On a cluster, a command whose keys hash to different slots cannot run as
// one: the server refuses it (CROSSSLOT). Those that act on each key on its
// own are cut into one command per slot, sent wherever each slot lives, and
// their replies merged back into the reply the whole command would have
// had, keys in the caller's order.

// split records one command encoded as several.
type split struct {
	first, n int // its parts: r.cmds[first : first+n]
	merge    mergeKind
	// order, for mergeArray: where each key of the parts, in part order,
	// stood in the caller's command.
	order []int
}

// addSplit encodes a command as one command per slot. A unit is a key and
// the arguments after it up to the next key (MSET's value), so units keep
// together; parts keep the caller's order within each slot.
func (c *Client) addSplit(r *request, spec *commandSpec, args []arg, expect resp.TypeSet, values argSpan) error {
	if r.tx {
		return &CrossSlotError{Command: spec.fullName(), Slots: keySlots(args)}
	}
	merge := spec.merge()
	// Units sorted by slot, each slot's in the caller's order: three
	// allocations however many slots the keys span (a map of slots and a
	// slice per slot cost two per slot).
	type unit struct {
		slot       int32
		key        int // its index among the command's keys
		start, end int // its arguments
	}
	units := make([]unit, 0, len(args))
	for i, key := 0, 0; i < len(args); key++ {
		end := i + 1
		for end < len(args) && args[end].kind != argKey {
			end++
		}
		units = append(units, unit{keySlot(args[i].s), key, i, end})
		i = end
	}
	slices.SortStableFunc(units, func(a, b unit) int { return cmp.Compare(a.slot, b.slot) })
	sp := split{first: len(r.cmds), merge: merge}
	if merge == mergeArray {
		sp.order = make([]int, 0, len(units))
	}
	part := make([]arg, 0, len(args)) // encode copies it: one buffer serves every part
	for i := 0; i < len(units); {
		slot := units[i].slot
		if merge == mergeArray && (i+1 == len(units) || units[i+1].slot != slot) {
			// A part of one key goes as GET: its reply is the value itself,
			// where MGET's would be an array of one (see mergeParts).
			sp.order = append(sp.order, units[i].key)
			c.encode(r, specGET, args[units[i].start:units[i].end], tsBulk, argSpan{}, wireCommand{slot: slot})
			sp.n++
			i++
			continue
		}
		part = part[:0]
		var partValues argSpan
		for ; i < len(units) && units[i].slot == slot; i++ {
			u := units[i]
			if merge == mergeArray {
				sp.order = append(sp.order, u.key)
			}
			for j := u.start; j < u.end; j++ {
				if values.has(j) {
					partValues = every(1, 2) // MSET: every value follows its key
				}
				part = append(part, args[j])
			}
		}
		c.encode(r, spec, part, expect, partValues, wireCommand{slot: slot})
		sp.n++
	}
	r.splits = append(r.splits, sp)
	return nil
}

// merged returns one reply and error per command as the caller queued it:
// the parts of split commands merged back into one.
func (r *request) merged() ([]resp.Value, []error) {
	if len(r.splits) == 0 {
		return r.replies, r.errs
	}
	replies := make([]resp.Value, 0, len(r.replies))
	var errs []error
	if r.errs != nil {
		errs = make([]error, 0, len(r.replies))
	}
	next := 0
	for _, sp := range r.splits {
		for ; next < sp.first; next++ {
			replies = append(replies, r.replies[next])
			if errs != nil {
				errs = append(errs, r.errs[next])
			}
		}
		v, err := sp.mergeParts(r.replies[sp.first:sp.first+sp.n], partErrs(r.errs, sp))
		replies = append(replies, v)
		if errs != nil {
			errs = append(errs, err)
		}
		next = sp.first + sp.n
	}
	for ; next < len(r.replies); next++ {
		replies = append(replies, r.replies[next])
		if errs != nil {
			errs = append(errs, r.errs[next])
		}
	}
	return replies, errs
}

func partErrs(errs []error, sp split) []error {
	if errs == nil {
		return nil
	}
	return errs[sp.first : sp.first+sp.n]
}

// mergeParts merges the replies of one split command's parts. An error, of
// the connection or the server, in any part is the whole command's.
func (sp split) mergeParts(parts []resp.Value, errs []error) (resp.Value, error) {
	for i, v := range parts {
		if errs != nil && errs[i] != nil {
			return resp.Value{}, errs[i]
		}
		if v.IsError() && sp.merge == mergeArray && strings.HasPrefix(unsafeString(v.Bytes()), "WRONGTYPE ") {
			// A part of one key went as GET, which refuses a key of another
			// type; MGET answers nil for it.
			parts[i] = resp.NullValue()
			continue
		}
		if v.IsError() || v.Type() == resp.Oversize {
			return v, nil
		}
	}
	switch sp.merge {
	case mergeArray:
		out := make([]resp.Value, len(sp.order))
		k := 0
		place := func(e resp.Value) {
			if k < len(sp.order) {
				out[sp.order[k]] = e
			}
			k++
		}
		for _, v := range parts {
			if v.Type() != resp.Array {
				place(v) // a part of one key, sent as GET
				continue
			}
			for _, e := range v.Elems() {
				place(e)
			}
		}
		return resp.ArrayValue(out), nil
	case mergeSum:
		var n int64
		for _, v := range parts {
			n += v.Int()
		}
		return resp.IntValue(n), nil
	}
	return parts[0], nil
}
