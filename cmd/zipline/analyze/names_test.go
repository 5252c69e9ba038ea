package analyze

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/layout"
	"github.com/ziplinekv/zipline/testbed"
	"github.com/ziplinekv/zipline/testbed/servertest"
)

// The stored names the model prices (layout.NamesFor, from the server's
// listpack limits alone) are those a Store writes: plain keys (zipped),
// buckets, and the keys of oversize values; and the Store places every key
// where NamesFor does.
func TestNamesMatchLayout(t *testing.T) {
	srv := servertest.NewServer(t, testbed.Config{})
	ctx := context.Background()
	c, err := zipline.New(zipline.Options{Addr: srv.Addr, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	keys := []string{"user:1", "user:99", "user:100", "user:12345", "user:007", "user:alice", "user:7:cart",
		"user:" + strings.Repeat("z", 80), "user:#x", "user:0a"}
	value := func(k string) []byte {
		if strings.Contains(k, "cart") {
			return bytes.Repeat([]byte("v"), 300) // oversize in a bucket
		}
		return []byte("v-" + k)
	}
	for _, tc := range []struct {
		name    string
		buckets layout.Buckets
	}{
		{"plain", nil},
		{"dense", layout.Dense(100)},
		{"hashed", layout.Hashed(7)},
		{"hashed-for", layout.HashedFor(1000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := c.FlushAll(ctx); err != nil {
				t.Fatal(err)
			}
			ns := layout.Namespace{Prefix: "user:", ZipAs: "u:", Buckets: tc.buckets}
			st, err := layout.New(ctx, c, ns)
			if err != nil {
				t.Fatal(err)
			}
			// What analyze predicts from the server's listpack limits
			// alone, without a Store.
			cfg, err := c.ConfigGet(ctx, "hash-max-listpack-*")
			if err != nil {
				t.Fatal(err)
			}
			entries, _ := strconv.Atoi(cfg["hash-max-listpack-entries"])
			maxValue, _ := strconv.Atoi(cfg["hash-max-listpack-value"])
			names := layout.NamesFor(ns, entries, maxValue)
			want := map[string]bool{}
			for _, k := range keys {
				if err := st.Set(ctx, k, value(k)); err != nil {
					t.Fatal(err)
				}
				p, err := names.Place(k)
				if err != nil {
					t.Fatal(err)
				}
				if sp, err := st.Place(k); err != nil || sp != p {
					t.Fatalf("%s: NamesFor places it at %+v, the Store at %+v (%v)", k, p, sp, err)
				}
				switch {
				case p.Bucket == "":
					want[p.Key] = true
				case len(value(k)) > 64:
					want[p.Bucket] = true
					want[names.OversizeKey(p)] = true
				default:
					want[p.Bucket] = true
				}
			}
			var got []string
			for k, err := range c.Scan(ctx, zipline.ScanOptions{}) {
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, k)
			}
			var wantList []string
			for k := range want {
				wantList = append(wantList, k)
			}
			slices.Sort(got)
			slices.Sort(wantList)
			if !slices.Equal(got, wantList) {
				t.Errorf("layout stored %q; the model expects %q", got, wantList)
			}
		})
	}
}
