package zipline

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ParseURL returns the Options a URL describes. It accepts the forms
// go-redis (ParseURL, ParseClusterURL, ParseFailoverURL) and rueidis
// accept:
//
//	redis://[[user][:password]@]host[:port][,host[:port]...][/db][?option=value...]
//	rediss://...                  the same over TLS, verifying host
//	valkey://..., valkeys://...   synonyms of redis:// and rediss://
//	unix://[[user][:password]@]/path/to/socket[?db=N&option=value...]
//
// The host defaults to localhost and the port to 6379. Several hosts,
// separated by commas or given with addr= options, fill Addrs: the seed
// nodes of a cluster. With master_name (go-redis's failover URL; rueidis's
// master_set too) the hosts are sentinels instead, as in go-redis: the
// URL's user and password are the sentinels' (Sentinel.Username,
// Password), and the username= and password= options the data nodes'.
//
// Options that set something:
//
//	db                     the database number (also the URL path)
//	protocol               2 or 3
//	client_name            CLIENT SETNAME
//	dial_timeout           DialTimeout
//	io_timeout             IOTimeout; read_timeout and write_timeout, as
//	                       go-redis spells it, set it too (the larger wins)
//	health_check_interval  HealthCheckInterval
//	max_pending_bytes      MaxPendingBytes
//	lazy_connect           LazyConnect (true, false, 1 or 0)
//	skip_verify            rediss only: do not verify the server certificate
//	addr                   another host[:port] (repeatable)
//	master_name,           Sentinel.MasterName: the hosts are sentinels
//	master_set
//	username, password     with master_name: the data nodes' credentials
//	read_from              ReadFrom: primary, prefer_replica, replica
//	                       (round robin), lowest_latency or az_affinity
//	availability_zone      AvailabilityZone
//	read_only,             go-redis's replica reads (true): ReadFrom
//	route_randomly,        ReadReplicaRoundRobin, ReadReplicaRoundRobin,
//	route_by_latency,      ReadLowestLatency and ReadReplicaRoundRobin
//	replica_only           (zipline still sends writes to the primary)
//
// go-redis's options for its connection pools, retries and redirects mean
// nothing to a client that pipelines every call on one connection per
// server and retries only what provably did not run. They are accepted,
// so that an existing REDIS_URL works unchanged, and ignored, whatever
// their value: pool_size, pool_fifo, pool_timeout, min_idle_conns,
// max_idle_conns, max_active_conns, max_concurrent_dials,
// conn_max_idle_time, idle_timeout, conn_max_lifetime, max_conn_age,
// conn_max_lifetime_jitter, pipeline_pool_size, pipeline_read_buffer_size,
// pipeline_write_buffer_size, max_retries, min_retry_backoff,
// max_retry_backoff, max_redirects, dialer_retries, dialer_retry_timeout,
// context_timeout_enabled, route_by_latency_tolerance,
// use_disconnected_replicas, failing_timeout_seconds, disableIdentity,
// identitySuffix, unstable_resp3.
//
// Durations are Go durations ("500ms") or whole seconds; zero or negative
// turns the timeout off, as go-redis does. An unknown option is an error
// that names it, so a typo is not silently ignored. Passwords never appear
// in its errors.
func ParseURL(rawURL string) (Options, error) {
	var o Options
	err := o.FromURL(rawURL)
	return o, err
}

// ignoredURLOptions are go-redis's URL options that configure what zipline
// does not have (see ParseURL).
var ignoredURLOptions = []string{
	"pool_size", "pool_fifo", "pool_timeout", "min_idle_conns", "max_idle_conns", "max_active_conns",
	"max_concurrent_dials", "conn_max_idle_time", "idle_timeout", "conn_max_lifetime", "max_conn_age",
	"conn_max_lifetime_jitter", "pipeline_pool_size", "pipeline_read_buffer_size", "pipeline_write_buffer_size",
	"max_retries", "min_retry_backoff", "max_retry_backoff", "max_redirects", "dialer_retries",
	"dialer_retry_timeout", "context_timeout_enabled", "route_by_latency_tolerance",
	"use_disconnected_replicas", "failing_timeout_seconds", "disableIdentity", "identitySuffix", "unstable_resp3",
}

