package zipline

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ziplinekv/zipline/internal/pipe"
	"github.com/ziplinekv/zipline/internal/resp"
)

// Subscriptions configure a Client's pub/sub subscriptions. The zero value
// gives every default.
type Subscriptions struct {
	// Buffer is how many messages each subscription holds for a consumer
	// that is behind. Default DefaultSubscriptionBuffer.
	Buffer int
	// Overflow says what a full buffer does with one more message. Default
	// DropOldest.
	Overflow Overflow
	// PingInterval is the liveness probe of a subscriber connection: a PING
	// after this much silence, which must be answered within the same time,
	// so a dead connection is found within twice the interval and
	// reconnected (a gap is reported). Default DefaultSubscriptionPing;
	// negative turns it off.
	PingInterval time.Duration
}

// Subscription defaults.
const (
	DefaultSubscriptionBuffer = 1024
	DefaultSubscriptionPing   = 15 * time.Second
)

// Overflow is a subscription's policy for a message that finds its buffer
// full. Every message it drops is counted (SubscriptionStats.Dropped) and
// reported as a gap on Messages.
type Overflow uint8

const (
	// DropOldest drops the oldest message held, keeping the newest.
	DropOldest Overflow = iota
	// DropNewest drops the message that arrived.
	DropNewest
	// CloseSubscription ends the subscription: Messages yields
	// ErrSlowConsumer and stops.
	CloseSubscription
)

// ErrGap is matched by the *GapError that Messages yields when messages may
// have been lost: the subscriber connection was down (messages published
// meanwhile are gone: Redis pub/sub keeps nothing), or the subscription's
// buffer overflowed. Iteration goes on after it.
var ErrGap = errors.New("zipline: pub/sub messages may have been lost")

// GapError says why messages may have been lost.
type GapError struct {
	// Reason is "reconnected", "overflow" (the subscription's buffer) or
	// "moved" (a sharded channel's slot moved to another node).
	Reason string
	// Dropped counts the messages known to be lost, when known.
	Dropped int64
}

func (e *GapError) Error() string {
	if e.Dropped > 0 {
		return fmt.Sprintf("zipline: pub/sub gap (%s): %d messages lost", e.Reason, e.Dropped)
	}
	return "zipline: pub/sub gap (" + e.Reason + "): messages may have been lost"
}

// Is makes a GapError match ErrGap.
func (e *GapError) Is(target error) bool { return target == ErrGap }

// ErrSlowConsumer ends a subscription whose Overflow is CloseSubscription
// when its buffer is full.
var ErrSlowConsumer = errors.New("zipline: subscription closed: its consumer fell behind")

// Message is one pub/sub message.
type Message struct {
	// Channel it was published to.
	Channel string
	// Pattern that matched it, for PSubscribe; empty otherwise.
	Pattern string
	// Payload, expanded when it was published compressed (the PubSub
	// compression family).
	Payload []byte
}

// subKind is what a subscription names: channels, patterns, or sharded
// channels.
type subKind uint8

const (
	subChannel subKind = iota
	subPattern
	subShard
)

// subscribe, unsubscribe and message kinds per subKind.
var subCommands = [...]struct{ subscribe, unsubscribe, message string }{
	subChannel: {"subscribe", "unsubscribe", "message"},
	subPattern: {"psubscribe", "punsubscribe", "pmessage"},
	subShard:   {"ssubscribe", "sunsubscribe", "smessage"},
}

type subKey struct {
	kind subKind
	name string
}

// Subscription is a set of channels (or patterns) whose messages reach
// one consumer through Messages, in the order they were published. It is
// safe for concurrent use; Messages is meant for one consumer.
type Subscription struct {
	m    *subscriptions
	opts Subscriptions
	vc   *valueCodec // expands PubSub-compressed payloads

	mu      sync.Mutex
	keys    map[subKey]bool
	ring    []Message
	head, n int
	gap     *GapError // pending, yielded before the next message
	err     error     // why it ended
	done    bool
	wake    chan struct{} // capacity 1

	received, dropped, gaps atomic.Int64
}

// SubscriptionStats count what a subscription received and lost.
type SubscriptionStats struct {
	Received int64 // messages that arrived, those dropped included
	Dropped  int64 // messages dropped by the overflow policy
	Gaps     int64 // gaps reported
}

