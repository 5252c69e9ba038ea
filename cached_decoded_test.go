package zipline

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/codec"
)

// GetDecoded decodes each cached copy once per tag: hits on that copy
// return what was kept, a write elsewhere (its invalidation) makes the next
// read decode the new value, and a kept value counts in the cache's bytes.
func TestCachedGetDecodedKeepsOneDecodePerCopy(t *testing.T) {
	c, w, _ := cachedClient(t, ClientCache{}, Options{})
	ctx := context.Background()
	if err := w.Set(ctx, "n", []byte("41")); err != nil {
		t.Fatal(err)
	}
	decodes := 0
	decode := func(b []byte) (any, error) {
		decodes++
		return strconv.Atoi(string(b))
	}
	v := c.Cached(time.Minute)
	tagA, tagB := new(int), new(int)
	read := func(tag any, want int) {
		t.Helper()
		got, err := v.GetDecoded(ctx, "n", tag, decode)
		if err != nil || got != want {
			t.Fatalf("GetDecoded: %v %v, want %d", got, err, want)
		}
	}
	bytesBefore := c.Stats().Cache.Bytes
	read(tagA, 41) // the miss: decoded, and kept beside the copy it filled
	for range 100 {
		read(tagA, 41)
	}
	if decodes != 1 {
		t.Fatalf("a miss and 100 hits decoded %d times, want 1", decodes)
	}
	// The entry (key, value, bookkeeping) and the kept value, counted as
	// the bytes it came from.
	want := int64(len("n")+len("41")+entryOverhead) + int64(len("41"))
	if grown := c.Stats().Cache.Bytes - bytesBefore; grown != want {
		t.Fatalf("the entry and its decoded value count %d bytes, want %d", grown, want)
	}
	read(tagB, 41) // another decoder's hit decodes for itself...
	read(tagB, 41)
	if decodes != 2 {
		t.Fatalf("a second tag's two hits: %d decodes in all, want 2", decodes)
	}
	if grown := c.Stats().Cache.Bytes - bytesBefore; grown != want {
		t.Fatalf("replacing the kept value counted it again: %d bytes, want %d", grown, want)
	}

	if err := w.Set(ctx, "n", []byte("42")); err != nil {
		t.Fatal(err)
	}
	if err := c.Ping(ctx); err != nil { // the invalidation is read before this reply
		t.Fatal(err)
	}
	read(tagB, 42)
	read(tagB, 42)
	read(tagB, 42)
	if decodes != 3 { // the miss, kept beside the new copy
		t.Fatalf("after a write: %d decodes in all, want 3", decodes)
	}

	// A missing key is Nil, without a call to decode; a decode error is
	// returned and nothing kept.
	if _, err := v.GetDecoded(ctx, "missing", tagA, decode); !errors.Is(err, Nil) {
		t.Fatalf("missing key: %v", err)
	}
	if err := w.Set(ctx, "bad", []byte("x")); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := v.GetDecoded(ctx, "bad", tagA, decode); err == nil {
			t.Fatal("a decode error was not returned")
		}
	}
	if decodes != 6 {
		t.Fatalf("three reads of an undecodable value: %d decodes in all, want 6", decodes)
	}
}

// With the cache off, GetDecoded reads and decodes every time.
func TestCachedGetDecodedWithoutCache(t *testing.T) {
	c, _ := newTestClient(t, Options{})
	ctx := context.Background()
	if err := c.Set(ctx, "n", []byte("7")); err != nil {
		t.Fatal(err)
	}
	decodes := 0
	for range 3 {
		got, err := c.Cached(time.Minute).GetDecoded(ctx, "n", c, func(b []byte) (any, error) {
			decodes++
			return strconv.Atoi(string(b))
		})
		if err != nil || got != 7 {
			t.Fatalf("GetDecoded: %v %v", got, err)
		}
	}
	if decodes != 3 {
		t.Fatalf("%d decodes for 3 reads without a cache", decodes)
	}
}

// Compressed entries, kept compressed or expanded, are decoded once per
// copy too: a kept value spares the hit its expansion as well.
func TestCachedGetDecodedCompressed(t *testing.T) {
	for _, expanded := range []bool{false, true} {
		c, _, _ := cachedClient(t, ClientCache{StoreExpanded: expanded}, Options{Compression: Compression{Backend: codec.Zstd}})
		ctx := context.Background()
		if err := c.Set(ctx, "doc", jsonDoc); err != nil {
			t.Fatal(err)
		}
		decodes := 0
		for range 10 {
			got, err := c.Cached(time.Minute).GetDecoded(ctx, "doc", c, func(b []byte) (any, error) {
				decodes++
				return len(b), nil
			})
			if err != nil || got != len(jsonDoc) {
				t.Fatalf("expanded %v: %v %v", expanded, got, err)
			}
		}
		if decodes > 2 {
			t.Fatalf("expanded %v: 10 reads decoded %d times", expanded, decodes)
		}
	}
}
