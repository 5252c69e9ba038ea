package bench

import (
	"context"

	"github.com/redis/go-redis/v9"
)

func init() {
	RegisterCluster(ClusterFactory{
		Name: "goredis",
		Desc: "go-redis v9 redis.NewClusterClient(&ClusterOptions{Addrs: seeds}) with default options (a pool per node); " +
			"Get/Set; MGET across slots is refused (CROSSSLOT), so MGet and the batch are Pipelined",
		Order: orderPeer,
		New: func(seeds []string) (ClusterClient, error) {
			c, err := dialGoredisCluster(seeds)
			if err != nil {
				return nil, err
			}
			return goredisCluster{goredisClient: goredisClient{c: c}, cc: c}, nil
		},
	})
	RegisterCluster(ClusterFactory{
		Name:  "goredis-ap",
		Desc:  "go-redis v9 ClusterClient.AutoPipeline() with its default (blocking) options; GET and SET only",
		Order: orderPeer,
		Lacks: []ClusterOp{OpMGet, OpBatch},
		New: func(seeds []string) (ClusterClient, error) {
			c, err := dialGoredisCluster(seeds)
			if err != nil {
				return nil, err
			}
			ap, err := autoPipelined(c)
			if err != nil {
				return nil, err
			}
			return goredisCluster{goredisClient: ap, cc: c}, nil
		},
	})
}

// dialGoredisCluster returns a go-redis cluster client with default
// options, checked with a PING on every primary.
func dialGoredisCluster(seeds []string) (*redis.ClusterClient, error) {
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: seeds})
	err := c.ForEachMaster(context.Background(), func(ctx context.Context, n *redis.Client) error { return n.Ping(ctx).Err() })
	if err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// goredisCluster is the single-server adapter, whose Get and Set go
// through the ClusterClient (or its AutoPipeliner), plus the multi-key
// calls, which use the ClusterClient's pipeline: it splits commands by
// node and sends each node its part.
type goredisCluster struct {
	goredisClient
	cc *redis.ClusterClient
}

func (g goredisCluster) MGet(ctx context.Context, keys []string) (int, error) {
	cmds, err := g.cc.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, k := range keys {
			p.Get(ctx, k)
		}
		return nil
	})
	total := 0
	for _, c := range cmds {
		total += len(c.(*redis.StringCmd).Val())
	}
	return total, err
}

func (g goredisCluster) Batch(ctx context.Context, keys []string, val []byte) (int, error) {
	cmds, err := g.cc.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			if i%2 == 0 {
				p.Set(ctx, k, val, 0)
			} else {
				p.Get(ctx, k)
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return batchTotal(len(keys), func(i int) error { return cmds[i].Err() },
		func(i int) (int, error) { s, err := cmds[i].(*redis.StringCmd).Result(); return len(s), err })
}
