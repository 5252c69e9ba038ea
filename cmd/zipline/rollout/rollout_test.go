package rollout

import (
	"bytes"
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/codec"
	"github.com/ziplinekv/zipline/testbed"
	"github.com/ziplinekv/zipline/testbed/servertest"
)

// Count sees every compressed string, hash field and list element under a
// pattern, by backend; Decompress rewrites the strings plain, keeping their
// TTLs, leaves a value that changed since it was read, and counts the hash
// fields it leaves; the client reads the same values before and after.
func TestCountAndDecompress(t *testing.T) {
	srv := servertest.NewServer(t, testbed.Config{})
	ctx := context.Background()
	zc, err := zipline.New(zipline.Options{Addr: srv.Addr, Compression: zipline.Compression{Backend: codec.Zstd,
		Families: zipline.Hashes | zipline.Lists}})
	if err != nil {
		t.Fatal(err)
	}
	defer zc.Close()
	lz, err := zipline.New(zipline.Options{Addr: srv.Addr, Compression: zipline.Compression{Backend: codec.LZ4}})
	if err != nil {
		t.Fatal(err)
	}
	defer lz.Close()
	doc := bytes.Repeat([]byte(`{"name":"a user","role":"reader"}`), 4)
	for i := range 300 {
		key := "s:" + strconv.Itoa(i)
		c := zc
		if i%3 == 0 {
			c = lz
		}
		if err := c.Set(ctx, key, doc, zipline.EX(time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zc.Set(ctx, "s:plain", []byte("small")); err != nil {
		t.Fatal(err)
	}
	if _, err := zc.HSet(ctx, "s:h", zipline.FieldValue{Field: "f", Value: doc}, zipline.FieldValue{Field: "g", Value: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	if _, err := zc.RPush(ctx, "s:l", doc, doc); err != nil {
		t.Fatal(err)
	}
	if err := zc.Set(ctx, "other", doc); err != nil {
		t.Fatal(err)
	}

	n, err := Count(ctx, zc, "s:*", Options{Batch: 50})
	if err != nil {
		t.Fatal(err)
	}
	if n.Keys != 303 || n.Strings != 301 || n.StringsCompressed != 300 || n.HashFields != 2 ||
		n.HashFieldsCompressed != 1 || n.ListElements != 2 || n.ListElementsCompressed != 2 ||
		n.Backends["lz4"] != 100 || n.Backends["zstd"] != 203 {
		t.Fatalf("Count = %+v", n)
	}

	r, err := Decompress(ctx, zc, "s:*", Options{Batch: 64, Rate: 100000})
	if err != nil {
		t.Fatal(err)
	}
	if r.Plain != 300 || r.Changed != 0 || r.Left != 3 {
		t.Fatalf("Decompress = %+v, want 300 rewritten, 3 left (a hash field, two list elements)", r)
	}
	for i := range 300 {
		key := "s:" + strconv.Itoa(i)
		raw, err := zc.Raw().Get(ctx, key)
		if err != nil || !bytes.Equal(raw, doc) {
			t.Fatalf("%s stored %d bytes after the rewrite (%v), want the plaintext", key, len(raw), err)
		}
		if ttl, err := zc.TTL(ctx, key); err != nil || ttl < 59*time.Minute {
			t.Fatalf("%s's TTL after the rewrite: %v %v, want the hour it had", key, ttl, err)
		}
	}
	if raw, _ := zc.Raw().Get(ctx, "other"); !codec.IsCompressed(raw) {
		t.Error("a key the pattern does not match was rewritten")
	}
	if n, _ := Count(ctx, zc, "s:*", Options{}); n.StringsCompressed != 0 {
		t.Errorf("after the rewrite, %d strings are compressed", n.StringsCompressed)
	}
}

// A value that changes between Decompress's read and its rewrite is left
// as the writer left it, and counted as changed.
func TestDecompressLeavesANewerValue(t *testing.T) {
	srv := servertest.NewServer(t, testbed.Config{})
	ctx := context.Background()
	zc, err := zipline.New(zipline.Options{Addr: srv.Addr, Compression: zipline.Compression{Backend: codec.Zstd}})
	if err != nil {
		t.Fatal(err)
	}
	defer zc.Close()
	doc := bytes.Repeat([]byte("compressible "), 20)
	if err := zc.Set(ctx, "k", doc); err != nil {
		t.Fatal(err)
	}
	newer := append([]byte("newer "), doc...)
	// The script compares with what was read: queue it with a stale read.
	stale, err := zc.Raw().Get(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if err := zc.Set(ctx, "k", newer); err != nil {
		t.Fatal(err)
	}
	v, err := rewritePlain.Run(ctx, zc.Raw(), []string{"k"}, stale, doc)
	if n, _ := v.AsInt64(); err != nil || n != 0 {
		t.Fatalf("the rewrite of a changed value ran: %v %v", v, err)
	}
	if got, _ := zc.Get(ctx, "k"); !bytes.Equal(got, newer) {
		t.Fatal("the newer value was replaced")
	}
}
