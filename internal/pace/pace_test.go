package pace

import (
	"context"
	"errors"
	"testing"
	"time"
)

// Rate holds done items to rate a second: 50 items at 1,000 a second take
// at least 50 ms from start, and items already due take none.
func TestRate(t *testing.T) {
	ctx := context.Background()
	start := time.Now()
	if err := Rate(ctx, start, 50, 1000); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 50*time.Millisecond {
		t.Fatalf("50 items at 1,000 a second returned after %v", took)
	}
	if err := Rate(ctx, time.Now().Add(-time.Hour), 50, 1000); err != nil {
		t.Fatal(err)
	}
	if err := Rate(ctx, time.Now(), 1<<40, 0); err != nil {
		t.Fatalf("no limit: %v", err)
	}
}

// A cancelled context ends a wait at once, and a loop pacing itself learns
// of it even when nothing was due.
func TestCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep: %v", err)
	}
	if err := Rate(ctx, time.Now(), 1<<40, 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("Rate with a wait due: %v", err)
	}
	if err := Rate(ctx, time.Now().Add(-time.Hour), 1, 1000); !errors.Is(err, context.Canceled) {
		t.Fatalf("Rate with nothing due: %v", err)
	}
}
