// Command zipline is zipline's command-line tool.
//
//	zipline demo [flags]     the main job: implicit pipelining against a local server
//	                         (-cluster: on a local Redis Cluster; -failover: kill a primary midway)
//	zipline migrate [flags]  move a namespace to a new key layout, live
//	zipline bench <suite>    benchmarks: layouts (the peers' comparisons run from bench/)
//	zipline fanout [flags]   a WebSocket hub relaying Redis pub/sub, with a demo page
//
// Run "zipline <command> -h" for a command's flags.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sort"
)

// command is one subcommand: its one-line summary and its entry point,
// which parses its own flags from args.
type command struct {
	summary string
	run     func(ctx context.Context, args []string) error
}

var commands = map[string]command{
	"demo":    {"run a mixed workload through zipline and through one request per round trip, and compare", runDemo},
	"migrate": {"move a namespace's keys to a new layout, live, resumable (-dry-run projects the saving)", runMigrate},
	"bench":   {"benchmarks: layouts (the me-redis table); GLIDE's and DoorDash's run from the bench module", runBench},
	"fanout":  {"relay Redis pub/sub to WebSocket clients, compressing each message once; demo page at /", runFanout},
}

func main() {
	if len(os.Args) < 2 || os.Args[1] == "-h" || os.Args[1] == "help" {
		usage()
		os.Exit(2)
	}
	cmd, ok := commands[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "zipline: unknown command %q\n", os.Args[1])
		usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := cmd.run(ctx, os.Args[2:]); err != nil {
		fmt.Fprintln(os.Stderr, "zipline:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: zipline <command> [flags]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(os.Stderr, "  %-10s %s\n", n, commands[n].summary)
	}
}
