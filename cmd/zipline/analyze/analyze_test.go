package analyze

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/testbed"
	"github.com/ziplinekv/zipline/testbed/servertest"
)

var quiet = slog.New(slog.DiscardHandler)

// quietServerArgs keep bookkeeping that a server allocates on a command's
// first use (latency histograms, the slow log) out of used_memory, so
// that what a test measures is its keys.
var quietServerArgs = []string{"--latency-tracking", "no", "--slowlog-log-slower-than", "-1"}

// filled starts a server of kind holding about keys keys of the demo
// keyspace.
func filled(t *testing.T, kind testbed.Kind, keys int) (*testbed.Server, *zipline.Client) {
	t.Helper()
	srv := servertest.NewServer(t, testbed.Config{Kind: kind, Args: quietServerArgs})
	// One connection, as analyze's own clients hold: the buffers a bulk
	// lane's connection kept from the demo's large menus change the
	// server's used_memory while -calibrate measures it (the server's
	// cron resizes an idle client's buffers), which is not the model's
	// error.
	c, err := zipline.New(zipline.Options{Addr: srv.Addr, Logger: quiet, BulkThreshold: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := FillDemo(t.Context(), c, keys, 1, 4); err != nil {
		t.Fatal(err)
	}
	return srv, c
}

// counters returns what a server says it has done: commands by name
// (INFO commandstats calls) and changes since the last save.
func counters(t *testing.T, ctx context.Context, s *testbed.Server) (map[string]int64, int64) {
	t.Helper()
	stats, err := s.Info(ctx, "commandstats")
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]int64{}
	for k, v := range stats {
		name, ok := strings.CutPrefix(k, "cmdstat_")
		if !ok {
			continue
		}
		for _, f := range strings.Split(v, ",") {
			if n, ok := strings.CutPrefix(f, "calls="); ok {
				calls[name], _ = strconv.ParseInt(n, 10, 64)
			}
		}
	}
	p, err := s.Info(ctx, "persistence")
	if err != nil {
		t.Fatal(err)
	}
	dirty, _ := strconv.ParseInt(p["rdb_changes_since_last_save"], 10, 64)
	return calls, dirty
}

// An analysis writes nothing, counts every key of a keyspace it scans
// whole, groups them into the demo's patterns, and recommends a layout
// for the namespaces it can.
func TestAnalyzeIsReadOnlyAndExact(t *testing.T) {
	srv, c := filled(t, testbed.Redis, 8000)
	ctx := t.Context()
	keys, err := c.DBSize(ctx)
	if err != nil {
		t.Fatal(err)
	}
	callsBefore, dirtyBefore := counters(t, ctx, srv)
	r, err := Run(ctx, Config{Options: zipline.Options{Addr: srv.Addr}, Rate: -1, ServerArgs: "-addr " + srv.Addr})
	if err != nil {
		t.Fatal(err)
	}
	callsAfter, dirtyAfter := counters(t, ctx, srv)
	if dirtyAfter != dirtyBefore {
		t.Errorf("the analysis changed the dataset: rdb_changes_since_last_save %d -> %d", dirtyBefore, dirtyAfter)
	}
	for cmd, n := range callsAfter {
		if n == callsBefore[cmd] {
			continue
		}
		switch cmd {
		case "scan", "type", "pttl", "memory|usage", "object|encoding", "strlen", "get", "getrange", "info", "dbsize",
			"config|get", "command|info", "hello", "ping", "client|setname", "client|info":
		default:
			t.Errorf("the analysis ran %s (%d times)", cmd, n-callsBefore[cmd])
		}
	}
	if r.Scan.Wrote || !r.Scan.Complete || r.Scan.Scanned != keys || r.Scan.Scale != 1 {
		t.Errorf("scan %+v, want all %d keys, nothing written", r.Scan, keys)
	}
	want := map[string]int64{"user:<int>": 1520, "views:<int>": 1600, "session:<hex32>": 960, "doc:<uuid>": 400,
		"page:<date>:<int>": 400, "cart:<int>": 160}
	got := map[string]PatternReport{}
	for _, p := range r.Patterns {
		got[p.Pattern] = p
	}
	for pat, n := range want {
		if got[pat].Keys != n {
			t.Errorf("%s: %d keys, want %d", pat, got[pat].Keys, n)
		}
	}
	if p := got["session:<hex32>"]; p.TTLShare != 1 || p.Types["string"] != 960 {
		t.Errorf("session:<hex32>: %+v", p)
	}
	if p := got["views:<int>"]; p.TTLShare != 0 || p.Samples == 0 || p.MeanValue < 3 || p.MeanValue > 7 {
		t.Errorf("views:<int>: %+v", p)
	}
	ns := map[string]NamespaceReport{}
	for _, n := range r.Namespaces {
		ns[n.Prefix] = n
	}
	if n := ns["cart:"]; n.Recommended != nil || !strings.Contains(n.Skip, "hash") {
		t.Errorf("cart: holds hashes, which no layout takes: %+v", n)
	}
	// Counters go to Dense buckets; documents are compressed.
	if n := ns["views:"]; n.Recommended == nil || !strings.Contains(n.Recommended.Spec, "buckets=dense:100") {
		t.Errorf("views: %+v", n.Recommended)
	}
	if n := ns["doc:"]; n.Recommended == nil || !strings.Contains(n.Recommended.Spec, "codec=zstd") ||
		n.Recommended.SavedPct < 30 {
		t.Errorf("doc: %+v", n.Recommended)
	}
	// On Redis 7.0 keys with TTLs stay plain keys; buckets would need
	// BucketTTL, which changes when keys expire: never recommended, and
	// not shown without AllowTTLChange (a note says it was left out).
	if n := ns["rate:"]; n.Recommended != nil && strings.Contains(n.Recommended.Spec, "buckets") {
		t.Errorf("rate: has TTLs, and Redis 7.0 no field expiry: %+v", n.Recommended)
	} else if n.BucketTTL != nil || !strings.Contains(strings.Join(n.Notes, " "), "-allow-ttl-change") {
		t.Errorf("rate: a layout that changes TTLs was shown, or its note is missing: %+v", n)
	}
	for _, n := range r.Namespaces {
		if n.Dict != nil && n.Dict.TTLChange != nil || strings.Contains(n.Migrate+strings.Join(n.DictCommands, " "), "bucketttl") {
			t.Errorf("%s: a printed command changes TTLs: %s %v", n.Prefix, n.Migrate, n.DictCommands)
		}
	}
	var text strings.Builder
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"PATTERN", "views:<int>", "zipline migrate -addr " + srv.Addr + " -from 'prefix=views:'",
		"layout.Namespace{Prefix: \"views:\"", "codec=dict", "zipline dict train", "nothing written", "TOTAL"} {
		if !strings.Contains(text.String(), s) {
			t.Errorf("the text report lacks %q:\n%s", s, text.String())
		}
	}
}