// readFromNames are read_from's values.
var readFromNames = map[string]ReadFrom{
	"primary": ReadPrimary, "prefer_replica": ReadPreferReplica, "replica": ReadReplicaRoundRobin,
	"lowest_latency": ReadLowestLatency, "az_affinity": ReadAZAffinity,
}

// FromURL sets the options rawURL describes (see ParseURL) on o, leaving
// the others as they are: a URL from configuration and settings made in
// code combine.
func (o *Options) FromURL(rawURL string) error {
	rawURL, moreHosts := splitHosts(rawURL)
	u, err := url.Parse(rawURL)
	if err != nil {
		// url's errors quote the whole URL, password included.
		return errors.New("zipline: invalid URL")
	}
	q := queryOptions{v: u.Query()}
	master := q.string("master_name")
	if set := q.string("master_set"); master == "" {
		master = set
	}
	if u.User != nil {
		user, pass := u.User.Username(), ""
		pass, _ = u.User.Password()
		if master != "" {
			o.Sentinel.Username, o.Sentinel.Password = user, pass
		} else {
			o.Username, o.Password = user, pass
		}
	}
	switch u.Scheme {
	case "redis", "rediss", "valkey", "valkeys":
		hosts, err := urlHosts(u.Host, append(moreHosts, q.all("addr")...))
		if err != nil {
			return err
		}
		o.Network, o.Addr, o.Addrs = "tcp", hosts[0], nil
		switch {
		case master != "":
			o.Addr, o.Sentinel.MasterName, o.Sentinel.Addrs = "", master, hosts
		case len(hosts) > 1:
			o.Addr, o.Addrs = "", hosts
		}
		switch path := strings.Trim(u.Path, "/"); {
		case path == "":
		case strings.Contains(path, "/"):
			return fmt.Errorf("zipline: invalid URL path %q", u.Path)
		default:
			if o.DB, err = strconv.Atoi(path); err != nil || o.DB < 0 {
				return fmt.Errorf("zipline: invalid database number %q in the URL path", path)
			}
		}
		if u.Scheme == "rediss" || u.Scheme == "valkeys" {
			host, _, _ := net.SplitHostPort(hosts[0])
			o.TLSConfig = &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
			if q.bool("skip_verify") {
				o.TLSConfig.InsecureSkipVerify = true
			}
		}
	case "unix":
		if strings.TrimSpace(u.Path) == "" {
			return errors.New("zipline: a unix:// URL needs a socket path")
		}
		if master != "" {
			return errors.New("zipline: master_name needs redis:// sentinels, not a unix socket")
		}
		o.Network, o.Addr, o.Addrs = "unix", u.Path, nil
	default:
		return fmt.Errorf("zipline: invalid URL scheme %q: want redis, rediss, valkey, valkeys or unix", u.Scheme)
	}
	if master != "" {
		if q.has("username") {
			o.Username = q.string("username")
		}
		if q.has("password") {
			o.Password = q.string("password")
		}
	}
	if q.has("db") {
		o.DB = q.int("db")
	}
	if q.has("protocol") {
		o.Protocol = q.int("protocol")
	}
	if q.has("client_name") {
		o.ClientName = q.string("client_name")
	}
	if q.has("dial_timeout") {
		o.DialTimeout = q.duration("dial_timeout")
	}
	for _, name := range []string{"io_timeout", "read_timeout", "write_timeout"} {
		if q.has(name) {
			if d := q.duration(name); d < 0 || d > o.IOTimeout {
				o.IOTimeout = d
			}
		}
	}
	if q.has("health_check_interval") {
		o.HealthCheckInterval = q.duration("health_check_interval")
	}
	if q.has("max_pending_bytes") {
		o.MaxPendingBytes = int64(q.int("max_pending_bytes"))
	}
	if q.has("lazy_connect") {
		o.LazyConnect = q.bool("lazy_connect")
	}
	if q.has("availability_zone") {
		o.AvailabilityZone = q.string("availability_zone")
	}
	for _, name := range []string{"read_only", "route_randomly", "replica_only"} {
		if q.has(name) && q.bool(name) {
			o.ReadFrom = ReadReplicaRoundRobin
		}
	}
	if q.has("route_by_latency") && q.bool("route_by_latency") {
		o.ReadFrom = ReadLowestLatency
	}
	if q.has("read_from") {
		name := q.string("read_from")
		rf, ok := readFromNames[name]
		if !ok && q.err == nil {
			q.err = fmt.Errorf("zipline: URL option read_from: %q is not primary, prefer_replica, replica, lowest_latency or az_affinity", name)
		}
		o.ReadFrom = rf
	}
	for _, name := range ignoredURLOptions {
		q.all(name)
	}
	if q.err != nil {
		return q.err
	}
	if rest := q.remaining(); len(rest) > 0 {
		return fmt.Errorf("zipline: unknown URL option %s", strings.Join(rest, ", "))
	}
	return nil
}

