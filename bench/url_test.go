package bench

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/ziplinekv/zipline"
)

// goRedisURLs are the URLs go-redis's own tests parse (options_test.go,
// osscluster_test.go, sentinel_test.go), the good and the bad.
var goRedisURLs = []string{
	"redis://localhost", "redis://localhost:123", "redis://localhost/1", "redis://localhost:123/1",
	"redis://[::1]", "redis://[::1]:6380", "redis://[2001:db8::1]/2", "rediss://[2001:db8::1]",
	"redis://foo:bar@localhost:123", "redis://:bar@localhost:123", "redis://foo@localhost:123",
	"rediss://localhost", "rediss://localhost:123", "rediss://localhost:123/?skip_verify=true",
	"rediss://localhost/?skip_verify=yes", "redis://localhost:6379?",
	"redis://localhost:123/?db=2&client_name=hi", "redis://localhost:123/?db=2&protocol=2",
	"redis://localhost:123/?db=2&read_timeout=2&pool_fifo=true",
	"redis://localhost:123/?db=2&conn_max_idle_time", "redis://localhost:123/?db=2&conn_max_idle_time=",
	"redis://localhost:123/?db=2&conn_max_idle_time=-1", "redis://localhost:123/?db=2&conn_max_idle_time=-1s",
	"redis://localhost:123/?db=2&conn_max_idle_time=0", "redis://localhost:123/?db=2&conn_max_idle_time=0s",
	"redis://localhost:123/?conn_max_lifetime=1h&conn_max_lifetime_jitter=6m",
	"redis://localhost:123/?conn_max_lifetime=30m&conn_max_lifetime_jitter=1h",
	"redis://localhost:123/?conn_max_lifetime_jitter=6m",
	"redis://localhost:123/?max_concurrent_dials=0", "redis://localhost:123/?max_concurrent_dials=5",
	"redis://localhost:123?addr=localhost:1234&addr=localhost:12345",
	"rediss://localhost:123?addr=localhost:1234&addr=localhost:12345",
	"redis://localhost:123?read_timeout=2&pool_fifo=true&addr=localhost:1234",
	"redis://localhost:123?client_name=cluster_hi", "redis://localhost:123?protocol=2",
	"redis://localhost:123?conn_max_idle_time", "redis://localhost:123?conn_max_idle_time=-1",
	"redis://localhost:16600?failing_timeout_seconds=25",
	"rediss://foo:bar@localhost:123?addr=localhost:1234",
	"redis://foo:bar@localhost:6379/5?addr=localhost:6380",
	"redis://foo:bar@localhost:6379/5?addr=localhost:6380&dial_timeout=3",
	"redis://foo:bar@localhost:6379/5?addr=localhost:6380&dial_timeout=3s",
	"redis://foo:bar@localhost:6379/5?addr=localhost:6380&dial_timeout=3ms",
	"redis://foo:bar@localhost:6379/5?addr=localhost:6380&dial_timeout=3&pool_fifo=true",
	"redis://localhost:6379/5?addr=localhost:6380&addr=localhost:6381",
	"redis://localhost:6379/5?addr=localhost:6380&dial_timeout=-1",
	"redis://localhost:6379/5?addr=localhost:6380&dial_timeout=0",
	"redis://localhost:6379/5?addr=localhost:6380&dial_timeout=3&pool_fifo=false",
	"redis://localhost:6379?master_name=test", "redis://localhost:6379/5?master_name=test",
	"redis://localhost:6379/5?master_name=test&db=2", "redis://localhost:6379?master_name=mymaster&",
	"rediss://localhost:6379/5?master_name=test", "rediss://localhost:6379/5?master_name=test&skip_verify=true",
	"redis://foo@localhost/?username=bar&master_name=m",
	"redis://user:pass@localhost:26379?master_name=m&username=app&password=secret&addr=localhost:26380",
	// A service's REDIS_URL with go-redis's pool options: the case.
	"redis://:pw@cache:6379/0?pool_size=50&min_idle_conns=10&max_retries=5&pool_timeout=4s&conn_max_idle_time=5m",
	// Bad ones.
	"redis://localhost/?abc=123", "redis://localhost/?wrte_timout=10s&abc=123", "redis://localhost/1/2/3/4",
	"redis://localhost/iamadatabase", "redis://localhost/database", "http://google.com", "redis://12345x",
}

