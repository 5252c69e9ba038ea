package zipline

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"
)

func TestBatch(t *testing.T) {
	c, _ := newTestClient(t, Options{})
	ctx := context.Background()
	b := c.Batch()
	set := b.Set("k", []byte("v"))
	get := b.Get("k")
	miss := b.Get("missing")
	incr := b.Incr("n")
	raw := b.Do("HSET", "h", "f", 1)
	if _, err := get.Result(); !errors.Is(err, ErrNotExecuted) {
		t.Fatalf("before Exec: %v", err)
	}
	if b.Len() != 5 {
		t.Fatalf("Len %d", b.Len())
	}
	if err := b.Exec(ctx); err != nil {
		t.Fatalf("Exec: %v (a Nil reply must not fail the batch)", err)
	}
	if ok, err := set.Result(); !ok || err != nil {
		t.Errorf("set: %v %v", ok, err)
	}
	if v, err := get.Result(); string(v) != "v" || err != nil {
		t.Errorf("get: %q %v", v, err)
	}
	if _, err := miss.Result(); !errors.Is(err, Nil) {
		t.Errorf("miss: %v", err)
	}
	if incr.Val() != 1 {
		t.Errorf("incr %d", incr.Val())
	}
	if n, _ := raw.Val().AsInt64(); n != 1 {
		t.Errorf("Do in batch: %v", raw.Val())
	}
	// The batch is empty and reusable after Exec.
	if b.Len() != 0 {
		t.Fatalf("Len after Exec %d", b.Len())
	}
	f := b.Incr("n")
	wrong := b.LPush("k", []byte("x"))
	err := b.Exec(ctx)
	var se *ServerError
	if !errors.As(err, &se) || se.Prefix != "WRONGTYPE" {
		t.Fatalf("Exec should report the first error reply: %v", err)
	}
	if f.Val() != 2 || !errors.As(wrong.Err(), &se) {
		t.Fatalf("futures after partial failure: %v %v", f.Val(), wrong.Err())
	}
	if err := c.Batch().Exec(ctx); err != nil {
		t.Fatalf("empty batch: %v", err)
	}
	b.Do("SUBSCRIBE", "x")
	later := b.Get("k")
	// The refused command fails alone: the one after it runs.
	if err := b.Exec(ctx); !errors.Is(err, ErrNotAllowed) || later.Err() != nil {
		t.Fatalf("refused command in batch: %v / %v", err, later.Err())
	}
}

