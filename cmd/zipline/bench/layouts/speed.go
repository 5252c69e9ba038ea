package layouts

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/cmd/zipline/bench/sysstat"
	"github.com/ziplinekv/zipline/layout"
	"github.com/ziplinekv/zipline/testbed"
)

// An Op is one row of the speed table.
type Op struct {
	// Name is get, set, mget or mset.
	Name string
	// Batch is, for get and set, how many commands one call queues in a
	// zipline.Batch (Store.In for a layout; 1 is a lone Get or Set), and for
	// mget and mset how many keys one call reads or writes.
	Batch int
}

func (o Op) String() string {
	switch {
	case (o.Name == "get" || o.Name == "set") && o.Batch <= 1:
		return o.Name
	case o.Name == "get" || o.Name == "set":
		return o.Name + " ×" + strconv.Itoa(o.Batch) + " in a batch"
	}
	return o.Name + " of " + strconv.Itoa(o.Batch) + " keys"
}

// DefaultOps are the article's operations: single calls, and 10 and 100
// operations pipelined in one batch or one MGET/MSET.
func DefaultOps() []Op {
	return []Op{
		{"get", 1}, {"get", 10}, {"get", 100},
		{"set", 1}, {"set", 10}, {"set", 100},
		{"mget", 10}, {"mget", 100},
		{"mset", 10}, {"mset", 100},
	}
}

// ParseOp reads "get", "get/10", "mget/100".
func ParseOp(s string) (Op, error) {
	name, n, found := bytes.Cut([]byte(s), []byte("/"))
	op := Op{Name: string(name), Batch: 1}
	if found {
		b, err := strconv.Atoi(string(n))
		if err != nil || b < 1 {
			return op, fmt.Errorf("layouts: op %q: bad batch size", s)
		}
		op.Batch = b
	}
	switch op.Name {
	case "get", "set":
	case "mget", "mset":
		if !found {
			op.Batch = 10
		}
	default:
		return op, fmt.Errorf("layouts: unknown op %q (get, set, mget, mset)", s)
	}
	return op, nil
}

// SpeedConfig is a speed run: each op through plain commands and through
// each layout's Store, on one client, from many goroutines.
type SpeedConfig struct {
	Family KeyFamily // default ArticleKeys
	Class  string    // value class, default "ints"
	Keys   int       // keys prefilled and drawn from (uniformly), default 100,000
	// Layouts to compare with plain commands; default zipped, buckets,
	// buckets+zip, buckets+zip+zstd.
	Layouts    []string
	Ops        []Op          // default DefaultOps
	Goroutines int           // default 64
	Duration   time.Duration // of each run, default 2s
	Rounds     int           // runs per cell, the median is reported; default 3
	// ListpackValue is the server's hash-max-listpack-value (0: default).
	ListpackValue int
	Log           io.Writer `json:"-"` // progress; nil discards
}

func (c *SpeedConfig) defaults() {
	if c.Family.Prefix == "" {
		c.Family = ArticleKeys
	}
	if c.Class == "" {
		c.Class = "ints"
	}
	if c.Keys == 0 {
		c.Keys = 100_000
	}
	if len(c.Layouts) == 0 {
		c.Layouts = []string{"zipped", "buckets", "buckets+zip", "buckets+zip+zstd"}
	}
	if len(c.Ops) == 0 {
		c.Ops = DefaultOps()
	}
	if c.Goroutines == 0 {
		c.Goroutines = 64
	}
	if c.Duration == 0 {
		c.Duration = 2 * time.Second
	}
	if c.Rounds == 0 {
		c.Rounds = 3
	}
}

// A SpeedResult is one op through one layout ("plain" for plain commands).
type SpeedResult struct {
	Op     Op
	Layout string
	// OpsPerSec is the median over the runs; an MGET of 10 keys is 10 ops.
	OpsPerSec float64
	Runs      []float64
	// ServerMicros is the server's CPU time per op (median), in µs.
	ServerMicros float64
	Errors       uint64
}

