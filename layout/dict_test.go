package layout

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/codec"
	"github.com/ziplinekv/zipline/internal/testkit"
	"github.com/ziplinekv/zipline/testbed/corpus"
	"github.com/ziplinekv/zipline/testbed/servertest"
)

// dictNS keeps its dictionaries in the server.
var dictNS = Namespace{Prefix: "rec:", ZipAs: "r:", Codec: zipline.Compression{Backend: codec.ZstdDict}}

// records returns real JSON records of 100 to 500 bytes (random.json's
// users), the small values dictionaries are for.
func records(t testing.TB) [][]byte {
	t.Helper()
	real, err := corpus.RealJSON()
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, v := range real["random"] {
		if len(v) >= 100 && len(v) <= 500 {
			out = append(out, v)
		}
	}
	if len(out) < 300 {
		t.Fatalf("%d records of 100-500 B", len(out))
	}
	return out
}

// writeRecords stores records under rec:<i> and returns what was written.
func writeRecords(t *testing.T, s *Store, recs [][]byte, from, n int) map[string][]byte {
	t.Helper()
	ctx := context.Background()
	want := map[string][]byte{}
	for i := from; i < from+n; i++ {
		k := "rec:" + strconv.Itoa(i)
		v := recs[i%len(recs)]
		if err := s.Set(ctx, k, v); err != nil {
			t.Fatal(err)
		}
		want[k] = v
	}
	return want
}

// checkValues reads every key of want through s.
func checkValues(t *testing.T, s *Store, want map[string][]byte) {
	t.Helper()
	ctx := context.Background()
	for k, v := range want {
		got, err := s.Get(ctx, k)
		if v == nil {
			if !errors.Is(err, zipline.Nil) {
				t.Fatalf("%s was deleted, reads %q %v", k, got, err)
			}
			continue
		}
		if err != nil || string(got) != string(v) {
			t.Fatalf("%s: %q %v, want %q", k, got, err, v)
		}
	}
}

// storedDict returns the dictionary a key's stored value names (0: none).
func storedDict(t *testing.T, c *zipline.Client, s *Store, key string) uint32 {
	t.Helper()
	l, err := s.locate(key)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := c.Raw().Get(context.Background(), l.plain)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := codec.DictionaryOf(raw)
	return id
}

