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

// The cost of operations on a cluster, outside a migration and during one,
// where a write takes two round trips (the new layout, then the old copy's
// deletion), a deletion three, and a read of a present key one.
func BenchmarkCluster(b *testing.B) {
	ctx := context.Background()
	cl := testkit.NewCluster(b, testkit.ClusterConfig{Replicas: -1})
	c, err := zipline.New(zipline.Options{Addrs: cl.Addrs(), Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	v := []byte("12345678")
	ns := Namespace{Prefix: "user:", ZipAs: "u:", Buckets: Dense(100)}
	for _, phase := range []string{"steady", "migrating"} {
		if phase == "migrating" {
			ns.MigrateFrom = &plainUsers
		}
		s, err := New(ctx, c, ns)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(phase+"/set", func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				if err := s.Set(ctx, "user:"+strconv.Itoa(i%100000), v); err != nil {
					b.Fatal(err)
				}
			}
		})
		pairs := make([]zipline.KeyValue, 1000)
		for i := range pairs {
			pairs[i] = zipline.KeyValue{Key: "user:" + strconv.Itoa(i), Value: v}
		}
		if err := s.MSet(ctx, pairs...); err != nil {
			b.Fatal(err)
		}
		b.Run(phase+"/get", func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				if _, err := s.Get(ctx, "user:"+strconv.Itoa(i%1000)); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(phase+"/del", func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				if _, err := s.Del(ctx, "user:"+strconv.Itoa(i%100000)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
