package zipline

// This file is a Client's side of pub/sub between its Subscriptions and
// its subscriber connections: which subscription wants which channel,
// where each channel is subscribed, and moving channels when routes change.

import (
	"context"
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
	// version counts changes to wants and home, made under mu: a
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
			home: map[subKey]*subscriber{}, conns: map[string]*subscriber{}, moving: map[subKey]bool{},
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
	groups := map[*subscriber]map[subKind][]string{}
	for _, k := range keys {
		sc, err := m.conn(ctx, k)
		if err != nil {
			return err
		}
		m.mu.Lock()
		if m.wants[k] != nil {
			m.home[k] = sc
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
			if cur := m.home[k]; err != nil || cur == nil || cur.addr != addr {
				moves[k] = m.home[k]
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
	if m.home[k] == from {
		delete(m.home, k)
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
