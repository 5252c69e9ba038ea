package layout

import (
	"bytes"
	"context"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/internal/testkit"
)

// cutter breaks the client's connections on purpose: once armed, the
// first write that contains its trigger reports success to the client but
// closes the connection instead of sending, so the request is in flight
// when the connection is lost (deterministically: the server cannot answer
// before the close).
type cutter struct {
	mu      sync.Mutex
	trigger []byte // nil: disarmed
	cuts    int
}

// arm makes the next write containing trigger cut its connection.
func (c *cutter) arm(trigger string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.trigger = []byte(trigger)
}

// fired reports how many connections were cut.
func (c *cutter) fired() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cuts
}

func (c *cutter) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &cutConn{Conn: conn, c: c}, nil
}

type cutConn struct {
	net.Conn
	c *cutter
}

func (cc *cutConn) Write(b []byte) (int, error) {
	cc.c.mu.Lock()
	cut := cc.c.trigger != nil && bytes.Contains(b, cc.c.trigger)
	if cut {
		cc.c.trigger = nil
		cc.c.cuts++
	}
	cc.c.mu.Unlock()
	if cut {
		cc.Conn.Close()
		return len(b), nil
	}
	return cc.Conn.Write(b)
}

// newCutClient is newClient whose connections a cutter can break.
func newCutClient(t *testing.T, kind testkit.Kind) (*zipline.Client, *testkit.Server, *cutter) {
	t.Helper()
	srv := testkit.NewServer(t, testkit.Config{Kind: kind})
	cut := &cutter{}
	c, err := zipline.New(zipline.Options{Addr: srv.Addr, Logger: quiet, Dialer: cut.dial, WaitForReconnect: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, srv, cut
}

// accounting is what a namespace's stored keys hold, read from the server
// with a client of its own: the state an oversize value must keep is one
// string key per bucket field holding a marker, and nothing else.
type accounting struct {
	Buckets      int // hashes
	Markers      int // fields that hold an oversize marker
	OversizeKeys int // string keys that hold an oversize value (either name)
	PlainKeys    int // string keys of keys that have no bucket
	Orphans      int // oversize keys that no marker points to
	Dangling     int // markers whose key is missing
	Tombstones   int // members of tombstone sets (a migration on a cluster)
	TombSets     int // tombstone sets
}

// account reads s's layout (not its MigrateFrom) on a server or a cluster.
// It knows the stored names from the layout's documentation: buckets are
// <stored>#<base62>, oversize keys <stored>#{<bucket>}<field> or, in the
// legacy naming, the key's plain name, tombstone sets <stored>#!{...}.
func account(t testing.TB, b bed, s *Store) accounting {
	t.Helper()
	ctx := context.Background()
	var a accounting
	names := b.keys(t, globEscape(s.stored)+"*")
	do := func(args ...any) testkit.Value {
		t.Helper()
		v, err := b.do(ctx, args[1].(string), args...)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	referenced := map[string]bool{}
	var strs []string
	for _, name := range names {
		switch typ := string(do("TYPE", name).Bytes()); typ {
		case "hash":
			a.Buckets++
			kv := do("HGETALL", name).Elems() // RESP2: field, value, ...
			for i := 0; i+1 < len(kv); i += 2 {
				f, val := string(kv[i].Bytes()), kv[i+1].Bytes()
				var target string
				switch {
				case bytes.Equal(val, []byte("\x00{")):
					target = s.stored + "#{" + name + "}" + f
				case bytes.Equal(val, []byte("\x00~")):
					l, err := s.locate(s.ns.Prefix + s.buckets.tail(bucketNumber(t, s, name), f))
					if err != nil {
						t.Fatal(err)
					}
					target = l.plain
				default:
					continue
				}
				a.Markers++
				referenced[target] = true
				if n := do("EXISTS", target); n.Int() != 1 {
					a.Dangling++
				}
			}
		case "string":
			strs = append(strs, name)
		case "set":
			if !isTouchedName(name[len(s.stored):]) {
				t.Fatalf("%s is a set", name)
			}
			a.TombSets++
			a.Tombstones += int(do("SCARD", name).Int())
		case "none": // expired meanwhile
		default:
			t.Fatalf("%s is a %s", name, typ)
		}
	}
	for _, name := range strs {
		rest := name[len(s.stored):]
		isOversize := strings.HasPrefix(rest, "#{") || s.buckets != nil && s.isBucketable(rest)
		switch {
		case !isOversize:
			a.PlainKeys++
		case referenced[name]:
			a.OversizeKeys++
		default:
			a.OversizeKeys++
			a.Orphans++
		}
	}
	return a
}

// A bed is the servers under a test, one or a cluster: the keys matching a
// pattern on every primary, and a command on a key's own node.
type bed interface {
	keys(t testing.TB, pattern string) []string
	do(ctx context.Context, key string, args ...any) (testkit.Value, error)
}

type serverBed struct{ *testkit.Server }

func (b serverBed) keys(t testing.TB, pattern string) []string {
	t.Helper()
	v, err := b.Do(context.Background(), "KEYS", pattern)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range v.Elems() {
		out = append(out, string(e.Bytes()))
	}
	return out
}

func (b serverBed) do(ctx context.Context, _ string, args ...any) (testkit.Value, error) {
	return b.Do(ctx, args...)
}

func bucketNumber(t testing.TB, s *Store, bucket string) uint64 {
	t.Helper()
	n, ok := parseBase62(strings.TrimPrefix(bucket, s.stored+"#"))
	if !ok {
		t.Fatalf("%s is not a bucket name", bucket)
	}
	return n
}
