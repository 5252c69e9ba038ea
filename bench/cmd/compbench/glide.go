//go:build glide

package main

// GLIDE Go is cgo over a prebuilt Rust library shipped in its module, so
// it is built only with -tags glide (see bench/README.md).

import (
	"github.com/ziplinekv/zipline/bench"
	"github.com/ziplinekv/zipline/cmd/zipline/bench/compression"
)

func init() {
	reference = bench.GlideName
	for _, b := range compression.Backends {
		extraVariants = append(extraVariants, bench.GlideVariant(b))
	}
}
