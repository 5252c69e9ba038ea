package analyze

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/layout"
)

// Server is what analyze learns about the server (or cluster) it reads.
type Server struct {
	// Kind is "redis" or "valkey"; Version its version ("7.0.15").
	Kind    string `json:"kind"`
	Version string `json:"version"`
	// Allocator is INFO memory's mem_allocator ("jemalloc-5.3.0", "libc").
	Allocator string `json:"allocator"`
	// ListpackEntries and ListpackValue are the hash listpack limits
	// (hash-max-listpack-entries and -value, or their ziplist names on old
	// servers), and ListpackSource says where they came from.
	ListpackEntries int    `json:"listpack_entries"`
	ListpackValue   int    `json:"listpack_value"`
	ListpackSource  string `json:"listpack_source"`
	// FieldTTL says the server expires hash fields (HPEXPIRE: Redis 7.4,
	// Valkey 9).
	FieldTTL bool `json:"field_ttl"`
	// MaxmemoryPolicy is the server's policy; SharedIntegers says small
	// integers are shared objects (no LRU or LFU policy).
	MaxmemoryPolicy string `json:"maxmemory_policy"`
	SharedIntegers  bool   `json:"shared_integers"`
	Cluster         bool   `json:"cluster"`
	// Shards are the servers read, one per cluster shard (one in all for a
	// single server).
	Shards []Shard `json:"shards"`
	// Keys is DBSIZE summed over the shards; UsedMemory used_memory summed
	// over the nodes read.
	Keys       int64 `json:"keys"`
	UsedMemory int64 `json:"used_memory"`
	// Copies is how many servers hold each key: 1 plus the replicas of a
	// shard (the most any shard has).
	Copies int `json:"copies"`

	major, minor int
}

// Shard is one shard of the keyspace: its primary, and the node read.
type Shard struct {
	Primary string `json:"primary"`
	Read    string `json:"read"`
	// ReadRole is "replica" or "primary".
	ReadRole string   `json:"read_role"`
	Replicas []string `json:"replicas,omitempty"`
	Keys     int64    `json:"keys"`
}

// AtLeast reports whether the server's version is major.minor or later.
func (s *Server) AtLeast(major, minor int) bool {
	return s.major > major || s.major == major && s.minor >= minor
}

// MajorMinor is "7.0" for 7.0.15.
func (s *Server) MajorMinor() string { return fmt.Sprintf("%d.%d", s.major, s.minor) }

// costs are the memory model's costs on this server (layout.CostsFor),
// with what analyze learned of its integer sharing.
func (s *Server) costs() layout.Costs {
	c := layout.CostsFor(layout.Server{Kind: s.Kind, Version: s.Version, Allocator: s.Allocator,
		MaxListpackEntries: s.ListpackEntries, MaxListpackValue: s.ListpackValue, FieldTTL: s.FieldTTL, Cluster: s.Cluster})
	c.SharedIntegers = s.SharedIntegers
	return c
}

// Describe names the server for reports: "redis 7.0.15 (jemalloc-5.3.0)".
func (s *Server) Describe() string {
	d := fmt.Sprintf("%s %s (%s)", s.Kind, s.Version, s.Allocator)
	if s.Cluster {
		d += fmt.Sprintf(", a cluster of %d shards", len(s.Shards))
	}
	return d
}

// conns are the connections an analysis uses.
type conns struct {
	// reader sends the keyed reads (TYPE, PTTL, GET...): a replica's
	// client, or on a cluster a cluster client that reads from replicas.
	reader *zipline.Client
	// scanners scan each shard's node, in Server.Shards order.
	scanners []*zipline.Client
	// writer reaches the primaries, for -calibrate only; primaries are a
	// client per primary, to read their used_memory.
	writer    *zipline.Client
	primaries []*zipline.Client
	owned     []*zipline.Client
}

func (c *conns) close() {
	for _, cl := range c.owned {
		cl.Close()
	}
}

