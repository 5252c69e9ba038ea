package zipline

import (
	"strings"
	"testing"
	"time"
)

// The URL forms go-redis's own tests accept, and rueidis's several hosts,
// with the Options each means here.
func TestParseURL(t *testing.T) {
	cases := []struct {
		url  string
		want Options
		tls  string // ServerName, when TLS is on
		skip bool   // InsecureSkipVerify
	}{
		{url: "redis://localhost:123/1", want: Options{Addr: "localhost:123", DB: 1}},
		{url: "redis://localhost:123", want: Options{Addr: "localhost:123"}},
		{url: "redis://localhost/1", want: Options{Addr: "localhost:6379", DB: 1}},
		{url: "redis://12345", want: Options{Addr: "12345:6379"}},
		{url: "redis://[::1]", want: Options{Addr: "[::1]:6379"}},
		{url: "redis://[::1]:6380", want: Options{Addr: "[::1]:6380"}},
		{url: "redis://[2001:db8::1]/2", want: Options{Addr: "[2001:db8::1]:6379", DB: 2}},
		{url: "rediss://localhost:123", want: Options{Addr: "localhost:123"}, tls: "localhost"},
		{url: "rediss://localhost:123/?skip_verify=true", want: Options{Addr: "localhost:123"}, tls: "localhost", skip: true},
		{url: "redis://:bar@localhost:123", want: Options{Addr: "localhost:123", Password: "bar"}},
		{url: "redis://foo@localhost:123", want: Options{Addr: "localhost:123", Username: "foo"}},
		{url: "redis://foo:bar@localhost:123", want: Options{Addr: "localhost:123", Username: "foo", Password: "bar"}},
		{url: "redis://localhost:123/?db=2&read_timeout=2", want: Options{Addr: "localhost:123", DB: 2, IOTimeout: 2 * time.Second}},
		{url: "redis://localhost:123/?read_timeout=2s&write_timeout=5s", want: Options{Addr: "localhost:123", IOTimeout: 5 * time.Second}},
		{url: "redis://localhost:123/?io_timeout=0", want: Options{Addr: "localhost:123", IOTimeout: -1}},
		{url: "redis://localhost:123/?dial_timeout=-1s", want: Options{Addr: "localhost:123", DialTimeout: -1}},
		{url: "redis://localhost:123/?db=2&client_name=hi", want: Options{Addr: "localhost:123", DB: 2, ClientName: "hi"}},
		{url: "redis://localhost:123/?db=2&protocol=2", want: Options{Addr: "localhost:123", DB: 2, Protocol: 2}},
		{url: "redis://localhost:123/?health_check_interval=5s&max_pending_bytes=1024",
			want: Options{Addr: "localhost:123", HealthCheckInterval: 5 * time.Second, MaxPendingBytes: 1024}},
		{url: "unix:///tmp/redis.sock", want: Options{Network: "unix", Addr: "/tmp/redis.sock"}},
		{url: "unix://foo:bar@/tmp/redis.sock", want: Options{Network: "unix", Addr: "/tmp/redis.sock", Username: "foo", Password: "bar"}},
		{url: "unix://foo:bar@/tmp/redis.sock?db=3", want: Options{Network: "unix", Addr: "/tmp/redis.sock", Username: "foo", Password: "bar", DB: 3}},
		{url: "valkey://localhost:7000/3", want: Options{Addr: "localhost:7000", DB: 3}},
		{url: "valkeys://cache.example:7000", want: Options{Addr: "cache.example:7000"}, tls: "cache.example"},
		// A cluster: several hosts, comma-separated or with addr= (rueidis).
		{url: "redis://a:7000,b:7001,c", want: Options{Addrs: []string{"a:7000", "b:7001", "c:6379"}}},
		{url: "rediss://u:p@a:7000?addr=b:7001&addr=[::1]:7002", want: Options{Addrs: []string{"a:7000", "b:7001", "[::1]:7002"},
			Username: "u", Password: "p"}, tls: "a"},
		// go-redis's pool and retry options: accepted, whatever their value,
		// and ignored.
		{url: "redis://:pw@cache:6379/0?pool_size=50&min_idle_conns=10&max_retries=5&pool_timeout=4s&conn_max_idle_time=5m&pool_fifo=yes",
			want: Options{Addr: "cache:6379", Password: "pw"}},
		{url: "redis://localhost:123/?lazy_connect=true&read_from=az_affinity&availability_zone=use1-az1",
			want: Options{Addr: "localhost:123", LazyConnect: true, ReadFrom: ReadAZAffinity, AvailabilityZone: "use1-az1"}},
		{url: "redis://a:7000?addr=b:7001&read_only=true", want: Options{Addrs: []string{"a:7000", "b:7001"}, ReadFrom: ReadReplicaRoundRobin}},
		{url: "redis://a:7000?addr=b:7001&route_by_latency=1", want: Options{Addrs: []string{"a:7000", "b:7001"}, ReadFrom: ReadLowestLatency}},
		// Sentinel, as go-redis's failover URL: the hosts are sentinels, with
		// the URL's credentials; username= and password= are the data
		// nodes'.
		{url: "redis://su:sp@s1:26379,s2:26380/2?master_name=mymaster&username=app&password=secret",
			want: Options{Sentinel: Sentinel{MasterName: "mymaster", Addrs: []string{"s1:26379", "s2:26380"}, Username: "su", Password: "sp"},
				Username: "app", Password: "secret", DB: 2}},
		{url: "redis://s1:26379?master_set=m&addr=s2:26379", want: Options{Sentinel: Sentinel{MasterName: "m", Addrs: []string{"s1:26379", "s2:26379"}}}},
	}
	for _, tc := range cases {
		t.Run(tc.url, func(t *testing.T) {
			o, err := ParseURL(tc.url)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want.Network == "" {
				tc.want.Network = "tcp"
			}
			if o.Network != tc.want.Network || o.Addr != tc.want.Addr || strings.Join(o.Addrs, " ") != strings.Join(tc.want.Addrs, " ") ||
				o.DB != tc.want.DB || o.Username != tc.want.Username || o.Password != tc.want.Password ||
				o.ClientName != tc.want.ClientName || o.Protocol != tc.want.Protocol || o.IOTimeout != tc.want.IOTimeout ||
				o.DialTimeout != tc.want.DialTimeout || o.HealthCheckInterval != tc.want.HealthCheckInterval ||
				o.MaxPendingBytes != tc.want.MaxPendingBytes || o.LazyConnect != tc.want.LazyConnect ||
				o.ReadFrom != tc.want.ReadFrom || o.AvailabilityZone != tc.want.AvailabilityZone ||
				o.Sentinel.MasterName != tc.want.Sentinel.MasterName || strings.Join(o.Sentinel.Addrs, " ") != strings.Join(tc.want.Sentinel.Addrs, " ") ||
				o.Sentinel.Username != tc.want.Sentinel.Username || o.Sentinel.Password != tc.want.Sentinel.Password {
				t.Fatalf("got %+v\nwant %+v", o, tc.want)
			}
			switch {
			case tc.tls == "" && o.TLSConfig != nil:
				t.Fatal("TLS on")
			case tc.tls != "" && (o.TLSConfig == nil || o.TLSConfig.ServerName != tc.tls || o.TLSConfig.InsecureSkipVerify != tc.skip):
				t.Fatalf("TLS config %+v, want ServerName %q skip %v", o.TLSConfig, tc.tls, tc.skip)
			}
		})
	}
}

