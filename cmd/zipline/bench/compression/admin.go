package compression

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/ziplinekv/zipline/internal/localserver"
	"github.com/ziplinekv/zipline/internal/resp"
)

// Admin is the measuring side's own connection to the server, for INFO,
// FLUSHALL and bulk STRLEN/DEL, so that nothing it does goes through a
// client under test. It is not safe for concurrent use.
type Admin struct {
	addr string
	conn net.Conn
	rd   *resp.Reader
	buf  []byte
}

// DialAdmin connects to addr.
func DialAdmin(ctx context.Context, addr string) (*Admin, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("compression: %w", err)
	}
	return &Admin{addr: addr, conn: conn, rd: resp.NewReader(conn, 0, resp.Limits{})}, nil
}

// Close closes the connection.
func (a *Admin) Close() error { return a.conn.Close() }

// do sends one command and reads its reply, which stays valid until the
// next call. An error reply is returned as an error.
func (a *Admin) do(ctx context.Context, args ...any) (resp.Value, error) {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(30 * time.Second)
	}
	a.conn.SetDeadline(deadline)
	var err error
	a.buf = resp.AppendArrayLen(a.buf[:0], len(args))
	for i, arg := range args {
		if a.buf, err = resp.AppendAny(a.buf, i, arg); err != nil {
			return resp.Value{}, err
		}
	}
	if _, err := a.conn.Write(a.buf); err != nil {
		return resp.Value{}, fmt.Errorf("compression: %w", err)
	}
	var v resp.Value
	if err := a.rd.ReadValue(&v); err != nil {
		return resp.Value{}, fmt.Errorf("compression: %w", err)
	}
	if v.IsError() {
		return v, fmt.Errorf("compression: %s: %s", args[0], v.Bytes())
	}
	return v, nil
}

// Info returns the fields of one INFO section.
func (a *Admin) Info(ctx context.Context, section string) (map[string]string, error) {
	v, err := a.do(ctx, "INFO", section)
	if err != nil {
		return nil, err
	}
	return localserver.ParseInfo(string(v.Bytes())), nil
}

func (a *Admin) infoInt(ctx context.Context, section, field string) (int64, error) {
	m, err := a.Info(ctx, section)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(m[field], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("compression: INFO %s %s: %w", section, field, err)
	}
	return n, nil
}

// UsedMemory returns INFO memory's used_memory: the bytes the server's
// allocator has handed out, allocator size classes included.
func (a *Admin) UsedMemory(ctx context.Context) (int64, error) {
	return a.infoInt(ctx, "memory", "used_memory")
}

// ConnectedClients returns INFO clients' connected_clients, this
// connection included.
func (a *Admin) ConnectedClients(ctx context.Context) (int, error) {
	n, err := a.infoInt(ctx, "clients", "connected_clients")
	return int(n), err
}

// FlushAll empties every database, synchronously.
func (a *Admin) FlushAll(ctx context.Context) error {
	_, err := a.do(ctx, "FLUSHALL", "SYNC")
	return err
}

// QuietMemory turns off the server's own bookkeeping that allocates memory
// as commands run, so used_memory moves only with the data: per-command
// latency histograms (latency-tracking, Redis 7; allocated on a command's
// first use) and the slow log (entries copy their arguments, and on a busy
// machine any command can be slow). It changes the server's configuration,
// so use it only on a server of the benchmark's own. Settings a server does
// not know are skipped.
func (a *Admin) QuietMemory(ctx context.Context) error {
	for _, kv := range [][2]string{{"latency-tracking", "no"}, {"slowlog-log-slower-than", "-1"}} {
		if _, err := a.do(ctx, "CONFIG", "SET", kv[0], kv[1]); err != nil && !strings.Contains(err.Error(), "nknown option") &&
			!strings.Contains(err.Error(), "nsupported") {
			return err
		}
	}
	_, err := a.do(ctx, "SLOWLOG", "RESET")
	return err
}

// ServerVersion returns e.g. "redis 7.0.15" from INFO server.
func (a *Admin) ServerVersion(ctx context.Context) string {
	m, err := a.Info(ctx, "server")
	if err != nil {
		return "unknown server"
	}
	if v := m["valkey_version"]; v != "" {
		return "valkey " + v
	}
	return "redis " + m["redis_version"]
}

// Settle waits until at most clients connections are open (the clients
// under test have gone) and used_memory has stopped moving (freed client
// buffers, finished incremental rehashing): two equal readings 100 ms
// apart, within 3 s. It returns the last reading.
func (a *Admin) Settle(ctx context.Context, clients int) (int64, error) {
	const (
		step    = 100 * time.Millisecond
		timeout = 3 * time.Second
	)
	start := time.Now()
	prev := int64(-1)
	for {
		n, err := a.ConnectedClients(ctx)
		if err != nil {
			return 0, err
		}
		used, err := a.UsedMemory(ctx)
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

// SumEach sends "cmd key" for every key, pipelined on a connection of its
// own that is closed afterwards (so its buffers do not linger in
// used_memory), and returns the sum of the integer replies: with STRLEN the
// stored bytes, with DEL the keys deleted.
func (a *Admin) SumEach(ctx context.Context, cmd string, keys []string) (int64, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", a.addr)
	if err != nil {
		return 0, fmt.Errorf("compression: %w", err)
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	} else {
		conn.SetDeadline(time.Now().Add(time.Minute))
	}
	rd := resp.NewReader(conn, 0, resp.Limits{})
	const chunk = 500
	var sum int64
	var buf []byte
	for i := 0; i < len(keys); i += chunk {
		part := keys[i:min(i+chunk, len(keys))]
		buf = buf[:0]
		for _, k := range part {
			buf = resp.AppendBulkString(resp.AppendBulkString(resp.AppendArrayLen(buf, 2), cmd), k)
		}
		if _, err := conn.Write(buf); err != nil {
			return 0, fmt.Errorf("compression: %w", err)
		}
		for range part {
			var v resp.Value
			if err := rd.ReadValue(&v); err != nil {
				return 0, fmt.Errorf("compression: %w", err)
			}
			if v.IsError() {
				return 0, errors.New("compression: " + cmd + ": " + string(v.Bytes()))
			}
			sum += v.Int()
		}
	}
	return sum, nil
}
