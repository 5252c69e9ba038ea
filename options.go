package zipline

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"time"
)

// Defaults for Options. Each applies when its field is zero.
const (
	DefaultAddr                = "127.0.0.1:6379"
	DefaultDialTimeout         = 5 * time.Second
	DefaultIOTimeout           = 10 * time.Second
	DefaultHealthCheckInterval = 30 * time.Second
	DefaultReconnectBackoffMin = 10 * time.Millisecond
	DefaultReconnectBackoffMax = time.Second
	DefaultMaxDedicatedConns   = 64
	DefaultMaxIdleDedicated    = 4
	DefaultMaxPendingBytes     = 64 << 20
)

// Options configure a Client. The zero value connects to 127.0.0.1:6379
// with RESP3 (falling back to RESP2) and every default below.
type Options struct {
	// Addr is "host:port", or a socket path when Network is "unix".
	// Default DefaultAddr.
	Addr string
	// Addrs are the seed nodes of a Redis or Valkey Cluster, "host:port"
	// each; any that answers gives the client the whole cluster. Set Addr
	// or Addrs.
	Addrs []string
	// Cluster says whether the servers are a cluster. The default,
	// ClusterAuto, asks the first seed that answers (INFO cluster), so a
	// single address of a cluster node works too.
	Cluster ClusterMode
	// ReadFrom says where a cluster's read-only commands go. Default
	// ReadPrimary: every command to the slot's primary.
	ReadFrom ReadFrom
	// Network is "tcp" (default) or "unix".
	Network string

	// Username and Password authenticate with AUTH (or HELLO ... AUTH). An
	// empty Username with a Password authenticates as the default user.
	Username string
	Password string
	// DB is the database number selected on every connection.
	DB int
	// ClientName is set with CLIENT SETNAME on every connection.
	ClientName string
	// Protocol is 2 or 3. Zero tries RESP3 and falls back to RESP2 on
	// servers that do not support it.
	Protocol int
	// TLSConfig, when set, makes every connection use TLS.
	TLSConfig *tls.Config
	// Dialer, when set, replaces the default net.Dialer (e.g. for a proxy).
	Dialer func(ctx context.Context, network, addr string) (net.Conn, error)

	// DialTimeout bounds connecting plus set-up (HELLO, AUTH, SELECT).
	// Default DefaultDialTimeout.
	DialTimeout time.Duration
	// IOTimeout declares a connection dead when a request written to it has
	// had no reply for this long, or a write blocks this long. It protects
	// against hung servers and dead peers; a command that legitimately runs
	// longer (a slow script) needs a larger value. Per-request limits belong
	// in the request's context, which never closes the shared connection.
	// Default DefaultIOTimeout; negative disables it.
	IOTimeout time.Duration
	// HealthCheckInterval sends a PING on a connection that has been idle
	// this long. Default DefaultHealthCheckInterval; negative disables it.
	HealthCheckInterval time.Duration

	// MaxFlushDelay lets the writer wait up to this long after a write, when
	// other requests are in flight, so that batches grow and the server does
	// fewer reads. Zero (the default) writes as soon as a request arrives,
	// which is best for latency; see bench/RESULTS.md for the trade-off.
	MaxFlushDelay time.Duration

	// ReconnectBackoffMin and ReconnectBackoffMax bound the wait between
	// reconnection attempts, which doubles from min to max, with jitter.
	// Defaults DefaultReconnectBackoffMin and DefaultReconnectBackoffMax.
	ReconnectBackoffMin time.Duration
	ReconnectBackoffMax time.Duration
	// WaitForReconnect makes requests issued while the connection is down
	// wait for it to come back, until their context ends. By default they
	// fail at once with ErrNotConnected, which matches ErrNotSent.
	WaitForReconnect bool

	// MaxPendingBytes bounds the bytes of requests queued or in flight on a
	// connection, so that a slow or unreachable server cannot make callers
	// pile up memory without limit. Past it, callers wait for room until
	// their context ends, or fail at once with ErrPendingLimit if
	// FailWhenPendingFull is set; either way, such a request was never sent
	// (ErrNotSent). A request larger than the bound still goes out, alone.
	// Default DefaultMaxPendingBytes; negative disables it.
	MaxPendingBytes     int64
	FailWhenPendingFull bool

	// MaxDedicatedConns bounds the connections opened for blocking commands
	// (BLPOP, XREAD BLOCK, WAIT...), Watch and Dedicated. A caller waits
	// for a free one, up to its context. Default DefaultMaxDedicatedConns.
	MaxDedicatedConns int
	// MaxIdleDedicated is how many of those are kept open when unused.
	// Default DefaultMaxIdleDedicated; negative keeps none.
	MaxIdleDedicated int

	// ClientCache turns on the client-side cache that Client.Cached reads
	// through: values kept in the process, invalidated by the server.
	// The zero value is off.
	ClientCache ClientCache

	// Subscriptions configure pub/sub subscriptions (Subscribe,
	// PSubscribe, SSubscribe): buffers, overflow, liveness.
	Subscriptions Subscriptions

	// Compression compresses values transparently, byte-compatible with
	// Valkey GLIDE. The zero value is off. See Compression.
	Compression Compression

	// ReplyLimits bound what one reply may contain, so a corrupt or hostile
	// stream fails cleanly. Zero fields take the defaults.
	ReplyLimits ReplyLimits

	// Logger receives connection events: losses, reconnects, refusals.
	// Nil means slog.Default().
	Logger *slog.Logger
	// Hooks wrap the Client's stages: dialing, processing a command, and
	// processing a batch (see Hook). The first is outermost.
	Hooks []Hook
	// OnCommand, if set, is called after every command, batch and
	// transaction completes, on the caller's goroutine, with its name,
	// duration and error. Use it for metrics, tracing or slow-command logs.
	OnCommand func(ctx context.Context, ev CommandEvent)
}