// Stats returns the subscription's counters.
func (s *Subscription) Stats() SubscriptionStats {
	return SubscriptionStats{Received: s.received.Load(), Dropped: s.dropped.Load(), Gaps: s.gaps.Load()}
}

// Subscribe subscribes to channels (SUBSCRIBE) and returns the
// subscription once the server has confirmed them. Subscriptions share one
// connection per server, apart from the Client's commands, and are made
// again on every reconnect, with a gap reported (see ErrGap).
func (c *Client) Subscribe(ctx context.Context, channels ...string) (*Subscription, error) {
	return c.subscribe(ctx, subChannel, channels)
}

// PSubscribe subscribes to glob patterns of channels (PSUBSCRIBE).
func (c *Client) PSubscribe(ctx context.Context, patterns ...string) (*Subscription, error) {
	return c.subscribe(ctx, subPattern, patterns)
}

// SSubscribe subscribes to sharded channels (SSUBSCRIBE, Redis and Valkey
// 7+). On a cluster each channel is subscribed on the node that owns its
// slot, and follows the slot when it moves or fails over.
func (c *Client) SSubscribe(ctx context.Context, channels ...string) (*Subscription, error) {
	return c.subscribe(ctx, subShard, channels)
}

func (c *Client) subscribe(ctx context.Context, kind subKind, names []string) (*Subscription, error) {
	m := c.s.subscriptions()
	opts := c.s.opts.Subscriptions
	s := &Subscription{m: m, opts: opts, keys: map[subKey]bool{}, ring: make([]Message, opts.Buffer),
		wake: make(chan struct{}, 1)}
	if c.codec != nil && c.codec.covers(familyPubSub) {
		s.vc = c.codec
	}
	if err := s.add(ctx, kind, names); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Add subscribes to more channels, of the kind the subscription was made
// with (channels, patterns or sharded channels).
func (s *Subscription) Add(ctx context.Context, names ...string) error {
	return s.add(ctx, s.kind(), names)
}

// Remove unsubscribes from channels (or patterns). Messages already held
// for them are still delivered.
func (s *Subscription) Remove(ctx context.Context, names ...string) error {
	kind := s.kind()
	s.mu.Lock()
	var keys []subKey
	for _, n := range names {
		k := subKey{kind, n}
		if s.keys[k] {
			delete(s.keys, k)
			keys = append(keys, k)
		}
	}
	s.mu.Unlock()
	return s.m.remove(ctx, s, keys)
}

func (s *Subscription) kind() subKind {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.keys {
		return k.kind
	}
	return subChannel
}

func (s *Subscription) add(ctx context.Context, kind subKind, names []string) error {
	var keys []subKey
	s.mu.Lock()
	if s.done {
		s.mu.Unlock()
		return fmt.Errorf("zipline: subscription closed: %w (%w)", ErrClosed, ErrNotSent)
	}
	for _, n := range names {
		k := subKey{kind, n}
		if !s.keys[k] {
			s.keys[k] = true
			keys = append(keys, k)
		}
	}
	s.mu.Unlock()
	return s.m.add(ctx, s, keys)
}

// Close ends the subscription: it unsubscribes from what no other
// subscription of the Client still wants, and Messages stops.
func (s *Subscription) Close() error {
	s.mu.Lock()
	if s.done {
		s.mu.Unlock()
		return nil
	}
	keys := make([]subKey, 0, len(s.keys))
	for k := range s.keys {
		keys = append(keys, k)
	}
	s.keys = map[subKey]bool{}
	s.mu.Unlock()
	s.end(nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return s.m.remove(ctx, s, keys)
}

// end stops the subscription with err (nil: closed by its owner).
func (s *Subscription) end(err error) {
	s.mu.Lock()
	if !s.done {
		s.done, s.err = true, err
	}
	s.mu.Unlock()
	s.signal()
}

func (s *Subscription) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// deliver takes one message into the buffer, applying the overflow policy.
// It never blocks: it runs on the connection's push handler.
func (s *Subscription) deliver(m Message) {
	s.mu.Lock()
	if s.done {
		s.mu.Unlock()
		return
	}
	s.received.Add(1)
	if s.n == len(s.ring) {
		switch s.opts.Overflow {
		case DropNewest:
			s.dropLocked(1)
			s.mu.Unlock()
			s.signal()
			return
		case CloseSubscription:
			s.dropLocked(1)
			s.done, s.err = true, ErrSlowConsumer
			s.mu.Unlock()
			s.signal()
			return
		}
		s.head = (s.head + 1) % len(s.ring) // DropOldest
		s.n--
		s.dropLocked(1)
	}
	s.ring[(s.head+s.n)%len(s.ring)] = m
	s.n++
	s.mu.Unlock()
	s.signal()
}

func (s *Subscription) dropLocked(n int64) {
	s.dropped.Add(n)
	s.gapLocked("overflow", n)
}

// gapLocked records a gap to report before the next message; gaps that
// follow one another merge.
func (s *Subscription) gapLocked(reason string, dropped int64) {
	if s.gap == nil {
		s.gap = &GapError{Reason: reason}
		s.gaps.Add(1)
	}
	s.gap.Dropped += dropped
}

func (s *Subscription) markGap(reason string) {
	s.mu.Lock()
	s.gapLocked(reason, 0)
	s.mu.Unlock()
	s.signal()
}

// Messages returns the subscription's messages, in order, as they arrive.
// A gap (see ErrGap) is yielded as a *GapError and iteration goes on; it
// ends when ctx ends (yielding ctx.Err()), when the subscription is
// closed, or when the Client is (yielding ErrClosed), or with
// ErrSlowConsumer. Payloads published compressed are expanded here, on the
// consumer's goroutine.
func (s *Subscription) Messages(ctx context.Context) iter.Seq2[Message, error] {
	return func(yield func(Message, error) bool) {
		for {
			s.mu.Lock()
			switch {
			case s.gap != nil:
				g := s.gap
				s.gap = nil
				s.mu.Unlock()
				if !yield(Message{}, g) {
					return
				}
				continue
			case s.n > 0:
				m := s.ring[s.head]
				s.ring[s.head] = Message{}
				s.head = (s.head + 1) % len(s.ring)
				s.n--
				s.mu.Unlock()
				var err error
				if s.vc != nil {
					m.Payload, err = s.vc.decodeValue(m.Payload)
				}
				if !yield(m, err) {
					return
				}
				continue
			case s.done:
				err := s.err
				s.mu.Unlock()
				if err != nil {
					yield(Message{}, err)
				}
				return
			}
			s.mu.Unlock()
			select {
			case <-s.wake:
			case <-ctx.Done():
				yield(Message{}, ctx.Err())
				return
			}
		}
	}
}

// subscriptions is a Client's side of pub/sub: which subscription wants
// which channel, which connection carries each channel, and those
// connections. On a cluster a sharded channel lives on its slot's owner and
// the others on any node; when the cluster's routes change, channels whose
// node changed are subscribed again where they live now (see rehome).
type subscriptions struct {
	s       *shared
	mu      sync.Mutex
	wants   map[subKey]map[*Subscription]bool
	carrier map[subKey]*subscriber // where each wanted channel is subscribed
	conns   map[string]*subscriber // by server address
	// moving holds the channels that lost their node (a failover, a slot
	// moved) and are not subscribed where they live now yet. Their gap
	// was reported when they lost it: one event, one gap, however many
	// attempts and route changes it takes to place them again.
	moving map[subKey]bool
	// version counts changes to wants and carrier, made under mu: a
	// subscriber's cached route (see deliver) is good while it holds.
	version atomic.Uint64
	closed  bool
	watch   sync.Once     // on a cluster: the goroutine that follows route changes
	done    chan struct{} // closed by close
}

// subscriptions returns the Client's pub/sub state, made at first use.
func (s *shared) subscriptions() *subscriptions {
	s.subsOnce.Do(func() {
		s.subs = &subscriptions{s: s, wants: map[subKey]map[*Subscription]bool{},
			carrier: map[subKey]*subscriber{}, conns: map[string]*subscriber{}, moving: map[subKey]bool{},
			done: make(chan struct{})}
	})
	return s.subs
}

// add records that s wants keys and subscribes, on the connection that
// carries each, to those nobody wanted yet.
func (m *subscriptions) add(ctx context.Context, s *Subscription, keys []subKey) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return fmt.Errorf("%w (%w)", ErrClosed, ErrNotSent)
	}
	var fresh []subKey
	for _, k := range keys {
		if m.wants[k] == nil {
			m.wants[k] = map[*Subscription]bool{}
			fresh = append(fresh, k)
		}
		m.wants[k][s] = true
	}
	m.version.Add(1)
	m.mu.Unlock()
	if changes := m.s.top.changes(); changes != nil {
		m.watch.Do(func() { go m.follow() })
	}
	return m.subscribe(ctx, fresh)
}

