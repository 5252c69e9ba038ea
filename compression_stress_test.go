package zipline

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/codec"
)

// valuePools are 2 MiB of random bytes and 2 MiB of text-like bytes;
// values are slices of them at random offsets, so making one is cheap even
// under the race detector.
var valuePools = func() [2][]byte {
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 2<<20)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	words := []string{"order", "user", "2026-11-22", `"id":`, "true", "London", "<div class=\"card\">", "null", "42"}
	text := make([]byte, 0, 2<<20)
	for len(text) < 2<<20 {
		text = append(text, words[rng.IntN(len(words))]...)
		if rng.IntN(4) == 0 {
			text = append(text, byte('a'+rng.IntN(26)))
		}
	}
	return [2][]byte{random, text[:2<<20]}
}()

// randomValue returns a value of random size up to 1 MiB, log-uniformly
// distributed (so small and large both occur often), either compressible
// (text-like) or not (random bytes). It is a fresh copy.
func randomValue(rng *rand.Rand) []byte {
	n := 0
	if rng.IntN(20) > 0 {
		n = int(math.Exp(rng.Float64() * math.Log(1<<20)))
	}
	pool := valuePools[1]
	if rng.IntN(3) == 0 {
		pool = valuePools[0]
	}
	off := rng.IntN(len(pool) - n + 1)
	return bytes.Clone(pool[off : off+n : off+n])
}

// writeRead is one way of storing a value and one way of reading it back.
type writeRead struct {
	name  string
	write func(ctx context.Context, c *Client, key string, v []byte) error
	read  func(ctx context.Context, c *Client, key string) ([]byte, error)
}

var writeReads = []writeRead{
	{"SET/GET",
		func(ctx context.Context, c *Client, k string, v []byte) error { return c.Set(ctx, k, v) },
		func(ctx context.Context, c *Client, k string) ([]byte, error) { return c.Get(ctx, k) }},
	{"SET EX/GETEX",
		func(ctx context.Context, c *Client, k string, v []byte) error { return c.Set(ctx, k, v, EX(time.Hour)) },
		func(ctx context.Context, c *Client, k string) ([]byte, error) { return c.GetEx(ctx, k, EX(time.Hour)) }},
	{"SETNX/MGET",
		func(ctx context.Context, c *Client, k string, v []byte) error {
			ok, err := c.SetNX(ctx, k, v)
			if err == nil && !ok {
				err = fmt.Errorf("SETNX did not write")
			}
			return err
		},
		func(ctx context.Context, c *Client, k string) ([]byte, error) {
			vs, err := c.MGet(ctx, k)
			if err != nil {
				return nil, err
			}
			return vs[0], nil
		}},
	{"SETEX(Do)/GETDEL",
		func(ctx context.Context, c *Client, k string, v []byte) error {
			_, err := c.Do(ctx, "SETEX", k, 3600, v)
			return err
		},
		func(ctx context.Context, c *Client, k string) ([]byte, error) { return c.GetDel(ctx, k) }},
	{"PSETEX(Do)/GET(Do)",
		func(ctx context.Context, c *Client, k string, v []byte) error {
			_, err := c.Do(ctx, "PSETEX", k, 3600000, v)
			return err
		},
		func(ctx context.Context, c *Client, k string) ([]byte, error) {
			r, err := c.Do(ctx, "GET", k)
			if err != nil {
				return nil, err
			}
			return r.AsBytes()
		}},
	{"MSET/GETSET",
		func(ctx context.Context, c *Client, k string, v []byte) error {
			return c.MSet(ctx, KeyValue{k, v}, KeyValue{k + ":other", []byte("x")})
		},
		func(ctx context.Context, c *Client, k string) ([]byte, error) { return c.GetSet(ctx, k, nil) }},
	{"MSETNX/SET GET",
		func(ctx context.Context, c *Client, k string, v []byte) error {
			_, err := c.MSetNX(ctx, KeyValue{k, v})
			return err
		},
		func(ctx context.Context, c *Client, k string) ([]byte, error) { return c.SetGet(ctx, k, nil) }},
	{"Batch SET/Batch GET",
		func(ctx context.Context, c *Client, k string, v []byte) error {
			b := c.Batch()
			b.Set(k, v)
			return b.Exec(ctx)
		},
		func(ctx context.Context, c *Client, k string) ([]byte, error) {
			b := c.Batch()
			f := b.Get(k)
			if err := b.Exec(ctx); err != nil {
				return nil, err
			}
			return f.Result()
		}},
	{"Tx SET/Tx MGET",
		func(ctx context.Context, c *Client, k string, v []byte) error {
			tx := c.Tx()
			tx.Set(k, v)
			return tx.Exec(ctx)
		},
		func(ctx context.Context, c *Client, k string) ([]byte, error) {
			tx := c.Tx()
			f := tx.MGet(k)
			if err := tx.Exec(ctx); err != nil {
				return nil, err
			}
			vs, err := f.Result()
			if err != nil {
				return nil, err
			}
			return vs[0], nil
		}},
	{"HSET/HGET",
		func(ctx context.Context, c *Client, k string, v []byte) error {
			_, err := c.HSet(ctx, k, FieldValue{"f", v})
			return err
		},
		func(ctx context.Context, c *Client, k string) ([]byte, error) { return c.HGet(ctx, k, "f") }},
	{"HSETNX/HGETALL",
		func(ctx context.Context, c *Client, k string, v []byte) error {
			_, err := c.HSetNX(ctx, k, "f", v)
			return err
		},
		func(ctx context.Context, c *Client, k string) ([]byte, error) {
			m, err := c.HGetAll(ctx, k)
			return m["f"], err
		}},
	{"RPUSH/LPOP",
		func(ctx context.Context, c *Client, k string, v []byte) error {
			_, err := c.RPush(ctx, k, v)
			return err
		},
		func(ctx context.Context, c *Client, k string) ([]byte, error) { return c.LPop(ctx, k) }},
	{"LPUSH+LSET/LRANGE",
		func(ctx context.Context, c *Client, k string, v []byte) error {
			if _, err := c.LPush(ctx, k, []byte("placeholder")); err != nil {
				return err
			}
			return c.LSet(ctx, k, 0, v)
		},
		func(ctx context.Context, c *Client, k string) ([]byte, error) {
			vs, err := c.LRange(ctx, k, 0, 0)
			if err != nil || len(vs) != 1 {
				return nil, fmt.Errorf("LRANGE: %d values, %v", len(vs), err)
			}
			return vs[0], nil
		}},
}

