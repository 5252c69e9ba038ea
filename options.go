package zipline

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/ziplinekv/zipline/codec"
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
	DefaultFailoverWait        = 200 * time.Millisecond
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
	// Sentinel, when its MasterName is set, reaches the primary that Redis
	// Sentinel names (and its replicas, for reads, per ReadFrom), following
	// it through failovers; Addr and Addrs are then unused. See Sentinel.
	Sentinel Sentinel
	// ReadFrom says where read-only commands go on a cluster or a Sentinel
	// group. Default ReadPrimary: every command to the primary.
	ReadFrom ReadFrom
	// AvailabilityZone is the zone the application runs in, for
	// ReadAZAffinity: reads go to replicas whose server says it is in this
	// zone (Valkey 8's availability-zone setting) before any other.
	AvailabilityZone string
	// Network is "tcp" (default) or "unix".
	Network string

	// Username and Password authenticate with AUTH (or HELLO ... AUTH). An
	// empty Username with a Password authenticates as the default user.
	Username string
	Password string
	// Credentials, instead of Username and Password, gives credentials
	// that change: it is asked for every new connection, and before what
	// it returned expires, for every open connection to authenticate again
	// in place, so that a rotation drops no connection and fails no call
	// (see CredentialsFunc). A URL's credentials are static ones.
	Credentials CredentialsFunc
	// DB is the database number selected on every connection. A cluster
	// has numbered databases on Valkey 9.0 and later (cluster-databases);
	// on one without, New fails with ErrNoDB.
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
	// LazyConnect makes New return at once, without a connection: the
	// Client connects in the background, retrying with the reconnect
	// backoff, and calls made meanwhile wait for it within their context
	// (as go-redis's clients do), so a service may start before its
	// server. By default New connects first and reports a wrong address or
	// password at once, which a service that cannot run without its cache
	// wants; with LazyConnect those show as calls that time out, and in
	// the log.
	LazyConnect bool
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
	// which is best for latency: a delay trades latency for server CPU.
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
	// FailoverWait bounds how long a request to a cluster waits for a shard
	// that cannot serve it: its primary unreachable (killed, its replica
	// not promoted yet) or the cluster down. Past it the request fails with
	// ErrShardDown, which matches ErrNotSent. The bound keeps a service's
	// workers from piling up on one dead shard while the others serve; a
	// graceful failover (CLUSTER FAILOVER) never meets it, since the
	// primary answers throughout. Each request waits a share of it drawn at
	// random between three quarters and all of it, so that the callers a
	// dead shard held do not all come back, and pile up again, at once.
	// Default DefaultFailoverWait; negative waits until the request's
	// context ends.
	FailoverWait time.Duration

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
	// SoloConns is how many more connections to each server may open, each
	// lent to one caller at a time while callers are few. A caller alone on
	// a connection writes its command and reads the reply on its own
	// goroutine, as on a pool's connection, rather than wait for the shared
	// connection's reader to hand the reply over; under load the solo
	// connections are all lent out and every other caller shares the
	// pipelined connection. They open one by one as callers overlap (a
	// lone caller opens none), and close, the last opened first, once
	// unused for a minute; blocking commands, Watch and Dedicated never
	// use them. They are for one server: none open on a cluster (callers
	// spread over its shards already), with ClientCache on (its
	// invalidations arrive on the shared connection, which alone orders
	// them before every later reply) or to a Sentinel group's servers (on
	// one connection a failover fails only the calls in flight).
	//
	// Zero (the default) or negative opens none: measured on 2 cores at 1
	// and 8 callers, the shared connection alone did as well at one caller
	// and 8-45 % better at eight, quiet or beside CPU-bound processes
	// (bench/RESULTS.md section 1). At most 64.
	SoloConns int
	// BulkThreshold is the size in bytes from which a request, or a
	// command on a key whose last request or reply was that large, travels
	// on one more connection per server, the bulk lane, so that small
	// requests never wait behind large values in the shared connection's
	// stream. The lane opens when the first such request comes. Default
	// DefaultBulkThreshold (64 KiB); negative keeps every request on the
	// shared connection. With ClientCache on there is no bulk lane: the
	// server's invalidations are ordered only on the shared connection.
	BulkThreshold int

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
	switch {
	case o.FailoverWait == 0:
		o.FailoverWait = DefaultFailoverWait
	case o.FailoverWait < 0:
		o.FailoverWait = 0
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
	case o.BulkThreshold == 0:
		o.BulkThreshold = DefaultBulkThreshold
	case o.BulkThreshold < 0:
		o.BulkThreshold = 0
	}
	o.SoloConns = max(o.SoloConns, 0)
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

