package layout

import (
	"context"
	"strconv"
	"testing"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/internal/testkit"
)

// The cost of a small write into a bucket, which is one call of the ops
// script (so that it can remove the key of an oversize value it replaces):
// one at a time (round-trip bound) and from many goroutines (server bound).
func BenchmarkSetSmall(b *testing.B) {
	ctx := context.Background()
	srv := testkit.NewServer(b, testkit.Config{})
	c, err := zipline.New(zipline.Options{Addr: srv.Addr, Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	s, err := New(ctx, c, Namespace{Prefix: "user:", ZipAs: "u:", Buckets: Dense(100)})
	if err != nil {
		b.Fatal(err)
	}
	v := []byte("12345678")
	b.Run("serial", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if err := s.Set(ctx, "user:"+strconv.Itoa(i%100000), v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.SetParallelism(16)
		b.RunParallel(func(pb *testing.PB) {
			for i := 0; pb.Next(); i++ {
				if err := s.Set(ctx, "user:"+strconv.Itoa(i%100000), v); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
	b.Run("mset100", func(b *testing.B) {
		pairs := make([]zipline.KeyValue, 100)
		for i := 0; b.Loop(); i++ {
			for j := range pairs {
				pairs[j] = zipline.KeyValue{Key: "user:" + strconv.Itoa((i*100+j)%100000), Value: v}
			}
			if err := s.MSet(ctx, pairs...); err != nil {
				b.Fatal(err)
			}
		}
	})
}
