package corpus

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"runtime"
	"testing"

	"github.com/pierrec/lz4/v4"
)

func TestMenusRange(t *testing.T) {
	const n = 300
	docs := Menus(n, 1)
	if len(docs) != n {
		t.Fatalf("%d menus, want %d", len(docs), n)
	}
	lo, hi, total := docs[0], docs[0], 0
	for i, d := range docs {
		if len(d) < MenuMinSize || len(d) > MenuMaxSize {
			t.Errorf("menu %d: %d B, outside [%d, %d]", i, len(d), MenuMinSize, MenuMaxSize)
		}
		if len(d) < len(lo) {
			lo = d
		}
		if len(d) > len(hi) {
			hi = d
		}
		total += len(d)
	}
	// The extremes sit near the range's ends, and the mean near the
	// distribution's (about 75 KB).
	if len(lo) > MenuMinSize+2*menuSlack || len(hi) < MenuMaxSize-2*menuSlack {
		t.Errorf("sizes span %d..%d B, want about %d..%d", len(lo), len(hi), MenuMinSize, MenuMaxSize)
	}
	if mean := total / n; mean < 65_000 || mean > 85_000 {
		t.Errorf("mean size %d B, want 65-85 KB", mean)
	}
	t.Logf("%d menus: %d..%d B, mean %d B", n, len(lo), len(hi), total/n)
}

// menuDoc is the part of a menu's structure the test checks.
type menuDoc struct {
	Store struct {
		ID    int64  `json:"id"`
		Name  string `json:"name"`
		Hours []any  `json:"hours"`
	} `json:"store"`
	Menus []struct {
		Name       string `json:"name"`
		Categories []struct {
			Name  string `json:"name"`
			Items []struct {
				ID          int64  `json:"id"`
				Name        string `json:"name"`
				Description string `json:"description"`
				Price       struct {
					UnitAmount int    `json:"unit_amount"`
					Display    string `json:"display_string"`
				} `json:"price"`
				OptionGroups []struct {
					Name    string `json:"name"`
					Options []struct {
						Name string `json:"name"`
					} `json:"options"`
				} `json:"option_groups"`
			} `json:"items"`
		} `json:"categories"`
	} `json:"menus"`
}

func TestMenuStructure(t *testing.T) {
	for _, size := range []int{MenuMinSize, 64_220, 350_333} {
		d := Menu(size, 3)
		var m menuDoc
		if err := json.Unmarshal(d, &m); err != nil {
			t.Fatalf("menu of %d B: %v", size, err)
		}
		if m.Store.Name == "" || len(m.Store.Hours) != 7 || len(m.Menus) == 0 {
			t.Fatalf("menu of %d B: store %+v, %d menus", size, m.Store, len(m.Menus))
		}
		items, groups := 0, 0
		for _, mn := range m.Menus {
			for _, c := range mn.Categories {
				if len(c.Items) == 0 {
					t.Errorf("menu of %d B: category %q has no items", size, c.Name)
				}
				for _, it := range c.Items {
					items++
					groups += len(it.OptionGroups)
					if it.Name == "" || it.Description == "" || it.Price.UnitAmount <= 0 || it.Price.Display[0] != '$' {
						t.Errorf("menu of %d B: bad item %+v", size, it)
					}
				}
			}
		}
		if items < size/3000 || groups < items {
			t.Errorf("menu of %d B: %d items, %d option groups", size, items, groups)
		}
		if off := len(d) - size; off < -menuSlack || off > menuSlack {
			t.Errorf("Menu(%d) is %d B", size, len(d))
		}
	}
}

func TestMenusDeterministic(t *testing.T) {
	a := Menus(40, 7)
	prev := runtime.GOMAXPROCS(1)
	b := Menus(40, 7)
	runtime.GOMAXPROCS(prev)
	c := Menus(40, 8)
	same := 0
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			t.Fatalf("menu %d differs between runs", i)
		}
		if bytes.Equal(a[i], c[i]) {
			same++
		}
	}
	if same > 0 {
		t.Errorf("seeds 7 and 8 share %d menus", same)
	}
}

// doordashLZ4 holds DoorDash's two published examples: serialized menu size
// and its LZ4-compressed size.
var doordashLZ4 = []struct {
	name      string
	size, lz4 int
}{
	{"Chick-fil-A", 64_220, 10_199},
	{"Cheesecake Factory", 350_333, 67_863},
}

// TestMenuCompressibility checks that menus of DoorDash's two example
// sizes compress with LZ4 like theirs (within 10 % of the ratio), and
// prints zstd's ratio and the real JSON samples' for comparison.
func TestMenuCompressibility(t *testing.T) {
	// LZ4 as the codec (and liblz4, which GLIDE links) writes a block:
	// pierrec's C-compatible compressor, whose output differs from its
	// default one; zstd as measure writes it.
	var lc lz4.CompressorCCompat
	ratios := func(doc []byte) (l, z float64) {
		block := make([]byte, lz4.CompressBlockBound(len(doc)))
		n, err := lc.CompressBlock(doc, block)
		if err != nil || n == 0 {
			t.Fatalf("lz4: n=%d, err=%v", n, err)
		}
		stored := n + 4 + glideHeader
		return float64(len(doc)) / float64(stored), 1 / measure(t, [][]byte{doc}).zstd
	}
	for _, ex := range doordashLZ4 {
		const seeds = 4
		var l, z float64
		for seed := range int64(seeds) {
			lr, zr := ratios(Menu(ex.size, seed))
			l, z = l+lr/seeds, z+zr/seeds
		}
		want := float64(ex.size) / float64(ex.lz4)
		t.Logf("%-18s %7d B: LZ4 %.2fx (DoorDash %.2fx, %.2f of it), zstd %.2fx", ex.name, ex.size, l, want, l/want, z)
		if l < 0.9*want || l > 1.1*want {
			t.Errorf("%s-sized menus: LZ4 ratio %.2f, want within 10%% of DoorDash's %.2f", ex.name, l, want)
		}
	}
	for _, name := range RealJSONFiles {
		raw, err := realJSONFile(name)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, raw); err != nil {
			t.Fatal(err)
		}
		l, z := ratios(buf.Bytes())
		t.Logf("real %-13s %7d B (whole file, compacted): LZ4 %.2fx, zstd %.2fx", name, buf.Len(), l, z)
	}
}

func TestMenusGolden(t *testing.T) {
	h := sha256.New()
	for _, d := range Menus(20, 1) {
		h.Write(d)
	}
	const want = "f1c8b4490814fae28249138bfe8f1703d402fa12845747c15726fe62a564bb2f"
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		t.Errorf("menus hash %s, want %s", got, want)
	}
}
