package main

import (
	"context"
	"fmt"
	"os"
)

// benchSuites are the benchmarks "zipline bench <suite>" runs. Each suite
// parses its own flags.
var benchSuites = map[string]command{
	"compression": {"GLIDE's compression benchmark: memory per corpus class and the TPS matrix, with charts", runBenchCompression},
	"layouts":     {"the me-redis memory table: bytes per pair for each layout and value class, and speed ratios", runBenchLayouts},
	"doordash":    {"DoorDash's table: SET and GET of 10,000 menus, uncompressed, LZ4 and zstd, over loopback shaped to 1 and 10 Gbit/s", runBenchDoorDash},
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
