package zipline

// This file holds the stream commands' reply types (at its end) and reads
// them, alike from RESP2 and RESP3.

import (
	"time"

	"github.com/ziplinekv/zipline/internal/resp"
)

// Stream replies, read alike from RESP2 and RESP3 (where XREAD's is a map).
var (
	decXMessages      = newDecoder(tsListOrNull, xmessages)
	decXStreams       = newDecoder(resp.Types(resp.Array, resp.Map, resp.Null), xstreams)
	decXPending       = newDecoder(tsList, xpending)
	decXPendingExt    = newDecoder(tsList, xpendingExt)
	decXAutoClaimed   = newDecoder(tsList, xautoClaimed)
	decXInfoStream    = newDecoder(tsMap, xinfoStream)
	decXInfoGroups    = newDecoder(tsList, func(v resp.Value) ([]XInfoGroup, error) { return each(v, xinfoGroup) })
	decXInfoConsumers = newDecoder(tsList, func(v resp.Value) ([]XInfoConsumer, error) { return each(v, xinfoConsumer) })
)

func xmessage(v resp.Value) (XMessage, error) {
	e := v.Elems()
	if len(e) != 2 {
		return XMessage{}, &TypeError{Want: "XMessage", Got: v.Type().String()}
	}
	m := XMessage{ID: string(e[0].Bytes())}
	if e[1].IsNull() {
		return m, nil
	}
	f := e[1].Elems()
	if len(f)%2 != 0 {
		return XMessage{}, &TypeError{Want: "XMessage", Got: "fields of odd length"}
	}
	m.Values = make([]FieldValue, len(f)/2)
	for i := range m.Values {
		b, err := Value{f[2*i+1]}.AsBytes()
		if err != nil {
			return XMessage{}, err
		}
		m.Values[i] = FieldValue{Field: string(f[2*i].Bytes()), Value: b}
	}
	return m, nil
}

func xmessages(v resp.Value) ([]XMessage, error) { return each(v, xmessage) }

// xstreams reads XREAD's reply: [[stream, [entries]]...] in RESP2, a map
// of stream to entries in RESP3, null when nothing came in time.
func xstreams(v resp.Value) ([]XStream, error) {
	if v.IsNull() {
		return nil, Nil
	}
	e := v.Elems()
	if v.Type() == resp.Map {
		out := make([]XStream, len(e)/2)
		for i := range out {
			msgs, err := xmessages(e[2*i+1])
			if err != nil {
				return nil, err
			}
			out[i] = XStream{Stream: string(e[2*i].Bytes()), Messages: msgs}
		}
		return out, nil
	}
	return each(v, func(s resp.Value) (XStream, error) {
		p := s.Elems()
		if len(p) != 2 {
			return XStream{}, &TypeError{Want: "XStream", Got: s.Type().String()}
		}
		msgs, err := xmessages(p[1])
		return XStream{Stream: string(p[0].Bytes()), Messages: msgs}, err
	})
}

func xpending(v resp.Value) (XPending, error) {
	e := v.Elems()
	if len(e) != 4 {
		return XPending{}, &TypeError{Want: "XPending", Got: v.Type().String()}
	}
	p := XPending{Count: e[0].Int(), Lower: string(e[1].Bytes()), Higher: string(e[2].Bytes())}
	if cs := e[3].Elems(); len(cs) > 0 {
		p.Consumers = make(map[string]int64, len(cs))
		for _, c := range cs {
			if pc := c.Elems(); len(pc) == 2 {
				n, _ := Value{pc[1]}.AsInt64()
				p.Consumers[string(pc[0].Bytes())] = n
			}
		}
	}
	return p, nil
}

func xpendingExt(v resp.Value) ([]XPendingExt, error) {
	return each(v, func(x resp.Value) (XPendingExt, error) {
		e := x.Elems()
		if len(e) != 4 {
			return XPendingExt{}, &TypeError{Want: "XPendingExt", Got: x.Type().String()}
		}
		return XPendingExt{ID: string(e[0].Bytes()), Consumer: string(e[1].Bytes()),
			Idle: time.Duration(e[2].Int()) * time.Millisecond, RetryCount: e[3].Int()}, nil
	})
}

