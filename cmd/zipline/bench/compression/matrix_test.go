package compression

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/testbed"
	"github.com/ziplinekv/zipline/testbed/corpus"
	"github.com/ziplinekv/zipline/testbed/servertest"
)

func TestRunMatrix(t *testing.T) {
	srv := servertest.NewServer(t, testbed.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cells := 0
	cfg := MatrixConfig{
		Addr:       srv.Addr,
		Data:       NewDataset(corpus.JSON1884, 200, 1, "test:tps:"),
		Goroutines: []int{3},
		Batches:    []int{1, 4},
		Duration:   60 * time.Millisecond,
		Warmup:     10 * time.Millisecond,
		ServerPID:  srv.PID(),
		AfterCell:  func(*Matrix) { cells++ },
	}
	m, err := RunMatrix(ctx, cfg, ZiplineVariants())
	if err != nil {
		t.Fatal(err)
	}
	if cells != 2 {
		t.Errorf("AfterCell called %d times, want 2", cells)
	}
	if want := 2 * 3 * 2; len(m.Points) != want {
		t.Fatalf("%d points, want %d", len(m.Points), want)
	}
	for _, p := range m.Points {
		if p.Failed != "" || p.Errors != 0 || p.Ops == 0 || p.ClientUS <= 0 || p.P50 <= 0 {
			t.Errorf("%+v", p)
		}
	}
	for _, op := range Ops {
		for _, b := range []Backend{Zstd, LZ4} {
			if x, ok := m.Ratio(ZiplineName, b, op, 3, 4); !ok || x <= 0 {
				t.Errorf("%s %s ratio at g=3 b=4: %v %v", op, b, x, ok)
			}
		}
	}
	// The keys hold the last variant's values, and read back whole.
	v, err := srv.Do(ctx, "DBSIZE")
	if err != nil || v.Int() != 200 {
		t.Errorf("DBSIZE = %d (%v), want 200", v.Int(), err)
	}
}

// fakeClient counts calls; a GET returns fixed lengths, and it can be made
// to fail or to hang until its context ends.
type fakeClient struct {
	getLen  int // bytes GetBatch reports per key
	fail    bool
	hang    bool          // calls of at most hangMin keys wait for their context
	stuck   chan struct{} // calls of at most hangMin keys wait for this
	hangMin int
	calls   atomic.Int64
	closed  atomic.Bool
	maxKeys atomic.Int64
}

func (f *fakeClient) SetBatch(ctx context.Context, keys []string, vals [][]byte) error {
	return f.call(ctx, len(keys))
}

func (f *fakeClient) GetBatch(ctx context.Context, keys []string) (int, error) {
	return f.getLen * len(keys), f.call(ctx, len(keys))
}

func (f *fakeClient) call(ctx context.Context, n int) error {
	f.calls.Add(1)
	if int64(n) > f.maxKeys.Load() {
		f.maxKeys.Store(int64(n))
	}
	switch {
	case f.fail:
		return errors.New("boom")
	case f.hang && n <= f.hangMin:
		<-ctx.Done()
		return ctx.Err()
	case f.stuck != nil && n <= f.hangMin:
		<-f.stuck
		return errors.New("released")
	}
	time.Sleep(50 * time.Microsecond)
	return nil
}

func (f *fakeClient) Get(ctx context.Context, key string) ([]byte, error) { return nil, nil }
func (f *fakeClient) Close() error                                        { f.closed.Store(true); return nil }

func fakeVariant(f *fakeClient, b Backend) Variant {
	return Variant{Client: "fake", Backend: b, New: func(context.Context, string) (Client, error) { return f, nil }}
}

// fixedData is a data set whose values are all size bytes long.
func fixedData(n, size int) Dataset {
	d := Dataset{Class: corpus.Class{Kind: corpus.JSON, Target: size}}
	for i := range n {
		d.Keys = append(d.Keys, "k"+string(rune('a'+i%26)))
		d.Values = append(d.Values, make([]byte, size))
	}
	return d
}

func TestRunMatrixFake(t *testing.T) {
	good := &fakeClient{getLen: 10}
	bad := &fakeClient{fail: true}
	short := &fakeClient{getLen: 9} // GET returns the wrong length
	cfg := MatrixConfig{Data: fixedData(20, 10), Goroutines: []int{2}, Batches: []int{5},
		Duration: 30 * time.Millisecond, Warmup: 5 * time.Millisecond}
	m, err := RunMatrix(context.Background(), cfg, []Variant{fakeVariant(good, None), fakeVariant(bad, Zstd), fakeVariant(short, LZ4)})
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range Ops {
		if p, ok := m.Point("fake", None, op, 2, 5); !ok || p.Ops == 0 || p.Ops%5 != 0 || p.Errors != 0 {
			t.Errorf("good %s: %+v", op, p)
		}
		if p, _ := m.Point("fake", Zstd, op, 2, 5); !strings.Contains(p.Failed, "boom") {
			t.Errorf("failing client %s: Failed = %q", op, p.Failed)
		}
	}
	if p, _ := m.Point("fake", LZ4, Set, 2, 5); p.Failed != "" {
		t.Errorf("short SET failed: %q", p.Failed)
	}
	if p, _ := m.Point("fake", LZ4, Get, 2, 5); !strings.Contains(p.Failed, "want 50") {
		t.Errorf("short GET: Failed = %q, want a length mismatch", p.Failed)
	}
	if good.maxKeys.Load() != 20 || !good.closed.Load() {
		t.Errorf("largest call %d keys (prefill writes all 20 at once), closed %v", good.maxKeys.Load(), good.closed.Load())
	}
	if _, err := RunMatrix(context.Background(), MatrixConfig{Data: fixedData(3, 1), Batches: []int{5}}, nil); err == nil {
		t.Error("3 keys for batch 5: no error")
	}
}

// A client that returns only when its context ends is cancelled after
// StopTimeout; one that never returns is abandoned, and its GET phase
// skipped, without hanging the run.
func TestRunMatrixStuck(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	slow := &fakeClient{getLen: 1, hang: true, hangMin: 1}
	stuck := &fakeClient{getLen: 1, stuck: release, hangMin: 1}
	cfg := MatrixConfig{Data: fixedData(10, 1), Goroutines: []int{2}, Batches: []int{1},
		Duration: 20 * time.Millisecond, Warmup: 5 * time.Millisecond, StopTimeout: 50 * time.Millisecond}
	start := time.Now()
	m, err := RunMatrix(context.Background(), cfg, []Variant{fakeVariant(slow, None), fakeVariant(stuck, Zstd)})
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatalf("took %v", time.Since(start))
	}
	// Every call hangs, so nothing succeeded, and the point says why.
	if p, _ := m.Point("fake", None, Set, 2, 1); !strings.Contains(p.Failed, "no successful calls") || !strings.Contains(p.FirstErr, "cancelled") {
		t.Errorf("slow: Failed %q, FirstErr %q", p.Failed, p.FirstErr)
	}
	if p, _ := m.Point("fake", Zstd, Set, 2, 1); !strings.Contains(p.Failed, "abandoned") {
		t.Errorf("stuck SET: Failed %q", p.Failed)
	}
	if p, _ := m.Point("fake", Zstd, Get, 2, 1); !strings.Contains(p.Failed, "skipped") {
		t.Errorf("stuck GET: Failed %q", p.Failed)
	}
	if stuck.closed.Load() {
		t.Error("an abandoned client was closed while its goroutines may still use it")
	}
}
