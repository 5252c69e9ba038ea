package layout

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

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

// MGet and MSet against plain MGET and MSET, from 64 goroutines (the
// speed table's set-up; bench layouts has the full one), of keys in two
// patterns: random ids (mget10), which fall in as many buckets as keys,
// the namespace's worst case; and runs of consecutive ids from a random
// start (mget10-run: a page of a feed, a user's items), which share one
// or two buckets. Besides ns per key it reports the CPU both processes
// spent per key, client (this process) and server, which on a shared
// machine says more than the rate: the bar is a namespace's total within
// 15 % of plain's.
//
//	go test -run '^$' -bench Multi -benchtime 2s ./layout/
func BenchmarkMulti(b *testing.B) {
	ctx := context.Background()
	srv := testkit.NewServer(b, testkit.Config{})
	c, err := zipline.New(zipline.Options{Addr: srv.Addr, Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	const n = 100_000
	prefix := "set-allBooksBelongToUser:"
	s, err := New(ctx, c, Namespace{Prefix: prefix, ZipAs: "b:", Buckets: Dense(100)})
	if err != nil {
		b.Fatal(err)
	}
	keys := make([]string, n)
	for i := range keys {
		keys[i] = prefix + strconv.Itoa(i)
	}
	value := func(i int) []byte { return strconv.AppendInt(nil, int64(100_000_000+i*7919%900_000_000), 10) }
	for from := 0; from < n; from += 1000 {
		pairs := make([]zipline.KeyValue, 0, 1000)
		for i := from; i < from+1000; i++ {
			pairs = append(pairs, zipline.KeyValue{Key: keys[i], Value: value(i)})
		}
		if err := c.MSet(ctx, pairs...); err != nil {
			b.Fatal(err)
		}
		if err := s.MSet(ctx, pairs...); err != nil {
			b.Fatal(err)
		}
	}
	for _, size := range []int{10, 100} {
		for _, pattern := range []string{"", "-run"} {
			for _, op := range []string{"mget", "mset", "gets"} {
				for _, who := range []string{"plain", "ns"} {
					b.Run(fmt.Sprintf("%s%d%s/%s", op, size, pattern, who), func(b *testing.B) {
						var seed atomic.Uint64
						cpu0, srv0 := selfCPU(), serverCPU(srv.PID())
						b.SetParallelism(32) // 64 goroutines on 2 CPUs
						b.RunParallel(func(pb *testing.PB) {
							rng := rand.New(rand.NewPCG(seed.Add(1), 7))
							ks := make([]string, size)
							idx := make([]int, size)
							pairs := make([]zipline.KeyValue, size)
							for pb.Next() {
								start := rng.IntN(n - size)
								for i := range ks {
									if pattern == "-run" {
										idx[i] = start + i
									} else {
										idx[i] = rng.IntN(n)
									}
									ks[i] = keys[idx[i]]
								}
								var err error
								switch {
								case op == "mget" && who == "plain":
									_, err = c.MGet(ctx, ks...)
								case op == "mget":
									_, err = s.MGet(ctx, ks...)
								case op == "gets" && who == "plain":
									bt := c.Batch()
									for _, k := range ks {
										bt.Get(k)
									}
									err = bt.Exec(ctx)
								case op == "gets":
									bt := c.Batch()
									for _, k := range ks {
										l, _ := s.locate(k)
										bt.HGet(l.bucket, l.field)
									}
									err = bt.Exec(ctx)
								default:
									for i, k := range ks {
										pairs[i] = zipline.KeyValue{Key: k, Value: value(idx[i])}
									}
									if who == "plain" {
										err = c.MSet(ctx, pairs...)
									} else {
										err = s.MSet(ctx, pairs...)
									}
								}
								if err != nil {
									b.Error(err)
									return
								}
							}
						})
						keysDone := float64(b.N * size)
						b.ReportMetric(float64(b.Elapsed().Nanoseconds())/keysDone, "ns/key")
						b.ReportMetric(float64((selfCPU()-cpu0).Nanoseconds())/keysDone, "client-ns/key")
						b.ReportMetric(float64((serverCPU(srv.PID())-srv0).Nanoseconds())/keysDone, "server-ns/key")
					})
				}
			}
		}
	}
}

// selfCPU is this process's user and system CPU time.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// serverCPU is process pid's user and system CPU time (Linux /proc; 0
// elsewhere).
func serverCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	end := bytes.LastIndexByte(b, ')')
	if end < 0 || end+2 > len(b) {
		return 0
	}
	f := strings.Fields(string(b[end+2:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ
}
