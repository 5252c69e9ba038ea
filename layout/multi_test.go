package layout

import (
	"bytes"
	"context"
	"testing"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/internal/testkit"
)

// TestFastMulti checks MGet and MSet's fast paths (multi.go) on each kind
// of server: keys in several buckets and plain keys in one call, a key
// given twice, an oversize value overwritten by one that fits (its key
// must go, as the script would remove it), and markers followed on read.
func TestFastMulti(t *testing.T) {
	ctx := context.Background()
	for _, kind := range []testkit.Kind{testkit.Redis, testkit.Valkey} {
		t.Run(string(kind), func(t *testing.T) {
			c, _ := newClient(t, kind)
			s := openStore(t, c, Namespace{Prefix: "user:", ZipAs: "u:", Buckets: Dense(100)})
			if err := s.Set(ctx, "user:5", bigValue); err != nil {
				t.Fatal(err)
			}
			l, _ := s.locate("user:5")
			over := s.oversizeKey(l)
			if n, _ := c.Exists(ctx, over); n != 1 {
				t.Fatalf("oversize key %s missing after Set", over)
			}
			// A legacy oversize value (an earlier version's layout).
			if _, err := c.HSet(ctx, l.bucket, zipline.FieldValue{Field: "6", Value: legacyMarker}); err != nil {
				t.Fatal(err)
			}
			if err := c.Set(ctx, "u:6", []byte("legacy")); err != nil {
				t.Fatal(err)
			}
			if got, err := s.MGet(ctx, "user:5", "user:6", "user:404", "user:007"); err != nil ||
				!bytes.Equal(got[0], bigValue) || string(got[1]) != "legacy" || got[2] != nil || got[3] != nil {
				t.Fatalf("MGet over markers = %s, %v", short(got), err)
			}
			pairs := []zipline.KeyValue{
				{Key: "user:5", Value: []byte("small")},  // replaces an oversize value
				{Key: "user:6", Value: []byte("small6")}, // replaces a legacy one
				{Key: "user:250", Value: []byte("a")},
				{Key: "user:007", Value: []byte("plain")}, // not an id: a plain key
				{Key: "user:250", Value: []byte("b")},     // given twice: the last wins
				{Key: "user:99", Value: []byte("c")},
			}
			if err := s.MSet(ctx, pairs...); err != nil {
				t.Fatal(err)
			}
			if n, _ := c.Exists(ctx, over, "u:6"); n != 0 {
				t.Errorf("MSet left %d oversize or legacy keys behind", n)
			}
			got, err := s.MGet(ctx, "user:99", "user:5", "user:007", "user:250", "user:6", "user:5")
			want := []string{"c", "small", "plain", "b", "small6", "small"}
			if err != nil || len(got) != len(want) {
				t.Fatalf("MGet = %s, %v", short(got), err)
			}
			for i, w := range want {
				if string(got[i]) != w {
					t.Errorf("MGet[%d] = %q, want %q", i, got[i], w)
				}
			}
			// A value that does not fit takes the script, which stores it
			// under its own key.
			if err := s.MSet(ctx, zipline.KeyValue{Key: "user:1", Value: bigValue}, zipline.KeyValue{Key: "user:2", Value: []byte("x")}); err != nil {
				t.Fatal(err)
			}
			if v, err := s.Get(ctx, "user:1"); err != nil || !bytes.Equal(v, bigValue) {
				t.Errorf("oversize value through MSet: %d bytes, %v", len(v), err)
			}
			if _, err := s.MGet(ctx, "other:1"); err == nil {
				t.Error("MGet of a key outside the namespace: no error")
			}
			if err := s.MSet(ctx, zipline.KeyValue{Key: "other:1", Value: []byte("x")}); err == nil {
				t.Error("MSet of a key outside the namespace: no error")
			}
		})
	}
}
