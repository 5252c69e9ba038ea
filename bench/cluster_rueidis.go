package bench

import (
	"context"

	"github.com/redis/rueidis"
)

func init() {
	RegisterCluster(ClusterFactory{
		Name: "rueidis",
		Desc: "rueidis.NewClient(ClientOption{InitAddress: seeds}) with default options (cluster detected; " +
			"auto-pipelining per node); Do for GET/SET, rueidis.MGet (MGET per slot, DoMulti), DoMulti for the batch",
		Order: orderPeer,
		New: func(seeds []string) (ClusterClient, error) {
			c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: seeds})
			if err != nil {
				return nil, err
			}
			return rueidisCluster{rueidisClient{c}}, nil
		},
	})
}

// rueidisCluster is the single-server adapter plus the multi-key calls:
// rueidis's Client is the same type for both.
type rueidisCluster struct{ rueidisClient }

func (r rueidisCluster) MGet(ctx context.Context, keys []string) (int, error) {
	m, err := rueidis.MGet(r.c, ctx, keys)
	total := 0
	for _, msg := range m {
		s, err := msg.ToString()
		if err != nil {
			return total, err
		}
		total += len(s)
	}
	return total, err
}

func (r rueidisCluster) Batch(ctx context.Context, keys []string, val []byte) (int, error) {
	cmds := make(rueidis.Commands, len(keys))
	for i, k := range keys {
		if i%2 == 0 {
			cmds[i] = r.c.B().Set().Key(k).Value(rueidis.BinaryString(val)).Build()
		} else {
			cmds[i] = r.c.B().Get().Key(k).Build()
		}
	}
	res := r.c.DoMulti(ctx, cmds...)
	return batchTotal(len(keys), func(i int) error { return res[i].Error() },
		func(i int) (int, error) { s, err := res[i].ToString(); return len(s), err })
}
