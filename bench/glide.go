//go:build glide

package bench

// GLIDE is a cgo binding to a Rust core (a prebuilt static library shipped in
// the module), so it needs cgo and a C toolchain; it is only built with
// -tags glide to keep the rest of the module pure Go.

import (
	"context"
	"net"
	"strconv"
	"time"

	glide "github.com/valkey-io/valkey-glide/go/v2"
	"github.com/valkey-io/valkey-glide/go/v2/config"
	"github.com/valkey-io/valkey-glide/go/v2/models"
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
