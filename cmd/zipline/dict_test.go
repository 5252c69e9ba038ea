package main

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/codec"
	"github.com/ziplinekv/zipline/layout"
	"github.com/ziplinekv/zipline/testbed"
	"github.com/ziplinekv/zipline/testbed/servertest"
)

// A "zipline dict rotate" process killed with SIGKILL part-way through
// its first re-encoding pass, while the application writes and deletes,
// loses nothing and resurrects nothing, and keeps the old dictionary that
// values still name; run again with -no-train, it re-encodes every value
// with the new one. On one server, and on a cluster, where the values are
// on every primary and the dictionaries on one.
func TestDictRotateKilled(t *testing.T) {
	t.Run("server", func(t *testing.T) {
		t.Parallel()
		srv := servertest.NewServer(t, testbed.Config{})
		rotateKilled(t, zipline.Options{Addr: srv.Addr}, srv.Addr)
	})
	t.Run("cluster", func(t *testing.T) {
		t.Parallel()
		cl := servertest.NewCluster(t, testbed.ClusterConfig{Replicas: -1})
		rotateKilled(t, zipline.Options{Addrs: cl.Addrs()}, cl.Addrs()[0])
	})
}

func rotateKilled(t *testing.T, opts zipline.Options, addr string) {
	ctx := context.Background()
	c := openClient(t, opts)
	recs := randomRecords(t)
	// Values as keys of their own (no buckets), so that a pass reads one
	// stored key per value and -rate makes it last.
	const spec = "prefix=rec:,zip=r:,codec=dict"
	const ids = 2000
	s := openStore(t, c, spec)
	model := map[string][]byte{}
	for i := range ids {
		k := "rec:" + strconv.Itoa(i)
		if err := s.Set(ctx, k, recs[i%len(recs)]); err != nil {
			t.Fatal(err)
		}
		model[k] = recs[i%len(recs)]
	}
	// Every value on a first dictionary.
	first, err := s.TrainDictionary(ctx, layout.TrainOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Reencode(ctx, layout.ReencodeOptions{}); err != nil {
		t.Fatal(err)
	}
	// dictOf counts the stored values naming each dictionary, reading
	// them raw: the keys the namespace stores them under, found once (the
	// application below writes and deletes the same keys, which keep
	// their names).
	var stored []string
	for k, err := range c.Raw().Scan(ctx, zipline.ScanOptions{Match: "r:*", Count: 1000}) {
		if err != nil {
			t.Fatal(err)
		}
		stored = append(stored, k)
	}
	dictOf := func() map[uint32]int {
		vals, err := c.Raw().MGet(ctx, stored...)
		if err != nil {
			t.Fatal(err)
		}
		n := map[uint32]int{}
		for _, v := range vals {
			if id, ok := codec.DictionaryOf(v); ok {
				n[id]++
			}
		}
		return n
	}
	if n := dictOf()[first]; n < ids*9/10 {
		t.Fatalf("%d of %d values on the first dictionary", n, ids)
	}

	// The rotation, in a child process: it samples 300 values to train the
	// second dictionary, then re-encodes at 500 keys a second, 4 s a pass.
	var out syncBuffer
	child := startChild(t, &out, "dict", "rotate", "-addr", addr, "-namespace", spec,
		"-samples", "300", "-rate", "500", "-batch", "20")
	killed := false
	defer func() {
		if !killed {
			child.Process.Kill()
			child.Wait()
		}
	}()

	// The application writes and deletes meanwhile, through a Store that
	// switches to the new dictionary at its next refresh.
	rng := rand.New(rand.NewPCG(uint64(len(addr)), 3))
	write := func() {
		k := "rec:" + strconv.Itoa(rng.IntN(ids))
		if rng.IntN(3) == 0 {
			if _, err := s.Del(ctx, k); err != nil {
				t.Fatal(err)
			}
			delete(model, k)
			return
		}
		v := recs[rng.IntN(len(recs))]
		if err := s.Set(ctx, k, v); err != nil {
			t.Fatal(err)
		}
		model[k] = v
	}
	// Kill it once a random number of values name the new dictionary.
	target := 20 + rng.IntN(600)
	var second uint32
	deadline := time.Now().Add(20 * time.Second)
	for {
		write()
		for id, n := range dictOf() {
			if id != first && n >= target {
				second = id
			}
		}
		if second != 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d values on a new dictionary after 20s; the child printed:\n%s", target, out.String())
		}
		time.Sleep(5 * time.Millisecond) // pacing the writes while the child works; the loop ends on what it stored
	}
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	err = child.Wait()
	killed = true
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != -1 || strings.Contains(out.String(), "pass 1:") {
		t.Fatalf("the child was not killed part-way through its first pass (%v):\n%s", err, out.String())
	}
	counts := dictOf()
	if counts[first] == 0 || counts[second] == 0 {
		t.Fatalf("values per dictionary when killed: %v; want some on each", counts)
	}
	t.Logf("killed with %d values on the first dictionary and %d on the second", counts[first], counts[second])
	for range 100 {
		write()
	}

	// Nothing lost or resurrected; both dictionaries kept.
	check := func(when string) {
		t.Helper()
		fresh := openStore(t, c, spec)
		for i := range ids {
			k := "rec:" + strconv.Itoa(i)
			v, err := fresh.Get(ctx, k)
			want, ok := model[k]
			switch {
			case !ok && !errors.Is(err, zipline.Nil):
				t.Fatalf("%s: %s: %d bytes, %v: a deleted value came back", when, k, len(v), err)
			case ok && (err != nil || !bytes.Equal(v, want)):
				t.Fatalf("%s: %s: %d bytes, %v; want %d bytes", when, k, len(v), err, len(want))
			}
		}
	}
	check("after the kill")
	if got, active, err := s.Dictionaries(ctx); err != nil || active != second || len(got) != 2 {
		t.Fatalf("dictionaries after the kill: %v, active %d, %v; want %d and %d, %d active", got, active, err, first, second, second)
	}

	// Run again with -no-train: every value ends on the new dictionary.
	// (Its last step, dropping the first, waits out layout.DictionaryGrace,
	// which the library's tests cover; this run stops there.)
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	var log bytes.Buffer
	resumed := openStore(t, c, spec)
	err = rotate(rctx, resumed, writerFunc(func(b []byte) (int, error) {
		log.Write(b)
		if bytes.Contains(b, []byte("waiting")) {
			stop()
		}
		return len(b), nil
	}), rotateRun{batch: 100, passes: 10})
	if !errors.Is(err, context.Canceled) || !strings.Contains(log.String(), " 0 re-encoded, 0 changed") {
		t.Fatalf("the resumed rotation: %v\n%s", err, log.String())
	}
	t.Logf("the resumed run:\n%s", log.String())
	check("after the resumed run")
	if counts := dictOf(); counts[first] != 0 || counts[second] < len(model)*9/10 {
		t.Fatalf("values per dictionary after the resumed run: %v, of %d values; want none on %d", counts, len(model), first)
	}
}

// syncBuffer is a bytes.Buffer that a child process's output can be
// written to while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// writerFunc is an io.Writer made of a function.
type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }
