package zipline

// This file is a Client's side of pub/sub between its Subscriptions and
// its subscriber connections: which subscription wants which channel,
// where each channel is subscribed, and moving channels when routes change.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// subscriptions is a Client's side of pub/sub: which subscription wants
// which channel, which connection carries each channel, and those
// connections. On a cluster a sharded channel lives on its slot's owner and
// the others on any node; when the cluster's routes change, channels whose
// node changed are subscribed again where they live now (see rehome).
type subscriptions struct {
	s     *shared
	mu    sync.Mutex
	wants map[subKey]map[*Subscription]bool
	home  map[subKey]*subscriber // where each wanted channel is subscribed
	conns map[string]*subscriber // by server address
	// moving holds the channels that lost their node (a failover, a slot
	// moved) and are not subscribed where they live now yet. Their gap
	// was reported when they lost it: one event, one gap, however many
	// attempts and route changes it takes to place them again.
	moving map[subKey]bool
	// dropped remembers, for a sharded channel that a node dropped
	// (SUNSUBSCRIBE from the server: its slot moved away), which node and
	// when. Until the routes have had staleRoutes to catch up, rehome does
	// not place it back there: a route that still names that node is
	// older than what the node just said, and a channel placed on it would
	// move again, a second gap for one switch.
	dropped map[subKey]droppedBy
	// version counts changes to wants and home, made under mu: a
	// subscriber's cached route (see deliver) is good while it holds.
	version atomic.Uint64
	closed  bool
	watch   sync.Once     // on a cluster: the goroutine that follows route changes
	done    chan struct{} // closed by close
}

// droppedBy is the node that dropped a sharded channel, and when.
type droppedBy struct {
	addr string
	at   time.Time
}

// staleRoutes is how long after a node dropped a sharded channel a route
// that still names it is taken for stale: a refresh, asked for at the
// drop, takes a round trip; a failover that moves the slot back within it
// waits this long to be followed.
const staleRoutes = 2 * time.Second

// errStaleRoute marks a channel whose route still names the node that
// just dropped it.
var errStaleRoute = errors.New("zipline: the route still names the node that dropped the channel")

// subscriptions returns the Client's pub/sub state, made at first use.
func (s *shared) subscriptions() *subscriptions {
	s.subsOnce.Do(func() {
		s.subs = &subscriptions{s: s, wants: map[subKey]map[*Subscription]bool{},
			home: map[subKey]*subscriber{}, conns: map[string]*subscriber{}, moving: map[subKey]bool{},
			dropped: map[subKey]droppedBy{},
			done:    make(chan struct{})}
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
		delete(m.dropped, k)
		if sc := m.home[k]; sc != nil {
			delete(m.home, k)
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
	at := make(map[subKey]string, len(keys))
	for _, k := range keys {
		addr, err := m.target(k)
		if err != nil {
			return err
		}
		at[k] = addr
	}
	return m.subscribeAt(ctx, at)
}

// subscribeAt subscribes each key on the connection to the address given
// for it, recording where each is. rehome passes the addresses it judged
// the moves by: asking the routes again could give another answer while a
// failover settles, and place a channel back where it was just found
// missing.
func (m *subscriptions) subscribeAt(ctx context.Context, at map[subKey]string) error {
	groups := map[*subscriber]map[subKind][]string{}
	var lost []*Subscription
	defer func() { markGaps(lost, "moved") }() // on an error too: homes changed
	for k, addr := range at {
		sc, err := m.conn(ctx, addr)
		if err != nil {
			return err
		}
		m.mu.Lock()
		if m.wants[k] != nil {
			if prev := m.home[k]; prev != nil && prev != sc {
				lost = m.lostLocked(k, lost)
			}
			m.home[k] = sc
			m.version.Add(1)
		}
		m.mu.Unlock()
		groupKey(groups, sc, k)
	}
	// The gaps go before the subscriptions are sent: the new node's first
	// message comes after them, the old node's are no longer taken.
	markGaps(lost, "moved")
	lost = nil
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
	e := m.s.top.serving(slot)
	if e.addr == "" {
		return "", fmt.Errorf("zipline: no node serves the slot of %s (%w)", k.name, ErrNotSent)
	}
	return e.addr, nil
}

// conn returns the subscriber connection to addr, dialling it if it is
// new.
func (m *subscriptions) conn(ctx context.Context, addr string) (*subscriber, error) {
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
		moves := map[subKey]*subscriber{} // the channels to move, from where
		to := map[subKey]string{}         // and where to, for those with a node
		unplaced := false                 // a channel whose slot nobody serves yet
		var lost []*Subscription          // wanting a channel that lost its node
		for k := range m.wants {
			addr, err := m.target(k)
			if d, ok := m.dropped[k]; ok && err == nil && addr == d.addr && time.Since(d.at) < staleRoutes {
				err = errStaleRoute
			}
			cur := m.home[k]
			if err == nil && cur != nil && cur.addr == addr {
				delete(m.moving, k) // placed, by this attempt or another
				continue
			}
			moves[k] = cur
			if err == nil {
				to[k] = addr // subscribeAt reports the gap as it moves it
				continue
			}
			unplaced = true
			if cur != nil { // nowhere to go yet: its messages stop here
				lost = m.unhomeLocked(k, lost)
			}
		}
		m.mu.Unlock()
		markGaps(lost, "moved")
		if len(moves) == 0 {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), m.s.opts.DialTimeout)
		err := m.subscribeAt(ctx, to)
		cancel()
		lost = nil
		for k, old := range moves {
			if old == nil || old.addr == to[k] {
				continue
			}
			m.mu.Lock()
			if m.home[k] == old { // not moved: subscribeAt failed first
				lost = m.unhomeLocked(k, lost)
			}
			m.mu.Unlock()
			if old.p.Connected() {
				octx, ocancel := context.WithTimeout(context.Background(), time.Second)
				old.send(octx, k.kind, []string{k.name}, false)
				ocancel()
			}
		}
		markGaps(lost, "moved")
		if err == nil {
			m.mu.Lock()
			for k := range to {
				delete(m.moving, k)
				delete(m.dropped, k)
			}
			m.mu.Unlock()
			if !unplaced {
				return
			}
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
		if m.home[k] == from {
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
		if m.home[k] != sc {
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

// unhomeLocked stops taking k's messages from where it was subscribed
// (it has no home until placed again), and returns lost with the
// subscriptions to report a gap to (see lostLocked).
func (m *subscriptions) unhomeLocked(k subKey, lost []*Subscription) []*Subscription {
	delete(m.home, k)
	m.version.Add(1)
	return m.lostLocked(k, lost)
}

// lostLocked marks k as moving, its messages interrupted, and appends to
// lost the subscriptions that want it, unless it was moving already: one
// gap per move, however many attempts and route changes it takes to
// place it again.
func (m *subscriptions) lostLocked(k subKey, lost []*Subscription) []*Subscription {
	if m.moving[k] {
		return lost
	}
	m.moving[k] = true
	for s := range m.wants[k] {
		lost = append(lost, s)
	}
	return lost
}

// markGaps reports a gap to each subscription in subs, after every
// message it has received (gaps with no message between them merge).
func markGaps(subs []*Subscription, reason string) {
	for _, s := range subs {
		s.markGap(reason)
	}
}

// carried lists, per kind, what sc must be subscribed to.
func (m *subscriptions) carried(sc *subscriber) map[subKind][]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[subKind][]string{}
	for k := range m.wants {
		if m.home[k] == sc {
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

// moved handles the server dropping a sharded channel whose slot moved:
// the channel is no longer carried there, the cluster is asked for the new
// routes, and rehome subscribes it where it lives now.
func (m *subscriptions) moved(from *subscriber, k subKey) {
	m.mu.Lock()
	var lost []*Subscription
	if m.home[k] == from {
		lost = m.unhomeLocked(k, nil)
		m.dropped[k] = droppedBy{addr: from.addr, at: time.Now()}
	}
	wanted := m.wants[k] != nil
	m.mu.Unlock()
	markGaps(lost, "moved")
	if !wanted {
		return // we unsubscribed it ourselves
	}
	m.s.top.refresh()
	go m.rehome()
}
