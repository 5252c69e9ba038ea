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
	return func(yield func(Message, error) bool) {
		for m, err := range r.sub.Messages(ctx) {
			switch {
			case errors.Is(err, zipline.ErrGap):
				if !yield(Message{Gap: true}, nil) {
					return
				}
			case err != nil:
				return // ctx ended, or the source or its Client closed
			default:
				if !yield(Message{Channel: m.Channel, Pattern: m.Pattern, Payload: m.Payload}, nil) {
					return
				}
			}
		}
	}
}

// Close ends the subscription.
func (r *RedisSource) Close() error { return r.sub.Close() }
