package main

import (
	"context"
	"flag"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/ziplinekv/zipline/cmd/zipline/bench/doordash"
)

// runBenchDoorDash runs DoorDash's experiment for zipline alone (no cgo):
// SET then GET of 10,000 menus with no compression, LZ4 and zstd, over
// loopback shaped to 1 and 10 Gbit/s and unshaped, writing the report and
// the latency chart to -out. Each profile runs in a child process (this
// program again) inside a network namespace of its own, which is removed
// afterwards, also on SIGINT, SIGTERM or SIGHUP. The comparison with GLIDE
// Go runs from the bench module (bench/cmd/doordashbench, build tag glide).
func runBenchDoorDash(ctx context.Context, args []string) error {
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	fs := flag.NewFlagSet("bench doordash", flag.ContinueOnError)
	out := fs.String("out", "doordash-results", "folder for doordash.md and doordash-latency.svg")
	config := doordash.RegisterFlags(fs, doordash.ZiplineVariants())
	if err := fs.Parse(args); err != nil {
		return err
	}
	c, err := config()
	if err != nil {
		return err
	}
	c.Progress = os.Stderr
	if child, err := doordash.ServeChild(ctx, c); child {
		return err
	}
	c.Out = filepath.Join(*out, "doordash.md")
	c.Command = "zipline bench doordash " + strings.Join(args, " ")
	c.Notes = []string{"zipline alone: GLIDE Go's columns come from `bench/cmd/doordashbench` (cgo, `-tags glide`)."}
	c.Args, c.Stdout = os.Args[1:], os.Stdout
	_, err = doordash.Run(ctx, c)
	return err
}