// ReadFrom says where read-only commands go on a cluster (each shard's
// primary or replicas) or a Sentinel group (the primary or its replicas).
type ReadFrom uint8

const (
	// ReadPrimary sends every command to the slot's primary (the default):
	// reads see every acknowledged write.
	ReadPrimary ReadFrom = iota
	// ReadPreferReplica sends a shard's reads to one of its replicas, the
	// same one for as long as it is connected (each Client draws which at
	// random, so an application's clients spread over the replicas), then
	// to the next replica that is, and to the primary when none is.
	// Replicas lag, so a read may miss a recent write; but one client's
	// reads of a key never go back in time by moving to a replica further
	// behind, except when its replica goes down.
	ReadPreferReplica
	// ReadReplicaRoundRobin spreads reads over every connected replica of
	// the shard in turn, and sends them to the primary when none is
	// connected. A client gets the read capacity of all the replicas, but
	// two reads in a row may come from replicas at different points of the
	// replication stream, so a value can appear and then vanish.
	ReadReplicaRoundRobin
	// ReadLowestLatency sends reads to whichever of the slot's nodes,
	// primary included, answered health checks fastest.
	ReadLowestLatency
	// ReadAZAffinity spreads reads in turn over the replicas in the
	// client's zone (Options.AvailabilityZone, matched against each
	// server's availability-zone setting, Valkey 8 and later), then over
	// the other replicas when none there is connected, then sends them to
	// the primary: in a cloud, traffic within a zone is faster and free.
	// On a cluster whose nodes report their zones in CLUSTER SHARDS
	// (Valkey 9.1), the client connects only to the replicas in its zone
	// where a shard has any, so reads fall back to the primary while those
	// are down.
	ReadAZAffinity
)

// Sentinel configures a Client that reaches its servers through Redis
// Sentinel (or Valkey's): the sentinels name the primary of a group, and
// the Client follows it through failovers. Every connection to a data
// node uses the Options' credentials, database and TLS; the sentinels
// have credentials of their own.
//
// The Client asks the sentinels for the primary, connects to it, and
// subscribes to +switch-master on one sentinel (another when it fails),
// asking them again every DefaultSentinelRefresh and whenever a data
// connection is lost. After every reconnect a connection checks that its
// server is the primary (ROLE) and that the sentinels still name it, so a
// demoted or restarted old primary never takes a write. Requests that
// could not be sent (the primary down) wait for the new primary within
// their context and go there; those lost with a connection are never
// retried (they may have run). On Valkey 8 and later the primary
// connection says CLIENT CAPA redirect, and a -REDIRECT reply (the server
// was demoted) is followed to the primary it names.
type Sentinel struct {
	// MasterName is the name the sentinels know the group by. Setting it
	// turns Sentinel on.
	MasterName string
	// Addrs are sentinels, "host:port" each. Any that answers names the
	// primary and the other sentinels, which the Client then knows too.
	Addrs []string
	// Username and Password authenticate with the sentinels (their own
	// requirepass or ACL), which may differ from the data nodes'.
	Username string
	Password string
}

// DefaultSentinelRefresh is how often a Sentinel Client asks the sentinels
// for its group (primary, replicas, sentinels) besides the +switch-master
// messages it follows.
const DefaultSentinelRefresh = 10 * time.Second

// Subscriptions configure a Client's pub/sub subscriptions. The zero value
// gives every default.
type Subscriptions struct {
	// Buffer is how many messages each subscription holds for a consumer
	// that is behind. Default DefaultSubscriptionBuffer.
	Buffer int
	// Overflow says what a full buffer does with one more message. Default
	// DropOldest.
	Overflow Overflow
	// PingInterval is the liveness probe of a subscriber connection: a PING
	// after this much silence, which must be answered within the same time,
	// so a dead connection is found within twice the interval and
	// reconnected (a gap is reported). Default DefaultSubscriptionPing;
	// negative turns it off.
	PingInterval time.Duration
}

// Subscription defaults.
const (
	DefaultSubscriptionBuffer = 1024
	DefaultSubscriptionPing   = 15 * time.Second
)

// Overflow is a subscription's policy for a message that finds its buffer
// full. Every message it drops is counted (SubscriptionStats.Dropped) and
// reported as a gap on Messages.
type Overflow uint8

const (
	// DropOldest drops the oldest message held, keeping the newest.
	DropOldest Overflow = iota
	// DropNewest drops the message that arrived.
	DropNewest
	// CloseSubscription ends the subscription: Messages yields
	// ErrSlowConsumer and stops.
	CloseSubscription
)

