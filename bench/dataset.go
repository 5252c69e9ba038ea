package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/ziplinekv/zipline"
)

// The data set every benchmark uses: NumKeys keys of KeyLen bytes, each
// holding a value of the cell's size, written by Prefill before the cell.
const (
	NumKeys   = 1000
	KeyLen    = 16
	keyPrefix = "zl:bench:" // + 7 digits = KeyLen bytes
)

// Keys are the benchmark keys; callers must not modify the slice.
var Keys = func() []string {
	keys := make([]string, NumKeys)
	for i := range keys {
		keys[i] = fmt.Sprintf("%s%07d", keyPrefix, i)
		if len(keys[i]) != KeyLen {
			panic("bench: bad key length")
		}
	}
	return keys
}()

// Value returns a value of size bytes (a repeating a–z pattern).
func Value(size int) []byte {
	v := make([]byte, size)
	for i := range v {
		v[i] = 'a' + byte(i%26)
	}
	return v
}

// KeyClient is the single-key part of Client and ClusterClient.
type KeyClient interface {
	Get(ctx context.Context, key string) (int, error)
	Set(ctx context.Context, key string, val []byte) error
}

var errBadLen = errors.New("GET returned a value of the wrong length")

// KeyOp returns one goroutine's operation for the single-key cells: GET
// (checking the value's length) or SET of val, on Keys[start],
// Keys[start+1]... round-robin. It allocates nothing per call.
func KeyOp(c KeyClient, get bool, start int, val []byte) func(ctx context.Context) error {
	keys, i := Keys, start%len(Keys)
	return func(ctx context.Context) error {
		k := keys[i]
		if i++; i == len(keys) {
			i = 0
		}
		if !get {
			return c.Set(ctx, k, val)
		}
		l, err := c.Get(ctx, k)
		if err == nil && l != len(val) {
			err = errBadLen
		}
		return err
	}
}

// BatchOp is KeyOp for a Batcher: each call sends n commands, on the next n
// of Keys (wrapping to the start where fewer than n are left), and checks
// the total length of the values a GET batch read.
func BatchOp(c Batcher, get bool, n, start int, val []byte) func(ctx context.Context) error {
	n = min(n, len(Keys))
	i := start % (len(Keys) - n + 1)
	return func(ctx context.Context) error {
		keys := Keys[i : i+n]
		if i += n; i+n > len(Keys) {
			i = 0
		}
		if !get {
			return c.SetBatch(ctx, keys, val)
		}
		l, err := c.GetBatch(ctx, keys)
		if err == nil && l != n*len(val) {
			err = errBadLen
		}
		return err
	}
}

// Prefill writes every key with val through a zipline client of its own,
// in one batch, independent of the clients under test.
func Prefill(addr string, val []byte) error {
	c, err := zipline.New(zipline.Options{Addr: addr, Logger: quiet})
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b := c.Batch()
	for _, k := range Keys {
		b.Set(k, val)
	}
	return b.Exec(ctx)
}

// quiet discards the prefill client's connection events.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))