// remove drops s's wants, and unsubscribes from keys nobody wants any
// more, on the connection that carries them.
func (m *subscriptions) remove(ctx context.Context, s *Subscription, keys []subKey) error {
	m.mu.Lock()
	groups := map[*subscriber]map[subKind][]string{}
	for _, k := range keys {
		w := m.wants[k]
		if w == nil {
			continue
		}
		delete(w, s)
		if len(w) > 0 {
			continue
		}
		delete(m.wants, k)
		delete(m.moving, k)
		if sc := m.carrier[k]; sc != nil {
			delete(m.carrier, k)
			groupKey(groups, sc, k)
		}
	}
	m.version.Add(1)
	closed := m.closed
	m.mu.Unlock()
	if closed {
		return nil
	}
	for sc, byKind := range groups {
		for kind, names := range byKind {
			sc.send(ctx, kind, names, false) // best effort: a dead connection has forgotten them anyway
		}
	}
	return nil
}

func groupKey(groups map[*subscriber]map[subKind][]string, sc *subscriber, k subKey) {
	if groups[sc] == nil {
		groups[sc] = map[subKind][]string{}
	}
	groups[sc][k.kind] = append(groups[sc][k.kind], k.name)
}

// subscribe subscribes keys on the connections that should carry them,
// recording where each is.
func (m *subscriptions) subscribe(ctx context.Context, keys []subKey) error {
	groups := map[*subscriber]map[subKind][]string{}
	for _, k := range keys {
		sc, err := m.conn(ctx, k)
		if err != nil {
			return err
		}
		m.mu.Lock()
		if m.wants[k] != nil {
			m.carrier[k] = sc
			m.version.Add(1)
		}
		m.mu.Unlock()
		groupKey(groups, sc, k)
	}
	for sc, byKind := range groups {
		for kind, names := range byKind {
			if err := sc.send(ctx, kind, names, true); err != nil {
				return err
			}
		}
	}
	return nil
}

