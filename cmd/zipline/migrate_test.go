package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/layout"
	"github.com/ziplinekv/zipline/testbed"
	"github.com/ziplinekv/zipline/testbed/servertest"
)

func TestParseNamespace(t *testing.T) {
	ns, err := parseNamespace("prefix=user:,zip=u:,buckets=dense:100,codec=zstd,level=5,bucketttl=1h")
	if err != nil {
		t.Fatal(err)
	}
	if ns.Prefix != "user:" || ns.ZipAs != "u:" || ns.Buckets.String() != "Dense(100)" || ns.Codec.Level != 5 {
		t.Fatalf("%+v", ns)
	}
	for _, bad := range []string{"", "zip=u:", "prefix=a,buckets=dense:x", "prefix=a,codec=gzip", "prefix=a,nope=1", "prefix"} {
		if _, err := parseNamespace(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// captureStdout runs fn with os.Stdout redirected and returns what it
// wrote; fn's error fails the test.
func captureStdout(t *testing.T, fn func() error) string {
	t.Helper()
	out, err := stdoutOf(t, fn)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return out
}

func TestMigrateCommand(t *testing.T) {
	srv := servertest.NewServer(t, testbed.Config{})
	ctx := context.Background()
	c, err := zipline.New(zipline.Options{Addr: srv.Addr})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	b := c.Batch()
	for i := range 2000 {
		b.Set("user:"+strconv.Itoa(i), []byte(strconv.Itoa(500000000+i)))
	}
	if err := b.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	args := []string{"-addr", srv.Addr, "-from", "prefix=user:", "-to", "prefix=user:,zip=u:,buckets=dense:100"}
	out := captureStdout(t, func() error { return runMigrate(ctx, append(args, "-dry-run", "-sample", "300")) })
	if !strings.Contains(out, "keys in the old layout: 2000") || !strings.Contains(out, "projected saving") {
		t.Fatalf("dry run printed:\n%s", out)
	}
	if n, _ := c.DBSize(ctx); n != 2000 {
		t.Fatalf("dry run changed the data: %d keys", n)
	}
	state := filepath.Join(t.TempDir(), "state")
	out = captureStdout(t, func() error { return runMigrate(ctx, append(args, "-state", state, "-batch", "50")) })
	if !strings.Contains(out, "moved 2000") {
		t.Fatalf("migrate printed:\n%s", out)
	}
	if b, _ := os.ReadFile(state); strings.TrimSpace(string(b)) != "0" {
		t.Fatalf("state file holds %q, want the finished cursor 0", b)
	}
	ns, _ := parseNamespace("prefix=user:,zip=u:,buckets=dense:100")
	s, err := layout.New(ctx, c, ns)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := s.Get(ctx, "user:1234"); err != nil || string(v) != "500001234" {
		t.Fatalf("after migrate: %q %v", v, err)
	}
	if n, _ := c.DBSize(ctx); n != 20 {
		t.Fatalf("%d keys after migrating 2000 into 100-field buckets, want 20", n)
	}
}

// A migrate run killed with SIGKILL part-way, while the application writes,
// and resumed with its -state file, loses nothing, resurrects nothing, and
// leaves no orphaned oversize value. Bounded to a few seconds: the child
// moves about 4000 keys a second and is killed after its first pages.
func TestMigrateKilledAndResumed(t *testing.T) {
	for _, kind := range []testbed.Kind{testbed.Redis, testbed.Valkey} {
		t.Run(string(kind), func(t *testing.T) { killedAndResumed(t, kind) })
	}
}

func killedAndResumed(t *testing.T, kind testbed.Kind) {
	srv := servertest.NewServer(t, testbed.Config{Kind: kind})
	ctx := context.Background()
	c, err := zipline.New(zipline.Options{Addr: srv.Addr})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const ids = 3000
	rng := rand.New(rand.NewPCG(uint64(len(kind)), 1))
	oversize := func(tag string) []byte {
		b := make([]byte, 120)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return append(b, tag...)
	}
	model := map[string][]byte{}
	ttl := map[string]bool{}
	b := c.Batch()
	for id := range ids {
		k := "user:" + strconv.Itoa(id)
		v := []byte(strconv.Itoa(500000000 + id))
		if id%4 == 0 {
			v = oversize(k)
		}
		if id%13 == 0 {
			b.Set(k, v, zipline.EX(time.Hour))
			ttl[k] = true
		} else {
			b.Set(k, v)
		}
		model[k] = v
	}
	if err := b.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	to := "prefix=user:,zip=u:,buckets=dense:100,codec=zstd"
	state := filepath.Join(t.TempDir(), "state")
	args := []string{"-addr", srv.Addr, "-from", "prefix=user:", "-to", to, "-state", state, "-batch", "20"}
	var out bytes.Buffer
	child := startChild(t, &out, append(append([]string{"migrate"}, args...), "-rate", "4000")...)
	killed := false
	defer func() {
		if !killed {
			child.Process.Kill()
			child.Wait()
		}
	}()

	// The application writes through the new layout while the child runs.
	newNS, err := parseNamespace(to)
	if err != nil {
		t.Fatal(err)
	}
	oldNS, _ := parseNamespace("prefix=user:")
	newNS.MigrateFrom = &oldNS
	s, err := layout.New(ctx, c, newNS)
	if err != nil {
		t.Fatal(err)
	}
	write := func() {
		k := "user:" + strconv.Itoa(rng.IntN(ids))
		switch rng.IntN(3) {
		case 0:
			if _, err := s.Del(ctx, k); err != nil {
				t.Fatal(err)
			}
			delete(model, k)
		case 1:
			v := []byte("small")
			if err := s.Set(ctx, k, v); err != nil {
				t.Fatal(err)
			}
			model[k] = v
		default:
			v := oversize("new")
			if err := s.Set(ctx, k, v); err != nil {
				t.Fatal(err)
			}
			model[k] = v
		}
		delete(ttl, k)
	}
	// Kill it once it has recorded a random number of cursors (of about
	// 150 pages), part-way through the scan.
	target := 10 + rng.IntN(90)
	seen := map[string]bool{}
	deadline := time.Now().Add(10 * time.Second)
	for {
		write()
		if b, err := os.ReadFile(state); err == nil {
			if cur := strings.TrimSpace(string(b)); cur != "" && cur != "0" {
				seen[cur] = true
			}
		}
		if len(seen) >= target {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the child recorded %d cursors in 10s:\n%s", len(seen), out.String())
		}
		time.Sleep(time.Millisecond) // pacing the writes while the child works; the loop ends on its state file
	}
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	err = child.Wait()
	killed = true
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != -1 {
		t.Fatalf("the child was not killed part-way (%v):\n%s", err, out.String())
	}
	left, _ := s.Source().Count(ctx)
	if left <= int64(len(ttl)) && kind == testbed.Redis || left == 0 {
		t.Fatalf("only %d keys left in the old layout when the child was killed: not part-way", left)
	}
	for range 100 {
		write()
	}

	// Resume from the state file, then run once more from the start for
	// keys that changed during the moves.
	resumed := captureStdout(t, func() error { return runMigrate(ctx, args) })
	if b, _ := os.ReadFile(state); strings.TrimSpace(string(b)) != "0" {
		t.Fatalf("state file holds %q after the resumed run", b)
	}
	again := captureStdout(t, func() error { return runMigrate(ctx, args[:6]) })

	for id := range ids {
		k := "user:" + strconv.Itoa(id)
		v, err := s.Get(ctx, k)
		want, ok := model[k]
		switch {
		case !ok && !errors.Is(err, zipline.Nil):
			t.Fatalf("%s: %d bytes, %v: a deleted value came back", k, len(v), err)
		case ok && (err != nil || !bytes.Equal(v, want)):
			t.Fatalf("%s: %d bytes, %v; want %d bytes", k, len(v), err, len(want))
		}
	}
	// Old layout: only keys whose TTL a Redis 7.0 bucket cannot hold.
	keys, err := srv.Do(ctx, "KEYS", "user:*")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range keys.Elems() {
		if k := string(e.Bytes()); kind == testbed.Valkey || !ttl[k] {
			t.Fatalf("%s left in the old layout", k)
		}
	}
	// New layout: every oversize key belongs to a marker, and every marker
	// has its key: "u:#{<bucket>}<field>" for the marker \x00{, or the key's
	// zipped plain name for the legacy marker \x00~ of earlier versions.
	keys, err = srv.Do(ctx, "KEYS", "u:*")
	if err != nil {
		t.Fatal(err)
	}
	referenced := map[string]bool{}
	var strs []string
	markers, dangling := 0, 0
	for _, e := range keys.Elems() {
		name := string(e.Bytes())
		typ, _ := srv.Do(ctx, "TYPE", name)
		if string(typ.Bytes()) != "hash" {
			strs = append(strs, name)
			continue
		}
		all, err := srv.Do(ctx, "HGETALL", name)
		if err != nil {
			t.Fatal(err)
		}
		kv := all.Elems()
		for i := 0; i+1 < len(kv); i += 2 {
			field := string(kv[i].Bytes())
			var target string
			switch string(kv[i+1].Bytes()) {
			case "\x00{":
				target = "u:#{" + name + "}" + field
			case "\x00~":
				bucket, f := base62(t, strings.TrimPrefix(name, "u:#")), must(strconv.Atoi(field))
				target = "u:" + toBase62(bucket*100+f)
			default:
				continue
			}
			markers++
			referenced[target] = true
			if n, _ := srv.Do(ctx, "EXISTS", target); n.Int() != 1 {
				dangling++
			}
		}
	}
	orphans := 0
	for _, name := range strs {
		if !referenced[name] {
			orphans++
		}
	}
	if orphans != 0 || dangling != 0 || len(strs) != markers {
		t.Fatalf("%d oversize keys for %d markers: %d orphans, %d dangling", len(strs), markers, orphans, dangling)
	}
	t.Logf("killed after %d recorded cursors with %d keys left to move; resumed run: %s; second run: %s; %d keys, %d oversize values, 0 orphans",
		len(seen), left, strings.TrimSpace(resumed), strings.TrimSpace(again), len(model), markers)
}

const digits62 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

// base62 reads a bucket number as zipped names write it.
func base62(t *testing.T, s string) int {
	n := 0
	for _, c := range s {
		d := strings.IndexRune(digits62, c)
		if d < 0 {
			t.Fatalf("%q is not base62", s)
		}
		n = n*62 + d
	}
	return n
}

func toBase62(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 62 {
		b = append([]byte{digits62[n%62]}, b...)
	}
	return string(b)
}

func must(n int, err error) int {
	if err != nil {
		panic(err)
	}
	return n
}

// The password can come from the environment or a URL, so that it never
// shows in the process list; an explicit flag still wins.
func TestMigratePasswordSources(t *testing.T) {
	t.Setenv("ZIPLINE_PASSWORD", "from-env")
	for _, tc := range []struct {
		args []string
		want zipline.Options
	}{
		{[]string{"-addr", "h:1"}, zipline.Options{Addr: "h:1", Password: "from-env"}},
		{nil, zipline.Options{Addr: zipline.DefaultAddr, Password: "from-env"}},
		{[]string{"-url", "redis://app:from-url@h:2/3"}, zipline.Options{Addr: "h:2", Username: "app", Password: "from-url", DB: 3}},
		{[]string{"-url", "redis://app@h:2"}, zipline.Options{Addr: "h:2", Username: "app", Password: "from-env"}},
		{[]string{"-addr", "h:1", "-user", "u", "-password", "from-flag"}, zipline.Options{Addr: "h:1", Username: "u", Password: "from-flag"}},
		{[]string{"-url", "redis://app:from-url@h:2", "-password", "from-flag"}, zipline.Options{Addr: "h:2", Username: "app", Password: "from-flag"}},
	} {
		fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
		server := addServerFlags(fs, zipline.DefaultAddr, "", "")
		user, password := fs.String("user", "", ""), fs.String("password", "", "")
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		o, err := server.options()
		o = withCredentials(o, *user, *password)
		if err != nil || o.Addr != tc.want.Addr || o.Username != tc.want.Username || o.Password != tc.want.Password || o.DB != tc.want.DB {
			t.Errorf("%q: got %+v %v", tc.args, o, err)
		}
	}
}

// On a cluster, given one node's address: the migration moves every key,
// a second run finds it complete, and -sweep deletes the tombstones that
// the application's deletions left meanwhile.
func TestMigrateCommandOnCluster(t *testing.T) {
	cl := servertest.NewCluster(t, testbed.ClusterConfig{Replicas: -1})
	ctx := context.Background()
	c, err := zipline.New(zipline.Options{Addrs: cl.Addrs()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	pairs := make([]zipline.KeyValue, 0, 1000)
	for i := range 1000 {
		pairs = append(pairs, zipline.KeyValue{Key: "user:" + strconv.Itoa(i), Value: []byte(strconv.Itoa(500000000 + i))})
	}
	if err := c.MSet(ctx, pairs...); err != nil {
		t.Fatal(err)
	}
	to := "prefix=user:,zip=u:,buckets=dense:100"
	newNS, _ := parseNamespace(to)
	oldNS, _ := parseNamespace("prefix=user:")
	newNS.MigrateFrom = &oldNS
	s, err := layout.New(ctx, c, newNS)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := s.Del(ctx, "user:1", "user:2", "user:999"); err != nil || n != 3 {
		t.Fatalf("Del while migrating: %d, %v", n, err)
	}
	args := []string{"-addr", cl.Addrs()[0], "-from", "prefix=user:", "-to", to, "-batch", "50"}
	if out := captureStdout(t, func() error { return runMigrate(ctx, args) }); !strings.Contains(out, "moved 997") {
		t.Fatalf("migrate printed:\n%s", out)
	}
	if out := captureStdout(t, func() error { return runMigrate(ctx, args) }); !strings.Contains(out, "the migration is complete") {
		t.Fatalf("second run printed:\n%s", out)
	}
	sweep := []string{"-addr", cl.Addrs()[1], "-to", to, "-sweep"}
	if out := captureStdout(t, func() error { return runMigrate(ctx, sweep) }); !strings.Contains(out, "deleted 2 tombstone sets") {
		t.Fatalf("sweep printed:\n%s", out)
	}
	done, err := layout.New(ctx, c, withoutMigration(newNS))
	if err != nil {
		t.Fatal(err)
	}
	if v, err := done.Get(ctx, "user:1234"); !errors.Is(err, zipline.Nil) {
		t.Fatalf("user:1234: %q %v", v, err)
	}
	if v, err := done.Get(ctx, "user:123"); err != nil || string(v) != "500000123" {
		t.Fatalf("after migrate: %q %v", v, err)
	}
	if _, err := done.Get(ctx, "user:2"); !errors.Is(err, zipline.Nil) {
		t.Fatalf("deleted user:2 reads %v", err)
	}
	if n, _ := c.DBSize(ctx); n != 10 {
		t.Fatalf("%d keys after migrating 997 into 100-field buckets and sweeping, want 10", n)
	}
}

func withoutMigration(ns layout.Namespace) layout.Namespace {
	ns.MigrateFrom = nil
	return ns
}

// TestMigrateOutputToFiles runs migrate as a script does, its output
// redirected to files: 20,000 keys leave a few lines, not a progress bar's
// carriage-return frames (which wrote 23 KB); and -q leaves only the
// results.
func TestMigrateOutputToFiles(t *testing.T) {
	srv := servertest.NewServer(t, testbed.Config{})
	c := openClient(t, zipline.Options{Addr: srv.Addr})
	ctx := t.Context()
	const keys = 20000
	for from := 0; from < keys; from += 1000 {
		b := c.Batch()
		for i := from; i < from+1000; i++ {
			b.Set("user:"+strconv.Itoa(i), []byte(strconv.Itoa(500000000+i)))
		}
		if err := b.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		to    string
		quiet bool
	}{{"prefix=user:,zip=u:,buckets=dense:100", false}, {"prefix=user:,zip=v:,buckets=dense:100", true}} {
		from := "prefix=user:"
		if tc.quiet {
			from = "prefix=user:,zip=u:,buckets=dense:100"
		}
		args := []string{"migrate", "-addr", srv.Addr, "-from", from, "-to", tc.to, "-batch", "50"}
		if tc.quiet {
			args = append(args, "-q")
		}
		out, err := os.Create(filepath.Join(t.TempDir(), "out"))
		if err != nil {
			t.Fatal(err)
		}
		child := startChild(t, out, args...)
		if err := child.Wait(); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		written, err := os.ReadFile(out.Name())
		out.Close()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%v wrote %d bytes:\n%s", args, len(written), written)
		if !strings.Contains(string(written), "moved 20000") {
			t.Fatalf("migrate printed:\n%s", written)
		}
		if len(written) >= 8<<10 || strings.Contains(string(written), "\r") {
			t.Errorf("migrate of %d keys into a file wrote %d bytes (goal: under 8 KB), carriage returns: %v",
				keys, len(written), strings.Contains(string(written), "\r"))
		}
		if tc.quiet && strings.Contains(string(written), "ETA") {
			t.Errorf("-q still reported progress:\n%s", written)
		}
	}
}
