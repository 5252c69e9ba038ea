package zipline

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// clusterLoad is goroutines writing and reading 10,000 keys, each key
// owned by one goroutine, recording what was acknowledged, what was tried,
// every failure with its time, and the slowest call; and, with a
// loadShape asking for them, goroutines running every other kind of call
// beside (see runMixed).
type clusterLoad struct {
	c       *Client
	shape   loadShape
	padding string // what follows each value's sequence number
	// readBack, when set, reads the keys back in verify instead of c: a
	// Client that reads from replicas would find the last writes not yet
	// replicated, which is lag, not loss.
	readBack *Client
	start    time.Time
	stop     chan struct{}
	wg       sync.WaitGroup

	acked, tried [10000]atomic.Int64 // per key: last sequence acknowledged, and tried
	ok           atomic.Int64
	mixedOK      atomic.Int64 // runMixed's successful calls
	mu           sync.Mutex
	failures     []failure
	slowest      [10000]atomic.Int64 // per key: the slowest call, in nanoseconds
	slowestAt    [10000]atomic.Int64 // per key: when the slowest call began, since start
	watched      atomic.Pointer[recovery]
	late         schedulerProbe
}

// recovery watches the calls on the keys of some slots for the longest
// stretch without a success: a shard whose primary was killed stops being
// served at the kill, and the stretch ends when it is served again.
type recovery struct {
	in func(slot int32) bool

	mu      sync.Mutex
	last    time.Duration // the last success, since the load's start
	gapEnd  time.Duration // the success that ended the longest stretch
	longest time.Duration
}

func (r *recovery) served(at time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.last != 0 && at-r.last > r.longest {
		r.longest, r.gapEnd = at-r.last, at
	}
	r.last = max(r.last, at)
}

// watch starts recording successes on the keys whose slots in reports
// true for.
func (l *clusterLoad) watch(in func(slot int32) bool) *recovery {
	r := &recovery{in: in}
	l.watched.Store(r)
	return r
}

type failure struct {
	at  time.Duration
	err error
}

// loadShape is what a clusterLoad carries beyond GET and SET of short
// values.
type loadShape struct {
	// pad is how many bytes follow each value's sequence number: enough
	// for Options.Compression to compress it.
	pad int
	// mixed is how many goroutines run MSET, MGET, batches, transactions
	// on hash tags and Watch beside the GETs and SETs.
	mixed int
}

func startClusterLoad(c *Client, goroutines int) *clusterLoad {
	return startShapedLoad(c, goroutines, loadShape{})
}

func startShapedLoad(c *Client, goroutines int, shape loadShape) *clusterLoad {
	l := &clusterLoad{c: c, shape: shape, start: time.Now(), stop: make(chan struct{})}
	if shape.pad > 0 {
		l.padding = " " + strings.Repeat("zipline pads this value ", shape.pad/24+1)[:shape.pad-1]
	}
	for g := range goroutines {
		l.wg.Add(1)
		go l.run(g, goroutines)
	}
	for g := range shape.mixed {
		l.wg.Add(1)
		go l.runMixed(g)
	}
	l.wg.Add(1)
	go l.late.run(l.start, l.stop, &l.wg)
	return l
}

// slowestCall is the slowest call since the last resetSlowest on the keys
// whose slots in reports true for, and when it began (since start).
func (l *clusterLoad) slowestCall(in func(slot int32) bool) (took, began time.Duration) {
	var worst, at int64
	for k := range l.slowest {
		if in(keySlot("k:" + strconv.Itoa(k))) {
			if d := l.slowest[k].Load(); d > worst {
				worst, at = d, l.slowestAt[k].Load()
			}
		}
	}
	return time.Duration(worst), time.Duration(at)
}

func (l *clusterLoad) resetSlowest() {
	for k := range l.slowest {
		l.slowest[k].Store(0)
		l.slowestAt[k].Store(0)
	}
}

func (l *clusterLoad) run(g, n int) {
	defer l.wg.Done()
	rng := rand.New(rand.NewPCG(uint64(g), 1))
	for seq := int64(1); ; seq++ {
		select {
		case <-l.stop:
			return
		default:
		}
		k := g + n*rng.IntN(len(l.acked)/n) // this goroutine's keys only
		key := "k:" + strconv.Itoa(k)
		var err error
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		t0 := time.Now()
		if rng.IntN(2) == 0 {
			l.tried[k].Store(seq)
			if err = l.c.Set(ctx, key, l.value(seq)); err == nil {
				l.acked[k].Store(seq)
			}
		} else if _, err = l.c.Get(ctx, key); errors.Is(err, Nil) {
			err = nil
		}
		cancel()
		if r := l.watched.Load(); err == nil && r != nil && r.in(keySlot(key)) {
			r.served(time.Since(l.start))
		}
		if d := int64(time.Since(t0)); d > l.slowest[k].Load() { // the key is this goroutine's alone
			l.slowest[k].Store(d)
			l.slowestAt[k].Store(int64(t0.Sub(l.start)))
		}
		if err != nil {
			l.failed(err)
			time.Sleep(time.Millisecond) // an application's retry pause, not synchronisation
			continue
		}
		l.ok.Add(1)
	}
}

func (l *clusterLoad) failed(err error) {
	l.mu.Lock()
	l.failures = append(l.failures, failure{time.Since(l.start), err})
	l.mu.Unlock()
}

// value is what the load stores for sequence number seq: the number, then
// the shape's padding.
func (l *clusterLoad) value(seq int64) []byte {
	return append(strconv.AppendInt(make([]byte, 0, 20+len(l.padding)), seq, 10), l.padding...)
}

