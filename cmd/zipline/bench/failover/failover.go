// Package failover measures what the crash of a cluster primary looks like
// from a client's side: goroutines run GETs and SETs through the client
// against a local cluster (testbed.Cluster), a primary is killed with
// SIGKILL while they do, and every call is recorded with its start, its
// latency and its error. The Timeline cuts the run into buckets around the
// kill (calls, errors, p50 and p99 per bucket), classifies the errors, and
// says how long the client was affected: from its first error to its last,
// and until its p99 was back to what it was before the kill.
//
// `zipline demo -cluster -failover` shows zipline's timeline; the bench
// module's cmd/failoverbench draws it for zipline and its peers side by
// side. Both use the same load and the same arithmetic, from here.
package failover

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/testbed"
)

// Client is what the load calls: any client, through a small adapter.
// Get returns the length of the value read.
type Client interface {
	Get(ctx context.Context, key string) (int, error)
	Set(ctx context.Context, key string, val []byte) error
}

// Config describes a run. Zero fields take the defaults in brackets.
type Config struct {
	Cluster *testbed.Cluster
	// Victim is the primary to kill [the one serving slot 0].
	Victim *testbed.Server

	Goroutines int    // calling the client in a loop [64]
	Keys       int    // distinct keys, prefilled, read and written at random [10,000]
	KeyPrefix  string // ["failover:"]
	Value      []byte // what SETs write and the prefill stores [64 bytes]
	GetRatio   float64

	Warmup time.Duration // load before the measured part, not reported [1 s]
	Before time.Duration // measured load before the kill [2 s]
	After  time.Duration // measured load after the kill, at least [8 s]
	// Tail is how long the load goes on after the cluster has settled
	// again (Cluster.Kill returned), if that is later than After [0].
	Tail   time.Duration
	Bucket time.Duration // [100 ms]

	CallTimeout time.Duration // each call's context deadline [5 s]
	RetryPause  time.Duration // a goroutine's pause after a failed call, as an application's retry loop [10 ms]
	// Degraded is how many times the baseline p99 a bucket's p99 may reach
	// and still count as recovered [2].
	Degraded float64
	// Stable is how long the client must stay normal to count as
	// recovered [1 s], so that a lull inside the failover does not count.
	Stable time.Duration
}

// WithDefaults returns c with its zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	c.defaults()
	return c
}

func (c *Config) defaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&c.Warmup, time.Second)
	def(&c.Before, 2*time.Second)
	def(&c.After, 8*time.Second)
	def(&c.Bucket, 100*time.Millisecond)
	def(&c.CallTimeout, 5*time.Second)
	def(&c.RetryPause, 10*time.Millisecond)
	def(&c.Stable, time.Second)
	if c.Goroutines == 0 {
		c.Goroutines = 64
	}
	if c.Keys == 0 {
		c.Keys = 10_000
	}
	if c.KeyPrefix == "" {
		c.KeyPrefix = "failover:"
	}
	if c.Value == nil {
		c.Value = make([]byte, 64)
		for i := range c.Value {
			c.Value[i] = 'a' + byte(i%26)
		}
	}
	if c.GetRatio == 0 {
		c.GetRatio = 0.5
	}
	if c.Degraded == 0 {
		c.Degraded = 2
	}
}

// Key returns the i-th key of the load.
func (c *Config) Key(i int) string { return c.KeyPrefix + strconv.Itoa(i) }

// call is one recorded call, its times in nanoseconds from the run's start.
type call struct {
	start, latency int64
	err            error
}

// recorder is one goroutine's calls.
type recorder struct {
	calls []call
	_     [64]byte // keep neighbours apart
}