func xautoClaimed(v resp.Value) (XAutoClaimed, error) {
	e := v.Elems()
	if len(e) < 2 {
		return XAutoClaimed{}, &TypeError{Want: "XAutoClaimed", Got: v.Type().String()}
	}
	r := XAutoClaimed{Next: string(e[0].Bytes())}
	items := e[1].Elems()
	if len(items) > 0 && items[0].Type() != resp.Array && !items[0].IsNull() {
		r.IDs, _ = Value{e[1]}.AsStrings() // JUSTID
	} else {
		var err error
		if r.Messages, err = eachNonNull(e[1], xmessage); err != nil {
			return XAutoClaimed{}, err
		}
	}
	if len(e) > 2 {
		r.Deleted, _ = Value{e[2]}.AsStrings()
	}
	return r, nil
}

func xinfoStream(v resp.Value) (XInfoStream, error) {
	m := fieldMap(v)
	s := XInfoStream{
		Length: m["length"].Int(), RadixTreeKeys: m["radix-tree-keys"].Int(), RadixTreeNodes: m["radix-tree-nodes"].Int(),
		Groups: m["groups"].Int(), LastGeneratedID: string(m["last-generated-id"].Bytes()),
		MaxDeletedID: string(m["max-deleted-entry-id"].Bytes()), EntriesAdded: m["entries-added"].Int(),
	}
	var err error
	if f := m["first-entry"]; !f.IsNull() && f.Type() != 0 {
		if s.FirstEntry, err = xmessage(f); err != nil {
			return s, err
		}
	}
	if l := m["last-entry"]; !l.IsNull() && l.Type() != 0 {
		s.LastEntry, err = xmessage(l)
	}
	return s, err
}

func xinfoGroup(v resp.Value) (XInfoGroup, error) {
	m := fieldMap(v)
	g := XInfoGroup{Name: string(m["name"].Bytes()), Consumers: m["consumers"].Int(), Pending: m["pending"].Int(),
		LastDeliveredID: string(m["last-delivered-id"].Bytes()), EntriesRead: m["entries-read"].Int(), Lag: -1}
	if lag, ok := m["lag"]; ok && !lag.IsNull() {
		g.Lag = lag.Int()
	}
	return g, nil
}

func xinfoConsumer(v resp.Value) (XInfoConsumer, error) {
	m := fieldMap(v)
	c := XInfoConsumer{Name: string(m["name"].Bytes()), Pending: m["pending"].Int(),
		Idle: time.Duration(m["idle"].Int()) * time.Millisecond, Inactive: -1}
	if in, ok := m["inactive"]; ok && in.Int() >= 0 {
		c.Inactive = time.Duration(in.Int()) * time.Millisecond
	}
	return c, nil
}

// XMessage is one stream entry: its ID and its fields, in order. An entry
// deleted while it was pending has no fields (XREADGROUP of history).
type XMessage struct {
	ID     string
	Values []FieldValue
}

// XStream is the entries read from one stream.
type XStream struct {
	Stream   string
	Messages []XMessage
}

// XPending is a group's pending entries in summary: how many, the lowest
// and highest IDs, and how many each consumer has.
type XPending struct {
	Count         int64
	Lower, Higher string
	Consumers     map[string]int64
}

// XPendingExt is one pending entry: who has it, for how long, how many
// times it was delivered.
type XPendingExt struct {
	ID         string
	Consumer   string
	Idle       time.Duration
	RetryCount int64
}

// XAutoClaimed is what XAUTOCLAIM returns: where to scan next ("0-0": done),
// the entries claimed, and the IDs of entries no longer in the stream,
// removed from the pending list (Redis and Valkey 7).
type XAutoClaimed struct {
	Next     string
	Messages []XMessage
	IDs      []string // with XAutoClaimJustID, instead of Messages
	Deleted  []string
}

// XInfoStream describes a stream (XINFO STREAM).
type XInfoStream struct {
	Length          int64
	RadixTreeKeys   int64
	RadixTreeNodes  int64
	Groups          int64
	LastGeneratedID string
	MaxDeletedID    string
	EntriesAdded    int64
	FirstEntry      XMessage
	LastEntry       XMessage
}

// XInfoGroup describes a consumer group (XINFO GROUPS).
type XInfoGroup struct {
	Name            string
	Consumers       int64
	Pending         int64
	LastDeliveredID string
	EntriesRead     int64
	Lag             int64 // -1 when the server cannot tell
}

// XInfoConsumer describes a consumer of a group (XINFO CONSUMERS).
type XInfoConsumer struct {
	Name     string
	Pending  int64
	Idle     time.Duration // since its last attempted interaction
	Inactive time.Duration // since its last successful one; -1 if never
}