// A namespace with codec.ZstdDict and no Dictionary keeps its dictionaries
// in the server: before one is trained it writes plain zstd; TrainDictionary
// stores one and makes it active; another process configured with the same
// namespace, and no dictionary, reads every value; Reencode moves the
// values written before onto it.
func TestServerDictionaries(t *testing.T) {
	for _, kind := range []testkit.Kind{testkit.Redis, testkit.Valkey} {
		t.Run(string(kind), func(t *testing.T) {
			c, srv := newClient(t, kind)
			ctx := context.Background()
			s := openStore(t, c, dictNS)
			recs := records(t)
			want := writeRecords(t, s, recs, 0, 600)
			if id := storedDict(t, c, s, "rec:1"); id != 0 {
				t.Fatalf("a value written before any dictionary names dictionary %d", id)
			}
			id, err := s.TrainDictionary(ctx, TrainOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range writeRecords(t, s, recs, 600, 200) {
				want[k] = v
			}
			if got := storedDict(t, c, s, "rec:700"); got != id {
				t.Fatalf("a value written after training names %d, want %d", got, id)
			}

			// Another process: its own Client and Store, no dictionary in
			// its configuration.
			c2, err := zipline.New(zipline.Options{Addr: srv.Addr, Logger: quiet})
			if err != nil {
				t.Fatal(err)
			}
			defer c2.Close()
			checkValues(t, openStore(t, c2, dictNS), want)

			p, err := s.Reencode(ctx, ReencodeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if p.Rewritten != 600 || p.Named[0] != 600 || p.Named[id] != 200 {
				t.Fatalf("Reencode: %+v, want 600 rewritten from no dictionary and 200 already on %d", p, id)
			}
			if again, err := s.Reencode(ctx, ReencodeOptions{}); err != nil || !again.Complete() {
				t.Fatalf("a second pass: %+v %v", again, err)
			}
			checkValues(t, openStore(t, c2, dictNS), want)
			ids, active, err := s.Dictionaries(ctx)
			if err != nil || active != id || len(ids) != 1 {
				t.Fatalf("Dictionaries: %v active %d %v", ids, active, err)
			}
		})
	}
}

// A rotation killed in the middle of re-encoding, while the application
// writes and deletes, loses and resurrects nothing; run again it finishes,
// and only then is the old dictionary dropped. Dropping waits for
// DictionaryGrace and keeps any dictionary a value still names.
func TestDictionaryRotationKilledMidway(t *testing.T) {
	c, srv := newClient(t, testkit.Redis)
	ctx := context.Background()
	s := openStore(t, c, Namespace{Prefix: "rec:", ZipAs: "r:", Buckets: Hashed(8), Codec: zipline.Compression{Backend: codec.ZstdDict}})
	recs := records(t)
	want := writeRecords(t, s, recs, 0, 400)
	first, err := s.TrainDictionary(ctx, TrainOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Reencode(ctx, ReencodeOptions{}); err != nil {
		t.Fatal(err)
	}
	// The rotation: a new dictionary, trained on different records.
	for k, v := range writeRecords(t, s, recs[len(recs)/2:], 400, 400) {
		want[k] = v
	}
	second, err := s.TrainDictionary(ctx, TrainOptions{Size: 8 << 10})
	if err != nil || second == first {
		t.Fatalf("second dictionary %d (first %d): %v", second, first, err)
	}

	var mu sync.Mutex
	// Between the pass's read of a value and its rewrite, the application
	// deletes some keys and writes others: the rewrite must not undo that.
	raced := 0
	s.beforeRewrite = func(key, field string) {
		raced++
		if raced%3 != 0 {
			return // most rewrites go ahead
		}
		// The application key: a Hashed bucket's field is its tail, and so
		// is what follows the bucket tag in an oversize value's key.
		tail := field
		if tail == "" {
			tail = key[strings.LastIndexByte(key, '}')+1:]
		}
		k := "rec:" + tail
		mu.Lock()
		defer mu.Unlock()
		if raced%2 == 0 {
			if _, err := s.Del(ctx, k); err != nil {
				t.Error(err)
			}
			want[k] = nil
			return
		}
		v := fmt.Appendf(nil, `{"raced":%d,"record":%s}`, raced, recs[raced%len(recs)]) // too large for a bucket
		if err := s.Set(ctx, k, v); err != nil {
			t.Error(err)
		}
		want[k] = v
	}
	// Killed after its first batch.
	kctx, kill := context.WithCancel(ctx)
	_, err = s.Reencode(kctx, ReencodeOptions{Batch: 50, OnProgress: func(ReencodeProgress) { kill() }})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("the killed pass: %v", err)
	}
	kill()
	mu.Lock()
	checkValues(t, s, want)
	for k, v := range want {
		// A deleted key leaves no value behind, not even an oversize one
		// out of its bucket's sight.
		l, _ := s.locate(k)
		if n, err := c.Raw().Exists(ctx, l.plain, s.oversizeKey(l)); v == nil && (err != nil || n != 0) {
			t.Fatalf("%s was deleted, but %d of its stored keys exist (%v)", k, n, err)
		}
	}
	mu.Unlock()

	// Dropping now would lose values: refused while within the grace, and
	// the first dictionary is kept while values name it.
	if _, err := s.DropDictionaries(ctx); err == nil {
		t.Fatal("DropDictionaries ran within DictionaryGrace")
	}
	ageActive(t, c, s, DictionaryGrace+time.Second)
	if dropped, err := s.DropDictionaries(ctx); err != nil || len(dropped) != 0 {
		t.Fatalf("DropDictionaries with values on the first dictionary: dropped %v, %v", dropped, err)
	}

	// From now on the application keeps writing and deleting.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		rng := rand.New(rand.NewPCG(1, 2))
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			k := "rec:" + strconv.Itoa(rng.IntN(800))
			mu.Lock()
			if i%3 == 0 {
				if _, err := s.Del(ctx, k); err != nil {
					t.Error(err)
				}
				want[k] = nil
			} else {
				v := []byte(fmt.Sprintf(`{"rewritten":%d,"by":"the application"}`, i))
				if err := s.Set(ctx, k, v); err != nil {
					t.Error(err)
				}
				want[k] = v
			}
			mu.Unlock()
		}
	})
	// Run again until complete, with the application writing.
	s.beforeRewrite = nil
	for range 10 {
		p, err := s.Reencode(ctx, ReencodeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Complete() {
			break
		}
	}
	close(stop)
	wg.Wait()
	if p, err := s.Reencode(ctx, ReencodeOptions{}); err != nil || !p.Complete() || p.Named[first] != 0 {
		t.Fatalf("after the passes: %+v %v", p, err)
	}
	dropped, err := s.DropDictionaries(ctx)
	if err != nil || len(dropped) != 1 || dropped[0] != first {
		t.Fatalf("DropDictionaries: %v %v, want [%d]", dropped, err, first)
	}
	// A fresh process reads everything: nothing lost, nothing resurrected.
	c2, err := zipline.New(zipline.Options{Addr: srv.Addr, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	checkValues(t, openStore(t, c2, s.ns), want)
}

// ageActive rewrites when the active dictionary became so, d ago, as if
// DictionaryGrace had passed.
func ageActive(t *testing.T, c *zipline.Client, s *Store, d time.Duration) {
	t.Helper()
	ctx := context.Background()
	id, _, err := s.dicts.activeID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	v := strconv.FormatUint(uint64(id), 10) + " " + strconv.FormatInt(time.Now().Add(-d).Unix(), 10)
	if err := c.Raw().Set(ctx, s.dicts.activeKey(), []byte(v)); err != nil {
		t.Fatal(err)
	}
}

// On a cluster the dictionary is a key like any other, on the node that
// owns its slot: every node's values reach it through the client, and it
// survives the failover of its node (a fresh process then loads it from
// the promoted replica). A rotation killed midway there loses nothing.
func TestServerDictionariesOnACluster(t *testing.T) {
	c, cl := newCluster(t, testkit.Redis, true)
	ctx := context.Background()
	ns := Namespace{Prefix: "rec:", ZipAs: "{r}:", Buckets: Hashed(8), Codec: zipline.Compression{Backend: codec.ZstdDict}}
	s := openStore(t, c, ns)
	recs := records(t)
	want := writeRecords(t, s, recs, 0, 300)
	id, err := s.TrainDictionary(ctx, TrainOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kctx, kill := context.WithCancel(ctx)
	_, err = s.Reencode(kctx, ReencodeOptions{Batch: 20, OnProgress: func(ReencodeProgress) { kill() }})
	kill()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("the killed pass: %v", err)
	}
	for k, v := range writeRecords(t, s, recs, 300, 100) {
		want[k] = v
	}

	topo, err := cl.Settle(ctx)
	if err != nil {
		t.Fatal(err)
	}
	owner, ok := topo.Owner(testkit.KeySlot(s.dicts.dictKey(id)))
	if !ok {
		t.Fatal("no owner for the dictionary's slot")
	}
	if _, err := owner.Server.Do(ctx, "WAIT", 1, 5000); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Kill(ctx, owner.Server); err != nil {
		t.Fatal(err)
	}
	c2, err := zipline.New(zipline.Options{Addrs: cl.Addrs(), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	s2 := openStore(t, c2, ns)
	checkValues(t, s2, want)
	for range 5 {
		if p, err := s2.Reencode(ctx, ReencodeOptions{}); err != nil {
			t.Fatal(err)
		} else if p.Complete() {
			break
		}
	}
	checkValues(t, s2, want)
}

// The dictionary's goal, end to end: real JSON records of 100-500 B
// stored through a namespace, memory measured in the server (the
// dictionary included) against the same records stored raw, with plain
// zstd and with LZ4. A dictionary kept in the server must save at least
// twice what plain zstd saves (the figures: 0.346 of the raw value
// bytes with a 16 KiB dictionary, 0.748 with plain zstd).
func TestServerDictionaryGoal(t *testing.T) {
	servertest.MeasuredWithoutRace(t)
	for _, kind := range []testkit.Kind{testkit.Redis, testkit.Valkey} {
		t.Run(string(kind), func(t *testing.T) {
			c, srv := newClient(t, kind)
			ctx := context.Background()
			recs := records(t)
			const n = 5000
			raw := 0
			for i := range n {
				raw += len(recs[i%len(recs)])
			}
			measure := func(ns Namespace, train bool) (mem, values int64) {
				t.Helper()
				if _, err := c.Do(ctx, "FLUSHALL", "SYNC"); err != nil { // not lazily: memory is measured next
					t.Fatal(err)
				}
				before := usedMemory(t, srv)
				s := openStore(t, c, ns)
				writeRecords(t, s, recs, 0, n)
				if train {
					if _, err := s.TrainDictionary(ctx, TrainOptions{}); err != nil {
						t.Fatal(err)
					}
					if _, err := s.Reencode(ctx, ReencodeOptions{}); err != nil {
						t.Fatal(err)
					}
				}
				for i := range n {
					l, _ := s.locate("rec:" + strconv.Itoa(i))
					sz, err := c.Raw().StrLen(ctx, l.plain)
					if err != nil {
						t.Fatal(err)
					}
					values += sz
				}
				return usedMemory(t, srv) - before, values
			}
			rawMem, _ := measure(Namespace{Prefix: "rec:"}, false)
			zstdMem, zstdVals := measure(Namespace{Prefix: "rec:", Codec: zipline.Compression{Backend: codec.Zstd}}, false)
			lz4Mem, lz4Vals := measure(Namespace{Prefix: "rec:", Codec: zipline.Compression{Backend: codec.LZ4}}, false)
			dictMem, dictVals := measure(Namespace{Prefix: "rec:", Codec: zipline.Compression{Backend: codec.ZstdDict}}, true)
			t.Logf("%d records, mean %d B; stored/raw value bytes: zstd %.3f, LZ4 %.3f, server dictionary %.3f",
				n, raw/n, float64(zstdVals)/float64(raw), float64(lz4Vals)/float64(raw), float64(dictVals)/float64(raw))
			t.Logf("server memory (keys, values, dictionary): raw %d B, zstd %d (saves %.1f%%), LZ4 %d (%.1f%%), dictionary %d (%.1f%%)",
				rawMem, zstdMem, 100*(1-float64(zstdMem)/float64(rawMem)), lz4Mem, 100*(1-float64(lz4Mem)/float64(rawMem)),
				dictMem, 100*(1-float64(dictMem)/float64(rawMem)))
			if saved, zsaved := rawMem-dictMem, rawMem-zstdMem; saved < 2*zsaved {
				t.Errorf("the server dictionary saves %d B, less than twice plain zstd's %d", saved, zsaved)
			}
		})
	}
}

// usedMemory returns the server's used_memory.
func usedMemory(t *testing.T, srv *testkit.Server) int64 {
	t.Helper()
	info, err := srv.Info(context.Background(), "memory")
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.ParseInt(info["used_memory"], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Small values written before a dictionary existed did not fit their
// buckets (or did not compress at all) and became keys of their own;
// re-encoded with the dictionary they fit, and Reencode moves them into
// their buckets, keeping their expiry where the server expires fields. A
// value the application rewrites between the pass's read and its move is
// left alone. With only the active dictionary there is nothing to drop
// and DropDictionaries does not wait out the grace.
func TestReencodeMovesSmallValuesIntoBuckets(t *testing.T) {
	for _, kind := range []testkit.Kind{testkit.Redis, testkit.Valkey} {
		t.Run(string(kind), func(t *testing.T) {
			c, _ := newClient(t, kind)
			ctx := context.Background()
			s := openStore(t, c, Namespace{Prefix: "rec:", ZipAs: "r:", Buckets: Dense(100),
				Codec: zipline.Compression{Backend: codec.ZstdDict}})
			// Feature flags and tokens: JSON of about 100 B, the smallest
			// of GLIDE's published classes.
			want := writeRecords(t, s, corpus.Generate(corpus.JSON98, 600, 1), 0, 600)
			withTTL := "rec:7"
			if s.fieldTTL.hpexpire {
				if err := s.SetEX(ctx, withTTL, want[withTTL], time.Hour); err != nil {
					t.Fatal(err)
				}
			}
			oversize := func() (n int) {
				for k, err := range c.Scan(ctx, zipline.ScanOptions{Match: "r:#{*", Count: 1000}) {
					if err != nil {
						t.Fatal(err)
					}
					if _, _, ok := s.bucketOfOversize(k); ok {
						n++
					}
				}
				return n
			}
			before := oversize()
			if before < 500 {
				t.Fatalf("%d of 600 values are keys of their own before the dictionary; want most", before)
			}
			if _, err := s.TrainDictionary(ctx, TrainOptions{}); err != nil {
				t.Fatal(err)
			}
			// The application rewrites one value between the pass's read
			// of its oversize key and the move: the move must not happen.
			raced := "rec:3"
			place, err := s.Place(raced)
			if err != nil {
				t.Fatal(err)
			}
			racedKey := s.OversizeKey(place)
			s.beforeRewrite = func(key, field string) {
				if field == "" && key == racedKey {
					want[raced] = []byte("rewritten by the application")
					if err := s.Set(ctx, raced, want[raced]); err != nil {
						t.Error(err)
					}
				}
			}
			var passes []ReencodeProgress
			for len(passes) < 5 {
				p, err := s.Reencode(ctx, ReencodeOptions{})
				if err != nil {
					t.Fatal(err)
				}
				s.beforeRewrite = nil
				passes = append(passes, p)
				if p.Complete() {
					break
				}
			}
			if last := passes[len(passes)-1]; !last.Complete() {
				t.Fatalf("no pass complete in %d: %+v", len(passes), passes)
			}
			if passes[0].Changed == 0 {
				t.Errorf("the value the application rewrote meanwhile was not counted as changed: %+v", passes[0])
			}
			after := oversize()
			t.Logf("%s: %d of 600 values were keys of their own, %d after re-encoding (%d passes)", kind, before, after, len(passes))
			if after > before/3 {
				t.Errorf("%d values are still keys of their own (%d before); most fit their buckets once re-encoded", after, before)
			}
			checkValues(t, s, want)
			if s.fieldTTL.hpexpire {
				if ttl, err := s.TTL(ctx, withTTL); err != nil || ttl <= 0 || ttl > time.Hour {
					t.Errorf("%s moved into its bucket with TTL %v, %v; want its hour", withTTL, ttl, err)
				}
			}
			start := time.Now()
			if dropped, err := s.DropDictionaries(ctx); err != nil || len(dropped) != 0 {
				t.Errorf("DropDictionaries with only the active dictionary: %v, %v", dropped, err)
			}
			if d := time.Since(start); d > DictionaryGrace/2 {
				t.Errorf("DropDictionaries took %v", d)
			}
		})
	}
}
