package analyze

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/testbed/corpus"
)

// The demo keyspace: what zipline analyze -demo and the accuracy test fill
// a throwaway server with. It mixes the kinds of data a cache holds, each
// with and without TTLs, under the key shapes applications use:
//
//	user:<int>            JSON records of ~460 B (profiles, orders: corpus json-461), no TTL
//	usercache:<int>       the same kind, with TTLs of 1 to 24 hours
//	flag:<int>            small JSON of ~100 B (flags, tokens: json-98), no TTL
//	views:<int>           counters (integers up to 1,000,000), no TTL
//	rate:<int>            counters with TTLs of 10 minutes to an hour, sparse ids
//	session:<hex32>       express-session payloads of ~480 B, TTLs of 30 min to 1 day
//	device:<uuid>         session-like payloads of ~200 B, no TTL
//	doc:<uuid>            large JSON documents of ~1.9 KB (json-1884), no TTL
//	page:<date>:<int>     HTML fragments of ~1.2 KB, TTLs of 1 hour to 7 days
//	menu:<int>            restaurant menus of 10 to 700 KB, no TTL (a few)
//	customer:<int>        the real user records of random.json (at most 1,000)
//	cart:<int>            hashes of a few fields (not strings: no layout applies)
//
// Values are generated per key (deterministic for a seed), so no two keys
// hold the same document, as in a real cache.

// DemoKind is one family of the demo keyspace.
type DemoKind struct {
	Name  string
	Share float64 // of the keys
	// MinTTL..MaxTTL is the TTL range; zero: no TTL.
	MinTTL, MaxTTL time.Duration
	key            func(i int, r *rand.Rand) string
	value          func(g *demoGen, i int) []byte
	hash           bool
	max            int // at most this many keys (0: no limit)
}

// demoGen makes one worker's values.
type demoGen struct {
	gens  map[string]*corpus.Generator
	r     *rand.Rand
	real  [][]byte
	menus [][]byte
}

func (g *demoGen) next(c corpus.Class) []byte {
	gen := g.gens[c.String()]
	if gen == nil {
		gen = corpus.NewGenerator(c, g.r.Int64())
		g.gens[c.String()] = gen
	}
	return gen.Next()
}

func intKey(prefix string) func(i int, _ *rand.Rand) string {
	return func(i int, _ *rand.Rand) string { return prefix + strconv.Itoa(i+1) }
}

func hexKey(prefix string, n int) func(i int, r *rand.Rand) string {
	return func(_ int, r *rand.Rand) string {
		const digits = "0123456789abcdef"
		b := []byte(prefix)
		for range n {
			b = append(b, digits[r.IntN(16)])
		}
		return string(b)
	}
}

func uuidKey(prefix string) func(i int, r *rand.Rand) string {
	h := hexKey("", 32)
	return func(i int, r *rand.Rand) string {
		s := h(i, r)
		return prefix + s[:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:]
	}
}

// DemoKinds returns the demo keyspace's families, in fill order.
func DemoKinds() []DemoKind {
	hour, day := time.Hour, 24*time.Hour
	return []DemoKind{
		{Name: "user", Share: 0.19, key: intKey("user:"), value: func(g *demoGen, _ int) []byte { return g.next(corpus.JSON461) }},
		{Name: "usercache", Share: 0.10, MinTTL: hour, MaxTTL: day, key: intKey("usercache:"),
			value: func(g *demoGen, _ int) []byte { return g.next(corpus.JSON461) }},
		{Name: "flag", Share: 0.08, key: intKey("flag:"), value: func(g *demoGen, _ int) []byte { return g.next(corpus.JSON98) }},
		{Name: "views", Share: 0.20, key: intKey("views:"),
			value: func(g *demoGen, _ int) []byte { return []byte(strconv.Itoa(1 + g.r.IntN(1_000_000))) }},
		{Name: "rate", Share: 0.10, MinTTL: 10 * time.Minute, MaxTTL: time.Hour,
			key:   func(_ int, r *rand.Rand) string { return "rate:" + strconv.Itoa(1+r.IntN(50_000_000)) },
			value: func(g *demoGen, _ int) []byte { return []byte(strconv.Itoa(1 + g.r.IntN(500))) }},
		{Name: "session", Share: 0.12, MinTTL: 30 * time.Minute, MaxTTL: day, key: hexKey("session:", 32),
			value: func(g *demoGen, _ int) []byte { return g.next(corpus.Session480) }},
		{Name: "device", Share: 0.06, key: uuidKey("device:"), value: func(g *demoGen, _ int) []byte { return g.next(corpus.Session198) }},
		{Name: "doc", Share: 0.05, key: uuidKey("doc:"), value: func(g *demoGen, _ int) []byte { return g.next(corpus.JSON1884) }},
		{Name: "page", Share: 0.05, MinTTL: hour, MaxTTL: 7 * day,
			key: func(i int, r *rand.Rand) string {
				return fmt.Sprintf("page:2025-%02d-%02d:%d", 1+r.IntN(12), 1+r.IntN(28), i+1)
			},
			value: func(g *demoGen, _ int) []byte { return g.next(corpus.HTML1247) }},
		{Name: "menu", Share: 0.0002, max: 200, key: intKey("menu:"),
			value: func(g *demoGen, i int) []byte { return g.menus[i%len(g.menus)] }},
		{Name: "customer", Share: 0.03, max: 1000, key: intKey("customer:"),
			value: func(g *demoGen, i int) []byte { return g.real[i%len(g.real)] }},
		{Name: "cart", Share: 0.02, key: intKey("cart:"), hash: true},
	}
}

