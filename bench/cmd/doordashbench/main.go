// Command doordashbench runs DoorDash's Redis compression experiment with
// zipline and GLIDE Go side by side: SET then GET 10,000 restaurant menus
// of 9.5 KB to 709 KB from 16 goroutines, with no compression, LZ4 and
// zstd, over loopback shaped to 1 Gbit/s and 10 Gbit/s and unshaped. Each
// profile runs in a network namespace of its own (this program started
// again inside it), which is removed afterwards; without root it falls
// back to a rate-limiting proxy. It writes a markdown report and a latency
// chart.
//
//	cd bench
//	go run -tags glide ./cmd/doordashbench -out results/doordash.md           # 3 rounds, ~10 min
//	go run -tags glide ./cmd/doordashbench -quick -out /tmp/doordash.md       # 300 menus, 1 round
//
// Without -tags glide only zipline runs (no cgo). This is the benchmark's
// one front door; its engine is package bench/doordash.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/ziplinekv/zipline/bench/doordash"
	"github.com/ziplinekv/zipline/cmd/zipline/bench/compression"
)

// Filled by glide.go under the glide build tag.
var (
	extraVariants []compression.Variant
	reference     string
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "doordashbench:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	fs := flag.NewFlagSet("doordashbench", flag.ContinueOnError)
	out := fs.String("out", "", "markdown report (the latency chart is written beside it); empty prints the report")
	config := doordash.RegisterFlags(fs, append(doordash.ZiplineVariants(), extraVariants...))
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: doordashbench [flags]   (build with -tags glide to include GLIDE Go)\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(os.Args[1:]); err != nil {
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
	tags := ""
	if reference != "" {
		tags = "-tags glide "
	}
	c.Reference, c.Out = reference, *out
	c.Command = "cd bench && go run " + tags + "./cmd/doordashbench " + strings.Join(os.Args[1:], " ")
	c.Title = "DoorDash: large values over a bandwidth limit (zipline and GLIDE Go)"
	c.Args, c.Stdout = os.Args[1:], os.Stdout
	_, err = doordash.Run(ctx, c)
	return err
}
