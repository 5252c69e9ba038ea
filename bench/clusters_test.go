package bench

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/testbed"
)

// Every cluster adapter reads what it writes, on a real cluster: single
// keys, an MGET whose keys hash to many slots, and a batch across slots.
func TestClusterAdapters(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl, err := testbed.StartCluster(ctx, testbed.ClusterConfig{})
	if errors.Is(err, testbed.ErrNoBinary) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Stop()
	val := Value(64)
	if err := Prefill(cl.Addrs()[0], val); err != nil {
		t.Fatal(err)
	}
	keys := Keys[:BatchKeys]
	for _, f := range AllCluster() {
		t.Run(f.Name, func(t *testing.T) {
			c, err := f.New(cl.Addrs()[:1])
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			get := KeyOp(c, true, 0, val)
			for range 3 {
				if err := get(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if err := KeyOp(c, false, 5, val)(ctx); err != nil {
				t.Fatal(err)
			}
			if f.Does(OpMGet) {
				if n, err := c.MGet(ctx, keys); err != nil || n != len(keys)*len(val) {
					t.Errorf("MGet: %d bytes, %v", n, err)
				}
			}
			if f.Does(OpBatch) {
				if n, err := c.Batch(ctx, keys, val); err != nil || n != len(keys)/2*len(val) {
					t.Errorf("Batch: %d bytes, %v", n, err)
				}
			}
		})
	}
}