// Run prefills the keys through a zipline client of its own, starts the
// load on c, kills the victim after Warmup+Before, keeps the load going for
// After (and until Tail after the cluster has settled), and returns the
// timeline. ctx ends the run early (with ctx's error).
func Run(ctx context.Context, cfg Config, c Client) (*Timeline, error) {
	cfg.defaults()
	if cfg.Cluster == nil {
		return nil, errors.New("failover: no cluster")
	}
	victim := cfg.Victim
	if victim == nil {
		var err error
		if victim, err = cfg.Cluster.SlotOwner(ctx, 0); err != nil {
			return nil, err
		}
	}
	if err := prefill(ctx, &cfg); err != nil {
		return nil, fmt.Errorf("failover: prefill: %w", err)
	}
	// The replica that will be promoted must hold the prefill: a GET of a
	// prefilled key that finds nothing would be the replication's loss,
	// counted against the client.
	if err := cfg.Cluster.AwaitReplicas(ctx); err != nil {
		return nil, fmt.Errorf("failover: prefill: %w", err)
	}

	recs := make([]recorder, cfg.Goroutines)
	var stop atomic.Bool
	var wg sync.WaitGroup
	base := time.Now()
	for g := range recs {
		wg.Go(func() { cfg.load(ctx, c, g, &recs[g], &stop, base) })
	}
	defer func() { stop.Store(true); wg.Wait() }()

	select {
	case <-time.After(cfg.Warmup + cfg.Before):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	type killed struct {
		p   testbed.Promotion
		at  time.Time
		err error
	}
	kc := make(chan killed, 1)
	go func() {
		p, err := cfg.Cluster.Kill(context.WithoutCancel(ctx), victim)
		// Kill measured Settled from the moment it sent SIGKILL.
		kc <- killed{p, time.Now().Add(-p.Settled), err}
	}()
	var k killed
	select {
	case k = <-kc:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if k.err != nil {
		return nil, fmt.Errorf("failover: %w", k.err)
	}
	end := k.at.Add(cfg.After)
	if tail := time.Now().Add(cfg.Tail); tail.After(end) {
		end = tail
	}
	select {
	case <-time.After(time.Until(end)):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	stop.Store(true)
	wg.Wait()

	t := cfg.timeline(recs, k.at.Sub(base), end.Sub(base))
	t.Victim, t.Promotion = victim.Addr, k.p
	return t, nil
}

// load is one goroutine: GET or SET of a random key, in a loop, until
// stop or until ctx ends (which also ends the call in progress). Calls are
// recorded from the start.
func (cfg *Config) load(ctx context.Context, c Client, g int, rec *recorder, stop *atomic.Bool, base time.Time) {
	rng := rand.New(rand.NewPCG(uint64(g), 7))
	const maxCalls = 1 << 32 // bounded by count as well as by stop
	for range maxCalls {
		if stop.Load() || ctx.Err() != nil {
			return
		}
		key := cfg.Key(rng.IntN(cfg.Keys))
		get := rng.Float64() < cfg.GetRatio
		cctx, cancel := context.WithTimeout(ctx, cfg.CallTimeout)
		t0 := time.Now()
		var err error
		if get {
			var n int
			if n, err = c.Get(cctx, key); err == nil && n != len(cfg.Value) {
				err = fmt.Errorf("GET returned %d bytes, want %d", n, len(cfg.Value))
			}
		} else {
			err = c.Set(cctx, key, cfg.Value)
		}
		lat := time.Since(t0)
		cancel()
		rec.calls = append(rec.calls, call{start: int64(t0.Sub(base)), latency: int64(lat), err: err})
		if err != nil {
			time.Sleep(cfg.RetryPause) // an application's retry pause, not synchronisation
		}
	}
}

// prefill writes every key with the value, through zipline's Batch (split
// per node), 1000 at a time.
func prefill(ctx context.Context, cfg *Config) error {
	c, err := zipline.New(zipline.Options{Addrs: cfg.Cluster.Addrs()[:1], Logger: quietLogger})
	if err != nil {
		return err
	}
	defer c.Close()
	b := c.Batch()
	for i := range cfg.Keys {
		b.Set(cfg.Key(i), cfg.Value)
		if b.Len() == 1000 || i == cfg.Keys-1 {
			if err := b.Exec(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// merge returns every goroutine's calls.
func merge(recs []recorder) []call {
	n := 0
	for i := range recs {
		n += len(recs[i].calls)
	}
	all := make([]call, 0, n)
	for i := range recs {
		all = append(all, recs[i].calls...)
	}
	return all
}