// Malformed URLs and unknown options are errors that say what is wrong,
// and never repeat a password.
func TestParseURLErrors(t *testing.T) {
	for url, want := range map[string]string{
		"unix://foo:s3cret@/tmp/redis.sock?db=test": `db: "test" is not a number`,
		"redis://localhost/?abc=123":                "unknown URL option abc",
		"redis://foo@localhost/?username=bar":       "unknown URL option username",
		"redis://localhost/?wrte_timout=10s&abc=1":  "unknown URL option abc, wrte_timout",
		"redis://localhost/?read_timeout=soon":      `read_timeout: "soon" is not a duration`,
		"rediss://localhost/?skip_verify=yes":       `skip_verify: "yes" is not true`,
		"http://google.com":                         `invalid URL scheme "http"`,
		"redis://localhost/1/2/3/4":                 "invalid URL path",
		"12345":                                     `invalid URL scheme ""`,
		"redis://localhost/iamadatabase":            `invalid database number "iamadatabase"`,
		"redis://localhost:99999":                   `invalid port "99999"`,
		"redis://u:s3cret@host:12%zz":               "invalid URL",
		"unix://u:s3cret@":                          "needs a socket path",
		"redis://localhost/?read_from=nearest":      `read_from: "nearest" is not primary`,
		"redis://localhost/?lazy_connect=maybe":     `lazy_connect: "maybe" is not true`,
		"unix://u:s3cret@/tmp/s?master_name=m":      "master_name needs redis:// sentinels",
	} {
		_, err := ParseURL(url)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error containing %q", url, err, want)
		} else if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: the error repeats the password: %v", url, err)
		}
	}
}

// FromURL changes only what the URL says.
func TestOptionsFromURL(t *testing.T) {
	o := Options{ClientName: "app", IOTimeout: 3 * time.Second, MaxDedicatedConns: 8}
	if err := o.FromURL("redis://:pw@cache:7000/2?client_name=batch"); err != nil {
		t.Fatal(err)
	}
	if o.Addr != "cache:7000" || o.DB != 2 || o.Password != "pw" || o.ClientName != "batch" ||
		o.IOTimeout != 3*time.Second || o.MaxDedicatedConns != 8 {
		t.Fatalf("%+v", o)
	}
}
