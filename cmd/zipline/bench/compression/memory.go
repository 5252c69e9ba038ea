package compression

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/ziplinekv/zipline/testbed/corpus"
)

// Dataset is the keys and values a measurement stores: the first n
// documents of a corpus class under fixed-width keys, the same for every
// client.
type Dataset struct {
	Class  corpus.Class
	Keys   []string
	Values [][]byte
}

// NewDataset makes n values of class c from seed, under keys
// prefix+"0000000", prefix+"0000001"...
func NewDataset(c corpus.Class, n int, seed int64, prefix string) Dataset {
	d := Dataset{Class: c, Keys: make([]string, n), Values: corpus.Generate(c, n, seed)}
	for i := range d.Keys {
		d.Keys[i] = fmt.Sprintf("%s%07d", prefix, i)
	}
	return d
}

// Bytes is the total plaintext size of the values.
func (d Dataset) Bytes() int64 {
	var n int64
	for _, v := range d.Values {
		n += int64(len(v))
	}
	return n
}

// MeanSize is the mean value size in bytes.
func (d Dataset) MeanSize() float64 {
	if len(d.Values) == 0 {
		return 0
	}
	return float64(d.Bytes()) / float64(len(d.Values))
}

// MemoryConfig says what MeasureMemory stores.
type MemoryConfig struct {
	Addr    string
	Classes []corpus.Class
	Keys    int   // values per class; default DefaultKeys
	Seed    int64 // corpus seed; default 1
	// KeyPrefix is put before each key's 7-digit number; default "cb:mem:".
	KeyPrefix string
	// Flush empties the server with FLUSHALL before each run, as GLIDE's
	// method does. Without it each run deletes its own keys when done, so
	// the measurement can share a server with other data (the demo); the
	// delta is then less exact if others write meanwhile.
	Flush bool
	// Verify is how many values each run reads back through the client
	// under test and compares; default 16.
	Verify   int
	Progress io.Writer // one line per run; nil for none
}

// DefaultKeys is how many values GLIDE stored per class.
const DefaultKeys = 10_000

