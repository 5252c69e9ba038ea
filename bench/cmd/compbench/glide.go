//go:build glide

package main

// GLIDE Go is cgo over a prebuilt Rust library shipped in its module, so
// this adapter is built only with -tags glide (see bench/README.md).

import (
	"context"
	"fmt"
	"unsafe"

	glide "github.com/valkey-io/valkey-glide/go/v2"
	"github.com/valkey-io/valkey-glide/go/v2/config"
	"github.com/valkey-io/valkey-glide/go/v2/pipeline"

	"github.com/ziplinekv/zipline/bench"
	"github.com/ziplinekv/zipline/cmd/zipline/bench/compression"
)

// glideName is GLIDE Go's client name in the report.
const glideName = "GLIDE Go"

func init() {
	reference = glideName
	for _, b := range compression.Backends {
		extraVariants = append(extraVariants, glideVariant(b))
	}
}

func glideVariant(b compression.Backend) compression.Variant {
	cc := ""
	switch b {
	case compression.Zstd:
		cc = ".WithCompressionConfiguration(NewCompressionConfiguration().WithBackend(config.ZSTD))"
	case compression.LZ4:
		cc = ".WithCompressionConfiguration(NewCompressionConfiguration().WithBackend(config.LZ4))"
	}
	return compression.Variant{Client: glideName, Backend: b,
		Config: "valkey-glide/go/v2 v2.5.3 glide.NewClient(NewClientConfiguration().WithAddress(..).WithRequestTimeout(5s)" + cc +
			"); Set/Get, pipeline.NewStandaloneBatch(false) + Exec(ctx, batch, true) per call",
		New: func(ctx context.Context, addr string) (compression.Client, error) {
			cfg, err := bench.GlideConfig(addr)
			if err != nil {
				return nil, err
			}
			switch b {
			case compression.Zstd:
				cfg.WithCompressionConfiguration(config.NewCompressionConfiguration().WithBackend(config.ZSTD))
			case compression.LZ4:
				cfg.WithCompressionConfiguration(config.NewCompressionConfiguration().WithBackend(config.LZ4))
			}
			c, err := glide.NewClient(cfg)
			if err != nil {
				return nil, err
			}
			return glideClient{c}, nil
		}}
}

// glideClient adapts a *glide.Client. GLIDE's API takes values as strings;
// they are passed as zero-copy views of the benchmark's bytes, so GLIDE is
// not charged for a conversion a caller holding a string would not make.
// GLIDE batches have no reset, so each call builds one, as its docs do.
type glideClient struct{ c *glide.Client }

func (g glideClient) SetBatch(ctx context.Context, keys []string, vals [][]byte) error {
	if len(keys) == 1 {
		_, err := g.c.Set(ctx, keys[0], bstr(vals[0]))
		return err
	}
	b := pipeline.NewStandaloneBatch(false)
	for i, k := range keys {
		b.Set(k, bstr(vals[i]))
	}
	_, err := g.c.Exec(ctx, *b, true)
	return err
}

func (g glideClient) GetBatch(ctx context.Context, keys []string) (int, error) {
	if len(keys) == 1 {
		r, err := g.c.Get(ctx, keys[0])
		if err != nil {
			return 0, err
		}
		return len(r.Value()), nil
	}
	b := pipeline.NewStandaloneBatch(false)
	for _, k := range keys {
		b.Get(k)
	}
	res, err := g.c.Exec(ctx, *b, true)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range res {
		switch v := r.(type) {
		case string:
			n += len(v)
		case nil:
		default:
			return n, fmt.Errorf("GLIDE Go: unexpected GET reply %T in a batch", r)
		}
	}
	return n, nil
}

func (g glideClient) Get(ctx context.Context, key string) ([]byte, error) {
	r, err := g.c.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	return []byte(r.Value()), nil
}

func (g glideClient) Close() error { g.c.Close(); return nil }

// bstr views b as a string without copying; the benchmark never modifies
// a value while a client holds it.
func bstr(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
