package fanout

import (
	"context"
	"errors"
	"iter"
	"slices"
	"time"
)

// Message is one message from a Source.
type Message struct {
	Channel string // the channel it was published on
	Pattern string // the pattern it matched, for a pattern subscription
	Payload []byte
	// Gap reports that messages may have been lost before this one, as
	// when the source reconnected; a gap event has no channel or payload.
	Gap bool
}

// Source is where a hub's messages come from, such as Redis pub/sub. The
// hub decides what it subscribes to: Relay adds a channel when its first
// WebSocket client arrives and removes it after the last one leaves.
//
// zipline's subscriber (c.Subscribe) has this shape; any other pub/sub
// client fits with a few lines of adapter.
type Source interface {
	// Add subscribes to channels; it returns once they are subscribed.
	Add(ctx context.Context, channels ...string) error
	// Remove unsubscribes from channels.
	Remove(ctx context.Context, channels ...string) error
	// Messages yields messages until ctx ends or the source is closed.
	// An error it yields does not end the stream; returning does.
	Messages(ctx context.Context) iter.Seq2[Message, error]
}

// ErrRelaying is returned by Relay while another Relay runs on the hub.
var ErrRelaying = errors.New("fanout: a relay is already running")

// Relay broadcasts src's messages until ctx ends or src's message stream
// does, keeping src subscribed to exactly the channels the hub's clients
// want. A failed Add or Remove is retried with backoff, up to once a second,
// until it succeeds or ctx ends. Gap events are logged and counted in
// RelayStats. Relay returns ctx's error, or nil when the stream ended.
func (h *Hub) Relay(ctx context.Context, src Source) error {
	h.mu.Lock()
	switch {
	case h.closed:
		h.mu.Unlock()
		return ErrClosed
	case h.relaying:
		h.mu.Unlock()
		return ErrRelaying
	}
	h.relaying = true
	h.kickDemand()
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		h.relaying = false
		h.mu.Unlock()
	}()

	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.follow(ctx, src)
	}()
	defer func() {
		cancel()
		<-done
	}()
	for m, err := range src.Messages(ctx) {
		if err != nil {
			h.relayStats.errors.Add(1)
			h.log.Warn("fanout: source error", "err", err)
			continue
		}
		if m.Gap {
			h.relayStats.gaps.Add(1)
			h.log.Info("fanout: the source reports a gap; messages may have been lost")
			continue
		}
		h.relayStats.messages.Add(1)
		h.Broadcast(m.Channel, m.Payload)
	}
	return ctx.Err()
}

// follow keeps src subscribed to the hub's channels until ctx ends.
func (h *Hub) follow(ctx context.Context, src Source) {
	var current []string // sorted
	backoff := 10 * time.Millisecond
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	defer retry.Stop()
	for {
		want := h.Channels()
		add, remove := diffSorted(current, want)
		var err error
		if len(add) > 0 {
			if err = src.Add(ctx, add...); err == nil {
				current = mergeSorted(current, add)
			}
		}
		if err == nil && len(remove) > 0 {
			if err = src.Remove(ctx, remove...); err == nil {
				current, _ = diffSorted(remove, current)
			}
		}
		var wait <-chan time.Time
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			h.relayStats.errors.Add(1)
			h.log.Warn("fanout: updating the source's subscriptions", "err", err, "retry", backoff)
			retry.Reset(backoff)
			wait = retry.C
			backoff = min(2*backoff, time.Second)
		} else {
			backoff = 10 * time.Millisecond
		}
		select {
		case <-ctx.Done():
			return
		case <-h.demand:
		case <-wait:
		}
	}
}

// diffSorted returns what is in b and not in a, and what is in a and not
// in b; both are sorted.
func diffSorted(a, b []string) (onlyB, onlyA []string) {
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || (i < len(a) && a[i] < b[j]):
			onlyA = append(onlyA, a[i])
			i++
		case i == len(a) || b[j] < a[i]:
			onlyB = append(onlyB, b[j])
			j++
		default:
			i++
			j++
		}
	}
	return onlyB, onlyA
}

func mergeSorted(a, b []string) []string {
	out := append(slices.Clone(a), b...)
	slices.Sort(out)
	return slices.Compact(out)
}
