package layout

import (
	"context"
	"errors"
	stdflag "flag"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/codec"
	"github.com/ziplinekv/zipline/internal/testkit"
)

var soakFor = stdflag.Duration("soak", 0, "run the rolling restart twice round (make soak)")

// A namespace in buckets, compressed, through a rolling restart of a
// cluster as operators run one (shard by shard: the replica restarted,
// CLUSTER FAILOVER to it, the former primary restarted), while 64
// goroutines write their own ids with Set, SetEX (a script: the restarted
// nodes have an empty script cache) and MSet, and read them with Get and
// MGet. No call fails, every value read is one the load wrote, and every
// acknowledged write reads back afterwards, with the TTL SetEX gave.
func TestStoreRollingRestartUnderLoad(t *testing.T) {
	cl := testkit.NewCluster(t, testkit.ClusterConfig{Kind: testkit.Valkey})
	ctx := context.Background()
	c, err := zipline.New(zipline.Options{Addrs: cl.Addrs(), Logger: quiet, ReadFrom: zipline.ReadPreferReplica})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ns := Namespace{Prefix: "user:", ZipAs: "u:", Buckets: Dense(50),
		Codec: zipline.Compression{Backend: codec.Zstd, MinSize: 32}}
	s, err := New(ctx, c, ns)
	if err != nil {
		t.Fatal(err)
	}

	const callers, idsEach = 64, 40
	var (
		acked, tried [callers * idsEach]atomic.Int64
		ok           atomic.Int64
		mu           sync.Mutex
		failures     []string
		wg           sync.WaitGroup
	)
	stop := make(chan struct{})
	value := func(seq int64) []byte {
		return []byte(strconv.FormatInt(seq, 10) + " " + strings.Repeat("a record of the user ", 3))
	}
	seqOf := func(v []byte) (int64, bool) {
		num, rest, _ := strings.Cut(string(v), " ")
		n, err := strconv.ParseInt(num, 10, 64)
		return n, err == nil && rest == strings.Repeat("a record of the user ", 3)
	}
	fail := func(format string, args ...any) {
		mu.Lock()
		failures = append(failures, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	for g := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := func(j int) int { return g + callers*j } // this goroutine's own ids
			key := func(i int) string { return "user:" + strconv.Itoa(i) }
			for seq := int64(1); ; seq++ {
				select {
				case <-stop:
					return
				default:
				}
				cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				j := int(seq) % idsEach
				i := id(j)
				var err error
				switch seq % 5 {
				case 0, 1:
					tried[i].Store(seq)
					if seq%5 == 0 {
						err = s.Set(cctx, key(i), value(seq))
					} else {
						err = s.SetEX(cctx, key(i), value(seq), time.Hour)
					}
					if err == nil {
						acked[i].Store(seq)
					}
				case 2:
					i2 := id((j + 1) % idsEach)
					tried[i].Store(seq)
					tried[i2].Store(seq)
					if err = s.MSet(cctx, zipline.KeyValue{Key: key(i), Value: value(seq)}, zipline.KeyValue{Key: key(i2), Value: value(seq)}); err == nil {
						acked[i].Store(seq)
						acked[i2].Store(seq)
					}
				case 3:
					var v []byte
					if v, err = s.Get(cctx, key(i)); err == nil {
						if n, good := seqOf(v); !good || n > tried[i].Load() {
							fail("GET %s: a value the load did not write (%d bytes)", key(i), len(v))
						}
					} else if errors.Is(err, zipline.Nil) {
						err = nil
					}
				case 4:
					var vs [][]byte
					if vs, err = s.MGet(cctx, key(i), key(id((j+7)%idsEach))); err == nil {
						for _, v := range vs {
							if _, good := seqOf(v); v != nil && !good {
								fail("MGET: a value the load did not write (%d bytes)", len(v))
							}
						}
					}
				}
				cancel()
				if err != nil {
					fail("call %d failed: %v", seq%5, err)
					time.Sleep(time.Millisecond) // an application's retry pause, not synchronisation
					continue
				}
				ok.Add(1)
			}
		}()
	}
	waitOK := func(n int64) {
		t.Helper()
		target := ok.Load() + n
		for deadline := time.Now().Add(20 * time.Second); ok.Load() < target; {
			if time.Now().After(deadline) {
				t.Fatalf("the load made no progress: %d ok", ok.Load())
			}
			time.Sleep(time.Millisecond) // polling progress, bounded
		}
	}
	waitOK(5000)
	rounds := 1
	if *soakFor != 0 {
		rounds = 2
	}
	for step := range 3 * rounds {
		if _, err := cl.RollShard(ctx, step%3, false); err != nil {
			close(stop)
			wg.Wait()
			t.Fatal(err)
		}
		waitOK(1000)
	}
	close(stop)
	wg.Wait()
	for i, f := range failures {
		if i == 10 {
			t.Errorf("... %d in all", len(failures))
			break
		}
		t.Error(f)
	}

	// Read back through a Client on the primaries (the load's read from
	// replicas, which may lag).
	reader, err := zipline.New(zipline.Options{Addrs: cl.Addrs(), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	rs, err := New(ctx, reader, ns)
	if err != nil {
		t.Fatal(err)
	}
	withTTL := 0
	for i := range acked {
		k := "user:" + strconv.Itoa(i)
		v, err := rs.Get(ctx, k)
		var got int64
		switch {
		case errors.Is(err, zipline.Nil):
		case err != nil:
			t.Fatalf("reading %s back: %v", k, err)
		default:
			var good bool
			if got, good = seqOf(v); !good {
				t.Fatalf("%s holds a value the load did not write (%d bytes)", k, len(v))
			}
		}
		if a, tr := acked[i].Load(), tried[i].Load(); got < a || got > tr {
			t.Errorf("%s holds %d: acknowledged %d, tried up to %d", k, got, a, tr)
		}
		if got == 0 {
			continue
		}
		ttl, err := rs.TTL(ctx, k)
		switch {
		case err != nil:
			t.Fatalf("TTL %s: %v", k, err)
		case got%5 == 1 && (ttl <= 0 || ttl > time.Hour):
			t.Errorf("%s, written by SetEX with an hour, has TTL %v", k, ttl)
		case got%5 == 1:
			withTTL++
		case ttl != zipline.NoExpiry:
			t.Errorf("%s, written by Set or MSet, has TTL %v", k, ttl)
		}
	}
	names := NamesFor(ns, 128, 64)
	place, err := names.Place("user:0")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := reader.HGet(ctx, place.Bucket, place.Field)
	if err != nil || !codec.IsCompressed(raw) {
		t.Errorf("user:0 is stored as %d bytes, not compressed (%v)", len(raw), err)
	}
	t.Logf("%d calls ok through %d switches; %d values read back, %d with SetEX's TTL", ok.Load(), 3*rounds, len(acked), withTTL)
}
