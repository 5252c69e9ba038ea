package difftest

// Streams: entries, consumer groups and their pending lists. IDs are
// explicit (gen.streamAddID); what XINFO and XPENDING report about time
// (idle times, inactivity) is left out, and so is what go-redis cannot
// read (see the renderers below).

import (
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/ziplinekv/zipline"
)

// gRender renders a go-redis command of type C with f, once it succeeded.
func gRender[C redis.Cmder](f func(C) string) func(gcmd) reply {
	return func(c gcmd) reply {
		if err := c.Err(); err != nil {
			return gErr(err)
		}
		cc, ok := c.(C)
		if !ok {
			return reply{kClient, fmt.Sprintf("difftest: go-redis returned a %T", c)}
		}
		return val(f(cc))
	}
}

// Entries render as their ID and their fields as a map: go-redis reads an
// entry's fields into a map[string]any (XMessage.Values), which keeps
// neither their order nor repeats, so an entry's fields compare as a map
// here (streamFields never repeats one), and in order in the key space
// check, which reads go-redis's server with Do. An entry deleted while
// pending has no fields (null): "(deleted)".

func zXMsg(m zipline.XMessage) string {
	if m.Values == nil {
		return vstr(m.ID) + " (deleted)"
	}
	f := make(map[string]string, len(m.Values))
	for _, fv := range m.Values {
		f[fv.Field] = vbytes(fv.Value)
	}
	return vstr(m.ID) + " " + vmap(f)
}

func gXMsg(m redis.XMessage) string {
	if m.Values == nil {
		return vstr(m.ID) + " (deleted)"
	}
	f := make(map[string]string, len(m.Values))
	for k, v := range m.Values {
		f[k] = vstr(fmt.Sprint(v))
	}
	return vstr(m.ID) + " " + vmap(f)
}

func zXMsgs(ms []zipline.XMessage) string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = zXMsg(m)
	}
	return vlist(out, false)
}

func gXMsgs(ms []redis.XMessage) string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = gXMsg(m)
	}
	return vlist(out, false)
}

func zXStreams(ss []zipline.XStream) string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = vstr(s.Stream) + ": " + zXMsgs(s.Messages)
	}
	return vlist(out, false)
}

func gXStreams(ss []redis.XStream) string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = vstr(s.Stream) + ": " + gXMsgs(s.Messages)
	}
	return vlist(out, false)
}

func vpending(count int64, lower, higher string, consumers map[string]int64) string {
	cs := make(map[string]string, len(consumers))
	for c, n := range consumers {
		cs[c] = vint(n)
	}
	return fmt.Sprintf("(pending) %d %q..%q %s", count, lower, higher, vmap(cs))
}

// Pending entries: ID, consumer and deliveries; not the idle time.
func vpendingExt(id, consumer string, deliveries int64) string {
	return fmt.Sprintf("%q %q x%d", id, consumer, deliveries)
}

func vxinfo(length, keys, nodes, groups int64, last, maxDeleted string, added int64, first, lastEntry string) string {
	return fmt.Sprintf("(stream) length=%d radix-tree=%d/%d groups=%d last-generated=%q max-deleted=%q entries-added=%d first=%s last=%s",
		length, keys, nodes, groups, last, maxDeleted, added, first, lastEntry)
}

func vgroup(name string, consumers, pending int64, lastDelivered string, entriesRead, lag int64) string {
	return fmt.Sprintf("(group %q) consumers=%d pending=%d last-delivered=%q entries-read=%d lag=%d",
		name, consumers, pending, lastDelivered, entriesRead, lag)
}

// Consumers: name and pending count; not the idle and inactive times.
func vconsumer(name string, pending int64) string {
	return fmt.Sprintf("(consumer %q) pending=%d", name, pending)
}

func zXPending(p zipline.XPending) string {
	return vpending(p.Count, p.Lower, p.Higher, p.Consumers)
}

func gXPending(c *redis.XPendingCmd) string {
	p := c.Val()
	return vpending(p.Count, p.Lower, p.Higher, p.Consumers)
}

func zXPendingExt(ps []zipline.XPendingExt) string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = vpendingExt(p.ID, p.Consumer, p.RetryCount)
	}
	return vlist(out, false)
}

func gXPendingExt(c *redis.XPendingExtCmd) string {
	out := make([]string, len(c.Val()))
	for i, p := range c.Val() {
		out[i] = vpendingExt(p.ID, p.Consumer, p.RetryCount)
	}
	return vlist(out, false)
}