// splitHosts takes the hosts after the first out of a URL whose host part
// lists several, separated by commas, which url.Parse refuses.
func splitHosts(rawURL string) (string, []string) {
	scheme, rest, ok := strings.Cut(rawURL, "://")
	if !ok {
		return rawURL, nil
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	authority, tail := rest[:end], rest[end:]
	at := strings.LastIndexByte(authority, '@') + 1
	hosts := strings.Split(authority[at:], ",")
	if len(hosts) == 1 {
		return rawURL, nil
	}
	return scheme + "://" + authority[:at] + hosts[0] + tail, hosts[1:]
}

// urlHosts gives every host a port (6379 unless said) and a name
// (localhost).
func urlHosts(host string, more []string) ([]string, error) {
	var out []string
	for _, h := range append([]string{host}, more...) {
		if h == "" && len(out) > 0 {
			continue
		}
		name, port := h, "6379"
		if strings.HasPrefix(h, "[") { // [IPv6] or [IPv6]:port
			end := strings.IndexByte(h, ']')
			if end < 0 {
				return nil, fmt.Errorf("zipline: invalid host %q in the URL", h)
			}
			name = h[1:end]
			if rest := h[end+1:]; rest != "" {
				if !strings.HasPrefix(rest, ":") {
					return nil, fmt.Errorf("zipline: invalid host %q in the URL", h)
				}
				port = rest[1:]
			}
		} else if i := strings.LastIndexByte(h, ':'); i >= 0 {
			name, port = h[:i], h[i+1:]
		}
		if name == "" {
			name = "localhost"
		}
		if n, err := strconv.Atoi(port); err != nil || n <= 0 || n > 65535 {
			return nil, fmt.Errorf("zipline: invalid port %q in the URL", port)
		}
		out = append(out, net.JoinHostPort(name, port))
	}
	return out, nil
}

// queryOptions reads a URL's query options, remembering the first error and
// which options were not read.
type queryOptions struct {
	v   url.Values
	err error
}

func (q *queryOptions) has(name string) bool { return len(q.v[name]) > 0 }

func (q *queryOptions) all(name string) []string {
	vs := q.v[name]
	delete(q.v, name)
	return vs
}

func (q *queryOptions) string(name string) string {
	vs := q.all(name)
	if len(vs) == 0 {
		return ""
	}
	return vs[len(vs)-1]
}

func (q *queryOptions) int(name string) int {
	s := q.string(name)
	n, err := strconv.Atoi(s)
	if err != nil && q.err == nil {
		q.err = fmt.Errorf("zipline: URL option %s: %q is not a number", name, s)
	}
	return n
}

// duration reads a Go duration or whole seconds; zero or less disables (-1).
func (q *queryOptions) duration(name string) time.Duration {
	s := q.string(name)
	d, err := time.ParseDuration(s)
	if n, nerr := strconv.Atoi(s); nerr == nil {
		d, err = time.Duration(n)*time.Second, nil
	}
	if err != nil {
		if q.err == nil {
			q.err = fmt.Errorf("zipline: URL option %s: %q is not a duration", name, s)
		}
		return 0
	}
	if d <= 0 {
		return -1
	}
	return d
}

func (q *queryOptions) bool(name string) bool {
	switch s := q.string(name); s {
	case "true", "1":
		return true
	case "false", "0", "":
		return false
	default:
		if q.err == nil {
			q.err = fmt.Errorf("zipline: URL option %s: %q is not true, false, 1 or 0", name, s)
		}
		return false
	}
}

func (q *queryOptions) remaining() []string {
	var names []string
	for k := range q.v {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}
