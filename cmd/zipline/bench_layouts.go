package main

import (
	"context"
	"errors"
)

// runBenchLayouts runs the layout benchmark (owned by the layout benchmark
// work; see internal/layoutbench).
func runBenchLayouts(ctx context.Context, args []string) error {
	return errors.New("bench layouts: not built yet")
}

// demoLayouts is the demo's namespace section.
func demoLayouts(ctx context.Context, d *demoEnv) error { return nil }