// target is the address that should carry k: whoever serves its slot. For
// a sharded channel that is its slot's owner; the others can live on any
// node (a cluster's bus carries their messages to every node): slot 0's.
func (m *subscriptions) target(k subKey) (string, error) {
	slot := int32(0)
	if k.kind == subShard {
		slot = keySlot(k.name)
	}
	d := m.s.top.serving(slot)
	if d == nil {
		return "", fmt.Errorf("zipline: no node serves the slot of %s (%w)", k.name, ErrNotSent)
	}
	return d.addr, nil
}

// conn returns the subscriber connection that should carry k, dialling it
// if it is new.
func (m *subscriptions) conn(ctx context.Context, k subKey) (*subscriber, error) {
	addr, err := m.target(k)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, fmt.Errorf("%w (%w)", ErrClosed, ErrNotSent)
	}
	if sc := m.conns[addr]; sc != nil {
		return sc, nil
	}
	sc, err := newSubscriber(ctx, m, addr)
	if err != nil {
		return nil, err
	}
	m.conns[addr] = sc
	return sc, nil
}

// follow re-homes channels whenever the cluster's routes change, until the
// subscriptions close.
func (m *subscriptions) follow() {
	for {
		select {
		case <-m.done:
			return
		case <-m.s.top.changes():
		}
		m.rehome()
	}
}

