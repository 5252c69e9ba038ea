// Package rollout_test runs the README's steps for rolling compression
// out in a fleet where go-redis and zipline services share keys, and back,
// with readers of every kind reading all the while.
package rollout_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/cmd/zipline/rollout"
	"github.com/ziplinekv/zipline/codec"
	"github.com/ziplinekv/zipline/testbed"
	"github.com/ziplinekv/zipline/testbed/servertest"
)

// record is what the services store: JSON long enough to be compressed.
type record struct {
	Key   string `json:"key"`
	Seq   int    `json:"seq"`
	Notes string `json:"notes"`
}

func value(key string, seq int) []byte {
	b, _ := json.Marshal(record{Key: key, Seq: seq,
		Notes: "a session record, long enough that compression would store it compressed, and repetitive enough to compress"})
	return b
}

// plaintext checks that b is a record of key, as written: not an envelope,
// not garbage.
func plaintext(key string, b []byte) error {
	if codec.IsCompressed(b) {
		return fmt.Errorf("%s read as a compressed envelope (%d bytes)", key, len(b))
	}
	var r record
	if err := json.Unmarshal(b, &r); err != nil || r.Key != key {
		return fmt.Errorf("%s read %d bytes that are not its record: %v", key, len(b), err)
	}
	return nil
}

