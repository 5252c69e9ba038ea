package fanout

import (
	"context"
	"errors"
	"iter"

	"github.com/ziplinekv/zipline"
)

// RedisSource is a Source of Redis or Valkey pub/sub messages, carried by
// a zipline Client's subscriber: it re-subscribes after a reconnect (and,
// on a cluster, follows each channel's node), reports the gap that leaves
// as a Message whose Gap is set, and expands messages published with the
// Client's PubSub compression family.
type RedisSource struct {
	sub *zipline.Subscription
}

var _ Source = (*RedisSource)(nil)

// NewRedisSource returns a source subscribed to nothing yet: Relay adds
// channels as clients ask for them.
func NewRedisSource(ctx context.Context, c *zipline.Client) (*RedisSource, error) {
	sub, err := c.Subscribe(ctx)
	if err != nil {
		return nil, err
	}
	return &RedisSource{sub: sub}, nil
}

// Add subscribes to channels; it returns once the server confirmed them.
func (r *RedisSource) Add(ctx context.Context, channels ...string) error {
	return r.sub.Add(ctx, channels...)
}

// Remove unsubscribes from channels.
func (r *RedisSource) Remove(ctx context.Context, channels ...string) error {
	return r.sub.Remove(ctx, channels...)
}

// Messages yields the subscription's messages until ctx ends or the source
// is closed; a gap arrives as a Message with Gap set.
func (r *RedisSource) Messages(ctx context.Context) iter.Seq2[Message, error] {
	return relayed(ctx, r.sub, nil, func(m zipline.Message) (Message, bool) {
		return Message{Channel: m.Channel, Pattern: m.Pattern, Payload: m.Payload}, true
	})
}

// relayed yields sub's messages as a Source's, each through as (which may
// take one in, reporting false), and a gap as a Message whose Gap is set,
// until ctx ends or sub ends. before, if set, runs before each message or
// gap, and may yield a message of its own (false: stop).
func relayed(ctx context.Context, sub *zipline.Subscription, before func(yield func(Message, error) bool) bool,
	as func(zipline.Message) (Message, bool)) iter.Seq2[Message, error] {
	return func(yield func(Message, error) bool) {
		for m, err := range sub.Messages(ctx) {
			if before != nil && !before(yield) {
				return
			}
			switch {
			case errors.Is(err, zipline.ErrGap):
				if !yield(Message{Gap: true}, nil) {
					return
				}
			case err != nil:
				return // ctx ended, or the source or its Client closed
			default:
				if out, ok := as(m); ok && !yield(out, nil) {
					return
				}
			}
		}
	}
}

// Close ends the subscription.
func (r *RedisSource) Close() error { return r.sub.Close() }
