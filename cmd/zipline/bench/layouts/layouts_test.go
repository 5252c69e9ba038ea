package layouts

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/testbed"
)

// needServer skips the test when redis-server is not installed.
func needServer(t *testing.T) {
	t.Helper()
	if _, err := testbed.Binary(testbed.Redis); err != nil {
		t.Skip(err)
	}
}

func TestClassesAreDeterministicAndSized(t *testing.T) {
	targets := map[string]int{"html100": 100, "html500": 500, "html1000": 1000, "html4000": 4000, "json-98": 98, "json-461": 461,
		"json-random": 461}
	for _, c := range Classes() {
		if c.Counter {
			continue
		}
		a, err := (&DataSet{Pairs: 300}).Get(c.Name)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if c.Name == "json-random" && (len(a.Values) != 500 || len(a.Training) != 500) {
			t.Errorf("json-random: %d values and %d training records, want random.json's 1,000 split in halves",
				len(a.Values), len(a.Training))
		}
		b, _ := (&DataSet{Pairs: 300}).Get(c.Name)
		for i := range 300 {
			if !bytes.Equal(a.Value(i), b.Value(i)) {
				t.Fatalf("%s: value %d differs between runs", c.Name, i)
			}
		}
		for _, tr := range a.Training {
			for _, v := range a.Values {
				if bytes.Equal(tr, v) {
					t.Fatalf("%s: a training sample is also a stored value", c.Name)
				}
			}
		}
		mean := a.MeanSize(300)
		if want, ok := targets[c.Name]; ok && (mean < 0.85*float64(want) || mean > 1.15*float64(want)) {
			t.Errorf("%s: mean size %.0f, want about %d", c.Name, mean, want)
		}
		if c.Small {
			for i := range 300 {
				if len(a.Value(i)) >= 64 {
					t.Errorf("%s is Small but value %d has %d bytes", c.Name, i, len(a.Value(i)))
				}
			}
		}
	}
}

func TestIds(t *testing.T) {
	seq := Ids(1000, false)
	if seq[0] != 0 || seq[999] != 999 {
		t.Fatalf("sequential ids: %v…%v", seq[0], seq[999])
	}
	sp := Ids(1000, true)
	if !slices.Equal(sp, Ids(1000, true)) {
		t.Fatal("sparse ids differ between calls")
	}
	seen := map[uint64]bool{}
	for _, id := range sp {
		if seen[id] || id >= SparseSpan {
			t.Fatalf("sparse id %d repeated or out of range", id)
		}
		seen[id] = true
	}
}

