package main

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"

	"github.com/ziplinekv/zipline/cmd/zipline/bench/compression"
)

// runBenchCompression runs GLIDE's compression benchmark for zipline alone
// (no cgo): memory saved per corpus class and the TPS matrix, on a
// redis-server of its own, writing the report and charts to -out. The
// comparison with GLIDE Go runs from the bench module
// (bench/cmd/compbench, build tag glide).
func runBenchCompression(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("bench compression", flag.ContinueOnError)
	out := fs.String("out", "compression-results", "folder for compression.md and the SVG charts")
	suite := compression.RegisterFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	s, err := suite()
	if err != nil {
		return err
	}
	s.Out = filepath.Join(*out, "compression.md")
	s.Command = "zipline bench compression " + strings.Join(args, " ")
	s.Title = "Compression benchmark: zipline (GLIDE's method)"
	s.Notes = []string{"zipline alone: GLIDE Go's columns come from `bench/cmd/compbench` (cgo, `-tags glide`)."}
	s.Progress, s.Stdout = os.Stderr, os.Stdout
	_, err = s.Run(ctx, compression.ZiplineVariants())
	return err
}