// With a key budget below DBSIZE, the scan stops there and extrapolates:
// the estimated counts are near the real ones, and the report says so.
func TestAnalyzeExtrapolates(t *testing.T) {
	srv, c := filled(t, testbed.Redis, 20000)
	ctx := t.Context()
	keys, _ := c.DBSize(ctx)
	r, err := Run(ctx, Config{Options: zipline.Options{Addr: srv.Addr}, Rate: -1, MaxKeys: 5000})
	if err != nil {
		t.Fatal(err)
	}
	if r.Scan.Complete || r.Scan.Scanned < 5000 || r.Scan.Scanned > 6000 || math.Abs(r.Scan.Scale-float64(keys)/float64(r.Scan.Scanned)) > 1e-9 {
		t.Fatalf("scan %+v of %d keys", r.Scan, keys)
	}
	for _, p := range r.Patterns {
		var want float64
		switch p.Pattern {
		case "user:<int>":
			want = 3800
		case "views:<int>":
			want = 4000
		case "session:<hex32>":
			want = 2400
		default:
			continue
		}
		if math.Abs(float64(p.Keys)-want) > 0.15*want {
			t.Errorf("%s: estimated %d keys, there are %.0f", p.Pattern, p.Keys, want)
		}
	}
	var text strings.Builder
	r.WriteText(&text)
	if !strings.Contains(text.String(), "extrapolated") {
		t.Errorf("the report does not say it extrapolated:\n%s", text.String())
	}
}

// The scan keeps to its rate, and reports its progress as it goes.
func TestAnalyzeRate(t *testing.T) {
	srv, c := filled(t, testbed.Redis, 6000)
	keys, _ := c.DBSize(t.Context())
	var last Progress
	calls := 0
	start := time.Now()
	_, err := Run(t.Context(), Config{Options: zipline.Options{Addr: srv.Addr}, Rate: 3000,
		Progress: func(p Progress) {
			if p.Scanned < last.Scanned || p.Total != keys {
				t.Errorf("progress %+v after %+v, total want %d", p, last, keys)
			}
			last = p
			calls++
		}})
	if err != nil {
		t.Fatal(err)
	}
	// The first page goes at once; the rest at 3000 keys a second.
	if min := time.Duration(float64(keys-150) / 3000 * float64(time.Second)); time.Since(start) < min {
		t.Errorf("scanned %d keys in %v at -rate 3000: want at least %v", keys, time.Since(start), min)
	}
	if calls < 5 || last.Scanned != keys {
		t.Errorf("%d progress reports, the last %+v", calls, last)
	}
}