// SpeedReport is a finished speed run.
type SpeedReport struct {
	Config  SpeedConfig
	Server  string
	Results []SpeedResult
	// Queue is the client-side cost of queueing a key (see
	// MeasureQueueCost).
	Queue []QueueCost
}

// Result returns the result of op through layout.
func (r *SpeedReport) Result(op Op, layout string) (SpeedResult, bool) {
	for _, s := range r.Results {
		if s.Op == op && s.Layout == layout {
			return s, true
		}
	}
	return SpeedResult{}, false
}

// RunSpeed starts a server, prefills it and runs cfg.
func RunSpeed(ctx context.Context, cfg SpeedConfig) (*SpeedReport, error) {
	cfg.defaults()
	data, err := (&DataSet{Pairs: cfg.Keys}).Get(cfg.Class)
	if err != nil {
		return nil, err
	}
	srv, err := testbed.Start(testbed.Config{Args: ServerArgs(cfg.ListpackValue)})
	if err != nil {
		return nil, err
	}
	defer srv.Stop()
	c, err := zipline.New(zipline.Options{Addr: srv.Addr, Logger: quiet})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	rep := &SpeedReport{Config: cfg, Server: ServerDescription(ctx, c)}

	ids := Ids(cfg.Keys, false)
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = cfg.Family.Key(id)
	}
	stores := map[string]*layout.Store{}
	names := append([]string{"plain"}, cfg.Layouts...)
	mem := &MemoryRunner{Pairs: cfg.Keys}
	for i, name := range names {
		lay, ok := LayoutByName(name)
		switch {
		case !ok:
			return nil, fmt.Errorf("layouts: unknown layout %q", name)
		}
		var dict *Dict
		if lay.Dict != nil {
			if dict, err = data.Dictionary(*lay.Dict); err != nil {
				return nil, err
			}
		}
		var st *layout.Store
		if !lay.Baseline {
			ns := lay.NamespaceFor(cfg.Family, cfg.Keys, dict)
			if ns.ZipAs != "" {
				// Each layout stores under its own prefix, so that their keys
				// do not mix.
				ns.ZipAs = string(rune('a'+i)) + ":"
			}
			if st, err = layout.New(ctx, c, ns); err != nil {
				return nil, err
			}
			stores[name] = st
		}
		if err := mem.load(ctx, c, st, data.Class.Counter, keys, data.Value); err != nil {
			return nil, fmt.Errorf("prefilling %s: %w", name, err)
		}
	}

	if rep.Queue, err = MeasureQueueCost(ctx, c, data, cfg.Layouts, queueCostDuration(cfg.Duration)); err != nil {
		return nil, err
	}

	runs := map[string][]float64{}
	cpu := map[string][]float64{}
	errs := map[string]uint64{}
	for round := range cfg.Rounds {
		for _, op := range cfg.Ops {
			for _, name := range names {
				w := workload{op: op, c: c, st: stores[name], keys: keys, data: data}
				before := sysstat.Take(srv.PID())
				ops, nerr, elapsed, err := w.run(ctx, cfg.Goroutines, cfg.Duration)
				if err != nil {
					return nil, err
				}
				used := sysstat.Take(srv.PID()).Sub(before)
				id := op.String() + "|" + name
				rate := float64(ops) / elapsed.Seconds()
				runs[id] = append(runs[id], rate)
				cpu[id] = append(cpu[id], float64(used.Server.Microseconds())/float64(max(ops, 1)))
				errs[id] += nerr
				if cfg.Log != nil {
					fmt.Fprintf(cfg.Log, "round %d  %-24s %-18s %10.0f ops/s  server %.2f µs/op  errors %d\n",
						round+1, op, name, rate, cpu[id][len(cpu[id])-1], nerr)
				}
			}
		}
	}
	for _, op := range cfg.Ops {
		for _, name := range names {
			id := op.String() + "|" + name
			rep.Results = append(rep.Results, SpeedResult{
				Op: op, Layout: name, Runs: runs[id],
				OpsPerSec: median(runs[id]), ServerMicros: median(cpu[id]), Errors: errs[id],
			})
		}
	}
	return rep, nil
}