// goRedisParse parses u with whichever of go-redis's parsers the URL is
// for, and returns what zipline's Options should hold.
func goRedisParse(u string) (zipline.Options, error) {
	var want zipline.Options
	switch {
	case strings.Contains(u, "master_name="):
		o, err := redis.ParseFailoverURL(u)
		if err != nil {
			return want, err
		}
		want.Sentinel = zipline.Sentinel{MasterName: o.MasterName, Addrs: o.SentinelAddrs,
			Username: o.SentinelUsername, Password: o.SentinelPassword}
		want.Username, want.Password, want.DB = o.Username, o.Password, o.DB
		want.DialTimeout, want.IOTimeout = o.DialTimeout, max(o.ReadTimeout, o.WriteTimeout)
		want.ClientName, want.Protocol = o.ClientName, o.Protocol
		want.TLSConfig = o.TLSConfig
	case strings.Contains(u, "addr="):
		o, err := redis.ParseClusterURL(u)
		if err != nil {
			return want, err
		}
		want.Addrs = o.Addrs
		want.Username, want.Password = o.Username, o.Password
		want.DialTimeout, want.IOTimeout = o.DialTimeout, max(o.ReadTimeout, o.WriteTimeout)
		want.ClientName, want.Protocol = o.ClientName, o.Protocol
		want.TLSConfig = o.TLSConfig
		want.DB = -1 // go-redis's cluster parser drops a path; zipline keeps it (SELECT then fails on a cluster)
	default:
		o, err := redis.ParseURL(u)
		if err != nil {
			// A cluster's option on one seed (failing_timeout_seconds).
			co, cerr := redis.ParseClusterURL(u)
			if cerr != nil || !strings.Contains(err.Error(), "unexpected option") {
				return want, err
			}
			want.Addr, want.Username, want.Password = co.Addrs[0], co.Username, co.Password
			want.DialTimeout, want.IOTimeout = co.DialTimeout, max(co.ReadTimeout, co.WriteTimeout)
			want.ClientName, want.Protocol, want.TLSConfig = co.ClientName, co.Protocol, co.TLSConfig
			return want, nil
		}
		want.Addr, want.Username, want.Password, want.DB = o.Addr, o.Username, o.Password, o.DB
		want.DialTimeout, want.IOTimeout = o.DialTimeout, max(o.ReadTimeout, o.WriteTimeout)
		want.ClientName, want.Protocol = o.ClientName, o.Protocol
		want.TLSConfig = o.TLSConfig
	}
	return want, nil
}

// Every URL a go-redis parser accepts, zipline's ParseURL accepts, with
// the same addresses, credentials, database, timeouts, client name,
// protocol and TLS; the pool options go-redis reads are accepted and
// ignored, never a start-up failure. Unknown options and bad paths fail
// in both.
func TestParseURLAcceptsGoRedisURLs(t *testing.T) {
	for _, u := range goRedisURLs {
		want, werr := goRedisParse(u)
		got, err := zipline.ParseURL(u)
		if werr != nil {
			if err == nil && !strings.Contains(werr.Error(), "pool_fifo") && !strings.Contains(werr.Error(), "invalid URL scheme") {
				t.Errorf("%s: go-redis refuses it (%v), zipline accepts it", u, werr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: go-redis accepts it, zipline: %v", u, err)
			continue
		}
		if got.Addr != want.Addr && want.Addr != "" ||
			strings.Join(got.Addrs, ",") != strings.Join(want.Addrs, ",") ||
			got.Username != want.Username || got.Password != want.Password || got.DB != want.DB && want.DB >= 0 ||
			got.ClientName != want.ClientName || got.Protocol != want.Protocol ||
			got.Sentinel.MasterName != want.Sentinel.MasterName ||
			strings.Join(got.Sentinel.Addrs, ",") != strings.Join(want.Sentinel.Addrs, ",") ||
			got.Sentinel.Username != want.Sentinel.Username || got.Sentinel.Password != want.Sentinel.Password {
			t.Errorf("%s:\nzipline  %s\ngo-redis %s", u, summary(got), summary(want))
		}
		if durationOf(got.DialTimeout) != durationOf(want.DialTimeout) || durationOf(got.IOTimeout) != durationOf(want.IOTimeout) {
			t.Errorf("%s: timeouts dial %v io %v, go-redis %v and %v", u, got.DialTimeout, got.IOTimeout, want.DialTimeout, want.IOTimeout)
		}
		if (got.TLSConfig == nil) != (want.TLSConfig == nil) ||
			got.TLSConfig != nil && (got.TLSConfig.ServerName != want.TLSConfig.ServerName || got.TLSConfig.InsecureSkipVerify != want.TLSConfig.InsecureSkipVerify) {
			t.Errorf("%s: TLS %+v, go-redis %+v", u, got.TLSConfig, want.TLSConfig)
		}
	}
}

// durationOf reads a timeout as both clients mean it: negative is off.
func durationOf(d time.Duration) time.Duration { return max(d, -1) }

// summary is what the comparison looks at.
func summary(o zipline.Options) string {
	return fmt.Sprintf("addr=%q addrs=%v user=%q pass=%q db=%d name=%q proto=%d sentinel=%+v",
		o.Addr, o.Addrs, o.Username, o.Password, o.DB, o.ClientName, o.Protocol, o.Sentinel)
}
