package layouts

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/layout"
	"github.com/ziplinekv/zipline/testbed"
)

// A Cell is one measurement: a value class stored under a key family in a
// layout, on a server with a given hash-max-listpack-value.
type Cell struct {
	Family KeyFamily
	Class  string
	Layout string
	// Sparse draws the ids at random from 0..SparseSpan instead of 0..n-1.
	Sparse bool
	// ListpackValue is the hash-max-listpack-value the server is started
	// with, as a user could configure it (zipline never changes a server's
	// configuration); 0 is the server's default, 64.
	ListpackValue int
}

func (c Cell) String() string {
	s := c.Family.Name + "/" + c.Class + "/" + c.Layout
	if c.Sparse {
		s += "/sparse"
	}
	if c.ListpackValue > 0 {
		s += "/lpv" + strconv.Itoa(c.ListpackValue)
	}
	return s
}

// A Result is a measured Cell.
type Result struct {
	Cell
	Pairs int
	// Bytes is the growth of the server's used_memory, client buffers
	// excluded.
	Bytes int64
	// DictBytes is the size of the trained dictionary of a Dict layout. It
	// is not on the server, but the application must keep it; PerPair
	// counts it.
	DictBytes int
	// Oversize is how many values the guard stored as plain keys because
	// they were larger than hash-max-listpack-value.
	Oversize uint64
	// BucketsSampled hash keys were checked with OBJECT ENCODING, and
	// Listpack of them were listpacks.
	BucketsSampled, Listpack int
	// MeanValue is the mean size of the application's values.
	MeanValue float64
	Load      time.Duration
	// Server is the server the cell was measured on, "redis 7.0.15
	// (jemalloc-5.3.0)": a report can hold cells of several.
	Server string `json:",omitempty"`
}

// PerPair is the cost of one pair in bytes, the dictionary included.
func (r Result) PerPair() float64 { return float64(r.Bytes+int64(r.DictBytes)) / float64(r.Pairs) }

// MB is the cost in megabytes (10^6 bytes), the dictionary included.
func (r Result) MB() float64 { return float64(r.Bytes+int64(r.DictBytes)) / 1e6 }