// queueCostDuration is how long MeasureQueueCost runs each cell in a speed
// run: a sixth of a speed cell, at least 50 ms and at most 500 ms.
func queueCostDuration(d time.Duration) time.Duration {
	return min(max(d/6, 50*time.Millisecond), 500*time.Millisecond)
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// workload is one op through plain commands (st nil) or a Store.
type workload struct {
	op   Op
	c    *zipline.Client
	st   *layout.Store
	keys []string
	data *Data
}

var errMismatch = errors.New("layouts: read a different value than was written")

// run drives n goroutines for d and returns the ops done and failed.
func (w workload) run(ctx context.Context, n int, d time.Duration) (ops, failed uint64, elapsed time.Duration, err error) {
	var (
		stop  atomic.Bool
		done  atomic.Uint64
		fails atomic.Uint64
		first atomic.Pointer[error]
		wg    sync.WaitGroup
	)
	start := time.Now()
	for g := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), uint64(start.UnixNano())))
			idx := make([]int, w.op.Batch)
			for !stop.Load() {
				for i := range idx {
					idx[i] = rng.IntN(len(w.keys))
				}
				if err := w.call(ctx, idx); err != nil {
					fails.Add(1)
					first.CompareAndSwap(nil, &err)
					if ctx.Err() != nil {
						return
					}
					continue
				}
				done.Add(uint64(len(idx)))
			}
		}()
	}
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
	stop.Store(true)
	wg.Wait()
	elapsed = time.Since(start)
	if e := first.Load(); e != nil && fails.Load()*10 > done.Load()+fails.Load() {
		// More than a tenth of the calls failed: the run means nothing.
		return 0, 0, 0, fmt.Errorf("%s: %w", w.op, *e)
	}
	return done.Load(), fails.Load(), elapsed, ctx.Err()
}

// call runs one call of the op on the keys at idx.
func (w workload) call(ctx context.Context, idx []int) error {
	keys := make([]string, len(idx))
	for i, j := range idx {
		keys[i] = w.keys[j]
	}
	check := func(i int, v []byte) error {
		if !bytes.Equal(v, w.data.Value(idx[i])) {
			return fmt.Errorf("%w: %s", errMismatch, keys[i])
		}
		return nil
	}
	switch w.op.Name {
	case "get":
		if len(idx) == 1 {
			var v []byte
			var err error
			if w.st == nil {
				v, err = w.c.Get(ctx, keys[0])
			} else {
				v, err = w.st.Get(ctx, keys[0])
			}
			if err != nil {
				return err
			}
			return check(0, v)
		}
		b := w.c.Batch()
		get := make([]func() ([]byte, error), len(keys))
		if w.st == nil {
			for i, k := range keys {
				get[i] = b.Get(k).Result
			}
		} else {
			q := w.st.In(b)
			for i, k := range keys {
				get[i] = q.Get(k).Result
			}
		}
		if err := b.Exec(ctx); err != nil {
			return err
		}
		for i, g := range get {
			v, err := g()
			if err != nil {
				return err
			}
			if err := check(i, v); err != nil {
				return err
			}
		}
		return nil
	case "set":
		if len(idx) == 1 {
			if w.st == nil {
				return w.c.Set(ctx, keys[0], w.data.Value(idx[0]))
			}
			return w.st.Set(ctx, keys[0], w.data.Value(idx[0]))
		}
		b := w.c.Batch()
		var errs []func() error
		if w.st == nil {
			for i, k := range keys {
				errs = append(errs, b.Set(k, w.data.Value(idx[i])).Err)
			}
		} else {
			q := w.st.In(b)
			for i, k := range keys {
				errs = append(errs, q.Set(k, w.data.Value(idx[i])).Err)
			}
		}
		if err := b.Exec(ctx); err != nil {
			return err
		}
		for _, e := range errs {
			if err := e(); err != nil {
				return err
			}
		}
		return nil
	case "mget":
		var vs [][]byte
		var err error
		if w.st == nil {
			vs, err = w.c.MGet(ctx, keys...)
		} else {
			vs, err = w.st.MGet(ctx, keys...)
		}
		if err != nil {
			return err
		}
		for i, v := range vs {
			if err := check(i, v); err != nil {
				return err
			}
		}
		return nil
	case "mset":
		pairs := make([]zipline.KeyValue, len(keys))
		for i, k := range keys {
			pairs[i] = zipline.KeyValue{Key: k, Value: w.data.Value(idx[i])}
		}
		if w.st == nil {
			return w.c.MSet(ctx, pairs...)
		}
		return w.st.MSet(ctx, pairs...)
	}
	return fmt.Errorf("layouts: unknown op %q", w.op.Name)
}

