package zipline

// This file is pub/sub as applications see it: a Subscription, its
// messages and gaps. subscriptions.go routes channels to connections;
// subscriber.go is one subscriber connection.

import (
	"context"
	"fmt"
	"iter"
	"sync"
	"sync/atomic"
	"time"
)

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
	// what it names, as made: Add and Remove name the same kind, even
	// while the subscription holds nothing.
	what subKind

	mu      sync.Mutex
	keys    map[subKey]bool
	ring    []Message
	head, n int
	// A gap is yielded where it happened in the stream: gapBefore[i]
	// before the message in ring[i], tail after every message held (it
	// goes before the next to arrive). A consumer then sees every message
	// that came before a reconnection or a move before the gap, and none
	// that came after it.
	gapBefore []*GapError
	tail      *GapError
	err       error // why it ended
	done      bool
	wake      chan struct{} // capacity 1

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
	s := &Subscription{m: m, opts: opts, what: kind, keys: map[subKey]bool{}, ring: make([]Message, opts.Buffer),
		gapBefore: make([]*GapError, opts.Buffer),
		wake:      make(chan struct{}, 1)}
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
// with (channels, patterns or sharded channels). When it returns an error
// it has subscribed none of them, and may be called again with the same
// names.
func (s *Subscription) Add(ctx context.Context, names ...string) error {
	return s.add(ctx, s.what, names)
}

// Remove unsubscribes from channels (or patterns). Messages already held
// for them are still delivered.
func (s *Subscription) Remove(ctx context.Context, names ...string) error {
	kind := s.what
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
	if err := s.m.add(ctx, s, keys); err != nil {
		// Undone, so that Add again subscribes them rather than finding
		// them already taken: on an error, Add subscribed none of names.
		s.mu.Lock()
		for _, k := range keys {
			delete(s.keys, k)
		}
		s.mu.Unlock()
		undo, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		s.m.remove(undo, s, keys)
		return err
	}
	return nil
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
			s.dropped.Add(1)
			s.addGap(&s.tail, "overflow", 1)
			s.mu.Unlock()
			s.signal()
			return
		case CloseSubscription:
			s.dropped.Add(1)
			s.done, s.err = true, ErrSlowConsumer
			s.mu.Unlock()
			s.signal()
			return
		}
		// DropOldest: the gap before the oldest message moves to the one
		// after it, which the dropped message now precedes as a gap too.
		carried := s.gapBefore[s.head]
		s.ring[s.head], s.gapBefore[s.head] = Message{}, nil
		s.head = (s.head + 1) % len(s.ring)
		s.n--
		s.dropped.Add(1)
		next := &s.tail
		if s.n > 0 {
			next = &s.gapBefore[s.head]
		}
		s.mergeGap(next, carried)
		s.addGap(next, "overflow", 1)
	}
	i := (s.head + s.n) % len(s.ring)
	s.ring[i], s.gapBefore[i], s.tail = m, s.tail, nil
	s.n++
	s.mu.Unlock()
	s.signal()
}

// addGap records a gap at *at, merging it into one already there.
func (s *Subscription) addGap(at **GapError, reason string, dropped int64) {
	if *at == nil {
		*at = &GapError{Reason: reason}
		s.gaps.Add(1)
	}
	(*at).Dropped += dropped
}

// mergeGap merges g into *at: two gaps with no message between them are
// one.
func (s *Subscription) mergeGap(at **GapError, g *GapError) {
	switch {
	case g == nil:
	case *at == nil:
		*at = g
	default:
		(*at).Dropped += g.Dropped
		s.gaps.Add(-1)
	}
}

// markGap records a gap after every message received so far: messages
// may have been lost from here (a reconnection, a move).
func (s *Subscription) markGap(reason string) {
	s.mu.Lock()
	s.addGap(&s.tail, reason, 0)
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
			var g *GapError
			switch {
			case s.n > 0 && s.gapBefore[s.head] != nil:
				g, s.gapBefore[s.head] = s.gapBefore[s.head], nil
			case s.n == 0 && s.tail != nil:
				g, s.tail = s.tail, nil
			}
			if g != nil {
				s.mu.Unlock()
				if !yield(Message{}, g) {
					return
				}
				continue
			}
			switch {
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