// MemoryRunner measures cells on servers it starts. A cell measured twice
// gives the same figure within a few dozen bytes (the server counts client
// memory by string lengths, not allocations, so subtracting it is exact only
// to that grain): under 0.001 B a pair at 100,000 pairs.
type MemoryRunner struct {
	Pairs int
	Data  *DataSet
	// Log gets one line per cell; nil discards.
	Log io.Writer
	// Workers load concurrently, Batch pairs per write. Defaults 4 and 1000.
	Workers, Batch int
	// Verify is how many pairs per cell are read back and compared
	// (default 500).
	Verify int
	// Server describes the servers: filled by Run, e.g. "redis 7.0.15
	// (jemalloc-5.3.0)".
	Server string
	// Cluster measures on a Redis Cluster of ClusterPrimaries primaries
	// (no replicas) instead of one server: the figures are the growth of
	// used_memory summed over the primaries.
	Cluster bool
	// Kind is the server, Redis (the default) or Valkey.
	Kind testbed.Kind

	idsMu sync.Mutex
	ids   map[bool][]uint64
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// Run measures cells in order, starting one server per distinct
// ListpackValue, and calls each (if not nil) with every result.
func (r *MemoryRunner) Run(ctx context.Context, cells []Cell, each func(Result)) ([]Result, error) {
	if r.Data == nil {
		r.Data = &DataSet{Pairs: r.Pairs}
	}
	var out []Result
	for _, lpv := range listpackValues(cells) {
		err := r.withServer(ctx, lpv, func(on Servers) error {
			if err := r.warm(ctx, on, cellsWith(cells, lpv)); err != nil {
				return err
			}
			for _, cell := range cells {
				if cell.ListpackValue != lpv {
					continue
				}
				res, err := r.measure(ctx, on, cell)
				if err != nil {
					return fmt.Errorf("%s: %w", cell, err)
				}
				if r.Log != nil {
					fmt.Fprintf(r.Log, "%-50s %8.2f MB %8.1f B/pair  oversize %6d  load %v\n",
						cell, res.MB(), res.PerPair(), res.Oversize, res.Load.Round(time.Millisecond))
				}
				if each != nil {
					each(res)
				}
				out = append(out, res)
			}
			return nil
		})
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// cellsWith returns the cells measured on the server with ListpackValue
// lpv.
func cellsWith(cells []Cell, lpv int) []Cell {
	var out []Cell
	for _, c := range cells {
		if c.ListpackValue == lpv {
			out = append(out, c)
		}
	}
	return out
}

func listpackValues(cells []Cell) []int {
	var out []int
	seen := map[int]bool{}
	for _, c := range cells {
		if !seen[c.ListpackValue] {
			seen[c.ListpackValue] = true
			out = append(out, c.ListpackValue)
		}
	}
	return out
}

// ClusterPrimaries is the size of the clusters MemoryRunner.Cluster
// measures on: the fewest primaries a cluster can have.
const ClusterPrimaries = 3

// withServer starts a server (or a cluster) with hash-max-listpack-value
// lpv (0: default) and runs fn with a client on it.
func (r *MemoryRunner) withServer(ctx context.Context, lpv int, fn func(Servers) error) error {
	args := ServerArgs(lpv)
	var on Servers
	var addrs []string
	if r.Cluster {
		cl, err := testbed.StartCluster(ctx, testbed.ClusterConfig{Kind: r.Kind, Primaries: ClusterPrimaries,
			Replicas: -1, Args: args})
		if err != nil {
			return err
		}
		defer cl.Stop()
		addrs = cl.Addrs()
		for _, n := range cl.Nodes() {
			node, err := zipline.New(zipline.Options{Addr: n.Addr, Cluster: zipline.ClusterOff, Logger: quiet})
			if err != nil {
				return err
			}
			defer node.Close()
			on.nodes = append(on.nodes, node)
		}
	} else {
		srv, err := testbed.Start(testbed.Config{Kind: r.Kind, Args: args})
		if err != nil {
			return err
		}
		defer srv.Stop()
		addrs = []string{srv.Addr}
	}
	var err error
	if on.c, err = zipline.New(zipline.Options{Addrs: addrs, Logger: quiet}); err != nil {
		return err
	}
	defer on.c.Close()
	if r.Server == "" {
		r.Server = ServerDescription(ctx, on.c)
		if r.Cluster {
			r.Server += fmt.Sprintf(", a cluster of %d primaries", len(on.nodes))
		}
	}
	return fn(on)
}

// Servers are what a memory cell is measured on: one server through its
// client, or each primary of a cluster on its own, summed.
type Servers struct {
	c     *zipline.Client
	nodes []*zipline.Client // a client of each primary of a cluster; nil for one server
}

// each runs fn on every server: the cluster's primaries, or the one
// server through the client.
func (on Servers) each(ctx context.Context, fn func(do func(args ...any) (zipline.Value, error)) error) error {
	if on.nodes == nil {
		return fn(func(args ...any) (zipline.Value, error) { return on.c.Do(ctx, args...) })
	}
	for _, node := range on.nodes {
		if err := fn(func(args ...any) (zipline.Value, error) { return node.Do(ctx, args...) }); err != nil {
			return err
		}
	}
	return nil
}

// flush empties every server (FLUSHALL SYNC).
func (on Servers) flush(ctx context.Context) error {
	return on.each(ctx, func(do func(args ...any) (zipline.Value, error)) error {
		_, err := do("FLUSHALL", "SYNC")
		return err
	})
}

// memory is DatasetMemory summed over the servers.
func (on Servers) memory(ctx context.Context) (int64, error) {
	var total int64
	err := on.each(ctx, func(do func(args ...any) (zipline.Value, error)) error {
		v, err := do("INFO", "memory")
		if err != nil {
			return err
		}
		text, err := v.AsString()
		if err != nil {
			return err
		}
		m, err := datasetMemory(testbed.ParseInfo(text))
		total += m
		return err
	})
	return total, err
}

// ServerArgs are the directives the benchmark's servers are started with.
// Two bookkeeping structures that FLUSHALL keeps and used_memory counts are
// turned off, so that a cell's figure is its data alone: per-command latency
// histograms (latency-tracking, Redis 7+: about 25 KB allocated on a
// command's first call, which would be charged to the first cell using it),
// and the slow log (the arguments of each command slower than 10 ms, which a
// busy machine produces). If lpv > 0, hash-max-listpack-value is set to lpv.
func ServerArgs(lpv int) []string {
	args := []string{"--latency-tracking", "no", "--slowlog-log-slower-than", "-1"}
	if lpv > 0 {
		args = append(args, "--hash-max-listpack-value", strconv.Itoa(lpv))
	}
	return args
}

// ServerDescription names the server c is connected to, with its
// allocator: "redis 7.0.15 (jemalloc-5.3.0)".
func ServerDescription(ctx context.Context, c *zipline.Client) string {
	srv, _ := c.Info(ctx, "server")
	mem, _ := c.Info(ctx, "memory")
	name, version := "redis", srv["redis_version"]
	if v, ok := srv["valkey_version"]; ok {
		// Valkey's redis_version is the Redis version it is compatible
		// with (7.2.4), not its own.
		name, version = "valkey", v
	}
	return fmt.Sprintf("%s %s (%s)", name, version, mem["mem_allocator"])
}

// DatasetMemory is used_memory minus the memory of normal clients (query
// and output buffers), which depends on how the data was sent, not on what
// is stored, and minus the script cache (used_memory_scripts, Redis 7+ and
// Valkey), which the first cell to write through a layout's Lua scripts
// would otherwise be charged for.
func DatasetMemory(ctx context.Context, c *zipline.Client) (int64, error) {
	m, err := c.Info(ctx, "memory")
	if err != nil {
		return 0, err
	}
	return datasetMemory(m)
}

func datasetMemory(m map[string]string) (int64, error) {
	used, err1 := strconv.ParseInt(m["used_memory"], 10, 64)
	clients, err2 := strconv.ParseInt(m["mem_clients_normal"], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("layouts: INFO memory: %w", err)
	}
	scripts, _ := strconv.ParseInt(m["used_memory_scripts"], 10, 64) // absent before Redis 7: 0
	return used - clients - scripts, nil
}

// SettledMemory waits until DatasetMemory stops changing (the server
// finishes rehashing its main dictionary in the background, which briefly
// holds two tables), for at most maxWait, and returns it. Readings are
// 110 ms apart, more than the server's cron period (100 ms at the default
// hz 10), each tick of which moves a rehash on by a millisecond's work, so
// two equal readings mean no rehash is under way.
func SettledMemory(ctx context.Context, c *zipline.Client, maxWait time.Duration) (int64, error) {
	return Servers{c: c}.settled(ctx, maxWait)
}

// settled is SettledMemory on every server, summed.
func (on Servers) settled(ctx context.Context, maxWait time.Duration) (int64, error) {
	prev, err := on.memory(ctx)
	if err != nil {
		return 0, err
	}
	deadline := time.Now().Add(maxWait)
	for time.Now().Before(deadline) {
		select {
		case <-time.After(110 * time.Millisecond):
		case <-ctx.Done():
			return 0, ctx.Err()
		}
		m, err := on.memory(ctx)
		if err != nil {
			return 0, err
		}
		if m == prev {
			return m, nil
		}
		prev = m
	}
	return prev, nil
}

func (r *MemoryRunner) idsFor(sparse bool) []uint64 {
	r.idsMu.Lock()
	defer r.idsMu.Unlock()
	if r.ids == nil {
		r.ids = map[bool][]uint64{}
	}
	if _, ok := r.ids[sparse]; !ok {
		r.ids[sparse] = Ids(r.Pairs, sparse)
	}
	return r.ids[sparse]
}

// measure runs one cell on flushed servers.
func (r *MemoryRunner) measure(ctx context.Context, on Servers, cell Cell) (Result, error) {
	c := on.c
	res := Result{Cell: cell, Pairs: r.Pairs}
	lay, data, dict, keys, err := r.prepare(cell)
	if err != nil {
		return res, err
	}
	if dict != nil {
		res.DictBytes = len(dict.Bytes)
	}
	res.MeanValue = data.MeanSize(r.Pairs)

	if err := on.flush(ctx); err != nil {
		return res, err
	}
	before, err := on.settled(ctx, 10*time.Second)
	if err != nil {
		return res, err
	}
	var st *layout.Store
	if !lay.Baseline {
		if st, err = layout.New(ctx, c, lay.NamespaceFor(cell.Family, r.Pairs, dict)); err != nil {
			return res, err
		}
	}
	start := time.Now()
	if err := r.load(ctx, c, st, data.Class.Counter, keys, data.Value); err != nil {
		return res, err
	}
	res.Load = time.Since(start)
	after, err := on.settled(ctx, 10*time.Second)
	if err != nil {
		return res, err
	}
	res.Bytes = after - before
	if st != nil {
		res.Oversize = st.Stats().OversizeValues
	}
	if err := r.verify(ctx, c, st, keys, data); err != nil {
		return res, err
	}
	if lay.Namespace != nil && lay.Namespace(cell.Family, r.Pairs).Buckets != nil {
		if res.BucketsSampled, res.Listpack, err = on.bucketEncodings(ctx, 50); err != nil {
			return res, err
		}
	}
	return res, nil
}

// prepare looks up a cell's layout, data and dictionary, and the keys of
// its pairs.
func (r *MemoryRunner) prepare(cell Cell) (lay Layout, data *Data, dict *Dict, keys []string, err error) {
	lay, ok := LayoutByName(cell.Layout)
	if !ok {
		return lay, nil, nil, nil, fmt.Errorf("unknown layout %q", cell.Layout)
	}
	if data, err = r.Data.Get(cell.Class); err != nil {
		return lay, nil, nil, nil, err
	}
	if lay.Dict != nil {
		if dict, err = data.Dictionary(*lay.Dict); err != nil {
			return lay, nil, nil, nil, err
		}
	}
	ids := r.idsFor(cell.Sparse)
	keys = make([]string, len(ids))
	for i, id := range ids {
		keys[i] = cell.Family.Key(id)
	}
	return lay, data, dict, keys, nil
}

// warm writes up to 1,000 pairs (enough for every write path: one bucket,
// many, oversize values) through each cell's layout on a fresh server and
// flushes them, so that what the server allocates once, on the first use
// of a command or script (and keeps after FLUSHALL), is not charged to the
// first cell that uses it. Each cell starts on a flushed server, as when
// it is measured: cells of one key family share bucket names, and a
// counter's HINCRBY would fail on a field another class left a document
// in.
func (r *MemoryRunner) warm(ctx context.Context, on Servers, cells []Cell) error {
	c := on.c
	for _, cell := range cells {
		lay, data, dict, keys, err := r.prepare(cell)
		if err != nil {
			return fmt.Errorf("%s: %w", cell, err)
		}
		if err := on.flush(ctx); err != nil {
			return err
		}
		var st *layout.Store
		if !lay.Baseline {
			if st, err = layout.New(ctx, c, lay.NamespaceFor(cell.Family, r.Pairs, dict)); err != nil {
				return fmt.Errorf("%s: %w", cell, err)
			}
		}
		if err := r.load(ctx, c, st, data.Class.Counter, keys[:min(len(keys), 1000)], data.Value); err != nil {
			return fmt.Errorf("%s: %w", cell, err)
		}
	}
	return on.flush(ctx)
}

// load writes the pairs in batches from concurrent workers: plain MSET (or
// INCR) for the baseline, Store.MSet (or queued IncrBy) otherwise.
func (r *MemoryRunner) load(ctx context.Context, c *zipline.Client, st *layout.Store, counter bool,
	keys []string, value func(int) []byte) error {
	batch, workers := max(r.Batch, 1), max(r.Workers, 1)
	if r.Batch == 0 {
		batch = 1000
	}
	if r.Workers == 0 {
		workers = 4
	}
	chunks := make(chan int)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for from := range chunks {
				if err := writeChunk(ctx, c, st, counter, keys, value, from, min(from+batch, len(keys))); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	var err error
feed:
	for from := 0; from < len(keys); from += batch {
		select {
		case chunks <- from:
		case err = <-errs:
			break feed
		}
	}
	close(chunks)
	wg.Wait()
	close(errs)
	for e := range errs {
		err = errors.Join(err, e)
	}
	return err
}

func writeChunk(ctx context.Context, c *zipline.Client, st *layout.Store, counter bool,
	keys []string, value func(int) []byte, from, to int) error {
	switch {
	case counter && st == nil:
		b := c.Batch()
		for _, k := range keys[from:to] {
			b.Incr(k)
		}
		return b.Exec(ctx)
	case counter:
		b := c.Batch()
		q := st.In(b)
		rs := make([]*layout.Result[int64], 0, to-from)
		for _, k := range keys[from:to] {
			rs = append(rs, q.IncrBy(k, 1))
		}
		if err := b.Exec(ctx); err != nil {
			return err
		}
		for _, res := range rs {
			if err := res.Err(); err != nil {
				return err
			}
		}
		return nil
	}
	pairs := make([]zipline.KeyValue, 0, to-from)
	for i := from; i < to; i++ {
		pairs = append(pairs, zipline.KeyValue{Key: keys[i], Value: value(i)})
	}
	if st == nil {
		return c.MSet(ctx, pairs...)
	}
	return st.MSet(ctx, pairs...)
}

// verify reads a sample of the pairs back and compares them with what was
// written.
func (r *MemoryRunner) verify(ctx context.Context, c *zipline.Client, st *layout.Store, keys []string, data *Data) error {
	n := r.Verify
	if n == 0 {
		n = 500
	}
	step := max(len(keys)/max(n, 1), 1)
	var idx []int
	var sample []string
	for i := 0; i < len(keys) && len(idx) < n; i += step {
		idx = append(idx, i)
		sample = append(sample, keys[i])
	}
	// The last pair too: batches end there.
	if last := len(keys) - 1; last >= 0 && (len(idx) == 0 || idx[len(idx)-1] != last) {
		idx = append(idx, last)
		sample = append(sample, keys[last])
	}
	var got [][]byte
	var err error
	if st == nil {
		got, err = c.MGet(ctx, sample...)
	} else {
		got, err = st.MGet(ctx, sample...)
	}
	if err != nil {
		return fmt.Errorf("reading back: %w", err)
	}
	for j, i := range idx {
		v := got[j]
		if want := data.Value(i); !bytes.Equal(v, want) {
			return fmt.Errorf("reading back %s: got %s, want %s", sample[j], abbrev(v), abbrev(want))
		}
	}
	return nil
}

func abbrev(b []byte) string {
	if b == nil {
		return "nil"
	}
	if len(b) > 40 {
		return fmt.Sprintf("%q… (%d B)", b[:40], len(b))
	}
	return fmt.Sprintf("%q", b)
}

// bucketEncodings checks the encoding of up to n hash keys, taken from
// each server in turn.
func (on Servers) bucketEncodings(ctx context.Context, n int) (sampled, listpack int, err error) {
	err = on.each(ctx, func(do func(args ...any) (zipline.Value, error)) error {
		var keys []string
		for cursor := "0"; len(keys) < n-sampled; {
			v, err := do("SCAN", cursor, "TYPE", "hash", "COUNT", 1000)
			if err != nil {
				return err
			}
			page, err := v.AsSlice()
			if err != nil || len(page) != 2 {
				return errors.Join(err, errors.New("malformed SCAN reply"))
			}
			found, err := page[1].AsStrings()
			if err != nil {
				return err
			}
			keys = append(keys, found...)
			if cursor, _ = page[0].AsString(); cursor == "0" {
				break
			}
		}
		for _, k := range keys[:min(len(keys), n-sampled)] {
			enc, err := do("OBJECT", "ENCODING", k)
			if err != nil {
				return err
			}
			if e, _ := enc.AsString(); e == "listpack" || e == "ziplist" {
				listpack++
			}
			sampled++
		}
		return nil
	})
	return sampled, listpack, err
}
