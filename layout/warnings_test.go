package layout

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"testing"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/internal/testkit"
)

// has reports whether ws holds a warning of kind.
func has(ws []Warning, kind WarningKind) bool {
	for _, w := range ws {
		if w.Kind == kind {
			return true
		}
	}
	return false
}

// TestWarnings checks each of New's warnings against real servers: Redis
// 7.0 has no hash field expiry, Valkey 9.1 has it and keeps hashes with
// expiring fields as hashtables.
func TestWarnings(t *testing.T) {
	ctx := context.Background()
	for _, kind := range []testkit.Kind{testkit.Redis, testkit.Valkey} {
		t.Run(string(kind), func(t *testing.T) {
			var rec testkit.LogRecorder
			srv := testkit.NewServer(t, testkit.Config{Kind: kind})
			c, err := zipline.New(zipline.Options{Addr: srv.Addr, Logger: slogTo(&rec)})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			s := openStore(t, c, Namespace{Prefix: "user:", ZipAs: "u:", Buckets: Dense(100)})
			ws := s.Warnings()
			if got := s.Server(); got.Kind != string(kind) || got.Version == "" || got.MaxListpackEntries != 512 {
				t.Errorf("Server() = %+v", got)
			}
			// Field TTL: Redis 7.0 lacks it, Valkey 9.1 has it.
			wantNoTTL := kind == testkit.Redis
			if has(ws, WarnNoFieldTTL) != wantNoTTL || s.Server().FieldTTL == wantNoTTL {
				t.Errorf("WarnNoFieldTTL: %v, FieldTTL %v; want warning %v", ws, s.Server().FieldTTL, wantNoTTL)
			}
			if has(ws, WarnVolatileHashtable) != (kind == testkit.Valkey) {
				t.Errorf("WarnVolatileHashtable: %v", ws)
			}
			if has(ws, WarnOverflow) || has(ws, WarnCostlier) {
				t.Errorf("Dense(100) on a default server: unexpected warnings %v", ws)
			}
			// BucketTTL answers the missing field TTL.
			if s := openStore(t, c, Namespace{Prefix: "user:", ZipAs: "t:", Buckets: Dense(100), BucketTTL: 3600e9}); has(s.Warnings(), WarnNoFieldTTL) {
				t.Errorf("with BucketTTL: %v", s.Warnings())
			}
			// Buckets larger than the server keeps compact.
			big := openStore(t, c, Namespace{Prefix: "user:", ZipAs: "v:", Buckets: Dense(1000)})
			if !has(big.Warnings(), WarnOverflow) {
				t.Errorf("Dense(1000): no WarnOverflow in %v", big.Warnings())
			}
			if _, err := New(ctx, c, Namespace{Prefix: "user:", ZipAs: "v:", Buckets: Dense(1000), Overflow: OverflowRefuse}); err == nil ||
				!strings.Contains(err.Error(), "hash-max-listpack-entries 512") {
				t.Errorf("Dense(1000) with OverflowRefuse: err %v", err)
			}
			// Buckets too small to share their key's cost.
			tiny := openStore(t, c, Namespace{Prefix: "user:", ZipAs: "w:", Buckets: Dense(1)})
			if !has(tiny.Warnings(), WarnCostlier) {
				t.Errorf("Dense(1): no WarnCostlier in %v", tiny.Warnings())
			}
			// Values mostly too large for a bucket: found by the writes.
			large := openStore(t, c, Namespace{Prefix: "user:", ZipAs: "x:", Buckets: Dense(100)})
			pairs := make([]zipline.KeyValue, 0, oversizeWarnAfter)
			for i := range oversizeWarnAfter {
				pairs = append(pairs, zipline.KeyValue{Key: "user:" + strconv.Itoa(i), Value: randomBytes(200)})
			}
			if err := large.MSet(ctx, pairs[:oversizeWarnAfter-1]...); err != nil {
				t.Fatal(err)
			}
			if has(large.Warnings(), WarnCostlier) {
				t.Errorf("WarnCostlier after %d writes, before %d", oversizeWarnAfter-1, oversizeWarnAfter)
			}
			if err := large.Set(ctx, pairs[oversizeWarnAfter-1].Key, pairs[oversizeWarnAfter-1].Value); err != nil {
				t.Fatal(err)
			}
			if !has(large.Warnings(), WarnCostlier) {
				t.Errorf("%d oversize values: no WarnCostlier in %v", oversizeWarnAfter, large.Warnings())
			}
			// Each warning is logged once.
			var logged int
			for _, line := range rec.Lines() {
				if strings.Contains(line, "larger than hash-max-listpack-value") {
					logged++
				}
			}
			if logged != 1 {
				t.Errorf("the oversize warning was logged %d times, want 1:\n%s", logged, strings.Join(rec.Lines(), "\n"))
			}
		})
	}
}

