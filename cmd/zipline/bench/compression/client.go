package compression

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/codec"
)

// Backend is the compression setting of a client under test.
type Backend int

// The settings GLIDE's benchmark compares: no compression (the baseline),
// zstd and LZ4, both at their default levels (zstd 3, LZ4 0).
const (
	None Backend = iota
	Zstd
	LZ4
)

// Backends lists every setting, the baseline first.
var Backends = []Backend{None, Zstd, LZ4}

// String returns "none", "zstd" or "lz4".
func (b Backend) String() string {
	switch b {
	case None:
		return "none"
	case Zstd:
		return "zstd"
	case LZ4:
		return "lz4"
	}
	return fmt.Sprintf("Backend(%d)", int(b))
}

// Label is the name used in tables and charts: "none", "zstd", "LZ4".
func (b Backend) Label() string {
	if b == LZ4 {
		return "LZ4"
	}
	return b.String()
}

// RatioBar is the lowest compressed/uncompressed throughput ratio issue 3
// accepts for b at any point of the matrix: 0.80 for zstd, 0.95 for LZ4.
func (b Backend) RatioBar() float64 {
	switch b {
	case Zstd:
		return 0.80
	case LZ4:
		return 0.95
	}
	return 0
}

// ParseBackend reads "none", "zstd" or "lz4" (any case).
func ParseBackend(s string) (Backend, error) {
	for _, b := range Backends {
		if strings.EqualFold(s, b.String()) {
			return b, nil
		}
	}
	return 0, fmt.Errorf("compression: unknown backend %q (want none, zstd or lz4)", s)
}

// Client is what the benchmark drives. Implementations must be safe for
// concurrent use by many goroutines, and use their client's idiomatic
// fastest calls: a batch of one key is a plain SET or GET, a larger one a
// non-transactional pipeline (batch) sent in one round trip.
type Client interface {
	// SetBatch stores vals[i] under keys[i]. The slices must not be
	// modified or retained.
	SetBatch(ctx context.Context, keys []string, vals [][]byte) error
	// GetBatch reads keys and returns the total length of the values it
	// got back, materialised as the client's users get them (decompressed,
	// as []byte or string), so every client pays for its replies. A missing
	// key counts as length 0.
	GetBatch(ctx context.Context, keys []string) (int, error)
	// Get reads one value back, for checking what was stored.
	Get(ctx context.Context, key string) ([]byte, error)
	Close() error
}

// Variant is one client with one compression setting: a column of the
// report.
type Variant struct {
	Client  string // "zipline", "GLIDE Go"
	Backend Backend
	Config  string // one line: how the client is built, for the report
	New     func(ctx context.Context, addr string) (Client, error)
}

// Name is "client/backend", e.g. "zipline/zstd".
func (v Variant) Name() string { return v.Client + "/" + v.Backend.String() }

// ZiplineName is the client name of the zipline variants.
const ZiplineName = "zipline"

// Zipline returns the zipline variant for b: zipline.New with default
// options except Compression.Backend.
func Zipline(b Backend) Variant {
	cfg := "zipline.New(Options{Addr})"
	if b != None {
		cfg = fmt.Sprintf("zipline.New(Options{Addr, Compression: Compression{Backend: codec.%s}})", map[Backend]string{Zstd: "Zstd", LZ4: "LZ4"}[b])
	}
	return Variant{Client: ZiplineName, Backend: b, Config: cfg + "; Set/Get, Batch().Set/Get + Exec",
		New: func(ctx context.Context, addr string) (Client, error) {
			opts := zipline.Options{Addr: addr}
			switch b {
			case Zstd:
				opts.Compression.Backend = codec.Zstd
			case LZ4:
				opts.Compression.Backend = codec.LZ4
			}
			c, err := zipline.New(opts)
			if err != nil {
				return nil, err
			}
			return NewZiplineClient(c), nil
		}}
}

// ZiplineVariants returns the three zipline variants, baseline first.
func ZiplineVariants() []Variant {
	return []Variant{Zipline(None), Zipline(Zstd), Zipline(LZ4)}
}

// ziplineClient adapts a *zipline.Client. Batches are documented as
// reusable after Exec, so each goroutine's batch comes from a pool rather
// than being built anew for every call.
type ziplineClient struct {
	c       *zipline.Client
	batches sync.Pool // *ziplineBatch
}

type ziplineBatch struct {
	b    *zipline.Batch
	gets []*zipline.Future[[]byte]
}

// NewZiplineClient wraps c; Close closes c.
func NewZiplineClient(c *zipline.Client) Client {
	z := &ziplineClient{c: c}
	z.batches.New = func() any { return &ziplineBatch{b: c.Batch()} }
	return z
}

func (z *ziplineClient) SetBatch(ctx context.Context, keys []string, vals [][]byte) error {
	if len(keys) == 1 {
		return z.c.Set(ctx, keys[0], vals[0])
	}
	zb := z.batches.Get().(*ziplineBatch)
	defer z.batches.Put(zb)
	for i, k := range keys {
		zb.b.Set(k, vals[i])
	}
	return zb.b.Exec(ctx)
}

func (z *ziplineClient) GetBatch(ctx context.Context, keys []string) (int, error) {
	if len(keys) == 1 {
		v, err := z.c.Get(ctx, keys[0])
		if errors.Is(err, zipline.Nil) {
			err = nil
		}
		return len(v), err
	}
	zb := z.batches.Get().(*ziplineBatch)
	defer z.batches.Put(zb)
	zb.gets = zb.gets[:0]
	for _, k := range keys {
		zb.gets = append(zb.gets, zb.b.Get(k))
	}
	err := zb.b.Exec(ctx)
	n := 0
	for i, f := range zb.gets {
		n += len(f.Val())
		zb.gets[i] = nil
	}
	return n, err
}

func (z *ziplineClient) Get(ctx context.Context, key string) ([]byte, error) {
	return z.c.Get(ctx, key)
}

func (z *ziplineClient) Close() error { return z.c.Close() }