func zXInfoStream(s zipline.XInfoStream) string {
	return vxinfo(s.Length, s.RadixTreeKeys, s.RadixTreeNodes, s.Groups, s.LastGeneratedID, s.MaxDeletedID,
		s.EntriesAdded, zXMsg(s.FirstEntry), zXMsg(s.LastEntry))
}

func gXInfoStream(c *redis.XInfoStreamCmd) string {
	s := c.Val()
	return vxinfo(s.Length, s.RadixTreeKeys, s.RadixTreeNodes, s.Groups, s.LastGeneratedID, s.MaxDeletedEntryID,
		s.EntriesAdded, gXMsg(s.FirstEntry), gXMsg(s.LastEntry))
}

func zXInfoGroups(gs []zipline.XInfoGroup) string {
	out := make([]string, len(gs))
	for i, g := range gs {
		out[i] = vgroup(g.Name, g.Consumers, g.Pending, g.LastDeliveredID, g.EntriesRead, g.Lag)
	}
	return vlist(out, false)
}

func gXInfoGroups(c *redis.XInfoGroupsCmd) string {
	out := make([]string, len(c.Val()))
	for i, g := range c.Val() {
		out[i] = vgroup(g.Name, g.Consumers, g.Pending, g.LastDeliveredID, g.EntriesRead, g.Lag)
	}
	return vlist(out, false)
}

func zXInfoConsumers(cs []zipline.XInfoConsumer) string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = vconsumer(c.Name, c.Pending)
	}
	return vlist(out, false)
}

func gXInfoConsumers(c *redis.XInfoConsumersCmd) string {
	out := make([]string, len(c.Val()))
	for i, x := range c.Val() {
		out[i] = vconsumer(x.Name, x.Pending)
	}
	return vlist(out, false)
}

// XAUTOCLAIM: where to scan next, what was claimed, and which IDs were
// gone from the stream. go-redis's JUSTID form drops the deleted IDs
// (XAutoClaimJustIDCmd discards the third element), so the JUSTID row
// compares the rest.
func vautoclaim(next, claimed string, deleted []string) string {
	s := fmt.Sprintf("(next %q) %s", next, claimed)
	if deleted != nil {
		s += " deleted " + zStrings(false)(deleted)
	}
	return s
}

func zAutoClaimed(justID bool) func(zipline.XAutoClaimed) string {
	return func(a zipline.XAutoClaimed) string {
		if justID {
			return vautoclaim(a.Next, zStrings(false)(a.IDs), nil)
		}
		return vautoclaim(a.Next, zXMsgs(a.Messages), nonNil(a.Deleted))
	}
}

func nonNil(ss []string) []string {
	if ss == nil {
		return []string{}
	}
	return ss
}

// xaddDesc renders an XADD for reports.
func xaddDesc(a zipline.XAddArgs) string {
	var opts []any
	if a.NoMkStream {
		opts = append(opts, "NOMKSTREAM")
	}
	trim := "="
	if a.Approx {
		trim = "~"
	}
	switch {
	case a.MaxLen > 0:
		opts = append(opts, "MAXLEN", trim, a.MaxLen)
	case a.MinID != "":
		opts = append(opts, "MINID", trim, a.MinID)
	}
	if a.Limit > 0 {
		opts = append(opts, "LIMIT", a.Limit)
	}
	opts = append(opts, a.ID)
	for _, fv := range a.Values {
		opts = append(opts, fv.Field, fv.Value)
	}
	return cmdline("XADD", append([]any{a.Stream}, opts...)...)
}

