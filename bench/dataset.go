package bench

import (
	"context"
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
