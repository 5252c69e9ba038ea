package zipline

import (
	"context"
	"strings"

	"github.com/ziplinekv/zipline/internal/resp"
)

// The server and connection commands. Each is defined once; go generate
// makes its Client and Batch methods (commands_gen.go). Those that concern
// the whole keyspace run on every shard of a cluster (hand-written Client
// methods, client=manual); the others go to whichever node the cluster
// picks.

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

// strArgs is each string as an argument.
func strArgs(ss []string) []arg {
	args := make([]arg, len(ss))
	for i, s := range ss {
		args[i] = str(s)
	}
	return args
}

// Ping checks that the server answers.
//
//zipline:twins Ping client=error
func pingCmd() command[bool] { return cmd(decOK, specPING) }

// Echo returns msg, sent to the server and back.
//
//zipline:twins Echo
func echoCmd(msg string) command[string] { return cmd(decString, specECHO, str(msg)) }

// Info returns the fields of INFO sections ("memory", "server", ...; none
// means the default set) as a map.
//
//zipline:twins Info
func infoCmd(sections ...string) command[map[string]string] {
	return cmd(decInfo, specINFO, strArgs(sections)...)
}

// ConfigGet returns the server configuration parameters matching pattern.
//
//zipline:twins ConfigGet
func configGetCmd(pattern string) command[map[string]string] {
	return cmd(decStringMap, specCONFIG_GET, str(pattern))
}

// ConfigSet sets a server configuration parameter.
//
//zipline:twins ConfigSet client=error
func configSetCmd(parameter, value string) command[bool] {
	return cmd(decOK, specCONFIG_SET, str(parameter), str(value))
}

// ConfigResetStat resets the statistics INFO reports.
//
//zipline:twins ConfigResetStat client=error
func configResetStatCmd() command[bool] { return cmd(decOK, specCONFIG_RESETSTAT) }

// ConfigRewrite writes the running configuration to the server's
// configuration file.
//
//zipline:twins ConfigRewrite client=error
func configRewriteCmd() command[bool] { return cmd(decOK, specCONFIG_REWRITE) }

// DBSize returns the number of keys in the selected database; on a
// cluster, in every shard.
func (c *Client) DBSize(ctx context.Context) (int64, error) {
	var total int64
	for _, sh := range c.shards() {
		n, err := run(ctx, sh, dbSizeCmd())
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}

// DBSize queues DBSIZE; in a batch on a cluster it counts one node's keys.
//
//zipline:twins DBSize client=manual
func dbSizeCmd() command[int64] { return cmd(decInt, specDBSIZE) }

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

// FlushDB deletes every key of the selected database; on a cluster, of
// every shard.
func (c *Client) FlushDB(ctx context.Context) error { return c.onEveryShard(ctx, flushDBCmd()) }

// FlushDB queues FLUSHDB; in a batch on a cluster it flushes one node.
//
//zipline:twins FlushDB client=manual
func flushDBCmd() command[bool] { return cmd(decOK, specFLUSHDB) }

// FlushDBAsync is FlushDB, the memory reclaimed in the background (ASYNC).
func (c *Client) FlushDBAsync(ctx context.Context) error {
	return c.onEveryShard(ctx, flushDBAsyncCmd())
}

// FlushDBAsync queues FLUSHDB ASYNC.
//
//zipline:twins FlushDBAsync client=manual
func flushDBAsyncCmd() command[bool] { return cmd(decOK, specFLUSHDB, str("ASYNC")) }

// FlushAll deletes every key of every database; on a cluster, of every
// shard.
func (c *Client) FlushAll(ctx context.Context) error { return c.onEveryShard(ctx, flushAllCmd()) }

// FlushAll queues FLUSHALL; in a batch on a cluster it flushes one node.
//
//zipline:twins FlushAll client=manual
func flushAllCmd() command[bool] { return cmd(decOK, specFLUSHALL) }

// FlushAllAsync is FlushAll, the memory reclaimed in the background.
func (c *Client) FlushAllAsync(ctx context.Context) error {
	return c.onEveryShard(ctx, flushAllAsyncCmd())
}

// FlushAllAsync queues FLUSHALL ASYNC.
//
//zipline:twins FlushAllAsync client=manual
func flushAllAsyncCmd() command[bool] { return cmd(decOK, specFLUSHALL, str("ASYNC")) }

// Publish sends msg to channel and returns how many subscribers got it.
// With Compression.Families including PubSub, msg is compressed like a
// stored value, and subscribers expand it (see Client.DecodeValue).
//
//zipline:twins Publish
func publishCmd(channel string, msg []byte) command[int64] {
	return cmd(decInt, specPUBLISH, str(channel), bin(msg))
}

// SPublish is Publish to a sharded channel (SPUBLISH, Redis and Valkey 7):
// on a cluster it goes to the node that owns the channel's slot.
//
//zipline:twins SPublish
func spublishCmd(channel string, msg []byte) command[int64] {
	return cmd(decInt, specSPUBLISH, keyArg(channel), bin(msg))
}
