// A zipline revision from before cluster support has no Options.Addrs:
// cmd/abbench builds clientbench (which needs no cluster adapter) with
// -tags anyrev, which leaves out the adapters that need a recent
// revision, so that either revision builds.

//go:build !anyrev

package bench

import (
	"context"

	"github.com/ziplinekv/zipline"
)

func init() {
	RegisterCluster(ClusterFactory{
		Name: "zipline",
		Desc: "zipline.New(Options{Addrs: seeds}) with default options (logger silenced; one pipelined connection per node); " +
			"Get, Set, MGet (split by slot), Batch().Set/Get + Exec (split per node)",
		Order: orderZipline,
		New: func(seeds []string) (ClusterClient, error) {
			c, err := zipline.New(zipline.Options{Addrs: seeds, Logger: quiet})
			if err != nil {
				return nil, err
			}
			return ziplineCluster{ziplineClient{c}}, nil
		},
	})
}

// ziplineCluster is the single-server adapter plus the multi-key calls:
// the same Client serves both.
type ziplineCluster struct{ ziplineClient }

func (z ziplineCluster) MGet(ctx context.Context, keys []string) (int, error) {
	vals, err := z.c.MGet(ctx, keys...)
	total := 0
	for _, v := range vals {
		total += len(v)
	}
	return total, err
}

func (z ziplineCluster) Batch(ctx context.Context, keys []string, val []byte) (int, error) {
	b := z.c.Batch()
	sets := make([]*zipline.Future[bool], 0, (len(keys)+1)/2)
	gets := make([]*zipline.Future[[]byte], 0, len(keys)/2)
	for i, k := range keys {
		if i%2 == 0 {
			sets = append(sets, b.Set(k, val))
		} else {
			gets = append(gets, b.Get(k))
		}
	}
	if err := b.Exec(ctx); err != nil {
		return 0, err
	}
	return batchTotal(len(keys), func(i int) error { return sets[i/2].Err() },
		func(i int) (int, error) { v, err := gets[i/2].Result(); return len(v), err })
}