// Given a primary with a replica, the analysis reads the replica (and
// only it); told to, the primary.
func TestAnalyzeReadsTheReplica(t *testing.T) {
	primary, c := filled(t, testbed.Redis, 3000)
	ctx := t.Context()
	replica := servertest.NewServer(t, testbed.Config{Args: append([]string{"--replicaof", "127.0.0.1",
		strconv.Itoa(primary.Port)}, quietServerArgs...)})
	keys, _ := c.DBSize(ctx)
	// The replica's initial sync, bounded, seen from both ends: analyze
	// picks replicas from the primary's INFO replication, which shows the
	// replica online only a moment after the replica's own link is up (on
	// a loaded machine, long enough for Run to find no replica).
	online := "port=" + strconv.Itoa(replica.Port) + ",state=online"
	for i := 0; ; i++ {
		info, err := replica.Info(ctx, "replication")
		if err != nil {
			t.Fatal(err)
		}
		n, _ := replica.Do(ctx, "DBSIZE")
		seen, err := primary.Info(ctx, "replication")
		if err != nil {
			t.Fatal(err)
		}
		if info["master_link_status"] == "up" && n.Int() == keys && strings.Contains(seen["slave0"], online) {
			break
		}
		if i == 500 {
			t.Fatalf("the replica never synced: %v; the primary's view: %v", info, seen)
		}
		time.Sleep(20 * time.Millisecond) // polling a condition, bounded above
	}
	before, _ := counters(t, ctx, primary)
	r, err := Run(ctx, Config{Options: zipline.Options{Addr: primary.Addr}, Rate: -1})
	if err != nil {
		t.Fatal(err)
	}
	after, _ := counters(t, ctx, primary)
	if got := strings.Join(r.Scan.ReadFrom, ","); !strings.Contains(got, "(replica)") {
		t.Errorf("read from %s, want the replica", got)
	}
	for _, cmd := range []string{"scan", "type", "get"} {
		if after[cmd] != before[cmd] {
			t.Errorf("the primary ran %s %d times", cmd, after[cmd]-before[cmd])
		}
	}
	if r.Scan.Scanned != keys || r.Server.Copies != 2 {
		t.Errorf("scanned %d of %d keys; copies %d, want 2", r.Scan.Scanned, keys, r.Server.Copies)
	}
	r, err = Run(ctx, Config{Options: zipline.Options{Addr: primary.Addr}, Rate: -1, Replica: ReplicaPrimary})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r.Scan.ReadFrom, ","); !strings.Contains(got, "(primary)") {
		t.Errorf("-replica primary read from %s", got)
	}
	if _, err := Run(ctx, Config{Options: zipline.Options{Addr: primary.Addr}, Replica: "127.0.0.1:1"}); err == nil ||
		!strings.Contains(err.Error(), "-replica 127.0.0.1:1") {
		t.Errorf("an unreachable -replica: %v", err)
	}
}