// ReplicaMode says where analyze reads: "auto" prefers a replica, "primary"
// reads the primaries, anything else is the address of a replica to read.
const (
	ReplicaAuto    = "auto"
	ReplicaPrimary = "primary"
)

// connect discovers the server opts reach and opens the connections.
// Reads go to a replica when one is reachable (and replica is not
// ReplicaPrimary): on a cluster, each shard's first online replica (or the
// one named); on a single server, the replica named, or the first online
// one its INFO replication lists. With write, it also opens clients of the
// primaries, for -calibrate.
func connect(ctx context.Context, opts zipline.Options, replica string, write bool, log *slog.Logger) (*Server, *conns, error) {
	if replica == "" {
		replica = ReplicaAuto
	}
	opts.Logger = quietLogger(opts.Logger)
	// One connection per server and client, whatever the concurrency and
	// the values' sizes: a scan is meant to be gentle, and -calibrate
	// measures used_memory, which a connection opened midway (a solo one,
	// or the bulk lane with its query buffer of a large value) would move
	// by tens of KB or more.
	opts.SoloConns, opts.BulkThreshold = -1, -1
	node := func(addr string) (*zipline.Client, error) {
		o := opts
		o.Addr, o.Addrs, o.Cluster = addr, nil, zipline.ClusterOff
		o.ReadFrom = zipline.ReadPrimary
		return zipline.New(o)
	}
	cs := &conns{}
	seed, err := zipline.New(withCluster(opts, zipline.ClusterOff))
	if err != nil {
		return nil, nil, err
	}
	cs.owned = append(cs.owned, seed)
	info, err := seed.Info(ctx, "cluster")
	if err != nil {
		cs.close()
		return nil, nil, fmt.Errorf("INFO cluster: %w", err)
	}
	srv := &Server{Cluster: info["cluster_enabled"] == "1", Copies: 1}
	if srv.Cluster {
		err = connectCluster(ctx, opts, seed, replica, write, srv, cs, node, log)
	} else {
		err = connectSingle(ctx, seed, serverLabel(opts), replica, write, srv, cs, node, log)
	}
	if err != nil {
		cs.close()
		return nil, nil, err
	}
	if err := srv.describe(ctx, cs.scanners[0]); err != nil {
		cs.close()
		return nil, nil, err
	}
	for i, sc := range cs.scanners {
		n, err := sc.DBSize(ctx)
		if err != nil {
			cs.close()
			return nil, nil, fmt.Errorf("DBSIZE on %s: %w", srv.Shards[i].Read, err)
		}
		srv.Shards[i].Keys = n
		srv.Keys += n
		mem, err := sc.Info(ctx, "memory")
		if err != nil {
			cs.close()
			return nil, nil, fmt.Errorf("INFO memory on %s: %w", srv.Shards[i].Read, err)
		}
		used, _ := strconv.ParseInt(mem["used_memory"], 10, 64)
		srv.UsedMemory += used
		srv.Copies = max(srv.Copies, 1+len(srv.Shards[i].Replicas))
	}
	return srv, cs, nil
}

// serverLabel names the server opts reach, for reports: its address,
// never its credentials.
func serverLabel(o zipline.Options) string {
	switch {
	case o.Addr != "":
		return o.Addr
	case len(o.Addrs) > 0:
		return o.Addrs[0]
	}
	return zipline.DefaultAddr
}

func withCluster(o zipline.Options, m zipline.ClusterMode) zipline.Options {
	o.Cluster = m
	return o
}

