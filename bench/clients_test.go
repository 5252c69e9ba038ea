package bench

// Quick per-client benchmarks for benchstat. cmd/clientbench is the full
// comparison (interleaved runs, latency percentiles, CPU per op); these are
// for a fast before/after check of one client:
//
//	go test -run '^$' -bench 'Get/size=64/conc=64' -benchmem -count 6 . | tee new.txt
//	benchstat -col /client new.txt

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ziplinekv/zipline/cmd/zipline/bench/sysstat"
	"github.com/ziplinekv/zipline/testbed"
)

var (
	serverOnce sync.Once
	server     *testbed.Server
	serverErr  error
)

// benchServer starts one redis-server for the whole test binary.
func benchServer(b *testing.B) *testbed.Server {
	serverOnce.Do(func() { server, serverErr = testbed.Start(testbed.Config{}) })
	if errors.Is(serverErr, testbed.ErrNoBinary) {
		b.Skip(serverErr)
	}
	if serverErr != nil {
		b.Fatal(serverErr)
	}
	return server
}

func TestMain(m *testing.M) {
	code := m.Run()
	if server != nil {
		server.Stop()
	}
	os.Exit(code)
}

var (
	benchSizes = []int{64, 2048}
	benchConc  = []int{1, 8, 64, 512}
)

func BenchmarkGet(b *testing.B) { benchOp(b, true) }
func BenchmarkSet(b *testing.B) { benchOp(b, false) }

// benchOp runs b.N operations per sub-benchmark named
// size=<bytes>/conc=<goroutines>/client=<name>, so benchstat can put clients
// side by side with -col /client. conc=1 is a plain loop; larger values use
// RunParallel with SetParallelism(conc/GOMAXPROCS), rounded up, and the name
// gives the real goroutine count.
func benchOp(b *testing.B, get bool) {
	srv := benchServer(b)
	procs := runtime.GOMAXPROCS(0)
	for _, size := range benchSizes {
		val := Value(size)
		for _, conc := range benchConc {
			par := 0
			if conc > 1 {
				par = (conc + procs - 1) / procs
				conc = par * procs
			}
			for _, f := range All() {
				if f.Batch > 1 {
					continue // one command per call here; clientbench runs the batch forms
				}
				name := fmt.Sprintf("size=%d/conc=%d/client=%s", size, conc, f.Name)
				b.Run(name, func(b *testing.B) {
					benchCell(b, srv, f, get, val, conc, par)
				})
			}
		}
	}
}

func benchCell(b *testing.B, srv *testbed.Server, f Factory, get bool, val []byte, conc, par int) {
	if err := Prefill(srv.Addr, val); err != nil {
		b.Fatal(err)
	}
	c, err := f.New(srv.Addr, conc)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	op := func(k string) error {
		if !get {
			return c.Set(ctx, k, val)
		}
		n, err := c.Get(ctx, k)
		if err == nil && n != len(val) {
			err = fmt.Errorf("GET %s: %d bytes, want %d", k, n, len(val))
		}
		return err
	}
	if err := op(Keys[0]); err != nil {
		b.Fatal(err)
	}
	cpu0 := sysstat.Take(srv.PID())
	b.ReportAllocs()
	b.ResetTimer()
	if par == 0 {
		for i := 0; i < b.N; i++ {
			if err := op(Keys[i%NumKeys]); err != nil {
				b.Fatal(err)
			}
		}
	} else {
		var next atomic.Int64
		var failed atomic.Value
		b.SetParallelism(par)
		b.RunParallel(func(pb *testing.PB) {
			i := int(next.Add(NumKeys/int64(conc)+1)) % NumKeys
			for pb.Next() {
				if err := op(Keys[i]); err != nil {
					failed.CompareAndSwap(nil, err)
				}
				if i++; i == NumKeys {
					i = 0
				}
			}
		})
		if err, _ := failed.Load().(error); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if used := sysstat.Take(srv.PID()).Sub(cpu0); used.ServerOK && b.N > 0 {
		b.ReportMetric(float64(used.Server)/1e3/float64(b.N), "redis-us/op")
	}
}

// The batch form walks the keys n at a time, wrapping before the end, and
// its GETs read back what its SETs wrote (the length check is the op's).
func TestBatchOp(t *testing.T) {
	srv, err := testbed.Start(testbed.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	f, ok := Lookup("zipline-batch16")
	if !ok || f.Batch != 16 {
		t.Fatalf("zipline-batch16: %+v, %v", f, ok)
	}
	for _, pf := range mustPick(t, "") {
		if pf.Batch > 1 {
			t.Fatalf("the default list holds the batch form %s", pf.Name)
		}
	}
	c, err := f.New(srv.Addr, 512)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	val := Value(100)
	ctx := t.Context()
	set, get := BatchOp(c.(Batcher), false, 16, 990, val), BatchOp(c.(Batcher), true, 16, 990, val)
	for range 2 * NumKeys / 16 {
		if err := set(ctx); err != nil {
			t.Fatal(err)
		}
		if err := get(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := BatchOp(c.(Batcher), true, 16, 0, Value(99))(ctx); !errors.Is(err, errBadLen) {
		t.Fatalf("a GET batch of the wrong length: %v, want errBadLen", err)
	}
}

func mustPick(t *testing.T, list string) []Factory {
	t.Helper()
	fs, err := Pick(list)
	if err != nil {
		t.Fatal(err)
	}
	return fs
}
