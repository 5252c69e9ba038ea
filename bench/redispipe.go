package bench

import (
	"context"
	"time"

	"github.com/joomcode/redispipe/redis"
	"github.com/joomcode/redispipe/redisconn"
)

func init() {
	Register(Factory{
		Name:  "redispipe",
		Desc:  "redispipe v0.9.8 redisconn.Connect with default Opts (WritePause 150µs); redis.SyncCtx.Do",
		Order: orderPeer,
		New:   func(addr string, _ int) (Client, error) { return newRedispipe(addr, 0) },
	})
	Register(Factory{
		Name:  "redispipe-nopause",
		Desc:  "redispipe v0.9.8 with Opts{WritePause: -1} (no batching timer); redis.SyncCtx.Do",
		Order: orderPeer,
		New:   func(addr string, _ int) (Client, error) { return newRedispipe(addr, -1) },
	})
}

func newRedispipe(addr string, pause time.Duration) (Client, error) {
	conn, err := redisconn.Connect(context.Background(), addr, redisconn.Opts{WritePause: pause, Logger: quietLogger{}})
	if err != nil {
		return nil, err
	}
	return redispipeClient{conn: conn, s: redis.SyncCtx{S: conn}}, nil
}

type redispipeClient struct {
	conn *redisconn.Connection
	s    redis.SyncCtx
}

func (r redispipeClient) Get(ctx context.Context, key string) (int, error) {
	return redispipeLen(r.s.Do(ctx, "GET", key))
}

// redispipeLen returns the length of a GET's result, or its error.
func redispipeLen(res any) (int, error) {
	if err := redis.AsError(res); err != nil {
		return 0, err
	}
	b, ok := res.([]byte)
	if !ok {
		return 0, unexpected("redispipe", res)
	}
	return len(b), nil
}

func (r redispipeClient) Set(ctx context.Context, key string, val []byte) error {
	return redis.AsError(r.s.Do(ctx, "SET", key, val))
}

func (r redispipeClient) Close() error { r.conn.Close(); return nil }

// quietLogger drops redisconn's connect/disconnect log lines, which would
// interleave with the progress output; ReqStat is a no-op as in the default.
type quietLogger struct{}

func (quietLogger) Report(*redisconn.Connection, redisconn.LogEvent) {}

func (quietLogger) ReqStat(*redisconn.Connection, redisconn.Request, any, int64, int64, int64) {}