// ClientCache configures the client-side cache: values read through
// Client.Cached are kept in the process and served from there until the
// server says they changed (CLIENT TRACKING, which needs RESP3) or they
// expire. The zero value turns it off.
type ClientCache struct {
	// MaxBytes bounds the whole cache, every connection's entries
	// together: past it, the least recently used entries go. Zero turns
	// the cache off. The cache is split into 64 shards of MaxBytes/64
	// each, so that hits on many cores do not share a lock; a value
	// larger than a shard's share is read from the server every time.
	MaxBytes int64
	// MaxStaleness bounds how long an entry is served without proof that
	// its tracking connection is alive (a reply read on it): past it, reads
	// go to the server until the connection answers again. Connections
	// that are lost drop their entries at once regardless. Default
	// DefaultMaxStaleness.
	MaxStaleness time.Duration
	// Broadcast tracks in BCAST mode: the server invalidates every key
	// under Prefixes that anyone changes, whether this client read it or
	// not, instead of the keys this client read (OPTIN, the default).
	Broadcast bool
	// Prefixes limit broadcast tracking (and so what may be cached) to keys
	// under them; empty means every key.
	Prefixes []string
	// StoreExpanded keeps values expanded when compression is on, trading
	// memory for the time to expand a value on every hit. By default entries
	// are kept as stored, compressed, so a MiB holds about twice as many
	// JSON values.
	StoreExpanded bool
}

// DefaultMaxStaleness is ClientCache.MaxStaleness's default: a connection's
// health-check interval and then some, so an idle but healthy connection
// keeps serving.
const DefaultMaxStaleness = DefaultHealthCheckInterval + 10*time.Second

// Compression configures transparent value compression, byte-compatible
// with Valkey GLIDE's: a value written by one can be read by the other. The
// zero value turns compression off.
//
// Values at least MinSize long are compressed when that makes them smaller
// (header included), and stored with GLIDE's 5-byte header; reads expand
// anything carrying a valid header, whichever backend wrote it, and return
// everything else as stored, so data written before compression was turned
// on, or by other clients, still reads.
type Compression struct {
	// Backend is codec.Zstd, codec.LZ4 or codec.ZstdDict; zero turns
	// compression off. codec.ZstdDict (zstd with a trained dictionary, for
	// values of a few hundred bytes) is a zipline extension: GLIDE clients
	// read its values as the stored bytes, and it needs Dictionary.
	Backend codec.Backend
	// Level is the backend's level in GLIDE's numbering: zstd -131072..22,
	// LZ4 -128..12 (above 0 is high compression, below 0 accelerated).
	// Zero is the backend's default (zstd 3, LZ4 0). See codec.WithLevel.
	Level int
	// MinSize is the smallest value compressed. Default 64, at least 6.
	MinSize int
	// MaxDecompressedSize bounds a value read back: a larger one fails with
	// codec.ErrTooLarge rather than exhaust memory. Default 512 MiB.
	MaxDecompressedSize int64
	// Dictionary is a zstd dictionary (from codec.TrainDictionary or
	// "zstd --train"). It is required for codec.ZstdDict, and lets a Client
	// of any backend read values written with it; values written with
	// another dictionary, or read by a Client without one, read as the
	// stored bytes. Values cannot be read back without it, so store it with
	// the application's configuration. Empty means none. See
	// codec.WithDictionary.
	Dictionary []byte
	// Families extends compression beyond GLIDE's string commands. The
	// default, zero, is exactly GLIDE's set, so a fleet mixing zipline and
	// GLIDE clients never meets a compressed hash field or list element that
	// GLIDE would return still compressed.
	Families Families
	// Rules scope compression by key: the first rule whose Pattern matches
	// a key decides how values written under it are stored (never
	// compressed, or compressed with its own backend, level or minimum
	// size). Keys no rule matches are compressed as the fields above say,
	// as GLIDE compresses every key; nil rules are that default. Reads
	// expand every valid envelope whatever the rules, so values written
	// under other rules, or by other clients, still read.
	//
	// The rules also decide where the commands that work on stored bytes
	// are safe. On a key no rule keeps plain ("in the compressed scope"),
	// STRLEN, GETRANGE, SUBSTR, GETBIT, BITCOUNT, BITPOS and HSTRLEN are
	// answered from the expanded value (the client reads it and computes
	// what the server would have on the plaintext), APPEND, SETRANGE,
	// SETBIT, BITFIELD, BITOP, LCS, DELIFEQ, LPOS and SET ... IFEQ are
	// refused before sending, so are RENAME, COPY and LMOVE from such a key
	// into one a rule keeps plain, and so are scripts and functions (EVAL,
	// EVALSHA, FCALL and their _RO forms) given such a key: what a script
	// does with a stored value would otherwise depend on whether that value
	// was long enough to be compressed. On a key a Never rule matches they
	// all run as on any server.
	Rules []CompressionRule
	// WritePlain writes every value uncompressed while still expanding
	// compressed values on read, and keeps the rules' refusals: the first
	// step of turning compression on in a fleet (every reader must expand
	// before any writer compresses) and of turning it off (writers stop
	// compressing; "zipline migrate -decompress -match" then rewrites what is
	// stored). See "Rolling compression out" in the README.
	WritePlain bool
}