// A batch's commands are contiguous on the shared connection even while
// other goroutines send their own: a MULTI/EXEC relies on it.
func TestBatchesStayContiguousUnderConcurrency(t *testing.T) {
	c, _ := newTestClient(t, Options{})
	ctx := context.Background()
	var wg sync.WaitGroup
	for g := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := "list:" + strconv.Itoa(g)
			for i := range 50 {
				b := c.Batch()
				for j := range 10 {
					b.RPush(key, []byte(strconv.Itoa(i*10+j)))
				}
				n := b.LLen(key)
				if err := b.Exec(ctx); err != nil {
					t.Error(err)
					return
				}
				if n.Val() != int64(i*10+10) {
					t.Errorf("%s: LLen %d after batch %d", key, n.Val(), i)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestTx(t *testing.T) {
	c, _ := newTestClient(t, Options{})
	ctx := context.Background()
	tx := c.Tx()
	a := tx.Incr("a")
	b := tx.IncrBy("a", 10)
	get := tx.Get("a")
	if err := tx.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if a.Val() != 1 || b.Val() != 11 || string(get.Val()) != "11" {
		t.Fatalf("tx results %d %d %q", a.Val(), b.Val(), get.Val())
	}
	// A command rejected while queuing aborts the whole transaction.
	tx = c.Tx()
	ok := tx.Incr("a")
	bad := tx.Do("SET", "onlykey")
	err := tx.Exec(ctx)
	var se *ServerError
	if !errors.As(err, &se) || se.Prefix != "EXECABORT" {
		t.Fatalf("got %v, want EXECABORT", err)
	}
	if !errors.As(bad.Err(), &se) || se.Prefix != "ERR" || !errors.As(ok.Err(), &se) {
		t.Fatalf("futures after EXECABORT: %v / %v", bad.Err(), ok.Err())
	}
	if v, _ := c.Get(ctx, "a"); string(v) != "11" {
		t.Fatalf("aborted transaction wrote: a = %s", v)
	}
	// Runtime errors inside EXEC affect only their command.
	tx = c.Tx()
	wrong := tx.LPush("a", []byte("x"))
	after := tx.Incr("a")
	if err := tx.Exec(ctx); !errors.As(err, &se) || se.Prefix != "WRONGTYPE" {
		t.Fatalf("got %v", err)
	}
	if wrong.Err() == nil || after.Val() != 12 {
		t.Fatalf("per-command results: %v %d", wrong.Err(), after.Val())
	}
	// State-changing commands are refused inside a transaction.
	tx = c.Tx()
	tx.Do("SELECT", 1)
	if err := tx.Exec(ctx); !errors.Is(err, ErrNotAllowed) {
		t.Fatalf("SELECT in Tx: %v", err)
	}
}

func TestWatch(t *testing.T) {
	c, _ := newTestClient(t, Options{})
	ctx := context.Background()
	c.Set(ctx, "balance", []byte("100"))

	// No conflict: the transaction runs.
	err := c.Watch(ctx, func(w *Client) error {
		v, err := w.Get(ctx, "balance")
		if err != nil {
			return err
		}
		n, _ := strconv.Atoi(string(v))
		tx := w.Tx()
		tx.Set("balance", []byte(strconv.Itoa(n-30)))
		return tx.Exec(ctx)
	}, "balance")
	if err != nil {
		t.Fatal(err)
	}
	// Conflict: another client changes the key between WATCH and EXEC.
	err = c.Watch(ctx, func(w *Client) error {
		if _, err := w.Get(ctx, "balance"); err != nil {
			return err
		}
		if err := c.Set(ctx, "balance", []byte("999")); err != nil {
			return err
		}
		tx := w.Tx()
		f := tx.Set("balance", []byte("0"))
		err := tx.Exec(ctx)
		if !errors.Is(f.Err(), ErrTxFailed) {
			t.Errorf("future after abort: %v", f.Err())
		}
		return err
	}, "balance")
	if !errors.Is(err, ErrTxFailed) {
		t.Fatalf("got %v, want ErrTxFailed", err)
	}
	if v, _ := c.Get(ctx, "balance"); string(v) != "999" {
		t.Fatalf("aborted transaction wrote: %s", v)
	}
	// fn's own error is returned, and the connection is unwatched and reused.
	sentinel := errors.New("give up")
	if err := c.Watch(ctx, func(*Client) error { return sentinel }, "balance"); err != sentinel {
		t.Fatalf("fn error: %v", err)
	}
	err = c.Watch(ctx, func(w *Client) error {
		c.Set(ctx, "unrelated", []byte("x"))
		tx := w.Tx()
		tx.Incr("counter")
		return tx.Exec(ctx)
	}, "balance")
	if err != nil {
		t.Fatalf("a stale WATCH survived on a pooled connection: %v", err)
	}
}

// Retrying optimistic transactions under contention counts exactly.
func TestWatchContention(t *testing.T) {
	c, _ := newTestClient(t, Options{})
	ctx := context.Background()
	const workers, incrs = 8, 25
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range incrs {
				for attempt := 0; ; attempt++ {
					err := c.Watch(ctx, func(w *Client) error {
						v, err := w.Get(ctx, "ctr")
						if err != nil && !errors.Is(err, Nil) {
							return err
						}
						n, _ := strconv.Atoi(string(v))
						tx := w.Tx()
						tx.Set("ctr", []byte(strconv.Itoa(n+1)))
						return tx.Exec(ctx)
					}, "ctr")
					if err == nil {
						break
					}
					if !errors.Is(err, ErrTxFailed) || attempt > 10_000 {
						t.Error(err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	if v, _ := c.Get(ctx, "ctr"); string(v) != strconv.Itoa(workers*incrs) {
		t.Fatalf("ctr = %s, want %d", v, workers*incrs)
	}
}

// Futures come from blocks shared by the commands of one result type. With
// more result types than blocks kept, and more commands than a block holds,
// every Future still holds its own command's result, across two Execs of
// the same Batch.
func TestBatchFuturesOfManyTypes(t *testing.T) {
	c, _ := newTestClient(t, Options{})
	ctx := context.Background()
	b := c.Batch()
	for round := range 2 {
		var (
			sets   []*Future[bool]
			gets   []*Future[[]byte]
			incrs  []*Future[int64]
			ttls   []*Future[time.Duration]
			floats []*Future[float64]
			lists  []*Future[[][]byte]
		)
		for i := range 20 {
			k := "bf:" + strconv.Itoa(round) + ":" + strconv.Itoa(i)
			sets = append(sets, b.Set(k, []byte(k)))
			gets = append(gets, b.Get(k))
			incrs = append(incrs, b.IncrBy(k+":n", int64(i)))
			ttls = append(ttls, b.TTL(k))
			floats = append(floats, b.IncrByFloat(k+":f", float64(i)/2))
			b.RPush(k+":l", []byte("a"), []byte(strconv.Itoa(i)))
			lists = append(lists, b.LRange(k+":l", 0, -1))
		}
		if err := b.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		for i := range 20 {
			k := "bf:" + strconv.Itoa(round) + ":" + strconv.Itoa(i)
			if ok, err := sets[i].Result(); !ok || err != nil {
				t.Fatalf("SET %d: %v %v", i, ok, err)
			}
			if v, err := gets[i].Result(); string(v) != k || err != nil {
				t.Fatalf("GET %d: %q %v", i, v, err)
			}
			if n, err := incrs[i].Result(); n != int64(i) || err != nil {
				t.Fatalf("INCRBY %d: %d %v", i, n, err)
			}
			if d, err := ttls[i].Result(); d != NoExpiry || err != nil {
				t.Fatalf("TTL %d: %v %v", i, d, err)
			}
			if f, err := floats[i].Result(); f != float64(i)/2 || err != nil {
				t.Fatalf("INCRBYFLOAT %d: %v %v", i, f, err)
			}
			if l, err := lists[i].Result(); len(l) != 2 || string(l[1]) != strconv.Itoa(i) || err != nil {
				t.Fatalf("LRANGE %d: %q %v", i, l, err)
			}
		}
	}
}