// On a cluster, each shard is scanned on one of its replicas, and the
// figures sum the shards.
func TestAnalyzeCluster(t *testing.T) {
	cl := servertest.NewCluster(t, testbed.ClusterConfig{Args: quietServerArgs})
	ctx := t.Context()
	c, err := zipline.New(zipline.Options{Addrs: cl.Addrs(), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := FillDemo(ctx, c, 6000, 1, 4); err != nil {
		t.Fatal(err)
	}
	if err := cl.AwaitReplicas(ctx); err != nil {
		t.Fatal(err)
	}
	var keys int64
	for k, err := range c.Scan(ctx, zipline.ScanOptions{Count: 1000}) {
		if err != nil {
			t.Fatal(err)
		}
		_ = k
		keys++
	}
	topo, err := cl.Topology(ctx)
	if err != nil {
		t.Fatal(err)
	}
	before := map[string]int64{}
	for _, p := range topo.Primaries() {
		calls, _ := counters(t, ctx, p.Server)
		before[p.Server.Addr] = calls["scan"] + calls["type"]
	}
	r, err := Run(ctx, Config{Options: zipline.Options{Addrs: cl.Addrs()}, Rate: -1})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Server.Cluster || len(r.Server.Shards) != 3 || r.Scan.Scanned != keys || r.Server.Keys != keys {
		t.Fatalf("server %+v, scan %+v; want 3 shards and %d keys", r.Server, r.Scan, keys)
	}
	for _, sh := range r.Server.Shards {
		if sh.ReadRole != "replica" || sh.Read == sh.Primary {
			t.Errorf("shard %+v: not read from its replica", sh)
		}
	}
	for _, p := range topo.Primaries() {
		calls, _ := counters(t, ctx, p.Server)
		if calls["scan"]+calls["type"] != before[p.Server.Addr] {
			t.Errorf("primary %s ran SCAN or TYPE", p.Server.Addr)
		}
	}
	found := false
	for _, ns := range r.Namespaces {
		found = found || ns.Prefix == "views:" && ns.Recommended != nil
	}
	if !found {
		t.Errorf("no recommendation for views: on the cluster: %+v", r.Namespaces)
	}
}

// -calibrate measures the recommended layouts on the server, corrects
// the predictions by little (the model is measured), and leaves nothing
// behind.
func TestAnalyzeCalibrate(t *testing.T) {
	servertest.MeasuredWithoutRace(t)
	for _, kind := range []testbed.Kind{testbed.Redis, testbed.Valkey} {
		t.Run(string(kind), func(t *testing.T) {
			srv, c := filled(t, kind, 20000)
			ctx := t.Context()
			keys, _ := c.DBSize(ctx)
			r, err := Run(ctx, Config{Options: zipline.Options{Addr: srv.Addr}, Rate: -1, Calibrate: true, CalibrateKeys: 1000})
			if err != nil {
				t.Fatal(err)
			}
			if after, _ := c.DBSize(ctx); after != keys {
				t.Errorf("%d keys after calibrating, %d before", after, keys)
			}
			for k, err := range c.Scan(ctx, zipline.ScanOptions{Match: "za*"}) {
				if err != nil {
					t.Fatal(err)
				}
				t.Errorf("calibration key %s left behind", k)
			}
			if !r.Scan.Wrote || len(r.Calibration) == 0 {
				t.Fatalf("no calibration: %+v", r.Scan)
			}
			for _, cal := range r.Calibration {
				t.Logf("%-12s %-42s %5d keys: measured %9.0f predicted %9.0f factor %.3f", cal.Namespace, cal.Layout,
					cal.Keys, cal.Measured, cal.Predicted, cal.Factor)
				if cal.Factor < 0.9 || cal.Factor > 1.1 {
					t.Errorf("%s %s: measured %.0f, the model said %.0f", cal.Namespace, cal.Layout, cal.Measured, cal.Predicted)
				}
			}
		})
	}
}

// A namespace whose keys are not all strings, or whose prefix holds a
// hash tag, gets no layout, and says why.
func TestAnalyzeSkips(t *testing.T) {
	srv := servertest.NewServer(t, testbed.Config{})
	ctx := t.Context()
	c, err := zipline.New(zipline.Options{Addr: srv.Addr, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	b := c.Batch()
	for i := range 300 {
		b.Set(fmt.Sprintf("user:%d", i), []byte(strings.Repeat(`{"name":"Ada","city":"Paris"}`, 10)))
		b.RPush(fmt.Sprintf("user:%d:events", i), []byte("login"))
		b.Set(fmt.Sprintf("{tenant:%d}:conf", i), []byte(strings.Repeat("x", 200)))
	}
	if err := b.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	r, err := Run(ctx, Config{Options: zipline.Options{Addr: srv.Addr}, Rate: -1})
	if err != nil {
		t.Fatal(err)
	}
	skips := map[string]string{}
	for _, ns := range r.Namespaces {
		if ns.Recommended != nil {
			t.Errorf("%s: recommended %s", ns.Prefix, ns.Recommended.Spec)
		}
		skips[ns.Prefix] = ns.Skip
	}
	if !strings.Contains(skips["user:"], "list") || !strings.Contains(skips["{tenant:"], "hash tag") {
		t.Errorf("skips: %q", skips)
	}
}

// An empty keyspace makes an empty report, not an error.
func TestAnalyzeEmpty(t *testing.T) {
	srv := servertest.NewServer(t, testbed.Config{})
	r, err := Run(t.Context(), Config{Options: zipline.Options{Addr: srv.Addr}})
	if err != nil {
		t.Fatal(err)
	}
	var text, page strings.Builder
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	if r.Scan.Scanned != 0 || len(r.Patterns) != 0 || r.Totals.Saved != 0 || !strings.Contains(text.String(), "TOTAL") {
		t.Errorf("empty keyspace: %+v\n%s", r.Scan, text.String())
	}
}
