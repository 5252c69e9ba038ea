package analyze

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/layout"
	"github.com/ziplinekv/zipline/testbed"
	"github.com/ziplinekv/zipline/testbed/servertest"
)

func TestAllocators(t *testing.T) {
	for _, tc := range []struct {
		n, jemalloc, glibc int
	}{
		{0, 8, 24}, {8, 8, 24}, {9, 16, 24}, {24, 32, 24}, {25, 32, 40}, {128, 128, 136}, {129, 160, 136},
		{1407, 1536, 1416}, {4006, 4096, 4008}, {12879, 14336, 12888}, {65546, 81920, 65560},
	} {
		if got := jemallocUsable(tc.n); got != tc.jemalloc {
			t.Errorf("jemalloc %d: %d, want %d", tc.n, got, tc.jemalloc)
		}
		if got := glibcUsable(tc.n); got != tc.glibc {
			t.Errorf("glibc %d: %d, want %d", tc.n, got, tc.glibc)
		}
	}
}

func TestRedisInt(t *testing.T) {
	for s, want := range map[string]bool{
		"0": true, "7": true, "-5": true, "9223372036854775807": true, "-9223372036854775808": true,
		"": false, "-": false, "-0": false, "007": false, "+5": false, "1.5": false, " 1": false,
		"9223372036854775808": false, "123456789012345678901": false,
	} {
		if _, got := redisInt([]byte(s)); got != want {
			t.Errorf("%q: %v, want %v", s, got, want)
		}
	}
}

// listpackEntry agrees with the server: DEBUG OBJECT's serializedlength
// of a listpack hash is the listpack's exact length (RDB compression
// off) plus a length prefix, so adding a field and a value to a hash of
// some size grows it by exactly their two entries.
func TestListpackEntriesMatchServer(t *testing.T) {
	samples := []string{"0", "127", "128", "4095", "4096", "-4096", "-4097", "32767", "32768", "8388607",
		"8388608", "2147483647", "2147483648", "-1", "007", "1.5", "", "a", strings.Repeat("x", 63),
		strings.Repeat("x", 64), strings.Repeat("x", 200), "9f86d081884c7d659a2feb5e3f6a0c8b"}
	for _, kind := range []testbed.Kind{testbed.Redis, testbed.Valkey} {
		t.Run(string(kind), func(t *testing.T) {
			srv := servertest.NewServer(t, testbed.Config{Kind: kind, Args: []string{"--hash-max-listpack-value", "1024",
				"--rdbcompression", "no", "--enable-debug-command", "yes"}})
			ctx := t.Context()
			c, err := zipline.New(zipline.Options{Addr: srv.Addr, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			serialized := func(key string) int {
				v, err := c.Do(ctx, "DEBUG", "OBJECT", key)
				if err != nil {
					t.Fatal(err)
				}
				text, _ := v.AsString()
				for _, f := range strings.Fields(text) {
					if n, ok := strings.CutPrefix(f, "serializedlength:"); ok {
						i, _ := strconv.Atoi(n)
						return i
					}
				}
				t.Fatalf("DEBUG OBJECT %s: no serializedlength in %q", key, text)
				return 0
			}
			base := strings.Repeat("y", 100) // the length prefix stays 2 bytes
			for i, s := range samples {
				key := "h" + strconv.Itoa(i)
				if _, err := c.Do(ctx, "HSET", key, "base", base); err != nil {
					t.Fatal(err)
				}
				before := serialized(key)
				if _, err := c.Do(ctx, "HSET", key, "f"+s, s); err != nil {
					t.Fatal(err)
				}
				got := serialized(key) - before
				want := listpackEntry([]byte("f"+s)) + listpackEntry([]byte(s))
				if got != want {
					t.Errorf("field %q, value %q: the listpack grew by %d bytes, the model says %d", "f"+s, s, got, want)
				}
			}
		})
	}
}

// The stored names the model prices (layout.NamesFor, from the server's
// listpack limits alone) are those a Store writes: plain keys (zipped),
// buckets, and the keys of oversize values; and the Store places every key
// where NamesFor does.
func TestNamesMatchLayout(t *testing.T) {
	srv := servertest.NewServer(t, testbed.Config{})
	ctx := context.Background()
	c, err := zipline.New(zipline.Options{Addr: srv.Addr, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	keys := []string{"user:1", "user:99", "user:100", "user:12345", "user:007", "user:alice", "user:7:cart",
		"user:" + strings.Repeat("z", 80), "user:#x", "user:0a"}
	value := func(k string) []byte {
		if strings.Contains(k, "cart") {
			return bytes.Repeat([]byte("v"), 300) // oversize in a bucket
		}
		return []byte("v-" + k)
	}
	for _, tc := range []struct {
		name    string
		buckets layout.Buckets
	}{
		{"plain", nil},
		{"dense", layout.Dense(100)},
		{"hashed", layout.Hashed(7)},
		{"hashed-for", layout.HashedFor(1000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := c.FlushAll(ctx); err != nil {
				t.Fatal(err)
			}
			ns := layout.Namespace{Prefix: "user:", ZipAs: "u:", Buckets: tc.buckets}
			st, err := layout.New(ctx, c, ns)
			if err != nil {
				t.Fatal(err)
			}
			// What analyze predicts from the server's listpack limits
			// alone, without a Store.
			cfg, err := c.ConfigGet(ctx, "hash-max-listpack-*")
			if err != nil {
				t.Fatal(err)
			}
			entries, _ := strconv.Atoi(cfg["hash-max-listpack-entries"])
			maxValue, _ := strconv.Atoi(cfg["hash-max-listpack-value"])
			names := layout.NamesFor(ns, entries, maxValue)
			want := map[string]bool{}
			for _, k := range keys {
				if err := st.Set(ctx, k, value(k)); err != nil {
					t.Fatal(err)
				}
				p, err := names.Place(k)
				if err != nil {
					t.Fatal(err)
				}
				if sp, err := st.Place(k); err != nil || sp != p {
					t.Fatalf("%s: NamesFor places it at %+v, the Store at %+v (%v)", k, p, sp, err)
				}
				switch {
				case p.Bucket == "":
					want[p.Key] = true
				case len(value(k)) > 64:
					want[p.Bucket] = true
					want[names.OversizeKey(p)] = true
				default:
					want[p.Bucket] = true
				}
			}
			var got []string
			for k, err := range c.Scan(ctx, zipline.ScanOptions{}) {
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, k)
			}
			var wantList []string
			for k := range want {
				wantList = append(wantList, k)
			}
			slices.Sort(got)
			slices.Sort(wantList)
			if !slices.Equal(got, wantList) {
				t.Errorf("layout stored %q; the model expects %q", got, wantList)
			}
		})
	}
}