var streamRows = []row{
	// The keys streams, geo sets and HyperLogLogs keep to themselves are
	// taken over now and then (RENAME, COPY, a WATCH's interfering SET),
	// and their commands would then meet WRONGTYPE until something
	// deletes the key: this does, now and then.
	{"DEL own keys", 5, func(g *gen) *op {
		k := pick(g, "k16", "k16", "k17", "k18", "k19")
		o := &op{name: "DEL", desc: cmdline("DEL", k), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.Del(ctx, k) }}
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) { return c.Del(ctx, k) },
			func(b zbat) fut[int64] { return b.Del(k) })
	}},
	{"XADD", 14, func(g *gen) *op {
		k := g.key(bandStream)
		fs, vs := g.streamFields()
		za := zipline.XAddArgs{Stream: k, ID: g.streamAddID(), NoMkStream: g.intn(8) == 0}
		switch g.intn(6) {
		case 0:
			za.MaxLen = pick[int64](g, 1, 2, 3, 5)
		case 1:
			if g.intn(4) == 0 {
				za.MinID = g.streamID()
			} else {
				za.MinID = fmt.Sprintf("%d-0", g.xms-int64(g.intn(4)))
			}
		}
		if (za.MaxLen > 0 || za.MinID != "") && g.intn(4) == 0 {
			za.Approx = true
			if g.intn(2) == 0 {
				za.Limit = pick[int64](g, 1, 10)
			}
		}
		// Now and then options with no trim to shape (go-redis drops
		// Approx in silence, and sends a LIMIT the server refuses), or a
		// LIMIT on an exact trim: zipline refuses them before sending.
		invalid := false
		switch g.intn(14) {
		case 0:
			za.MaxLen, za.MinID, za.Approx, za.Limit, invalid = 0, "", true, pick[int64](g, 0, 1), true
		case 1:
			za.MaxLen, za.MinID, za.Approx, za.Limit, invalid = 3, "", false, 1, true
		}
		flat := make([]any, 0, 2*len(fs))
		for i, f := range fs {
			za.Values = append(za.Values, zipline.FieldValue{Field: f, Value: vs[i]})
			flat = append(flat, f, vs[i])
		}
		ga := &redis.XAddArgs{Stream: k, NoMkStream: za.NoMkStream, MaxLen: za.MaxLen, MinID: za.MinID,
			Approx: za.Approx, Limit: za.Limit, ID: za.ID, Values: flat}
		o := &op{name: "XADD", desc: xaddDesc(za), keys: []string{k}, invalid: invalid,
			g: func(ctx ctxT, c gcli) gcmd { return c.XAdd(ctx, ga) }}
		return typed(o, vstr,
			func(ctx ctxT, c zcli) (string, error) { return c.XAdd(ctx, za) },
			func(b zbat) fut[string] { return b.XAdd(za) })
	}},
	{"XLEN", 3, func(g *gen) *op {
		k := g.key(bandStream)
		o := &op{name: "XLEN", desc: cmdline("XLEN", k), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.XLen(ctx, k) }}
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) { return c.XLen(ctx, k) },
			func(b zbat) fut[int64] { return b.XLen(k) })
	}},
	{"XRANGE", 5, func(g *gen) *op {
		k, start, stop := g.key(bandStream), pick(g, "-", "-", g.streamID()), pick(g, "+", "+", g.streamID())
		rev := g.intn(3) == 0
		name := "XRANGE"
		if rev {
			name, start, stop = "XREVRANGE", stop, start
		}
		var count int64
		if g.intn(2) == 0 {
			count = pick[int64](g, 0, 1, 2, 5)
		}
		desc := cmdline(name, k, start, stop)
		if count != 0 {
			name += " COUNT"
			desc += fmt.Sprintf(" COUNT %d", count)
		}
		o := &op{name: name, desc: desc, keys: []string{k}, gr: gRender(func(c *redis.XMessageSliceCmd) string { return gXMsgs(c.Val()) }),
			g: func(ctx ctxT, c gcli) gcmd {
				switch {
				case rev && count != 0:
					return c.XRevRangeN(ctx, k, start, stop, count)
				case rev:
					return c.XRevRange(ctx, k, start, stop)
				case count != 0:
					return c.XRangeN(ctx, k, start, stop, count)
				}
				return c.XRange(ctx, k, start, stop)
			}}
		return typed(o, zXMsgs,
			func(ctx ctxT, c zcli) ([]zipline.XMessage, error) {
				switch {
				case rev && count != 0:
					return c.XRevRangeN(ctx, k, start, stop, count)
				case rev:
					return c.XRevRange(ctx, k, start, stop)
				case count != 0:
					return c.XRangeN(ctx, k, start, stop, count)
				}
				return c.XRange(ctx, k, start, stop)
			},
			func(b zbat) fut[[]zipline.XMessage] {
				switch {
				case rev && count != 0:
					return b.XRevRangeN(k, start, stop, count)
				case rev:
					return b.XRevRange(k, start, stop)
				case count != 0:
					return b.XRangeN(k, start, stop, count)
				}
				return b.XRange(k, start, stop)
			})
	}},
	{"XDEL", 3, func(g *gen) *op {
		k, ids := g.key(bandStream), g.streamEntryIDs(1, 2)
		o := &op{name: "XDEL", desc: cmdline("XDEL", k, ids), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.XDel(ctx, k, ids...) }}
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) { return c.XDel(ctx, k, ids...) },
			func(b zbat) fut[int64] { return b.XDel(k, ids...) })
	}},
	{"XTRIM", 2, func(g *gen) *op {
		k := g.key(bandStream)
		var a zipline.XTrimArgs
		desc := cmdline("XTRIM", k)
		if g.intn(2) == 0 {
			a.MaxLen = pick[int64](g, 0, 1, 2, 4)
		} else {
			a.MinID = pick(g, g.streamID(), fmt.Sprintf("%d-0", g.xms-int64(g.intn(4))))
		}
		// Approximate with any threshold, MaxLen 0 included (go-redis's
		// XTrimMaxLenApprox(0, n) sends MAXLEN ~ 0 LIMIT n, as zipline
		// does); and now and then what the server refuses (LIMIT on an
		// exact trim) or makes no sense (both strategies, a negative
		// length), which zipline refuses before sending.
		if g.intn(3) == 0 {
			a.Approx = true
			if g.intn(2) == 0 {
				a.Limit = pick[int64](g, 1, 10)
			}
		}
		invalid := false
		switch g.intn(12) {
		case 0:
			a.Approx, a.Limit, invalid = false, pick[int64](g, 1, 10), true
		case 1:
			a.MaxLen, a.MinID, invalid = 2, g.streamID(), true
		case 2:
			a.MaxLen, a.MinID, invalid = -1, "", true
		}
		trim := "="
		if a.Approx {
			trim = "~"
		}
		if a.MinID != "" {
			desc += cmdline("", "MINID", trim, a.MinID)
		} else {
			desc += cmdline("", "MAXLEN", trim, a.MaxLen)
		}
		if a.Limit > 0 {
			desc += cmdline("", "LIMIT", a.Limit)
		}
		o := &op{name: "XTRIM", desc: desc, keys: []string{k}, invalid: invalid,
			g: func(ctx ctxT, c gcli) gcmd {
				switch {
				case a.MinID != "" && a.Approx:
					return c.XTrimMinIDApprox(ctx, k, a.MinID, a.Limit)
				case a.MinID != "":
					return c.XTrimMinID(ctx, k, a.MinID)
				case a.Approx:
					return c.XTrimMaxLenApprox(ctx, k, a.MaxLen, a.Limit)
				}
				return c.XTrimMaxLen(ctx, k, a.MaxLen)
			}}
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) { return c.XTrim(ctx, k, a) },
			func(b zbat) fut[int64] { return b.XTrim(k, a) })
	}},
	{"XREAD", 4, func(g *gen) *op {
		// Never blocking: zipline's zero Block does not block; go-redis's
		// zero Block is BLOCK 0 (forever), so it is given -1.
		streams := g.keys(bandStream, 1, 2)
		ids := make([]string, len(streams))
		for i := range ids {
			ids[i] = pick(g, "0", "0", "$", g.streamID())
		}
		count := pick[int64](g, 0, 0, 1, 2)
		a := zipline.XReadArgs{Streams: streams, IDs: ids, Count: count}
		desc := "XREAD"
		if count > 0 {
			desc += fmt.Sprintf(" COUNT %d", count)
		}
		desc += cmdline(" STREAMS", streams, ids)
		o := &op{name: "XREAD", desc: desc, keys: streams, gr: gRender(func(c *redis.XStreamSliceCmd) string { return gXStreams(c.Val()) }),
			g: func(ctx ctxT, c gcli) gcmd {
				return c.XRead(ctx, &redis.XReadArgs{Streams: append(append([]string{}, streams...), ids...), Count: count, Block: -1})
			}}
		return typed(o, zXStreams,
			func(ctx ctxT, c zcli) ([]zipline.XStream, error) { return c.XRead(ctx, a) },
			func(b zbat) fut[[]zipline.XStream] { return b.XRead(a) })
	}},
	{"XGROUP CREATE", 6, func(g *gen) *op {
		k, grp, start := g.key(bandStream), g.group(), pick(g, "0", "0", "$", g.streamEntryID())
		mk := g.intn(3) != 0
		name, desc := "XGROUP CREATE", cmdline("XGROUP CREATE", k, grp, start)
		if mk {
			name, desc = name+" MKSTREAM", desc+" MKSTREAM"
		}
		o := &op{name: name, desc: desc, keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd {
				if mk {
					return c.XGroupCreateMkStream(ctx, k, grp, start)
				}
				return c.XGroupCreate(ctx, k, grp, start)
			}}
		return typed(o, zOK,
			okOnly(func(ctx ctxT, c zcli) error {
				if mk {
					return c.XGroupCreateMkStream(ctx, k, grp, start)
				}
				return c.XGroupCreate(ctx, k, grp, start)
			}),
			func(b zbat) fut[bool] {
				if mk {
					return b.XGroupCreateMkStream(k, grp, start)
				}
				return b.XGroupCreate(k, grp, start)
			})
	}},
	{"XGROUP SETID", 1, func(g *gen) *op {
		k, grp, start := g.key(bandStream), g.group(), pick(g, "0", "$", g.streamEntryID())
		o := &op{name: "XGROUP SETID", desc: cmdline("XGROUP SETID", k, grp, start), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.XGroupSetID(ctx, k, grp, start) }}
		return typed(o, zOK,
			okOnly(func(ctx ctxT, c zcli) error { return c.XGroupSetID(ctx, k, grp, start) }),
			func(b zbat) fut[bool] { return b.XGroupSetID(k, grp, start) })
	}},
	{"XGROUP DESTROY", 1, func(g *gen) *op {
		k, grp := g.key(bandStream), g.group()
		o := &op{name: "XGROUP DESTROY", desc: cmdline("XGROUP DESTROY", k, grp), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.XGroupDestroy(ctx, k, grp) }}
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) { return c.XGroupDestroy(ctx, k, grp) },
			func(b zbat) fut[int64] { return b.XGroupDestroy(k, grp) })
	}},
	{"XGROUP CREATECONSUMER", 1, func(g *gen) *op {
		k, grp, cons := g.key(bandStream), g.group(), g.consumer()
		o := &op{name: "XGROUP CREATECONSUMER", desc: cmdline("XGROUP CREATECONSUMER", k, grp, cons), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.XGroupCreateConsumer(ctx, k, grp, cons) }}
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) { return c.XGroupCreateConsumer(ctx, k, grp, cons) },
			func(b zbat) fut[int64] { return b.XGroupCreateConsumer(k, grp, cons) })
	}},
	{"XGROUP DELCONSUMER", 1, func(g *gen) *op {
		k, grp, cons := g.key(bandStream), g.group(), g.consumer()
		o := &op{name: "XGROUP DELCONSUMER", desc: cmdline("XGROUP DELCONSUMER", k, grp, cons), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.XGroupDelConsumer(ctx, k, grp, cons) }}
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) { return c.XGroupDelConsumer(ctx, k, grp, cons) },
			func(b zbat) fut[int64] { return b.XGroupDelConsumer(k, grp, cons) })
	}},
	{"XREADGROUP", 6, func(g *gen) *op {
		streams := g.keys(bandStream, 1, 2)
		ids := make([]string, len(streams))
		for i := range ids {
			ids[i] = pick(g, ">", ">", ">", "0", g.streamEntryID())
		}
		a := zipline.XReadGroupArgs{Group: g.group(), Consumer: g.consumer(), Streams: streams, IDs: ids,
			Count: pick[int64](g, 0, 0, 1, 2), NoAck: g.intn(6) == 0}
		desc := cmdline("XREADGROUP GROUP", a.Group, a.Consumer)
		if a.Count > 0 {
			desc += fmt.Sprintf(" COUNT %d", a.Count)
		}
		if a.NoAck {
			desc += " NOACK"
		}
		desc += cmdline(" STREAMS", streams, ids)
		o := &op{name: "XREADGROUP", desc: desc, keys: streams, gr: gRender(func(c *redis.XStreamSliceCmd) string { return gXStreams(c.Val()) }),
			g: func(ctx ctxT, c gcli) gcmd {
				return c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: a.Group, Consumer: a.Consumer,
					Streams: append(append([]string{}, streams...), ids...), Count: a.Count, Block: -1, NoAck: a.NoAck})
			}}
		return typed(o, zXStreams,
			func(ctx ctxT, c zcli) ([]zipline.XStream, error) { return c.XReadGroup(ctx, a) },
			func(b zbat) fut[[]zipline.XStream] { return b.XReadGroup(a) })
	}},
	{"XACK", 3, func(g *gen) *op {
		k, grp, ids := g.key(bandStream), g.group(), g.streamEntryIDs(1, 3)
		o := &op{name: "XACK", desc: cmdline("XACK", k, grp, ids), keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd { return c.XAck(ctx, k, grp, ids...) }}
		return typed(o, vint,
			func(ctx ctxT, c zcli) (int64, error) { return c.XAck(ctx, k, grp, ids...) },
			func(b zbat) fut[int64] { return b.XAck(k, grp, ids...) })
	}},
	{"XPENDING", 2, func(g *gen) *op {
		k, grp := g.key(bandStream), g.group()
		o := &op{name: "XPENDING", desc: cmdline("XPENDING", k, grp), keys: []string{k}, gr: gRender(gXPending),
			g: func(ctx ctxT, c gcli) gcmd { return c.XPending(ctx, k, grp) }}
		return typed(o, zXPending,
			func(ctx ctxT, c zcli) (zipline.XPending, error) { return c.XPending(ctx, k, grp) },
			func(b zbat) fut[zipline.XPending] { return b.XPending(k, grp) })
	}},
	{"XPENDING ext", 3, func(g *gen) *op {
		k := g.key(bandStream)
		a := zipline.XPendingExtArgs{Stream: k, Group: g.group(), Start: pick(g, "-", "-", g.streamID()),
			End: pick(g, "+", "+", g.streamID()), Count: pick[int64](g, 10, 10, 1, 3, 0)}
		if g.intn(5) == 0 {
			a.Idle = time.Hour // nothing has been idle that long: an empty list
		}
		if g.intn(3) == 0 {
			a.Consumer = g.consumer()
		}
		desc := cmdline("XPENDING", k, a.Group)
		if a.Idle > 0 {
			desc += fmt.Sprintf(" IDLE %d", a.Idle.Milliseconds())
		}
		desc += cmdline("", a.Start, a.End, a.Count)
		if a.Consumer != "" {
			desc += cmdline("", a.Consumer)
		}
		ga := &redis.XPendingExtArgs{Stream: k, Group: a.Group, Idle: a.Idle, Start: a.Start, End: a.End, Count: a.Count, Consumer: a.Consumer}
		o := &op{name: "XPENDING ext", desc: desc, keys: []string{k}, gr: gRender(gXPendingExt),
			g: func(ctx ctxT, c gcli) gcmd { return c.XPendingExt(ctx, ga) }}
		return typed(o, zXPendingExt,
			func(ctx ctxT, c zcli) ([]zipline.XPendingExt, error) { return c.XPendingExt(ctx, a) },
			func(b zbat) fut[[]zipline.XPendingExt] { return b.XPendingExt(a) })
	}},
	{"XCLAIM", 3, func(g *gen) *op {
		k := g.key(bandStream)
		a := zipline.XClaimArgs{Stream: k, Group: g.group(), Consumer: g.consumer(), Messages: g.streamEntryIDs(1, 3)}
		if g.intn(5) == 0 {
			a.MinIdle = time.Hour // claims nothing
		}
		justID := g.intn(3) == 0
		name := "XCLAIM"
		desc := cmdline("XCLAIM", k, a.Group, a.Consumer, a.MinIdle.Milliseconds(), a.Messages)
		if justID {
			name, desc = name+" JUSTID", desc+" JUSTID"
		}
		ga := &redis.XClaimArgs{Stream: k, Group: a.Group, Consumer: a.Consumer, MinIdle: a.MinIdle, Messages: a.Messages}
		o := &op{name: name, desc: desc, keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd {
				if justID {
					return c.XClaimJustID(ctx, ga)
				}
				return c.XClaim(ctx, ga)
			}}
		if justID {
			return typed(o, zStrings(false),
				func(ctx ctxT, c zcli) ([]string, error) { return c.XClaimJustID(ctx, a) },
				func(b zbat) fut[[]string] { return b.XClaimJustID(a) })
		}
		o.gr = gRender(func(c *redis.XMessageSliceCmd) string { return gXMsgs(c.Val()) })
		return typed(o, zXMsgs,
			func(ctx ctxT, c zcli) ([]zipline.XMessage, error) { return c.XClaim(ctx, a) },
			func(b zbat) fut[[]zipline.XMessage] { return b.XClaim(a) })
	}},
	{"XAUTOCLAIM", 3, func(g *gen) *op {
		k := g.key(bandStream)
		a := zipline.XAutoClaimArgs{Stream: k, Group: g.group(), Consumer: g.consumer(),
			Start: pick(g, "0-0", "0-0", "0", g.streamEntryID()), Count: pick[int64](g, 0, 1, 2, 5)}
		if g.intn(5) == 0 {
			a.MinIdle = time.Hour
		}
		justID := g.intn(3) == 0
		name := "XAUTOCLAIM"
		desc := cmdline("XAUTOCLAIM", k, a.Group, a.Consumer, a.MinIdle.Milliseconds(), a.Start)
		if a.Count > 0 {
			desc += fmt.Sprintf(" COUNT %d", a.Count)
		}
		if justID {
			name, desc = name+" JUSTID", desc+" JUSTID"
		}
		ga := &redis.XAutoClaimArgs{Stream: k, Group: a.Group, Consumer: a.Consumer, MinIdle: a.MinIdle, Start: a.Start, Count: a.Count}
		o := &op{name: name, desc: desc, keys: []string{k},
			g: func(ctx ctxT, c gcli) gcmd {
				if justID {
					return c.XAutoClaimJustID(ctx, ga)
				}
				return c.XAutoClaimWithDeleted(ctx, ga)
			}}
		if justID {
			o.gr = gRender(func(c *redis.XAutoClaimJustIDCmd) string {
				ids, next, _ := c.Result()
				return vautoclaim(next, zStrings(false)(ids), nil)
			})
			return typed(o, zAutoClaimed(true),
				func(ctx ctxT, c zcli) (zipline.XAutoClaimed, error) { return c.XAutoClaimJustID(ctx, a) },
				func(b zbat) fut[zipline.XAutoClaimed] { return b.XAutoClaimJustID(a) })
		}
		o.gr = gRender(func(c *redis.XAutoClaimWithDeletedCmd) string {
			msgs, next, deleted, _ := c.Result()
			return vautoclaim(next, gXMsgs(msgs), nonNil(deleted))
		})
		return typed(o, zAutoClaimed(false),
			func(ctx ctxT, c zcli) (zipline.XAutoClaimed, error) { return c.XAutoClaim(ctx, a) },
			func(b zbat) fut[zipline.XAutoClaimed] { return b.XAutoClaim(a) })
	}},
	{"XINFO STREAM", 2, func(g *gen) *op {
		k := g.key(bandStream)
		o := &op{name: "XINFO STREAM", desc: cmdline("XINFO STREAM", k), keys: []string{k}, gr: gRender(gXInfoStream),
			g: func(ctx ctxT, c gcli) gcmd { return c.XInfoStream(ctx, k) }}
		return typed(o, zXInfoStream,
			func(ctx ctxT, c zcli) (zipline.XInfoStream, error) { return c.XInfoStream(ctx, k) },
			func(b zbat) fut[zipline.XInfoStream] { return b.XInfoStream(k) })
	}},
	{"XINFO GROUPS", 2, func(g *gen) *op {
		k := g.key(bandStream)
		o := &op{name: "XINFO GROUPS", desc: cmdline("XINFO GROUPS", k), keys: []string{k}, gr: gRender(gXInfoGroups),
			g: func(ctx ctxT, c gcli) gcmd { return c.XInfoGroups(ctx, k) }}
		return typed(o, zXInfoGroups,
			func(ctx ctxT, c zcli) ([]zipline.XInfoGroup, error) { return c.XInfoGroups(ctx, k) },
			func(b zbat) fut[[]zipline.XInfoGroup] { return b.XInfoGroups(k) })
	}},
	{"XINFO CONSUMERS", 1, func(g *gen) *op {
		k, grp := g.key(bandStream), g.group()
		o := &op{name: "XINFO CONSUMERS", desc: cmdline("XINFO CONSUMERS", k, grp), keys: []string{k}, gr: gRender(gXInfoConsumers),
			g: func(ctx ctxT, c gcli) gcmd { return c.XInfoConsumers(ctx, k, grp) }}
		return typed(o, zXInfoConsumers,
			func(ctx ctxT, c zcli) ([]zipline.XInfoConsumer, error) { return c.XInfoConsumers(ctx, k, grp) },
			func(b zbat) fut[[]zipline.XInfoConsumer] { return b.XInfoConsumers(k, grp) })
	}},
}
