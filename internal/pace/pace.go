// Package pace holds work to a rate, and waits that end with a context:
// the one way the library (layout's migrations and dictionary rotations),
// the CLI (analyze, rollout) and the benchmarks wait, so that a scan of a
// live server stays beside a production load rather than on top of it,
// and a cancelled run stops at once.
package pace

import (
	"context"
	"time"
)

// Sleep waits d, or until ctx ends, and returns ctx's error then.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Rate returns once done items are due at rate a second since start, or
// when ctx ends, with its error (also when no wait was due: a loop that
// paces itself with Rate stops when its context does). A rate of zero or
// less is no limit.
func Rate(ctx context.Context, start time.Time, done int64, rate int) error {
	if rate <= 0 {
		return ctx.Err()
	}
	return Sleep(ctx, time.Duration(done)*time.Second/time.Duration(rate)-time.Since(start))
}
