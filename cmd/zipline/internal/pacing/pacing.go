// Package pacing holds a scan of a live server to a rate, so that the
// CLI's reads and rewrites (analyze, rollout) stay beside a production
// load rather than on top of it.
package pacing

import (
	"context"
	"time"
)

// Wait returns once done items are due at rate a second since start, or
// when ctx ends (with its error). A rate of zero or less is no limit.
func Wait(ctx context.Context, start time.Time, done int64, rate int) error {
	if rate <= 0 {
		return nil
	}
	wait := time.Until(start.Add(time.Duration(float64(done) / float64(rate) * float64(time.Second))))
	if wait <= 0 {
		return nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