// FillDemo writes the demo keyspace, about keys keys, through c (from
// workers goroutines, 500 keys a round trip), and returns how many it
// wrote. The same seed writes the same keys and values.
func FillDemo(ctx context.Context, c *zipline.Client, keys int, seed uint64, workers int) (int, error) {
	real, err := corpus.RealJSON()
	if err != nil {
		return 0, err
	}
	kinds := DemoKinds()
	counts := make([]int, len(kinds))
	for i, k := range kinds {
		counts[i] = max(int(float64(keys)*k.Share), 1)
		if k.max > 0 {
			counts[i] = min(counts[i], k.max)
		}
	}
	nMenus := counts[slicesIndex(kinds, "menu")]
	menus := corpus.Menus(min(nMenus, 50), int64(seed))
	type chunk struct{ kind, from, to int }
	chunks := make(chan chunk)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	var mu sync.Mutex
	written := 0
	for range max(workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ch := range chunks {
				n, err := fillChunk(ctx, c, kinds[ch.kind], ch.from, ch.to, seed, real["random"], menus)
				mu.Lock()
				written += n
				mu.Unlock()
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	var ferr error
feed:
	for k := range kinds {
		for from := 0; from < counts[k]; from += 500 {
			select {
			case chunks <- chunk{k, from, min(from+500, counts[k])}:
			case ferr = <-errs:
				break feed
			case <-ctx.Done():
				ferr = ctx.Err()
				break feed
			}
		}
	}
	close(chunks)
	wg.Wait()
	close(errs)
	for e := range errs {
		ferr = errors.Join(ferr, e)
	}
	return written, ferr
}

func slicesIndex(kinds []DemoKind, name string) int {
	for i, k := range kinds {
		if k.Name == name {
			return i
		}
	}
	return -1
}

// fillChunk writes keys from..to-1 of one family in one round trip.
func fillChunk(ctx context.Context, c *zipline.Client, k DemoKind, from, to int, seed uint64,
	real, menus [][]byte) (int, error) {
	// Each chunk has its own stream, so the keyspace does not depend on
	// which worker wrote what.
	r := rand.New(rand.NewPCG(seed, uint64(from)<<8^uint64(len(k.Name))<<40^hash64(k.Name)))
	g := &demoGen{gens: map[string]*corpus.Generator{}, r: r, real: real, menus: menus}
	b := c.Raw().Batch()
	for i := from; i < to; i++ {
		key := k.key(i, r)
		if k.hash {
			args := []any{"HSET", key}
			for f := range 3 + r.IntN(6) {
				args = append(args, "item"+strconv.Itoa(f), strconv.Itoa(r.IntN(100)))
			}
			b.Do(args...)
			continue
		}
		v := k.value(g, i)
		if k.MaxTTL > 0 {
			ttl := k.MinTTL + time.Duration(r.Int64N(int64(k.MaxTTL-k.MinTTL)))
			b.Set(key, v, zipline.PX(ttl.Round(time.Second)))
		} else {
			b.Set(key, v)
		}
	}
	if err := b.Exec(ctx); err != nil {
		return 0, err
	}
	return to - from, nil
}

func hash64(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// FillHeavyTail writes n JSON documents under prefix<i> (i from 1) whose
// sizes are spread log-uniformly over DoorDash's menu range, 9.5 KB to
// 709 KB (75 times apart): a namespace whose bytes a few keys dominate,
// which a prediction from a fixed sample of keys gets wrong by whichever
// of them it happened to sample. Deterministic for a seed.
func FillHeavyTail(ctx context.Context, c *zipline.Client, prefix string, n int, seed int) error {
	r := rand.New(rand.NewPCG(uint64(seed), 41))
	ratio := float64(corpus.MenuMaxSize) / float64(corpus.MenuMinSize)
	for from := 0; from < n; from += 20 {
		b := c.Raw().Batch()
		for i := from; i < min(from+20, n); i++ {
			size := int(float64(corpus.MenuMinSize) * math.Pow(ratio, r.Float64()))
			b.Set(prefix+strconv.Itoa(i+1), corpus.Menu(size, int64(seed)*1_000_003+int64(i)))
		}
		if err := b.Exec(ctx); err != nil {
			return err
		}
	}
	return nil
}
