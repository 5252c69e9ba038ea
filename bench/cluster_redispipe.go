package bench

import (
	"context"
	"time"

	"github.com/joomcode/redispipe/redis"
	"github.com/joomcode/redispipe/rediscluster"
	"github.com/joomcode/redispipe/redisconn"
)

func init() {
	RegisterCluster(ClusterFactory{
		Name: "redispipe",
		Desc: "redispipe v0.9.8 rediscluster.NewCluster with default Opts (2 conns per node, WritePause 150µs); " +
			"SyncCtx.Do; MGET across slots is refused (CROSSSLOT), so MGet and the batch are SyncCtx.SendMany",
		Order: orderPeer,
		New:   func(seeds []string) (ClusterClient, error) { return newRedispipeCluster(seeds, 0) },
	})
	RegisterCluster(ClusterFactory{
		Name:  "redispipe-nopause",
		Desc:  "redispipe v0.9.8 rediscluster with HostOpts{WritePause: -1} (no batching timer); otherwise as redispipe",
		Order: orderPeer,
		New:   func(seeds []string) (ClusterClient, error) { return newRedispipeCluster(seeds, -1) },
	})
}

func newRedispipeCluster(seeds []string, pause time.Duration) (ClusterClient, error) {
	c, err := rediscluster.NewCluster(context.Background(), seeds, rediscluster.Opts{
		HostOpts: redisconn.Opts{WritePause: pause},
		Logger:   quietClusterLogger{},
	})
	if err != nil {
		return nil, err
	}
	return redispipeCluster{redispipeClient: redispipeClient{s: redis.SyncCtx{S: c}}, cluster: c}, nil
}

// redispipeCluster is the single-server adapter over a Cluster (a
// redis.Sender too) plus the multi-key calls.
type redispipeCluster struct {
	redispipeClient
	cluster *rediscluster.Cluster
}

func (r redispipeCluster) MGet(ctx context.Context, keys []string) (int, error) {
	reqs := make([]redis.Request, len(keys))
	for i, k := range keys {
		reqs[i] = redis.Req("GET", k)
	}
	total := 0
	for _, res := range r.s.SendMany(ctx, reqs) {
		l, err := redispipeLen(res)
		if err != nil {
			return total, err
		}
		total += l
	}
	return total, nil
}

func (r redispipeCluster) Batch(ctx context.Context, keys []string, val []byte) (int, error) {
	reqs := make([]redis.Request, len(keys))
	for i, k := range keys {
		if i%2 == 0 {
			reqs[i] = redis.Req("SET", k, val)
		} else {
			reqs[i] = redis.Req("GET", k)
		}
	}
	res := r.s.SendMany(ctx, reqs)
	return batchTotal(len(keys), func(i int) error { return redis.AsError(res[i]) },
		func(i int) (int, error) { return redispipeLen(res[i]) })
}

func (r redispipeCluster) Close() error { r.cluster.Close(); return nil }

// quietClusterLogger drops rediscluster's event log lines, which would
// interleave with the progress output; ReqStat is a no-op as in the default.
type quietClusterLogger struct{}

func (quietClusterLogger) Report(*rediscluster.Cluster, rediscluster.LogEvent) {}

func (quietClusterLogger) ReqStat(*rediscluster.Cluster, *redisconn.Connection, rediscluster.Request, any, int64, int64, int64) {
}