func (c MemoryConfig) withDefaults() MemoryConfig {
	if c.Keys <= 0 {
		c.Keys = DefaultKeys
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.KeyPrefix == "" {
		c.KeyPrefix = "cb:mem:"
	}
	if c.Verify <= 0 {
		c.Verify = 16
	}
	return c
}

// MemoryRun is one variant storing one class.
type MemoryRun struct {
	Client   string
	Backend  Backend
	Bytes    int64 // used_memory after minus before
	Stored   int64 // sum of STRLEN over the keys: the stored value bytes
	Verified int   // values read back equal to what was written
	Elapsed  time.Duration
}

// MemoryResult is one class: its values and every variant's run.
type MemoryResult struct {
	Class corpus.Class
	Keys  int
	Plain int64 // plaintext bytes of all values
	Runs  []MemoryRun
}

// MeanSize is the mean plaintext value size.
func (r MemoryResult) MeanSize() float64 { return float64(r.Plain) / float64(max(r.Keys, 1)) }

// Run returns client's run with backend b.
func (r MemoryResult) Run(client string, b Backend) (MemoryRun, bool) {
	for _, run := range r.Runs {
		if run.Client == client && run.Backend == b {
			return run, true
		}
	}
	return MemoryRun{}, false
}

// Saved returns the fraction of used_memory that backend b saved over the
// same client without compression: 0.49 means 49 % less.
func (r MemoryResult) Saved(client string, b Backend) (float64, bool) {
	base, ok1 := r.Run(client, None)
	run, ok2 := r.Run(client, b)
	if !ok1 || !ok2 || base.Bytes <= 0 {
		return 0, false
	}
	return 1 - float64(run.Bytes)/float64(base.Bytes), true
}

// MeasureMemory stores each class with each variant and reports the
// server's used_memory growth, GLIDE's memory method: FLUSHALL (see
// MemoryConfig.Flush), read used_memory, store every value through the
// client (batches of 100), read a few back and compare them, close the
// client, wait for the server to settle, read used_memory again. Clients
// are closed before the second reading so that their connection buffers
// are not counted. The order of runs does not matter: used_memory counts
// allocations exactly, so equal contents give equal readings.
func MeasureMemory(ctx context.Context, cfg MemoryConfig, variants []Variant) ([]MemoryResult, error) {
	cfg = cfg.withDefaults()
	adm, err := dialAdmin(cfg.Addr)
	if err != nil {
		return nil, err
	}
	defer adm.Close()
	if cfg.Flush {
		if err := adm.flushAll(ctx); err != nil {
			return nil, err
		}
	}
	baseClients, err := adm.connectedClients(ctx)
	if err != nil {
		return nil, err
	}
	// A server allocates some memory once, on first use: redis 7.0 grows
	// by ~60 KB on the first store after start-up, and each client's
	// connection set-up may run commands never seen before (see also
	// admin.quietMemory). So every variant makes one unrecorded run first.
	if len(cfg.Classes) > 0 {
		data := NewDataset(cfg.Classes[0], min(cfg.Keys, 500), cfg.Seed, cfg.KeyPrefix)
		for _, v := range variants {
			if _, err := measureOne(ctx, adm, cfg, baseClients, data, v); err != nil {
				return nil, fmt.Errorf("compression: memory warm-up %s: %w", v.Name(), err)
			}
		}
	}
	var out []MemoryResult
	for _, class := range cfg.Classes {
		data := NewDataset(class, cfg.Keys, cfg.Seed, cfg.KeyPrefix)
		res := MemoryResult{Class: class, Keys: cfg.Keys, Plain: data.Bytes()}
		for _, v := range variants {
			run, err := measureOne(ctx, adm, cfg, baseClients, data, v)
			if err != nil {
				return out, fmt.Errorf("compression: memory %s %s: %w", class, v.Name(), err)
			}
			res.Runs = append(res.Runs, run)
			if cfg.Progress != nil {
				fmt.Fprintf(cfg.Progress, "memory %-12s %-16s %9.3f MB  %7.1f B/value stored  (%v)\n",
					class, v.Name(), float64(run.Bytes)/1e6, float64(run.Stored)/float64(cfg.Keys), run.Elapsed.Round(time.Millisecond))
			}
		}
		out = append(out, res)
	}
	return out, nil
}

func measureOne(ctx context.Context, adm *admin, cfg MemoryConfig, baseClients int, data Dataset, v Variant) (MemoryRun, error) {
	start := time.Now()
	run := MemoryRun{Client: v.Client, Backend: v.Backend}
	if cfg.Flush {
		if err := adm.flushAll(ctx); err != nil {
			return run, err
		}
	}
	before, err := adm.settle(ctx, baseClients)
	if err != nil {
		return run, err
	}
	c, err := v.New(ctx, cfg.Addr)
	if err != nil {
		return run, err
	}
	if err := storeAll(ctx, c, data, 100); err != nil {
		c.Close()
		return run, err
	}
	run.Verified, err = verify(ctx, c, data, cfg.Verify)
	c.Close()
	if err != nil {
		return run, err
	}
	after, err := adm.settle(ctx, baseClients)
	if err != nil {
		return run, err
	}
	run.Bytes = after - before
	if run.Stored, err = adm.sumEach(ctx, "STRLEN", data.Keys); err != nil {
		return run, err
	}
	if !cfg.Flush {
		if _, err := adm.sumEach(ctx, "DEL", data.Keys); err != nil {
			return run, err
		}
	}
	run.Elapsed = time.Since(start)
	return run, nil
}

// storeAll writes every value of data through c, batch keys at a time.
func storeAll(ctx context.Context, c Client, data Dataset, batch int) error {
	for i := 0; i < len(data.Keys); i += batch {
		j := min(i+batch, len(data.Keys))
		if err := c.SetBatch(ctx, data.Keys[i:j], data.Values[i:j]); err != nil {
			return err
		}
	}
	return nil
}

// verify reads n values spread over data back through c and fails on the
// first that differs from what was written.
func verify(ctx context.Context, c Client, data Dataset, n int) (int, error) {
	n = min(n, len(data.Keys))
	for i := range n {
		k := i * len(data.Keys) / n
		if i == n-1 {
			k = len(data.Keys) - 1
		}
		got, err := c.Get(ctx, data.Keys[k])
		if err != nil {
			return i, fmt.Errorf("reading back %s: %w", data.Keys[k], err)
		}
		if !bytes.Equal(got, data.Values[k]) {
			return i, fmt.Errorf("%s read back as %d bytes, differing from the %d written", data.Keys[k], len(got), len(data.Values[k]))
		}
	}
	return n, nil
}
