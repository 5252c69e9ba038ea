package zipline

import (
	"context"
	"strconv"
	"testing"

	"github.com/ziplinekv/zipline/internal/testkit"
	"github.com/ziplinekv/zipline/testbed/corpus"
)

// Benchmarks against a real server started for the run. Compare with
// benchstat; bench/ has the comparison with other clients.
//
//	go test -run '^$' -bench 'Parallel' -benchmem -count 6 .

func benchClient(b *testing.B, opts Options) *Client {
	b.Helper()
	srv := testkit.NewServer(b, testkit.Config{})
	opts.Addr = srv.Addr
	opts.Logger = quiet
	c, err := New(opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return c
}

func benchKeys(b *testing.B, c *Client, val []byte) []string {
	keys := make([]string, 1000)
	batch := c.Batch()
	for i := range keys {
		keys[i] = "bench:" + strconv.Itoa(i)
		batch.Set(keys[i], val)
	}
	if err := batch.Exec(context.Background()); err != nil {
		b.Fatal(err)
	}
	return keys
}

func parallelGet(ctx context.Context, c *Client, key string, _ []byte) error {
	_, err := c.Get(ctx, key)
	return err
}

func parallelSet(ctx context.Context, c *Client, key string, val []byte) error {
	return c.Set(ctx, key, val)
}

func BenchmarkParallelGet(b *testing.B)   { benchParallel(b, 64, parallelGet) }
func BenchmarkParallelSet(b *testing.B)   { benchParallel(b, 64, parallelSet) }
func BenchmarkParallelGet2K(b *testing.B) { benchParallel(b, 2048, parallelGet) }
func BenchmarkParallelSet2K(b *testing.B) { benchParallel(b, 2048, parallelSet) }

// benchParallel runs op on values of size bytes under 1,000 keys from 1 to
// 512 goroutines sharing one Client, and reports how many requests each
// write to the connection carried.
func benchParallel(b *testing.B, size int, op func(ctx context.Context, c *Client, key string, val []byte) error) {
	for _, goroutines := range []int{1, 8, 16, 32, 64, 512} {
		b.Run("g"+strconv.Itoa(goroutines), func(b *testing.B) {
			c := benchClient(b, Options{})
			keys := benchKeys(b, c, make([]byte, size))
			val := make([]byte, size)
			ctx := context.Background()
			b.ReportAllocs()
			b.SetParallelism(max(goroutines/max(1, testingProcs()), 1))
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					if err := op(ctx, c, keys[i%len(keys)], val); err != nil {
						b.Error(err)
						return
					}
					i++
				}
			})
			st := c.Stats()
			b.ReportMetric(float64(st.Requests)/float64(max(st.Writes, 1)), "reqs/write")
		})
	}
}

func BenchmarkSerialSetGet(b *testing.B) {
	c := benchClient(b, Options{})
	ctx := context.Background()
	val := make([]byte, 64)
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Set(ctx, "k", val); err != nil {
			b.Fatal(err)
		}
		if _, err := c.Get(ctx, "k"); err != nil {
			b.Fatal(err)
		}
	}
}

func testingProcs() int { return runtimeGOMAXPROCS() }

// BenchmarkBatchSet sends batches of ~1.9 KB JSON documents, as GLIDE's
// compression benchmark does; batches of 50 are about 95 KB. At 500
// goroutines tens of megabytes wait in the queue at once.
func BenchmarkBatchSet(b *testing.B) {
	docs := corpus.Generate(corpus.JSON1884, 1000, 1)
	for _, batch := range []int{20, 50} {
		for _, goroutines := range []int{4, 500} {
			b.Run("b"+strconv.Itoa(batch)+"/g"+strconv.Itoa(goroutines), func(b *testing.B) {
				c := benchClient(b, Options{})
				ctx := context.Background()
				keys := make([]string, len(docs))
				for i := range keys {
					keys[i] = "doc:" + strconv.Itoa(i)
				}
				b.SetParallelism(max(goroutines/max(1, testingProcs()), 1))
				b.ReportAllocs()
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					i := 0
					for pb.Next() {
						bt := c.Batch()
						for range batch {
							bt.Set(keys[i%len(keys)], docs[i%len(docs)])
							i++
						}
						if err := bt.Exec(ctx); err != nil {
							b.Error(err)
							return
						}
					}
				})
				b.SetBytes(int64(batch * 1884))
			})
		}
	}
}
