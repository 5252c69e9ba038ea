package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/cmd/zipline/bench/latency"
	"github.com/ziplinekv/zipline/internal/localserver"
	"github.com/ziplinekv/zipline/internal/resp"
)

func runDemo(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	addr := fs.String("addr", "", "server address (default: start a local redis-server)")
	conc := fs.Int("c", 256, "goroutines for the concurrent run")
	dur := fs.Duration("d", 3*time.Second, "duration of each run")
	size := fs.Int("size", 256, "value size in bytes")
	keys := fs.Int("keys", 10_000, "distinct keys")
	getRatio := fs.Float64("get", 0.8, "fraction of GETs; the rest are SETs")
	if err := fs.Parse(args); err != nil {
		return err
	}
	serverAddr, srv, stop, err := localServer(*addr)
	if err != nil {
		return err
	}
	defer stop()

	c, err := zipline.New(zipline.Options{Addr: serverAddr})
	if err != nil {
		return err
	}
	defer c.Close()
	w := workload{keys: *keys, value: make([]byte, *size), getRatio: *getRatio}
	for i := range w.value {
		w.value[i] = 'a' + byte(i%26)
	}
	if err := w.prefill(ctx, c); err != nil {
		return err
	}
	fmt.Printf("workload: %.0f%% GET / %.0f%% SET of %d B values over %d keys, %v per run\n\n",
		100*w.getRatio, 100*(1-w.getRatio), *size, w.keys, *dur)

	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "goroutines\tclient\tops/s\tp50\tp99\tp99.9\tserver µs/op\treqs/write\t")
	for _, n := range []int{1, *conc} {
		before := c.PipelineStats()
		zl, err := w.run(ctx, n, *dur, srv, func() (doer, func(), error) { return zipDoer{c}, func() {}, nil })
		if err != nil {
			return err
		}
		after := c.PipelineStats()
		reqsPerWrite := float64(after.Requests-before.Requests) / float64(max(after.Writes-before.Writes, 1))
		base, err := w.run(ctx, n, *dur, srv, func() (doer, func(), error) { return dialPlain(ctx, serverAddr) })
		if err != nil {
			return err
		}
		zl.print(tw, n, "zipline", fmt.Sprintf("%.1f", reqsPerWrite))
		base.print(tw, n, "1 req/round trip", "1.0")
		fmt.Fprintf(tw, "\tzipline / baseline\t%.2f×\t\t\t\t\t\t\n", zl.opsPerSec()/base.opsPerSec())
	}
	tw.Flush()
	fmt.Println("\n\"1 req/round trip\" gives each goroutine its own connection and waits for each reply")
	fmt.Println("before sending the next request, as a pool client does. zipline shares one connection:")
	fmt.Println("with one goroutine it costs the same round trip; with many, requests share writes.")

	env := &demoEnv{addr: serverAddr, srv: srv, client: c, dur: *dur}
	for _, section := range []func(context.Context, *demoEnv) error{demoCompression, demoLayouts} {
		if err := section(ctx, env); err != nil {
			return err
		}
	}
	return nil
}

// demoEnv is what the demo's sections share: the server, a client on it,
// and the duration of a timed run.
type demoEnv struct {
	addr   string
	srv    *localserver.Server // nil when the demo runs against -addr
	client *zipline.Client
	dur    time.Duration
}

// doer is what the workload drives: zipline, or the plain baseline.
type doer interface {
	get(ctx context.Context, key string) error
	set(ctx context.Context, key string, val []byte) error
}

type zipDoer struct{ c *zipline.Client }

func (z zipDoer) get(ctx context.Context, key string) error {
	_, err := z.c.Get(ctx, key)
	return err
}

func (z zipDoer) set(ctx context.Context, key string, val []byte) error {
	return z.c.Set(ctx, key, val)
}

// plainConn sends one request and waits for its reply before the next: the
// one-request-per-round-trip model of pool clients such as redigo.
type plainConn struct {
	conn net.Conn
	rd   *resp.Reader
	buf  []byte
}

func dialPlain(ctx context.Context, addr string) (doer, func(), error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, nil, err
	}
	return &plainConn{conn: nc, rd: resp.NewReader(nc, 0, resp.Limits{})}, func() { nc.Close() }, nil
}

