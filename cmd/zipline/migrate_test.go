package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/internal/testkit"
	"github.com/ziplinekv/zipline/layout"
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
	srv := testkit.NewServer(t, testkit.Config{})
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
