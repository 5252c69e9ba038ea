package zipline

// This file is one subscriber connection: subscribing, re-subscribing
// after a reconnect, and handing each message to the subscriptions.

import (
	"context"

	"github.com/ziplinekv/zipline/internal/pipe"
	"github.com/ziplinekv/zipline/internal/resp"
)

// subscriber is one connection that carries subscriptions: RESP3 or
// RESP2 in subscriber mode, with its own liveness probe, re-subscribing
// everything it carries on every reconnect.
type subscriber struct {
	m    *subscriptions
	addr string
	p    *pipe.Pipe
	// The last channel and pattern names a message carried: messages come
	// in runs on one channel, and each would otherwise allocate its name
	// again. Only the connection's reader touches them (see push).
	lastChannel, lastPattern string
	// route is deliver's cache of where the last channel's messages go,
	// also the reader's alone.
	route struct {
		key     subKey
		version uint64
		targets []*Subscription
	}
}

func newSubscriber(ctx context.Context, m *subscriptions, addr string) (*subscriber, error) {
	sc := &subscriber{m: m, addr: addr}
	o := m.s.pipeOptions(addr)
	o.RESP2Subscriber = true
	o.WaitForReconnect = false
	o.MaxPendingBytes = 0
	if ping := m.s.opts.Subscriptions.PingInterval; ping > 0 {
		// The writer PINGs within two health-check ticks of its last write,
		// and the reply must come within the I/O timeout: half the interval
		// each finds a dead connection within 1.5 intervals.
		o.HealthCheckInterval, o.IOTimeout = ping/2, ping/2
	} else {
		o.HealthCheckInterval = 0
	}
	o.Push = []pipe.PushHandler{{
		Kinds:  []string{"message", "pmessage", "smessage", "sunsubscribe"},
		Handle: sc.push,
		// Handled on the reader's goroutine: sc.push never blocks (each
		// Subscription applies its own Overflow policy to its consumer),
		// so nothing is lost before a Subscription sees it, no hand-off is
		// paid per message, and a flood slows the connection, as it would
		// with go-redis or rueidis, instead of overflowing a queue.
		Inline: true,
	}}
	o.OnConnect = sc.resubscribe
	p, err := pipe.New(ctx, o)
	if err != nil {
		return nil, connectError(addr, err)
	}
	sc.p = p
	return sc, nil
}

// resubscribe runs on every new connection, before it serves requests:
// the first subscribes nothing (Subscribe sends its own), later ones
// everything the connection carries, and report a gap.
func (sc *subscriber) resubscribe(su *pipe.Setup) error {
	if !su.Reconnect {
		return nil
	}
	for kind, names := range sc.m.carried(sc) {
		cmd := subCommands[kind]
		cmds := make([][]string, len(names))
		for i, n := range names {
			cmds[i] = []string{cmd.subscribe, n}
		}
		vs, err := su.Pipeline(cmd.subscribe, cmds...)
		if err != nil {
			return err
		}
		for _, v := range vs {
			if v.IsError() {
				// Not this node's channel any more: rehome places it.
				go sc.m.rehome()
				break
			}
		}
	}
	sc.m.gap(sc, "reconnected")
	return nil
}

// send subscribes to or unsubscribes from names, waiting for the
// confirmations. Each name goes in a command of its own, pipelined: every
// command then gets exactly one reply, a confirmation or an error (a
// sharded channel on a node that no longer owns its slot, say), and a
// cluster's one-slot rule holds.
func (sc *subscriber) send(ctx context.Context, kind subKind, names []string, subscribe bool) error {
	if len(names) == 0 {
		return nil
	}
	cmd := subCommands[kind]
	name := cmd.subscribe
	if !subscribe {
		name = cmd.unsubscribe
	}
	call := sc.p.NewCall()
	for _, n := range names {
		call.Buf = appendCommandStrings(call.Buf, name, n)
	}
	call.N, call.PushKind = len(names), name
	if err := sc.p.Do(ctx, call); err != nil {
		return err
	}
	defer call.Release()
	for _, v := range call.Replies() {
		if v.IsError() {
			return serverError(v)
		}
	}
	return nil
}

// push handles a message (or a sharded channel's unsubscription by the
// server, when its slot moved) on the connection's push goroutine.
func (sc *subscriber) push(v resp.Value) {
	e := v.Elems()
	if len(e) < 3 {
		return
	}
	kind := string(e[0].Bytes())
	switch kind {
	case "message", "smessage":
		k := subKey{subChannel, reuse(&sc.lastChannel, e[1].Bytes())}
		if kind == "smessage" {
			k.kind = subShard
		}
		sc.m.deliver(sc, k, Message{Channel: k.name, Payload: e[2].Bytes()})
	case "pmessage":
		if len(e) < 4 {
			return
		}
		k := subKey{subPattern, reuse(&sc.lastPattern, e[1].Bytes())}
		sc.m.deliver(sc, k, Message{Pattern: k.name, Channel: reuse(&sc.lastChannel, e[2].Bytes()), Payload: e[3].Bytes()})
	case "sunsubscribe":
		// The server dropped a sharded channel whose slot moved: subscribe
		// it where it lives now.
		sc.m.moved(sc, subKey{subShard, string(e[1].Bytes())})
	}
}

// reuse returns b as a string: *last if it holds the same bytes, which
// costs no allocation, or else a new string, kept in *last for next time.
func reuse(last *string, b []byte) string {
	if string(b) != *last {
		*last = string(b)
	}
	return *last
}