// Values written with compression on are never returned as garbage: 2,000
// random values (1,000 with -short), through every supported write and
// read, come back equal. The codec's fuzz targets cover the values' bytes
// far further; this covers the commands.
func TestCompressionRandomValuesThroughEveryCommand(t *testing.T) {
	n := 2_000
	if testing.Short() {
		n = 1_000
	}
	backends := []codec.Backend{codec.Zstd, codec.LZ4}
	clients := make([]*Client, len(backends))
	for i, b := range backends {
		clients[i], _ = newTestClient(t, Options{Compression: Compression{Backend: b, Families: Hashes | Lists}})
	}
	ctx := context.Background()
	const workers = 8
	var wg sync.WaitGroup
	var mu sync.Mutex
	var stored, compressedBytes, plainBytes int64
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for i := w; i < n; i += workers {
				c := clients[i%len(clients)]
				wr := writeReads[i%len(writeReads)]
				key := fmt.Sprintf("v:%d", i)
				val := randomValue(rng)
				if err := wr.write(ctx, c, key, val); err != nil {
					t.Errorf("%s %s (%d B): write: %v", wr.name, key, len(val), err)
					return
				}
				got, err := wr.read(ctx, c, key)
				if err != nil || !bytes.Equal(got, val) {
					t.Errorf("%s %s (%d B): read %d B, %v", wr.name, key, len(val), len(got), err)
					return
				}
				c.Del(ctx, key, key+":other") // keep the server small
				mu.Lock()
				stored++
				plainBytes += int64(len(val))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for i, c := range clients {
		st := c.Stats().Compression
		compressedBytes += int64(st.BytesOut)
		t.Logf("%s: %d compressed, %d stored as is, ratio %.2f", backends[i], st.Compressed, st.Skipped, st.Ratio())
		if st.Compressed == 0 || st.Skipped == 0 {
			t.Errorf("%s: the mix exercised only one path", backends[i])
		}
	}
	t.Logf("%d values, %.1f MB of plaintext", stored, float64(plainBytes)/1e6)
}
