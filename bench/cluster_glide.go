//go:build glide

package bench

import (
	"context"
	"errors"
	"fmt"

	glide "github.com/valkey-io/valkey-glide/go/v2"
	"github.com/valkey-io/valkey-glide/go/v2/config"
	"github.com/valkey-io/valkey-glide/go/v2/pipeline"
)

func init() {
	RegisterCluster(ClusterFactory{
		Name: "glide",
		Desc: "valkey-glide Go v2.5.3 glide.NewClusterClient(NewClusterClientConfiguration().WithAddress(seeds...)." +
			"WithRequestTimeout(5s)) (Rust core via cgo); Get, Set, MGet (split by slot in the core), " +
			"Exec of a non-atomic ClusterBatch (split per node)",
		Order: orderPeer,
		New: func(seeds []string) (ClusterClient, error) {
			cfg := config.NewClusterClientConfiguration().WithRequestTimeout(glideTimeout)
			for _, s := range seeds {
				a, err := glideAddress(s)
				if err != nil {
					return nil, err
				}
				cfg.WithAddress(a)
			}
			c, err := glide.NewClusterClient(cfg)
			if err != nil {
				return nil, err
			}
			return glideCluster{glideClient{c}, c}, nil
		},
	})
}

// glideCluster is the standalone adapter over a ClusterClient, plus the
// multi-key calls.
type glideCluster struct {
	glideClient
	cc *glide.ClusterClient
}

func (g glideCluster) MGet(ctx context.Context, keys []string) (int, error) {
	rs, err := g.cc.MGet(ctx, keys)
	total := 0
	for _, r := range rs {
		total += len(r.Value())
	}
	return total, err
}

func (g glideCluster) Batch(ctx context.Context, keys []string, val []byte) (int, error) {
	b := pipeline.NewClusterBatch(false)
	v := bstr(val)
	for i, k := range keys {
		if i%2 == 0 {
			b.Set(k, v)
		} else {
			b.Get(k)
		}
	}
	res, err := g.cc.Exec(ctx, *b, true)
	if err != nil {
		return 0, err
	}
	if len(res) != len(keys) {
		return 0, fmt.Errorf("glide: %d results for %d commands", len(res), len(keys))
	}
	return batchTotal(len(keys), func(i int) error { return glideResultErr(res[i]) },
		func(i int) (int, error) {
			s, ok := res[i].(string)
			if !ok {
				return 0, unexpected("glide", res[i])
			}
			return len(s), nil
		})
}

// glideResultErr returns the error a batch result holds, if it is one.
func glideResultErr(v any) error {
	if err, ok := v.(error); ok {
		return err
	}
	if v == nil {
		return errors.New("glide: nil result")
	}
	return nil
}
