package layout

import (
	"bytes"
	"context"
	"strconv"
	"testing"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/internal/testkit"
)

// datasetMemory is used_memory less client buffers and the script cache,
// once the server has finished rehashing its keyspace: lookups (of a key
// that does not exist) drive an incremental rehash on, so the loop sends
// rounds of them until two readings agree, at most 50 rounds.
func datasetMemory(t *testing.T, ctx context.Context, c *zipline.Client) int64 {
	t.Helper()
	read := func() int64 {
		mem, _, err := datasetBytes(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		return mem
	}
	prev := read()
	for range 50 {
		b := c.Batch()
		for range 2000 {
			b.Exists("no such key")
		}
		if err := b.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		m := read()
		if m == prev {
			return m
		}
		prev = m
	}
	t.Fatal("used_memory kept changing")
	return 0
}

// TestCostsMatchServer measures plain keys and buckets on real servers
// (100,000 keys, the table's Table figure) and holds Costs to them:
// within 3 B a plain key (4 %; Valkey's embedded strings measure up to 2.6 B below the model) and 1.5 B a bucketed pair (buckets written
// by bulk HSETs measured up to 1.2 B a pair apart between runs on a busy
// machine).
func TestCostsMatchServer(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 100,000 keys per case")
	}
	ctx := context.Background()
	const n = 100_000
	name := func(i int) string { return "set-allBooksBelongToUser:" + strconv.Itoa(i) } // the article's keys
	for _, kind := range []testkit.Kind{testkit.Redis, testkit.Valkey} {
		t.Run(string(kind), func(t *testing.T) {
			c, _ := newClient(t, kind)
			s := openStore(t, c, Namespace{Prefix: "set-allBooksBelongToUser:", ZipAs: "b:", Buckets: Dense(100)})
			costs := s.Costs()
			t.Logf("%s: Table %.1f", s.Server(), costs.Table)
			for _, tc := range []struct {
				what  string
				value []byte
			}{
				{"shared integer", []byte("1")},
				{"9-digit integer", []byte("123456789")},
				{"12-byte string", []byte("abcdefghijkl")},
				{"100-byte string", bytes.Repeat([]byte("x"), 100)},
			} {
				if _, err := c.Do(ctx, "FLUSHALL", "SYNC"); err != nil {
					t.Fatal(err)
				}
				before := datasetMemory(t, ctx, c)
				for from := 0; from < n; from += 1000 {
					pairs := make([]zipline.KeyValue, 0, 1000)
					for i := from; i < from+1000; i++ {
						pairs = append(pairs, zipline.KeyValue{Key: name(i), Value: tc.value})
					}
					if err := c.MSet(ctx, pairs...); err != nil {
						t.Fatal(err)
					}
				}
				got := float64(datasetMemory(t, ctx, c)-before) / n
				want := costs.Key(len(name(12345)), tc.value)
				t.Logf("plain key, %s: measured %.1f B, model %.1f B", tc.what, got, want)
				if got < want-3 || got > want+3 {
					t.Errorf("plain key, %s: measured %.1f B, Costs.Key says %.1f", tc.what, got, want)
				}
				// The same values in Dense(100) buckets, if they fit.
				if len(tc.value) > s.maxValue {
					continue
				}
				if _, err := c.Do(ctx, "FLUSHALL", "SYNC"); err != nil {
					t.Fatal(err)
				}
				before = datasetMemory(t, ctx, c)
				for from := 0; from < n; from += 1000 {
					if string(tc.value) == "1" {
						// Counters, as the me-redis table writes them: HINCRBY.
						// (An HSET of a whole bucket of "1"s measures 0.3-0.4 B
						// more a pair on Redis 7.0.)
						b := c.Batch()
						for i := from; i < from+1000; i++ {
							s.In(b).IncrBy(name(i), 1)
						}
						if err := b.Exec(ctx); err != nil {
							t.Fatal(err)
						}
						continue
					}
					pairs := make([]zipline.KeyValue, 0, 1000)
					for i := from; i < from+1000; i++ {
						pairs = append(pairs, zipline.KeyValue{Key: name(i), Value: tc.value})
					}
					if err := s.MSet(ctx, pairs...); err != nil {
						t.Fatal(err)
					}
				}
				got = float64(datasetMemory(t, ctx, c)-before) / n
				// Fields 0..99 take 2 bytes each, like "1".
				want = costs.Pair(100, []byte("1"), tc.value)
				t.Logf("Dense(100) pair, %s: measured %.2f B, model %.2f B", tc.what, got, want)
				if got < want-1.5 || got > want+1.5 {
					t.Errorf("Dense(100) pair, %s: measured %.2f B, Costs.Pair says %.2f", tc.what, got, want)
				}
			}
		})
	}
}