// connectSingle sets up reading a single server (or a replica of it).
func connectSingle(ctx context.Context, seed *zipline.Client, label, replica string, write bool, srv *Server, cs *conns,
	node func(string) (*zipline.Client, error), log *slog.Logger) error {
	repl, err := seed.Info(ctx, "replication")
	if err != nil {
		return fmt.Errorf("INFO replication: %w", err)
	}
	shard := Shard{Primary: label, Read: label, ReadRole: "primary"}
	primary := seed
	if repl["role"] == "slave" {
		// Given a replica: read it, write (for -calibrate) to its primary.
		shard.ReadRole = "replica"
		shard.Primary = net.JoinHostPort(repl["master_host"], repl["master_port"])
		if write {
			if primary, err = node(shard.Primary); err != nil {
				return fmt.Errorf("connecting to the primary %s for -calibrate: %w", shard.Primary, err)
			}
			cs.owned = append(cs.owned, primary)
		}
		cs.reader = seed
	} else {
		shard.Replicas = onlineReplicas(repl)
		cs.reader = seed
		candidates := shard.Replicas
		switch replica {
		case ReplicaPrimary:
			candidates = nil
		case ReplicaAuto:
		default:
			candidates = []string{replica}
		}
		for _, addr := range candidates {
			c, err := node(addr)
			if err == nil {
				err = c.Ping(ctx)
			}
			if err != nil {
				if replica != ReplicaAuto {
					return fmt.Errorf("-replica %s: %w", addr, err)
				}
				log.Info("analyze: replica unreachable; trying the next", "replica", addr, "err", err)
				continue
			}
			cs.owned = append(cs.owned, c)
			cs.reader, shard.Read, shard.ReadRole = c, addr, "replica"
			break
		}
	}
	srv.Shards = []Shard{shard}
	cs.scanners = []*zipline.Client{cs.reader}
	if write {
		cs.writer = primary
		cs.primaries = []*zipline.Client{primary}
	}
	return nil
}

// onlineReplicas lists the replicas a primary's INFO replication shows
// online, as host:port.
func onlineReplicas(repl map[string]string) []string {
	var out []string
	for i := 0; ; i++ {
		line, ok := repl["slave"+strconv.Itoa(i)]
		if !ok {
			break
		}
		f := map[string]string{}
		for _, kv := range strings.Split(line, ",") {
			k, v, _ := strings.Cut(kv, "=")
			f[k] = v
		}
		if f["state"] == "online" {
			out = append(out, net.JoinHostPort(f["ip"], f["port"]))
		}
	}
	return out
}

// connectCluster sets up reading every shard of a cluster.
func connectCluster(ctx context.Context, opts zipline.Options, seed *zipline.Client, replica string, write bool,
	srv *Server, cs *conns, node func(string) (*zipline.Client, error), log *slog.Logger) error {
	shards, err := clusterShards(ctx, seed)
	if err != nil {
		return err
	}
	found := replica == ReplicaAuto || replica == ReplicaPrimary
	for _, sh := range shards {
		read, role := sh.Primary, "primary"
		if replica != ReplicaPrimary && len(sh.Replicas) > 0 {
			read, role = sh.Replicas[0], "replica"
			if slices.Contains(sh.Replicas, replica) {
				read, found = replica, true
			}
		}
		c, err := node(read)
		if err == nil {
			err = c.Ping(ctx)
		}
		if err != nil && role == "replica" && read != replica {
			log.Info("analyze: replica unreachable; reading its primary", "replica", read, "err", err)
			if c != nil {
				c.Close()
			}
			read, role = sh.Primary, "primary"
			c, err = node(read)
		}
		if err != nil {
			return fmt.Errorf("connecting to %s: %w", read, err)
		}
		cs.owned = append(cs.owned, c)
		cs.scanners = append(cs.scanners, c)
		srv.Shards = append(srv.Shards, Shard{Primary: sh.Primary, Read: read, ReadRole: role, Replicas: sh.Replicas})
		if write {
			p := c
			if role != "primary" {
				if p, err = node(sh.Primary); err != nil {
					return fmt.Errorf("connecting to the primary %s for -calibrate: %w", sh.Primary, err)
				}
				cs.owned = append(cs.owned, p)
			}
			cs.primaries = append(cs.primaries, p)
		}
	}
	if !found {
		return fmt.Errorf("-replica %s is not a replica of this cluster", replica)
	}
	ro := withCluster(opts, zipline.ClusterOn)
	if replica != ReplicaPrimary {
		ro.ReadFrom = zipline.ReadPreferReplica
	}
	if cs.reader, err = zipline.New(ro); err != nil {
		return err
	}
	cs.owned = append(cs.owned, cs.reader)
	if write {
		if cs.writer, err = zipline.New(withCluster(opts, zipline.ClusterOn)); err != nil {
			return err
		}
		cs.owned = append(cs.owned, cs.writer)
	}
	return nil
}