func TestParseOp(t *testing.T) {
	for in, want := range map[string]Op{"get": {"get", 1}, "set/10": {"set", 10}, "mget": {"mget", 10}, "mset/100": {"mset", 100}} {
		if got, err := ParseOp(in); err != nil || got != want {
			t.Errorf("ParseOp(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"del", "get/0", "get/x"} {
		if _, err := ParseOp(bad); err == nil {
			t.Errorf("ParseOp(%q) accepted", bad)
		}
	}
}

// TestMemoryCells measures a few small cells on a real server and checks
// what the layouts must do: buckets save, the guard keeps buckets compact,
// without it they turn into hashtables, and figures repeat exactly.
// Cells of one key family share bucket names: counters that follow a class
// of documents must not find its fields, in the warm-up either (zipline
// bench layouts failed with "ERR hash value is not an integer" when the
// warm-up wrote every cell on one unflushed server).
func TestMemoryCellsDoNotShareState(t *testing.T) {
	needServer(t)
	r := &MemoryRunner{Pairs: 300, Batch: 150}
	a := ArticleKeys
	cells := []Cell{
		{Family: a, Class: "html100", Layout: "dense512+zip"},
		{Family: a, Class: "counters", Layout: "dense512+zip"},
	}
	if _, err := r.Run(context.Background(), cells, nil); err != nil {
		t.Fatal(err)
	}
}

func TestMemoryCells(t *testing.T) {
	needServer(t)
	const pairs = 400
	r := &MemoryRunner{Pairs: pairs, Batch: 150}
	u := UserKeys
	cells := []Cell{
		{Family: u, Class: "ints", Layout: "plain"},
		{Family: u, Class: "ints", Layout: "buckets+zip"},
		{Family: u, Class: "ints", Layout: "buckets+zip"}, // again: deterministic
		{Family: u, Class: "counters", Layout: "plain"},
		{Family: u, Class: "counters", Layout: "buckets+zip"},
		{Family: u, Class: "html500", Layout: "buckets+zip+zstd"},
		{Family: u, Class: "mixed", Layout: "buckets+zip"},
		{Family: u, Class: "mixed", Layout: "buckets+zip, no guard"},
		{Family: u, Class: "html100", Layout: "buckets+zip+dict"},
		{Family: u, Class: "html500", Layout: "buckets+zip+zstd", ListpackValue: 1024},
	}
	res, err := r.Run(context.Background(), cells, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != len(cells) {
		t.Fatalf("%d results for %d cells", len(res), len(cells))
	}
	get := func(i int) Result { return res[i] }
	plain, zipped := get(0), get(1)
	if plain.PerPair() < 60 || plain.PerPair() > 100 {
		t.Errorf("plain int pair costs %.1f B; the notes measured 74.8", plain.PerPair())
	}
	if zipped.PerPair()*4 > plain.PerPair() {
		t.Errorf("buckets+zip ints cost %.1f B a pair, plain %.1f: want at least 4× less", zipped.PerPair(), plain.PerPair())
	}
	// The same cell again: equal but for a few dozen bytes (see
	// MemoryRunner).
	if d := get(2).Bytes - zipped.Bytes; d < -64 || d > 64 {
		t.Errorf("the same cell measured %d then %d bytes", zipped.Bytes, get(2).Bytes)
	}
	if c := get(4); c.PerPair()*6 > get(3).PerPair() || c.Oversize != 0 || c.Listpack != c.BucketsSampled || c.BucketsSampled == 0 {
		t.Errorf("counters: %+v against plain %.1f B", c, get(3).PerPair())
	}
	if h := get(5); h.Oversize != pairs {
		t.Errorf("html500 compressed with zstd is over 64 B: want all %d values as plain keys, got %d", pairs, h.Oversize)
	}
	guarded, unguarded := get(6), get(7)
	if guarded.Oversize != pairs/100 || guarded.Listpack != guarded.BucketsSampled {
		t.Errorf("mixed with the guard: %d oversize (want %d), %d/%d listpack", guarded.Oversize, pairs/100,
			guarded.Listpack, guarded.BucketsSampled)
	}
	// One value in a hundred is large; DenseAuto's buckets of 126 hold one
	// or two each, but for the last bucket of 400 pairs (ids 378-399).
	if unguarded.Listpack > 1 || unguarded.PerPair() < 2*guarded.PerPair() {
		t.Errorf("mixed without the guard: %d/%d listpack, %.1f B a pair (guarded %.1f)", unguarded.Listpack,
			unguarded.BucketsSampled, unguarded.PerPair(), guarded.PerPair())
	}
	if d := get(8); d.DictBytes == 0 || d.Oversize > pairs/20 {
		t.Errorf("html100 with a dictionary: %d dictionary bytes, %d oversize", d.DictBytes, d.Oversize)
	}
	if raised := get(9); raised.Oversize != 0 || raised.PerPair() >= get(5).PerPair() {
		t.Errorf("html500 zstd with hash-max-listpack-value 1024: %d oversize, %.1f B (default server %.1f B)",
			raised.Oversize, raised.PerPair(), get(5).PerPair())
	}
	if !strings.HasPrefix(r.Server, "redis ") {
		t.Errorf("server description %q", r.Server)
	}
}

func TestSpeedSmoke(t *testing.T) {
	needServer(t)
	var ops []Op
	for _, s := range []string{"get", "get/10", "set", "set/10", "mget/10", "mset/10"} {
		op, err := ParseOp(s)
		if err != nil {
			t.Fatal(err)
		}
		ops = append(ops, op)
	}
	rep, err := RunSpeed(context.Background(), SpeedConfig{
		Keys: 300, Goroutines: 4, Duration: 80 * time.Millisecond, Rounds: 1, Ops: ops,
		Layouts: []string{"zipped", "buckets+zip+zstd"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != len(ops)*3 {
		t.Fatalf("%d results", len(rep.Results))
	}
	for _, r := range rep.Results {
		if r.OpsPerSec <= 0 || r.Errors > 0 {
			t.Errorf("%s through %s: %.0f ops/s, %d errors", r.Op, r.Layout, r.OpsPerSec, r.Errors)
		}
	}
}

func TestReport(t *testing.T) {
	a, u := ArticleKeys, UserKeys
	res := func(f KeyFamily, class, layout string, perPair float64, oversize uint64) Result {
		return Result{Cell: Cell{Family: f, Class: class, Layout: layout}, Pairs: 1000, Bytes: int64(perPair * 1000), Oversize: oversize}
	}
	rep := &Report{
		Command: "zipline bench layouts -test", Date: time.Unix(0, 0), Pairs: 1000,
		Memory: []Result{
			res(a, "counters", "plain", 90, 0), res(a, "counters", "buckets+zip", 5, 0),
			res(u, "counters", "plain", 58, 0), res(u, "counters", "buckets+zip", 5, 0),
			res(u, "json-random", "plain", 600, 0), res(u, "json-random", "buckets", 607, 1000),
			res(u, "json-random", "buckets+zip+dict", 150, 1000),
		},
		Speed: []*SpeedReport{{
			Config: SpeedConfig{Family: a, Class: "ints", Layouts: []string{"zipped"}, Ops: []Op{{"get", 1}}, Rounds: 1, Goroutines: 1},
			Results: []SpeedResult{
				{Op: Op{"get", 1}, Layout: "plain", OpsPerSec: 100},
				{Op: Op{"get", 1}, Layout: "zipped", OpsPerSec: 80},
			},
		}},
	}
	if f, ok := rep.Factor(rep.Memory[1]); !ok || f != 18 {
		t.Errorf("factor %v, %v; want 18", f, ok)
	}
	bar := rep.MemoryBar()
	want := map[string]bool{"counters (INCR), article": true, "counters (INCR), user": false, "JSON: random.json records, user": true}
	for _, l := range bar {
		for prefix, ok := range want {
			if strings.HasPrefix(l.What, prefix) && l.OK != ok {
				t.Errorf("bar %q: OK %v, want %v (%.2f×)", l.What, l.OK, ok, l.Best)
			}
		}
	}
	if w := rep.Worse(); len(w) != 1 || w[0].Layout != "buckets" {
		t.Errorf("Worse = %v", w)
	}
	var b strings.Builder
	if err := rep.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, s := range []string{
		"zipline bench layouts -test",
		"| counters | 0.09 MB · 90.0 B | 0.01 MB · 5.0 B · **18.0×** |",
		"| user/json-random/buckets | 607.0 | 600.0 | 7.0 B (1.2 %) | 1000 of 1000 |",
		"| get | 100 | 80 (-20 % ✗) |",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("report lacks %q", s)
		}
	}
	if t.Failed() {
		t.Log(out)
	}
}