func (p *plainConn) roundTrip() error {
	if _, err := p.conn.Write(p.buf); err != nil {
		return err
	}
	var v resp.Value
	if err := p.rd.ReadValue(&v); err != nil {
		return err
	}
	if v.IsError() {
		return fmt.Errorf("%s", v.Bytes())
	}
	return nil
}

func (p *plainConn) get(_ context.Context, key string) error {
	p.buf = resp.AppendBulkString(resp.AppendBulkString(resp.AppendArrayLen(p.buf[:0], 2), "GET"), key)
	return p.roundTrip()
}

func (p *plainConn) set(_ context.Context, key string, val []byte) error {
	p.buf = resp.AppendBulk(resp.AppendBulkString(resp.AppendBulkString(resp.AppendArrayLen(p.buf[:0], 3), "SET"), key), val)
	return p.roundTrip()
}

type workload struct {
	keys     int
	value    []byte
	getRatio float64
}

func (w workload) key(i int) string { return "demo:" + strconv.Itoa(i) }

func (w workload) prefill(ctx context.Context, c *zipline.Client) error {
	b := c.Batch()
	for i := range w.keys {
		b.Set(w.key(i), w.value)
		if b.Len() == 1000 {
			if err := b.Exec(ctx); err != nil {
				return err
			}
		}
	}
	return b.Exec(ctx)
}

type runResult struct {
	ops       uint64
	elapsed   time.Duration
	hist      latency.Histogram
	serverCPU time.Duration
	errs      uint64
}

func (r *runResult) opsPerSec() float64 { return float64(r.ops) / r.elapsed.Seconds() }

func (r *runResult) print(tw *tabwriter.Writer, n int, name, reqsPerWrite string) {
	cpu := "-"
	if r.serverCPU > 0 {
		cpu = fmt.Sprintf("%.1f", float64(r.serverCPU.Microseconds())/float64(r.ops))
	}
	fmt.Fprintf(tw, "%d\t%s\t%.0f\t%v\t%v\t%v\t%s\t%s\t\n", n, name, r.opsPerSec(),
		round(r.hist.Quantile(0.5)), round(r.hist.Quantile(0.99)), round(r.hist.Quantile(0.999)), cpu, reqsPerWrite)
	if r.errs > 0 {
		fmt.Fprintf(tw, "\t(%d errors)\t\t\t\t\t\t\t\n", r.errs)
	}
}

func round(d time.Duration) time.Duration {
	if d > time.Millisecond {
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(100 * time.Nanosecond)
}

// run drives n goroutines for d, each with the doer that mk returns.
func (w workload) run(ctx context.Context, n int, d time.Duration, srv *localserver.Server, mk func() (doer, func(), error)) (*runResult, error) {
	doers := make([]doer, n)
	for i := range doers {
		dd, closeFn, err := mk()
		if err != nil {
			return nil, err
		}
		defer closeFn()
		doers[i] = dd
	}
	var (
		stop  atomic.Bool
		wg    sync.WaitGroup
		hists = make([]latency.Histogram, n)
		ops   = make([]uint64, n)
		errs  atomic.Uint64
	)
	cpu0 := serverCPU(srv)
	start := time.Now()
	for g := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			for !stop.Load() {
				key := w.key(rng.IntN(w.keys))
				t0 := time.Now()
				var err error
				if rng.Float64() < w.getRatio {
					err = doers[g].get(ctx, key)
				} else {
					err = doers[g].set(ctx, key, w.value)
				}
				if err != nil {
					errs.Add(1)
					continue
				}
				hists[g].Record(time.Since(t0))
				ops[g]++
			}
		}()
	}
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
	stop.Store(true)
	wg.Wait()
	res := &runResult{elapsed: time.Since(start), errs: errs.Load()}
	if cpu1 := serverCPU(srv); cpu1 > 0 {
		res.serverCPU = cpu1 - cpu0
	}
	for g := range n {
		res.hist.Merge(&hists[g])
		res.ops += ops[g]
	}
	return res, ctx.Err()
}

func serverCPU(srv *localserver.Server) time.Duration {
	if srv == nil {
		return 0
	}
	d, _ := srv.CPUTime()
	return d
}