// TestWarningsTinyListpack checks WarnCostlier on a server that keeps no
// hash in a listpack.
func TestWarningsTinyListpack(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{Args: []string{"--hash-max-listpack-entries", "0"}})
	c, err := zipline.New(zipline.Options{Addr: srv.Addr, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s := openStore(t, c, Namespace{Prefix: "user:", ZipAs: "u:", Buckets: Hashed(16)})
	if !has(s.Warnings(), WarnCostlier) {
		t.Errorf("hash-max-listpack-entries 0: no WarnCostlier in %v", s.Warnings())
	}
}

// TestDenseAuto checks that DenseAuto takes 126 entries on a default
// server, the server's limit where it is lower, and the size recorded by
// the namespace's first Store whatever the server says later.
func TestDenseAuto(t *testing.T) {
	ctx := context.Background()
	for _, kind := range []testkit.Kind{testkit.Redis, testkit.Valkey} {
		t.Run(string(kind), func(t *testing.T) {
			c, _ := newClient(t, kind)
			s := openStore(t, c, Namespace{Prefix: "user:", ZipAs: "u:", Buckets: DenseAuto()})
			if got := s.buckets.String(); got != "Dense(126)" {
				t.Fatalf("DenseAuto on a default server: %s", got)
			}
			if err := s.Set(ctx, "user:300", []byte("v")); err != nil {
				t.Fatal(err)
			}
			// 300 = 2*126 + 48: bucket 2, field 48.
			if v, err := c.HGet(ctx, "u:#2", "48"); err != nil || string(v) != "v" {
				t.Fatalf("HGET u:#2 48 = %q, %v", v, err)
			}
			if _, err := c.Do(ctx, "CONFIG", "SET", "hash-max-listpack-entries", "64"); err != nil {
				t.Fatal(err)
			}
			again := openStore(t, c, Namespace{Prefix: "user:", ZipAs: "u:", Buckets: DenseAuto()})
			if got := again.buckets.String(); got != "Dense(126)" || !has(again.Warnings(), WarnOverflow) {
				t.Errorf("after the limit fell to 64: %s, warnings %v; want Dense(126) and WarnOverflow", got, again.Warnings())
			}
			if v, err := again.Get(ctx, "user:300"); err != nil || string(v) != "v" {
				t.Errorf("Get = %q, %v", v, err)
			}
			fresh := openStore(t, c, Namespace{Prefix: "user:", ZipAs: "f:", Buckets: DenseAuto()})
			if got := fresh.buckets.String(); got != "Dense(64)" {
				t.Errorf("a new namespace on a server with limit 64: %s", got)
			}
			var n int
			for k, err := range s.Scan(ctx) {
				if err != nil || k != "user:300" {
					t.Errorf("Scan: %q, %v", k, err)
				}
				n++
			}
			if c, err := s.Count(ctx); n != 1 || err != nil || c != 1 {
				t.Errorf("Scan listed %d keys, Count %d (%v); want 1: the recorded size is no key", n, c, err)
			}
		})
	}
}

// slogTo is a logger that records into rec.
func slogTo(rec *testkit.LogRecorder) *slog.Logger { return slog.New(rec) }
