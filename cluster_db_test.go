package zipline

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/internal/testkit"
)

// Numbered databases on a cluster: on Valkey 9.0 and later with
// cluster-databases, Options.DB holds on every connection the client makes
// (shared, split multi-key reads, transactions, blocking commands, SCAN
// across the primaries), so two clients of different DBs see apart
// keyspaces; where the cluster has none, New fails with ErrNoDB.
func TestDBOnCluster(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	t.Run("valkey", func(t *testing.T) {
		cl := testkit.NewCluster(t, testkit.ClusterConfig{Kind: testkit.Valkey, Replicas: -1, Args: []string{"--cluster-databases", "4"}})
		db0, err := New(Options{Addrs: cl.Addrs(), Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		defer db0.Close()
		db2, err := New(Options{Addrs: cl.Addrs(), DB: 2, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		defer db2.Close()

		const n = 200 // spread over every shard
		keys := make([]string, n)
		for i := range keys {
			keys[i] = fmt.Sprintf("k%d", i)
			if err := db2.Set(ctx, keys[i], []byte("two")); err != nil {
				t.Fatal(err)
			}
		}
		if got, err := db0.Exists(ctx, keys...); err != nil || got != 0 {
			t.Fatalf("DB 0 has %d of DB 2's keys (%v)", got, err)
		}
		vals, err := db2.MGet(ctx, keys...)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range vals {
			if string(v) != "two" {
				t.Fatalf("MGet in DB 2: %s = %q", keys[i], v)
			}
		}
		scanned := 0
		for key, err := range db2.Scan(ctx, ScanOptions{}) {
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(key, "k") {
				t.Fatalf("SCAN of DB 2 found %q", key)
			}
			scanned++
		}
		if scanned != n {
			t.Fatalf("SCAN of DB 2 over every primary found %d keys of %d", scanned, n)
		}
		err = db2.Watch(ctx, func(tx *Client) error {
			return tx.Set(ctx, "{acct}:balance", []byte("7"))
		}, "{acct}:balance")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db0.Get(ctx, "{acct}:balance"); !errors.Is(err, Nil) {
			t.Fatalf("a transaction of DB 2 wrote to DB 0: %v", err)
		}
		if _, err := db2.RPush(ctx, "jobs", []byte("j")); err != nil {
			t.Fatal(err)
		}
		kv, err := db2.BLPop(ctx, time.Second, "jobs") // on a dedicated connection
		if err != nil || kv.Key != "jobs" {
			t.Fatalf("BLPOP in DB 2: %v %v", kv, err)
		}
	})

	for _, tc := range []struct {
		name string
		cfg  testkit.ClusterConfig
	}{
		{"redis", testkit.ClusterConfig{Kind: testkit.Redis, Replicas: -1}},
		{"valkey without cluster-databases", testkit.ClusterConfig{Kind: testkit.Valkey, Replicas: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := testkit.NewCluster(t, tc.cfg)
			c, err := New(Options{Addrs: cl.Addrs(), DB: 2, Logger: quiet})
			if err == nil {
				c.Close()
				t.Fatal("New with DB 2 on a cluster without numbered databases succeeded")
			}
			if !errors.Is(err, ErrNoDB) {
				t.Fatalf("got %v, want ErrNoDB", err)
			}
			t.Log(err)
		})
	}
}
