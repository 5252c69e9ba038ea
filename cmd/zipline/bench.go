package main

import (
	"context"
	"fmt"
	"os"
)

// benchSuites are the benchmarks "zipline bench <suite>" runs. Each suite
// parses its own flags. The benchmarks that set zipline beside its peers
// (GLIDE's compression benchmark, DoorDash's) have their one front door in
// the bench module, which links the peers' clients: cd bench && go run
// ./cmd/compbench (or ./cmd/doordashbench), adding -tags glide for GLIDE Go.
var benchSuites = map[string]command{
	"layouts": {"the me-redis memory table: bytes per pair for each layout and value class, and speed ratios", runBenchLayouts},
}

func runBench(ctx context.Context, args []string) error {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: zipline bench <suite> [flags]\n\nsuites:")
		for name, s := range benchSuites {
			fmt.Fprintf(os.Stderr, "  %-12s %s\n", name, s.summary)
		}
		return fmt.Errorf("bench needs a suite")
	}
	s, ok := benchSuites[args[0]]
	if !ok {
		return fmt.Errorf("unknown bench suite %q", args[0])
	}
	return s.run(ctx, args[1:])
}
