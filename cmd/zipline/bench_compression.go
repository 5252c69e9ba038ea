package main

import (
	"context"
	"errors"
)

// runBenchCompression runs the compression benchmark (owned by the
// compression benchmark work; see internal/compbench).
func runBenchCompression(ctx context.Context, args []string) error {
	return errors.New("bench compression: not built yet")
}

// demoCompression is the demo's compression section.
func demoCompression(ctx context.Context, d *demoEnv) error { return nil }