// sequence reads a value the load stored back.
func (l *clusterLoad) sequence(v []byte) (int64, error) {
	num, pad, _ := strings.Cut(string(v), " ")
	if l.padding != "" && " "+pad != l.padding {
		return 0, fmt.Errorf("a value of %d bytes, not %d", len(v), len(num)+len(l.padding))
	}
	return strconv.ParseInt(num, 10, 64)
}

// runMixed is one goroutine of every other kind of call, in turn, on its
// own keys: MSET and MGET across slots (MGET's values must be the load's),
// a batch of INCRs, a transaction moving a unit between two counters of a
// hash tag (their sum stays 0: see verifyMixed), and a Watch that
// increments a key of its own.
func (l *clusterLoad) runMixed(g int) {
	defer l.wg.Done()
	rng := rand.New(rand.NewPCG(uint64(g), 9))
	for i := int64(0); ; i++ {
		select {
		case <-l.stop:
			return
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		keys := make([]string, 8)
		pairs := make([]KeyValue, 8)
		for j := range keys {
			keys[j] = "mix:" + strconv.Itoa(g) + ":" + strconv.Itoa(rng.IntN(500))
			pairs[j] = KeyValue{keys[j], l.value(i)}
		}
		var err error
		switch i % 5 {
		case 0:
			if err = l.c.MSet(ctx, pairs...); err != nil {
				err = fmt.Errorf("MSET: %w", err)
			}
		case 1:
			var vs [][]byte
			if vs, err = l.c.MGet(ctx, keys...); err != nil {
				err = fmt.Errorf("MGET: %w", err)
			}
			for _, v := range vs {
				if n, perr := l.sequence(v); v != nil && (perr != nil || n > i) {
					err = fmt.Errorf("MGET: a value the load did not write (%d bytes, %v)", len(v), perr)
				}
			}
		case 2:
			b := l.c.Batch()
			for _, k := range keys {
				b.Incr(k + ":n")
			}
			if err = b.Exec(ctx); err != nil {
				err = fmt.Errorf("Batch: %w", err)
			}
		case 3:
			tag := "{acct:" + strconv.Itoa(g) + ":" + strconv.Itoa(rng.IntN(20)) + "}"
			tx := l.c.Tx()
			tx.IncrBy(tag+":a", 1)
			tx.IncrBy(tag+":b", -1)
			if err = tx.Exec(ctx); err != nil {
				err = fmt.Errorf("Tx: %w", err)
			}
		case 4:
			key := "{w:" + strconv.Itoa(g) + ":" + strconv.Itoa(rng.IntN(50)) + "}:n" // this goroutine's own
			err = l.c.Watch(ctx, func(w *Client) error {
				n, err := w.Get(ctx, key)
				if err != nil && !errors.Is(err, Nil) {
					return err
				}
				v, _ := strconv.Atoi(string(n))
				tx := w.Tx()
				tx.Set(key, []byte(strconv.Itoa(v+1)))
				return tx.Exec(ctx)
			}, key)
			if err != nil {
				err = fmt.Errorf("Watch: %w", err)
			}
		}
		cancel()
		if err != nil {
			l.failed(err)
			time.Sleep(time.Millisecond) // an application's retry pause, not synchronisation
			continue
		}
		l.mixedOK.Add(1)
	}
}

// verifyMixed checks what runMixed's transactions leave: each hash tag's
// two counters sum to 0, whatever was moved between them.
func (l *clusterLoad) verifyMixed(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	reader := l.c
	if l.readBack != nil {
		reader = l.readBack
	}
	for g := range l.shape.mixed {
		for k := range 20 {
			tag := "{acct:" + strconv.Itoa(g) + ":" + strconv.Itoa(k) + "}"
			vs, err := reader.MGet(ctx, tag+":a", tag+":b")
			if err != nil {
				t.Fatalf("reading %s back: %v", tag, err)
			}
			a, _ := strconv.Atoi(string(vs[0]))
			b, _ := strconv.Atoi(string(vs[1]))
			if a+b != 0 {
				t.Errorf("%s: the transactions' counters are %d and %d: half a transaction applied", tag, a, b)
			}
		}
	}
}

func (l *clusterLoad) waitOK(t *testing.T, n int64) {
	t.Helper()
	target := l.ok.Load() + n
	for deadline := time.Now().Add(20 * time.Second); l.ok.Load() < target; {
		if time.Now().After(deadline) {
			t.Fatalf("the load made no progress: %d ok", l.ok.Load())
		}
		time.Sleep(time.Millisecond) // polling progress, bounded
	}
}

func (l *clusterLoad) finish() []failure {
	close(l.stop)
	l.wg.Wait()
	return l.failures
}

// verify reads every key back: each holds its last acknowledged value or a
// later one whose outcome was unknown; keys in lossy slots may also hold an
// older one (writes acknowledged by a primary killed before it replicated
// them), and those are counted.
func (l *clusterLoad) verify(t *testing.T, lossy func(slot int32) bool) (lost int) {
	t.Helper()
	ctx := context.Background()
	reader := l.c
	if l.readBack != nil {
		reader = l.readBack
	}
	for k := range l.acked {
		key := "k:" + strconv.Itoa(k)
		acked, tried := l.acked[k].Load(), l.tried[k].Load()
		var got int64
		v, err := reader.Get(ctx, key)
		switch {
		case errors.Is(err, Nil):
		case err != nil:
			t.Fatalf("reading %s back: %v", key, err)
		default:
			if got, err = l.sequence(v); err != nil {
				t.Fatalf("reading %s back: %v", key, err)
			}
		}
		switch {
		case got >= acked && got <= tried:
		case got < acked && lossy != nil && lossy(keySlot(key)):
			lost++
		default:
			t.Errorf("%s holds %d: acknowledged %d, tried up to %d", key, got, acked, tried)
		}
	}
	return lost
}