// QueueCost is the client-side cost of one key's operation queued in a
// Batch (not sent): what a namespace adds on the client, apart from the
// round trip and the server.
type QueueCost struct {
	Op       string // get or set
	Layout   string
	NsPerKey float64
	// AllocsPerKey and BytesPerKey are heap allocations per key.
	AllocsPerKey, BytesPerKey float64
	// CommandsPerKey is how many commands reach the server per key.
	CommandsPerKey float64
}

// MeasureQueueCost queues batches of 100 gets and sets of article keys,
// with data's values, through plain commands and each layout for about d
// each, and reports the cost per key. It needs a client only to build
// batches; nothing is sent.
func MeasureQueueCost(ctx context.Context, c *zipline.Client, data *Data, layouts []string, d time.Duration) ([]QueueCost, error) {
	f := ArticleKeys
	keys := make([]string, 100)
	for i := range keys {
		keys[i] = f.Key(uint64(i * 997))
	}
	var out []QueueCost
	for _, name := range append([]string{"plain"}, layouts...) {
		lay, ok := LayoutByName(name)
		if !ok {
			return nil, fmt.Errorf("layouts: unknown layout %q", name)
		}
		var dict *Dict
		if lay.Dict != nil {
			var err error
			if dict, err = data.Dictionary(*lay.Dict); err != nil {
				return nil, err
			}
		}
		var st *layout.Store
		if !lay.Baseline {
			var err error
			if st, err = layout.New(ctx, c, lay.NamespaceFor(f, 100_000, dict)); err != nil {
				return nil, err
			}
		}
		for _, op := range []string{"get", "set"} {
			queue := func() int {
				b := c.Batch()
				var q *layout.Queued
				if st != nil {
					q = st.In(b)
				}
				for i, k := range keys {
					switch {
					case op == "get" && q == nil:
						b.Get(k)
					case op == "get":
						q.Get(k)
					case q == nil:
						b.Set(k, data.Value(i))
					default:
						q.Set(k, data.Value(i))
					}
				}
				return b.Len()
			}
			queue() // warm up
			var m0, m1 runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&m0)
			start := time.Now()
			n, cmds := 0, 0
			for time.Since(start) < d {
				cmds += queue()
				n++
			}
			elapsed := time.Since(start)
			runtime.ReadMemStats(&m1)
			k := float64(n * len(keys))
			out = append(out, QueueCost{
				Op: op, Layout: name, NsPerKey: float64(elapsed.Nanoseconds()) / k,
				AllocsPerKey: float64(m1.Mallocs-m0.Mallocs) / k, BytesPerKey: float64(m1.TotalAlloc-m0.TotalAlloc) / k,
				CommandsPerKey: float64(cmds) / k,
			})
		}
	}
	return out, nil
}