// clusterShard is one shard as CLUSTER SHARDS (or CLUSTER NODES) lists it.
type clusterShard struct {
	Primary  string
	Replicas []string
}

// clusterShards lists the cluster's shards that own slots, with their
// online replicas, from CLUSTER SHARDS, or CLUSTER NODES on servers before
// 7.0.
func clusterShards(ctx context.Context, c *zipline.Client) ([]clusterShard, error) {
	v, err := c.Do(ctx, "CLUSTER", "NODES")
	if err != nil {
		return nil, fmt.Errorf("CLUSTER NODES: %w", err)
	}
	text, err := v.AsString()
	if err != nil {
		return nil, fmt.Errorf("CLUSTER NODES: %w", err)
	}
	return parseClusterNodes(text)
}

// parseClusterNodes reads CLUSTER NODES: primaries that own slots, and the
// replicas that follow them and are connected.
func parseClusterNodes(text string) ([]clusterShard, error) {
	type nodeLine struct {
		id, addr, primaryID string
		primary, ok, slots  bool
	}
	var nodes []nodeLine
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		f := strings.Fields(line)
		if len(f) < 8 {
			continue
		}
		addr, _, _ := strings.Cut(f[1], "@")
		flags := strings.Split(f[2], ",")
		n := nodeLine{id: f[0], addr: addr, primaryID: f[3], primary: slices.Contains(flags, "master"),
			ok: f[7] == "connected" && !slices.Contains(flags, "fail") && !slices.Contains(flags, "fail?") &&
				!slices.Contains(flags, "handshake") && !slices.Contains(flags, "noaddr"),
			slots: len(f) > 8}
		nodes = append(nodes, n)
	}
	var out []clusterShard
	for _, p := range nodes {
		if !p.primary || !p.slots {
			continue
		}
		sh := clusterShard{Primary: p.addr}
		for _, r := range nodes {
			if !r.primary && r.primaryID == p.id && r.ok {
				sh.Replicas = append(sh.Replicas, r.addr)
			}
		}
		slices.Sort(sh.Replicas)
		out = append(out, sh)
	}
	if len(out) == 0 {
		return nil, errors.New("CLUSTER NODES lists no primary that owns slots")
	}
	slices.SortFunc(out, func(a, b clusterShard) int { return strings.Compare(a.Primary, b.Primary) })
	return out, nil
}

