package zipline

import (
	"context"
	"github.com/ziplinekv/zipline/internal/resp"
	"strings"
)

// infoMap parses INFO's "field:value" lines, skipping section headers.
func infoMap(text string) map[string]string {
	m := make(map[string]string)
	for line := range strings.Lines(text) {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok && !strings.HasPrefix(k, "#") {
			m[k] = v
		}
	}
	return m
}

var decInfo = newDecoder(tsText, func(v resp.Value) (map[string]string, error) {
	text, err := decString.decode(v)
	if err != nil {
		return nil, err
	}
	return infoMap(text), nil
})

func infoCmd(sections []string) command[map[string]string] {
	args := make([]arg, len(sections))
	for i, s := range sections {
		args[i] = str(s)
	}
	return cmd(decInfo, "INFO", args...)
}

func configGetCmd(pattern string) command[map[string]string] {
	return cmd(decStringMap, "CONFIG", str("GET"), str(pattern))
}

func publishCmd(name, channel string, msg []byte) command[int64] {
	return cmd(decInt, name, str(channel), bin(msg))
}

func echoCmd(msg string) command[string] { return cmd(decString, "ECHO", str(msg)) }

// Ping checks that the server answers.
func (c *Client) Ping(ctx context.Context) error {
	_, err := run(ctx, c, cmd(decOK, "PING"))
	return err
}

// Ping queues PING; see Client.Ping.
func (b *Batch) Ping() *Future[bool] { return enqueue(b, cmd(decOK, "PING")) }

// Echo returns msg, sent to the server and back.
func (c *Client) Echo(ctx context.Context, msg string) (string, error) {
	return run(ctx, c, echoCmd(msg))
}

// Echo queues ECHO; see Client.Echo.
func (b *Batch) Echo(msg string) *Future[string] { return enqueue(b, echoCmd(msg)) }

// DBSize returns the number of keys in the selected database; on a
// cluster, in every shard.
func (c *Client) DBSize(ctx context.Context) (int64, error) {
	var total int64
	for _, sh := range c.shards() {
		n, err := run(ctx, sh, cmd(decInt, "DBSIZE"))
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}

// DBSize queues DBSIZE; see Client.DBSize.
func (b *Batch) DBSize() *Future[int64] { return enqueue(b, cmd(decInt, "DBSIZE")) }

// FlushDB deletes every key of the selected database; on a cluster, of
// every shard.
func (c *Client) FlushDB(ctx context.Context) error {
	return c.onEveryShard(ctx, cmd(decOK, "FLUSHDB"))
}

// onEveryShard runs a command on every shard (the one server, on a
// single server).
func (c *Client) onEveryShard(ctx context.Context, cm command[bool]) error {
	for _, sh := range c.shards() {
		if _, err := run(ctx, sh, cm); err != nil {
			return err
		}
	}
	return nil
}

// FlushDB queues FLUSHDB; see Client.FlushDB.
func (b *Batch) FlushDB() *Future[bool] { return enqueue(b, cmd(decOK, "FLUSHDB")) }

// FlushAll deletes every key of every database; on a cluster, of every
// shard.
func (c *Client) FlushAll(ctx context.Context) error {
	return c.onEveryShard(ctx, cmd(decOK, "FLUSHALL"))
}

// FlushAll queues FLUSHALL; see Client.FlushAll.
func (b *Batch) FlushAll() *Future[bool] { return enqueue(b, cmd(decOK, "FLUSHALL")) }

// Info returns the fields of INFO sections ("memory", "server", ...; none
// means the default set) as a map.
func (c *Client) Info(ctx context.Context, sections ...string) (map[string]string, error) {
	return run(ctx, c, infoCmd(sections))
}

// Info queues INFO; see Client.Info.
func (b *Batch) Info(sections ...string) *Future[map[string]string] {
	return enqueue(b, infoCmd(sections))
}

// ConfigGet returns the server configuration parameters matching pattern.
func (c *Client) ConfigGet(ctx context.Context, pattern string) (map[string]string, error) {
	return run(ctx, c, configGetCmd(pattern))
}

// ConfigGet queues CONFIG GET; see Client.ConfigGet.
func (b *Batch) ConfigGet(pattern string) *Future[map[string]string] {
	return enqueue(b, configGetCmd(pattern))
}

// Publish sends msg to channel and returns how many subscribers got it.
// With Compression.Families including PubSub, msg is compressed like a
// stored value, and subscribers expand it (see Client.DecodeValue).
func (c *Client) Publish(ctx context.Context, channel string, msg []byte) (int64, error) {
	return run(ctx, c, publishCmd("PUBLISH", channel, msg))
}

// Publish queues PUBLISH; see Client.Publish.
func (b *Batch) Publish(channel string, msg []byte) *Future[int64] {
	return enqueue(b, publishCmd("PUBLISH", channel, msg))
}