// CompressionRule is one rule of Compression.Rules.
type CompressionRule struct {
	// Pattern is a glob, as KEYS and SCAN MATCH take it: * matches any
	// run of bytes, ? one byte, [abc], [a-z] and [^a] one of a set, and \
	// quotes the next byte. It is matched against a value's key; for
	// PUBLISH and SPUBLISH (Families: PubSub), against the channel.
	Pattern string
	// Never keeps the values of matching keys plain, and lets the commands
	// that work on stored bytes, and scripts, run on them.
	Never bool
	// Backend, Level and MinSize override the Compression's own for
	// matching keys; zero keeps the Compression's. Not with Never.
	Backend codec.Backend
	Level   int
	MinSize int
}

// Families are command families whose values are compressed in addition
// to the string commands.
type Families uint8

const (
	// Hashes: HSET, HSETNX, HMSET, HSETEX values; HGET, HMGET, HGETALL,
	// HVALS, HGETDEL, HGETEX, HRANDFIELD ... WITHVALUES and HSCAN read.
	Hashes Families = 1 << iota
	// Lists: LPUSH, RPUSH, LPUSHX, RPUSHX, LSET, LINSERT, LREM elements;
	// LRANGE, LINDEX, LPOP, RPOP, LMPOP, BLPOP, BRPOP, BLMPOP, LMOVE, BLMOVE,
	// RPOPLPUSH, BRPOPLPUSH read.
	Lists
	// PubSub: PUBLISH and SPUBLISH messages. A Subscription (Subscribe,
	// PSubscribe, SSubscribe) from a Client with this family on expands the
	// messages it receives; a subscriber elsewhere expands them with
	// Client.DecodeValue (or codec.Codec.Decode).
	PubSub
)

// Codec returns the codec these settings describe, or nil when compression
// is off. Packages that encode values themselves (such as layout) use it so
// that their settings mean exactly what they mean on a Client.
func (cfg Compression) Codec() (*codec.Codec, error) {
	if cfg.Backend == 0 {
		return nil, nil
	}
	opts := []codec.Option{codec.WithLevel(cfg.Level)}
	if cfg.MinSize != 0 {
		opts = append(opts, codec.WithMinSize(cfg.MinSize))
	}
	if cfg.MaxDecompressedSize != 0 {
		opts = append(opts, codec.WithMaxDecompressedSize(cfg.MaxDecompressedSize))
	}
	if len(cfg.Dictionary) != 0 {
		opts = append(opts, codec.WithDictionary(cfg.Dictionary))
	}
	// The error is the codec's; callers say which settings it came from.
	return codec.New(cfg.Backend, opts...)
}

func (o Options) validate() error {
	if o.Protocol != 0 && o.Protocol != 2 && o.Protocol != 3 {
		return fmt.Errorf("zipline: Options.Protocol must be 0, 2 or 3, not %d", o.Protocol)
	}
	if o.DB < 0 {
		return fmt.Errorf("zipline: Options.DB must not be negative")
	}
	if o.Credentials != nil && (o.Username != "" || o.Password != "") {
		return fmt.Errorf("zipline: Options.Credentials replaces Username and Password: set one or the other")
	}
	if o.Sentinel.MasterName != "" {
		if len(o.Sentinel.Addrs) == 0 {
			return fmt.Errorf("zipline: Options.Sentinel needs the sentinels' Addrs")
		}
		if o.Cluster == ClusterOn {
			return fmt.Errorf("zipline: Options.Sentinel and ClusterOn do not go together")
		}
	} else if len(o.Sentinel.Addrs) != 0 {
		return fmt.Errorf("zipline: Options.Sentinel needs a MasterName")
	}
	return nil
}
