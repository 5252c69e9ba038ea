//go:build glide

package bench

// GLIDE is a cgo binding to a Rust core (a prebuilt static library shipped in
// the module), so it needs cgo and a C toolchain; it is only built with
// -tags glide to keep the rest of the module pure Go.

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	glide "github.com/valkey-io/valkey-glide/go/v2"
	"github.com/valkey-io/valkey-glide/go/v2/config"
	"github.com/valkey-io/valkey-glide/go/v2/models"
	"github.com/valkey-io/valkey-glide/go/v2/pipeline"

	"github.com/ziplinekv/zipline/cmd/zipline/bench/compression"
)

func init() {
	Register(Factory{
		Name:  "glide",
		Desc:  "valkey-glide Go v2.5.3 glide.NewClient(NewClientConfiguration().WithAddress(..).WithRequestTimeout(5s)) (one multiplexed conn, Rust core via cgo); Get(ctx,k).Value()",
		Order: orderPeer,
		New: func(addr string, _ int) (Client, error) {
			cfg, err := GlideConfig(addr)
			if err != nil {
				return nil, err
			}
			c, err := glide.NewClient(cfg)
			if err != nil {
				return nil, err
			}
			return glideClient{c}, nil
		},
	})
}

// GlideConfig is how every benchmark here configures GLIDE Go for addr. Its
// default request timeout (250 ms) trips at hundreds of goroutines on a busy
// 2-CPU machine, while the other clients wait seconds, so it gets 5 s.
func GlideConfig(addr string) (*config.ClientConfiguration, error) {
	a, err := glideAddress(addr)
	if err != nil {
		return nil, err
	}
	return config.NewClientConfiguration().WithAddress(a).WithRequestTimeout(glideTimeout), nil
}

// glideTimeout is the request timeout every GLIDE client here gets.
const glideTimeout = 5 * time.Second

// glideAddress parses "host:port" into GLIDE's form.
func glideAddress(addr string) (*config.NodeAddress, error) {
	host, ps, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.Atoi(ps)
	if err != nil {
		return nil, err
	}
	return &config.NodeAddress{Host: host, Port: port}, nil
}

// glideClient adapts either GLIDE client (standalone or cluster): both
// have these methods.
type glideClient struct {
	c interface {
		Get(ctx context.Context, key string) (models.Result[string], error)
		Set(ctx context.Context, key, value string) (string, error)
		Close()
	}
}

func (g glideClient) Get(ctx context.Context, key string) (int, error) {
	r, err := g.c.Get(ctx, key)
	if err != nil {
		return 0, err
	}
	return len(r.Value()), nil
}

func (g glideClient) Set(ctx context.Context, key string, val []byte) error {
	_, err := g.c.Set(ctx, key, bstr(val))
	return err
}

func (g glideClient) Close() error { g.c.Close(); return nil }

// GlideName is GLIDE Go's client name in the compression reports.
const GlideName = "GLIDE Go"

// GlideVariant is GLIDE Go with compression backend b, for the benchmarks
// built on the compression package (cmd/compbench, cmd/doordashbench):
// GlideConfig, plus its compression configuration.
func GlideVariant(b compression.Backend) compression.Variant {
	cc := ""
	switch b {
	case compression.Zstd:
		cc = ".WithCompressionConfiguration(NewCompressionConfiguration().WithBackend(config.ZSTD))"
	case compression.LZ4:
		cc = ".WithCompressionConfiguration(NewCompressionConfiguration().WithBackend(config.LZ4))"
	}
	return compression.Variant{Client: GlideName, Backend: b,
		Config: "valkey-glide/go/v2 v2.5.3 glide.NewClient(NewClientConfiguration().WithAddress(..).WithRequestTimeout(5s)" + cc +
			"); Set/Get, pipeline.NewStandaloneBatch(false) + Exec(ctx, batch, true) per call",
		New: func(ctx context.Context, addr string) (compression.Client, error) {
			cfg, err := GlideConfig(addr)
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
			return glideBatchClient{c}, nil
		}}
}

// glideBatchClient adapts a *glide.Client to compression.Client. GLIDE's
// API takes values as strings; they are passed as zero-copy views of the
// benchmark's bytes, so GLIDE is not charged for a conversion a caller
// holding a string would not make. GLIDE batches have no reset, so each
// call builds one, as its docs do.
type glideBatchClient struct{ c *glide.Client }

func (g glideBatchClient) SetBatch(ctx context.Context, keys []string, vals [][]byte) error {
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

func (g glideBatchClient) GetBatch(ctx context.Context, keys []string) (int, error) {
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

func (g glideBatchClient) Get(ctx context.Context, key string) ([]byte, error) {
	r, err := g.c.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	return []byte(r.Value()), nil
}

func (g glideBatchClient) Close() error { g.c.Close(); return nil }