// describe fills the server's version, allocator, limits and features
// from the node c reads.
func (s *Server) describe(ctx context.Context, c *zipline.Client) error {
	info, err := c.Info(ctx, "server")
	if err != nil {
		return fmt.Errorf("INFO server: %w", err)
	}
	s.Kind, s.Version = "redis", info["redis_version"]
	if v, ok := info["valkey_version"]; ok {
		s.Kind, s.Version = "valkey", v
	}
	parts := strings.SplitN(s.Version, ".", 3)
	if len(parts) >= 2 {
		s.major, _ = strconv.Atoi(parts[0])
		s.minor, _ = strconv.Atoi(parts[1])
	}
	mem, err := c.Info(ctx, "memory")
	if err != nil {
		return fmt.Errorf("INFO memory: %w", err)
	}
	s.Allocator = mem["mem_allocator"]
	s.MaxmemoryPolicy = mem["maxmemory_policy"]
	maxmem, _ := strconv.ParseInt(mem["maxmemory"], 10, 64)
	s.SharedIntegers = maxmem == 0 || !(strings.Contains(s.MaxmemoryPolicy, "lru") || strings.Contains(s.MaxmemoryPolicy, "lfu"))

	s.ListpackEntries, s.ListpackValue, s.ListpackSource = 512, 64, "the defaults (CONFIG GET refused)"
	if cfg, err := c.ConfigGet(ctx, "hash-max-*"); err == nil {
		for _, name := range []string{"listpack", "ziplist"} {
			e, err1 := strconv.Atoi(cfg["hash-max-"+name+"-entries"])
			v, err2 := strconv.Atoi(cfg["hash-max-"+name+"-value"])
			if err1 == nil && err2 == nil {
				s.ListpackEntries, s.ListpackValue = e, v
				s.ListpackSource = "CONFIG GET hash-max-" + name + "-*"
				break
			}
		}
	}
	if v, err := c.Do(ctx, "COMMAND", "INFO", "HPEXPIRE"); err == nil {
		if infos, _ := v.AsSlice(); len(infos) == 1 && !infos[0].IsNil() {
			s.FieldTTL = true
		}
	}
	return nil
}

// quietLogger is l, or a logger that drops everything: the client's own
// reconnect warnings would break the progress bar.
func quietLogger(l *slog.Logger) *slog.Logger {
	if l != nil {
		return l
	}
	return slog.New(slog.DiscardHandler)
}

// datasetMemory is used_memory less what clients' buffers and the script
// cache hold: what keys cost, for -calibrate. busy counts what is not
// settled yet: objects waiting to be freed in the background, and (on
// servers that say so) the memory of a keyspace table being rehashed.
func datasetMemory(ctx context.Context, c *zipline.Client) (mem int64, busy int64, err error) {
	m, err := c.Info(ctx, "memory")
	if err != nil {
		return 0, 0, err
	}
	used, err1 := strconv.ParseInt(m["used_memory"], 10, 64)
	clients, err2 := strconv.ParseInt(m["mem_clients_normal"], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, 0, fmt.Errorf("INFO memory: %w", err)
	}
	scripts, _ := strconv.ParseInt(m["used_memory_scripts"], 10, 64)
	pending, _ := strconv.ParseInt(m["lazyfree_pending_objects"], 10, 64)
	rehashing, _ := strconv.ParseInt(m["mem_overhead_db_hashtable_rehashing"], 10, 64)
	return used - clients - scripts, pending + rehashing, nil
}

// SettledMemory returns used_memory, less client buffers and the script
// cache, summed over cs once it holds still: nothing waits to be freed in
// the background, no keyspace table is being rehashed (where the server
// says), and two readings 110 ms apart (more than the server's cron
// period) agree; it waits at most maxWait, then returns the last reading.
func SettledMemory(ctx context.Context, cs []*zipline.Client, maxWait time.Duration) (int64, error) {
	return settledMemory(ctx, cs, maxWait)
}

func settledMemory(ctx context.Context, cs []*zipline.Client, maxWait time.Duration) (int64, error) {
	read := func() (int64, int64, error) {
		var total, busy int64
		for _, c := range cs {
			m, b, err := datasetMemory(ctx, c)
			if err != nil {
				return 0, 0, err
			}
			total, busy = total+m, busy+b
		}
		return total, busy, nil
	}
	prev, _, err := read()
	if err != nil {
		return 0, err
	}
	deadline := time.Now().Add(maxWait)
	for time.Now().Before(deadline) {
		t := time.NewTimer(110 * time.Millisecond)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return 0, ctx.Err()
		}
		m, busy, err := read()
		if err != nil {
			return 0, err
		}
		if m == prev && busy == 0 {
			return m, nil
		}
		prev = m
	}
	return prev, nil
}
