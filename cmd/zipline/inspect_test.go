package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/cmd/zipline/analyze"
	"github.com/ziplinekv/zipline/codec"
	"github.com/ziplinekv/zipline/testbed"
	"github.com/ziplinekv/zipline/testbed/servertest"
)

// inspect shows a raw value, a GLIDE envelope with its backend and sizes,
// a value written with a server-kept dictionary (readable with the
// namespace), a hash's fields, and a missing key; dict train, list, rotate
// and drop work on the same namespace.
func TestInspectAndDict(t *testing.T) {
	srv := servertest.NewServer(t, testbed.Config{})
	ctx := context.Background()
	c := openClient(t, zipline.Options{Addr: srv.Addr, Compression: zipline.Compression{Backend: codec.LZ4}})
	recs := randomRecords(t)
	if err := c.Raw().Set(ctx, "plain", []byte("hello")); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, "glide", recs[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Raw().HSet(ctx, "h", zipline.FieldValue{Field: "f", Value: []byte("v")}); err != nil {
		t.Fatal(err)
	}
	spec := "prefix=rec:,zip=r:,codec=dict"
	s := openStore(t, c, spec)
	for i, r := range recs[:300] {
		if err := s.Set(ctx, "rec:"+strconv.Itoa(i), r); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	if code := run(ctx, []string{"dict", "train", "-addr", srv.Addr, "-namespace", spec}, &out, &out); code != 0 {
		t.Fatalf("dict train: %d %s", code, out.String())
	}
	// A Store made now writes with the new dictionary at once (one made
	// before switches within its refresh, 10 s).
	s = openStore(t, c, spec)
	if err := s.Set(ctx, "rec:after", recs[1]); err != nil {
		t.Fatal(err)
	}
	// What inspect prints goes to the process's stdout; run it through an
	// inspector writing to a buffer.
	out.Reset()
	in := inspector{c: c.Raw(), out: &out, show: 40, fields: 5, store: s}
	for _, k := range []string{"plain", "glide", "h", "r:0after", "missing"} {
		if err := in.key(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	got := out.String()
	for _, want := range []string{
		`raw, 5 B: hello`,
		`GLIDE envelope, lz4`,
		`field "f"`,
		`with dictionary`,
		`(no such key)`,
		`plaintext (ratio`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("inspect output lacks %q:\n%s", want, got)
		}
	}
	out.Reset()
	if code := run(ctx, []string{"dict", "list", "-addr", srv.Addr, "-namespace", spec}, &out, &out); code != 0 {
		t.Fatalf("dict list: %d %s", code, out.String())
	}
	if code := run(ctx, []string{"inspect", "-addr", srv.Addr}, &out, &out); code != 2 {
		t.Fatalf("inspect without keys exits %d, want 2", code)
	}
}

// inspect -match counts the plain and compressed values under a pattern,
// and migrate -decompress -match rewrites them plain: the two commands of
// the README's rollout, as an operator runs them.
func TestInspectMatchAndDecompress(t *testing.T) {
	srv := servertest.NewServer(t, testbed.Config{})
	ctx := t.Context()
	c := openClient(t, zipline.Options{Addr: srv.Addr, Compression: zipline.Compression{Backend: codec.Zstd}})
	doc := []byte(strings.Repeat(`{"session":"abc","user":7}`, 5))
	for i := range 40 {
		if err := c.Set(ctx, "sess:"+strconv.Itoa(i), doc); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Set(ctx, "sess:small", []byte("1")); err != nil {
		t.Fatal(err)
	}
	inspect := func() string {
		return captureStdout(t, func() error {
			return cmdInspect.exec(ctx, "inspect", []string{"-addr", srv.Addr, "-q", "-match", "sess:*"})
		})
	}
	out := inspect()
	for _, want := range []string{`keys matching "sess:*": 41`, "strings", "compressed 40", "compressed with zstd: 40", "compressed values: 40"} {
		if !strings.Contains(out, want) {
			t.Fatalf("inspect -match printed:\n%s\nwant %q", out, want)
		}
	}
	// analyze counts the compressed values among those it reads.
	js := captureStdout(t, func() error {
		return runAnalyze(ctx, []string{"-addr", srv.Addr, "-json", "-q", "-rate", "0"})
	})
	var r analyze.Report
	if err := json.Unmarshal([]byte(js), &r); err != nil {
		t.Fatal(err)
	}
	compressed := 0
	for _, p := range r.Patterns {
		compressed += p.Compressed
	}
	if compressed != 40 {
		t.Errorf("analyze counted %d compressed values, want 40", compressed)
	}
	out = captureStdout(t, func() error {
		return runMigrate(ctx, []string{"-addr", srv.Addr, "-q", "-decompress", "-match", "sess:*"})
	})
	if !strings.Contains(out, "rewritten plain 40, changed meanwhile 0") || !strings.Contains(out, "every value under the pattern is plain") {
		t.Fatalf("migrate -decompress printed:\n%s", out)
	}
	if out := inspect(); !strings.Contains(out, "compressed values: 0") {
		t.Fatalf("after -decompress, inspect -match printed:\n%s", out)
	}
	if _, _, stderr := runCLI(t, "migrate", "-decompress", "-from", "prefix=a:"); !strings.Contains(stderr, "-decompress needs -match") {
		t.Errorf("migrate -decompress without -match: %q", stderr)
	}
}
