package compression

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/ziplinekv/zipline"
)

// admin is the measuring side's own client, without compression, for
// INFO, FLUSHALL and bulk STRLEN/DEL, so that nothing it does goes through
// a client under test.
type admin struct {
	addr string
	c    *zipline.Client
}

// quiet discards the connection events of the measuring side's clients.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// dialAdmin connects to addr.
func dialAdmin(addr string) (*admin, error) {
	c, err := zipline.New(zipline.Options{Addr: addr, Logger: quiet})
	if err != nil {
		return nil, fmt.Errorf("compression: %w", err)
	}
	return &admin{addr: addr, c: c}, nil
}

// Close closes the connection.
func (a *admin) Close() error { return a.c.Close() }

func (a *admin) infoInt(ctx context.Context, section, field string) (int64, error) {
	m, err := a.c.Info(ctx, section)
	if err != nil {
		return 0, fmt.Errorf("compression: INFO %s: %w", section, err)
	}
	n, err := strconv.ParseInt(m[field], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("compression: INFO %s %s: %w", section, field, err)
	}
	return n, nil
}

// usedMemory returns INFO memory's used_memory: the bytes the server's
// allocator has handed out, allocator size classes included.
func (a *admin) usedMemory(ctx context.Context) (int64, error) {
	return a.infoInt(ctx, "memory", "used_memory")
}

// connectedClients returns INFO clients' connected_clients, this
// connection included.
func (a *admin) connectedClients(ctx context.Context) (int, error) {
	n, err := a.infoInt(ctx, "clients", "connected_clients")
	return int(n), err
}

// flushAll empties every database, synchronously.
func (a *admin) flushAll(ctx context.Context) error {
	_, err := a.c.Do(ctx, "FLUSHALL", "SYNC")
	return err
}

// quietMemory turns off the server's own bookkeeping that allocates memory
// as commands run, so used_memory moves only with the data: per-command
// latency histograms (latency-tracking, Redis 7; allocated on a command's
// first use) and the slow log (entries copy their arguments, and on a busy
// machine any command can be slow). It changes the server's configuration,
// so use it only on a server of the benchmark's own. Settings a server does
// not know are skipped.
func (a *admin) quietMemory(ctx context.Context) error {
	for _, kv := range [][2]string{{"latency-tracking", "no"}, {"slowlog-log-slower-than", "-1"}} {
		if _, err := a.c.Do(ctx, "CONFIG", "SET", kv[0], kv[1]); err != nil && !strings.Contains(err.Error(), "nknown option") &&
			!strings.Contains(err.Error(), "nsupported") {
			return err
		}
	}
	_, err := a.c.Do(ctx, "SLOWLOG", "RESET")
	return err
}

// serverVersion returns e.g. "redis 7.0.15" from INFO server.
func (a *admin) serverVersion(ctx context.Context) string {
	m, err := a.c.Info(ctx, "server")
	if err != nil {
		return "unknown server"
	}
	if v := m["valkey_version"]; v != "" {
		return "valkey " + v
	}
	return "redis " + m["redis_version"]
}

// settle waits until at most clients connections are open (the clients
// under test have gone) and used_memory has stopped moving (freed client
// buffers, finished incremental rehashing): two equal readings 100 ms
// apart, within 3 s. It returns the last reading.
func (a *admin) settle(ctx context.Context, clients int) (int64, error) {
	const (
		step    = 100 * time.Millisecond
		timeout = 3 * time.Second
	)
	start := time.Now()
	prev := int64(-1)
	for {
		n, err := a.connectedClients(ctx)
		if err != nil {
			return 0, err
		}
		used, err := a.usedMemory(ctx)
		if err != nil {
			return 0, err
		}
		if (n <= clients && used == prev) || time.Since(start) > timeout {
			return used, nil
		}
		prev = used
		select {
		case <-time.After(step): // polling the server's state, not synchronising goroutines
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}

// sumEach is SumEach on the admin's server.
func (a *admin) sumEach(ctx context.Context, cmd string, keys []string) (int64, error) {
	return SumEach(ctx, a.addr, cmd, keys)
}

// SumEach sends "cmd key" for every key to the server at addr, in batches
// on a client of its own that is closed afterwards (so its buffers do not
// linger in used_memory), and returns the sum of the integer replies: with
// STRLEN the stored bytes, with DEL the keys deleted.
func SumEach(ctx context.Context, addr, cmd string, keys []string) (int64, error) {
	c, err := zipline.New(zipline.Options{Addr: addr, Logger: quiet})
	if err != nil {
		return 0, fmt.Errorf("compression: %w", err)
	}
	defer c.Close()
	const chunk = 500
	var sum int64
	b := c.Batch()
	replies := make([]*zipline.Future[zipline.Value], 0, chunk)
	for i := 0; i < len(keys); i += chunk {
		replies = replies[:0]
		for _, k := range keys[i:min(i+chunk, len(keys))] {
			replies = append(replies, b.Do(cmd, k))
		}
		if err := b.Exec(ctx); err != nil {
			return 0, fmt.Errorf("compression: %s: %w", cmd, err)
		}
		for _, r := range replies {
			n, err := r.Val().AsInt64()
			if err != nil {
				return 0, fmt.Errorf("compression: %s: %w", cmd, err)
			}
			sum += n
		}
	}
	return sum, nil
}