// The rollout, step by step, as the README's "Rolling compression out"
// describes it, with 4 zipline writers, a zipline reader, and go-redis
// readers running through every step:
//
//  0. no compression anywhere;
//  1. every zipline service expands and writes plain (WritePlain), with a
//     rule that keeps the keys go-redis services read (shared:*) plain;
//  2. the writers compress (private:* only);
//  3. turning it off: the writers write plain again, and
//     rollout.Decompress (zipline migrate -decompress) rewrites what is
//     stored, until nothing is compressed;
//  4. compression removed from every zipline service.
//
// No go-redis read of shared:* ever sees an envelope; neither does the
// go-redis reader of private:*, which reads only before step 2 and after
// step 3; no zipline read ever returns anything but the record written.
func TestRollingCompressionOutBesideGoRedis(t *testing.T) {
	srv := servertest.NewServer(t, testbed.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	// The writers keep rewriting 200 keys of each kind; 5,000 private keys
	// more are written once, compressed, in step 2, and left for step 3's
	// rewrite. The readers read all of them.
	const keys, stored = 200, 5000
	shared := func(i int) string { return "shared:" + strconv.Itoa(i%keys) }
	private := func(i int) string { return "private:" + strconv.Itoa(i%keys) }
	anyPrivate := func(i int) string { return "private:" + strconv.Itoa(i%stored) }
	keepShared := []zipline.CompressionRule{{Pattern: "shared:*", Never: true}}
	steps := []zipline.Compression{
		{},
		{Backend: codec.Zstd, Rules: keepShared, WritePlain: true},
		{Backend: codec.Zstd, Rules: keepShared},
		{Backend: codec.Zstd, Rules: keepShared, WritePlain: true},
		{},
	}
	clients := make([]*zipline.Client, len(steps))
	for i, comp := range steps {
		c, err := zipline.New(zipline.Options{Addr: srv.Addr, Logger: quiet, Compression: comp})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		clients[i] = c
	}
	var step atomic.Int32 // the step the fleet is at
	current := func() *zipline.Client { return clients[step.Load()] }
	gr := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer gr.Close()

	var failures atomic.Int64
	fail := func(format string, args ...any) {
		if failures.Add(1) <= 10 {
			t.Errorf(format, args...)
		}
	}
	var reads, goReads atomic.Int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 { // the writers
		wg.Go(func() {
			for i := w; ; i += 4 {
				select {
				case <-done:
					return
				default:
				}
				c := current()
				if err := c.Set(ctx, shared(i), value(shared(i), i)); err != nil {
					fail("SET %s: %v", shared(i), err)
				}
				if err := c.Set(ctx, private(i), value(private(i), i)); err != nil {
					fail("SET %s: %v", private(i), err)
				}
			}
		})
	}
	wg.Go(func() { // a zipline reader of both
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			c := current()
			for _, key := range []string{shared(i), anyPrivate(i)} {
				v, err := c.Get(ctx, key)
				if err == nil {
					err = plaintext(key, v)
				}
				if err != nil && !errorsIsNil(err) {
					fail("zipline reader at step %d: %v", step.Load(), err)
				}
				reads.Add(1)
			}
		}
	})
	// The go-redis reader of private:* reads only while no writer can have
	// compressed them: goPrivate is cleared before step 2, and set again
	// once every private value is plain; goRounds lets the test wait until
	// a round that began before it was cleared has ended.
	var goPrivate atomic.Bool
	var goRounds atomic.Int64
	goPrivate.Store(true)
	wg.Go(func() { // go-redis readers: shared:* always, private:* where no writer compresses
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			goRounds.Add(1)
			keys := []string{shared(i)}
			if goPrivate.Load() {
				keys = append(keys, anyPrivate(i))
			}
			for _, key := range keys {
				v, err := gr.Get(ctx, key).Bytes()
				if err == nil {
					err = plaintext(key, v)
				}
				if err != nil && err != redis.Nil {
					fail("go-redis reader at step %d: %v", step.Load(), err)
				}
				goReads.Add(1)
			}
		}
	})
	// Each step runs until the readers have read a good deal under it.
	settle := func() {
		t.Helper()
		from, goFrom := reads.Load(), goReads.Load()
		for deadline := time.Now().Add(30 * time.Second); reads.Load() < from+2000 || goReads.Load() < goFrom+2000; {
			if time.Now().After(deadline) {
				t.Fatalf("step %d: the readers made no progress", step.Load())
			}
			time.Sleep(5 * time.Millisecond) // bounded poll of the readers' counters
		}
	}
	count := func(match string) rollout.Counts {
		t.Helper()
		n, err := rollout.Count(ctx, clients[0], match, rollout.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}

	settle() // step 0
	step.Store(1)
	settle()
	if n := count("private:*"); n.Compressed() != 0 {
		t.Fatalf("step 1 (every service writes plain): %d values compressed", n.Compressed())
	}
	goPrivate.Store(false)
	for r, deadline := goRounds.Load(), time.Now().Add(10*time.Second); goRounds.Load() < r+2; {
		if time.Now().After(deadline) {
			t.Fatal("the go-redis reader made no progress")
		}
		time.Sleep(time.Millisecond) // bounded poll of the reader's round counter
	}
	step.Store(2)
	for from := keys; from < stored; from += 500 {
		b := clients[2].Batch()
		for i := from; i < from+500; i++ {
			b.Set(anyPrivate(i), value(anyPrivate(i), i))
		}
		if err := b.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	settle()
	if n := count("private:*"); n.StringsCompressed == 0 {
		t.Fatal("step 2: the writers compress, but no private value is stored compressed")
	}
	if n := count("shared:*"); n.Compressed() != 0 {
		t.Fatalf("step 2: %d values the rule keeps plain are stored compressed", n.Compressed())
	}
	step.Store(3)
	settle() // every writer writes plain from here
	if n := count("private:*"); n.StringsCompressed < stored-keys {
		t.Fatalf("step 3 before the rewrite: %d private values compressed, want the %d written once at least", n.StringsCompressed, stored-keys)
	}
	for pass := 1; ; pass++ {
		r, err := rollout.Decompress(ctx, clients[3], "private:*", rollout.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("decompress pass %d: %d strings, %d rewritten plain, %d changed meanwhile", pass, r.Strings, r.Plain, r.Changed)
		if r.Changed == 0 {
			break
		}
		if pass == 10 {
			t.Fatal("values still changed after 10 passes")
		}
	}
	if n := count("private:*"); n.Compressed() != 0 {
		t.Fatalf("after decompressing, %d values are compressed", n.Compressed())
	}
	goPrivate.Store(true)
	step.Store(4)
	settle()
	close(done)
	wg.Wait()
	if n := count("*"); n.Compressed() != 0 {
		t.Errorf("at the end, %d values are compressed", n.Compressed())
	}
	t.Logf("zipline reads %d, go-redis reads %d, failures %d", reads.Load(), goReads.Load(), failures.Load())
}

func errorsIsNil(err error) bool { return err == zipline.Nil }