// ClusterMode says whether a Client treats its servers as a cluster.
type ClusterMode uint8

const (
	// ClusterAuto asks the server (INFO cluster).
	ClusterAuto ClusterMode = iota
	// ClusterOn treats the servers as a cluster, routing by slot.
	ClusterOn
	// ClusterOff talks to the one server at Addr (or the first of Addrs
	// that answers), even if it is a cluster node.
	ClusterOff
)

// ReplyLimits bound the replies the parser accepts.
type ReplyLimits struct {
	// MaxBulkLen is the largest string, in bytes. Default 512 MiB (Redis's
	// own proto-max-bulk-len).
	MaxBulkLen int64
	// MaxAggregateLen is the most elements in one array, set or map (a
	// map's keys and values both count). Default 1<<24.
	MaxAggregateLen int64
	// MaxDepth is the deepest nesting of aggregates. Default 64.
	MaxDepth int
}

// CommandEvent describes one completed request, for Options.OnCommand.
type CommandEvent struct {
	// Name is the command name, upper case, or "BATCH" / "TX" / "WATCH".
	Name string
	// Commands is the number of commands sent (1 unless a batch).
	Commands int
	Duration time.Duration
	Err      error
}

// withDefaults returns o with every zero field set to its default.
func (o Options) withDefaults() Options {
	if o.Addr == "" {
		o.Addr = DefaultAddr
	}
	if o.Network == "" {
		o.Network = "tcp"
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = DefaultDialTimeout
	}
	switch {
	case o.IOTimeout == 0:
		o.IOTimeout = DefaultIOTimeout
	case o.IOTimeout < 0:
		o.IOTimeout = 0
	}
	switch {
	case o.HealthCheckInterval == 0:
		o.HealthCheckInterval = DefaultHealthCheckInterval
	case o.HealthCheckInterval < 0:
		o.HealthCheckInterval = 0
	}
	if o.ReconnectBackoffMin <= 0 {
		o.ReconnectBackoffMin = DefaultReconnectBackoffMin
	}
	if o.ReconnectBackoffMax <= 0 {
		o.ReconnectBackoffMax = DefaultReconnectBackoffMax
	}
	o.ReconnectBackoffMax = max(o.ReconnectBackoffMax, o.ReconnectBackoffMin)
	switch {
	case o.MaxPendingBytes == 0:
		o.MaxPendingBytes = DefaultMaxPendingBytes
	case o.MaxPendingBytes < 0:
		o.MaxPendingBytes = 0
	}
	if o.MaxDedicatedConns <= 0 {
		o.MaxDedicatedConns = DefaultMaxDedicatedConns
	}
	switch {
	case o.MaxIdleDedicated == 0:
		o.MaxIdleDedicated = DefaultMaxIdleDedicated
	case o.MaxIdleDedicated < 0:
		o.MaxIdleDedicated = 0
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Subscriptions.Buffer <= 0 {
		o.Subscriptions.Buffer = DefaultSubscriptionBuffer
	}
	switch {
	case o.Subscriptions.PingInterval == 0:
		o.Subscriptions.PingInterval = DefaultSubscriptionPing
	case o.Subscriptions.PingInterval < 0:
		o.Subscriptions.PingInterval = 0
	}
	return o
}