// rehome subscribes every wanted channel whose node changed (a failover,
// a slot moved) where it lives now, unsubscribes it where it was, and
// reports a gap to whoever wants it, once per move (see moving): messages
// published in between may be lost. It retries, with backoff, until each
// channel has a home.
func (m *subscriptions) rehome() {
	for attempt := 0; attempt < 50; attempt++ {
		m.mu.Lock()
		if m.closed {
			m.mu.Unlock()
			return
		}
		moves := map[subKey]*subscriber{}
		var lost []subKey // channels that just lost their node: a gap each
		for k := range m.wants {
			addr, err := m.target(k)
			if cur := m.carrier[k]; err != nil || cur == nil || cur.addr != addr {
				moves[k] = m.carrier[k]
				if !m.moving[k] {
					m.moving[k] = true
					lost = append(lost, k)
				}
			} else {
				delete(m.moving, k) // placed, by this attempt or another
			}
		}
		m.mu.Unlock()
		for _, k := range lost {
			m.gapFor(k, "moved")
		}
		if len(moves) == 0 {
			return
		}
		var keys []subKey
		for k := range moves {
			keys = append(keys, k)
		}
		ctx, cancel := context.WithTimeout(context.Background(), m.s.opts.DialTimeout)
		err := m.subscribe(ctx, keys)
		cancel()
		for k, old := range moves {
			if old != nil && old.p.Connected() {
				octx, ocancel := context.WithTimeout(context.Background(), time.Second)
				old.send(octx, k.kind, []string{k.name}, false)
				ocancel()
			}
		}
		if err == nil {
			m.mu.Lock()
			for _, k := range keys {
				delete(m.moving, k)
			}
			m.mu.Unlock()
			return
		}
		select {
		case <-m.done:
			return
		case <-time.After(time.Duration(attempt+1) * 20 * time.Millisecond): // backoff while the cluster settles
		}
	}
}

// deliver hands a message to every subscription that wants it, if it came
// on the connection that carries it (during a move, the old node may still
// send one: it would be a duplicate). It runs per message, and messages
// come in runs on one channel: the subscriber keeps the last channel's
// targets and looks them up again, under the lock, only when the channel
// or any subscription changed since.
func (m *subscriptions) deliver(from *subscriber, k subKey, msg Message) {
	r := &from.route
	if k != r.key || m.version.Load() != r.version {
		m.mu.Lock()
		r.key, r.version = k, m.version.Load()
		clear(r.targets)
		r.targets = r.targets[:0]
		if m.carrier[k] == from {
			for s := range m.wants[k] {
				r.targets = append(r.targets, s)
			}
		}
		m.mu.Unlock()
	}
	for _, s := range r.targets {
		s.deliver(msg)
	}
}

// gap reports a gap to every subscription carried by sc.
func (m *subscriptions) gap(sc *subscriber, reason string) {
	m.mu.Lock()
	var targets []*Subscription
	for k, subs := range m.wants {
		if m.carrier[k] != sc {
			continue
		}
		for s := range subs {
			targets = append(targets, s)
		}
	}
	m.mu.Unlock()
	for _, s := range targets {
		s.markGap(reason)
	}
}

// gapFor reports a gap to every subscription that wants k.
func (m *subscriptions) gapFor(k subKey, reason string) {
	m.mu.Lock()
	targets := make([]*Subscription, 0, len(m.wants[k]))
	for s := range m.wants[k] {
		targets = append(targets, s)
	}
	m.mu.Unlock()
	for _, s := range targets {
		s.markGap(reason)
	}
}

// carried lists, per kind, what sc must be subscribed to.
func (m *subscriptions) carried(sc *subscriber) map[subKind][]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[subKind][]string{}
	for k := range m.wants {
		if m.carrier[k] == sc {
			out[k.kind] = append(out[k.kind], k.name)
		}
	}
	return out
}

// close ends every subscription and closes the connections.
func (m *subscriptions) close() {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	m.closed = true
	close(m.done)
	conns := m.conns
	m.conns = map[string]*subscriber{}
	var subs []*Subscription
	for _, w := range m.wants {
		for s := range w {
			subs = append(subs, s)
		}
	}
	m.mu.Unlock()
	for _, s := range subs {
		s.end(ErrClosed)
	}
	for _, sc := range conns {
		sc.p.Close()
	}
}

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

// moved handles the server dropping a sharded channel whose slot moved:
// the channel is no longer carried there, the cluster is asked for the new
// routes, and rehome subscribes it where it lives now.
func (m *subscriptions) moved(from *subscriber, k subKey) {
	m.mu.Lock()
	if m.carrier[k] == from {
		delete(m.carrier, k)
		m.version.Add(1)
	}
	wanted := m.wants[k] != nil
	m.mu.Unlock()
	if !wanted {
		return // we unsubscribed it ourselves
	}
	m.s.top.refresh()
	go m.rehome()
}
