package layouts

import (
	"math/rand/v2"
	"strconv"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/codec"
	"github.com/ziplinekv/zipline/layout"
)

// A KeyFamily is the shape of the benchmark's application keys: Prefix
// followed by an integer id.
type KeyFamily struct {
	Name   string
	Prefix string // application prefix
	ZipAs  string // stored prefix of the zipped layouts
}

// The key families of the issue: the article's key (from the Stack Overflow
// question it cites) and a short one.
var (
	ArticleKeys = KeyFamily{Name: "article", Prefix: "set-allBooksBelongToUser:", ZipAs: "b:"}
	UserKeys    = KeyFamily{Name: "user", Prefix: "user:", ZipAs: "u:"}
)

// Families returns the key families, in report order.
func Families() []KeyFamily { return []KeyFamily{ArticleKeys, UserKeys} }

// FamilyByName returns the key family named name.
func FamilyByName(name string) (KeyFamily, bool) {
	for _, f := range Families() {
		if f.Name == name {
			return f, true
		}
	}
	return KeyFamily{}, false
}

// Key returns the application key for id.
func (f KeyFamily) Key(id uint64) string { return f.Prefix + strconv.FormatUint(id, 10) }

// SparseSpan is the range sparse ids are drawn from: 100,000 ids in 0..10M
// is the notes' "sparse ids" case, one id per hundred on average.
const SparseSpan = 10_000_000

// Ids returns n ids: 0..n-1, or, if sparse, n distinct random ids below
// max(SparseSpan, 100n), in a fixed order.
func Ids(n int, sparse bool) []uint64 {
	ids := make([]uint64, n)
	if !sparse {
		for i := range ids {
			ids[i] = uint64(i)
		}
		return ids
	}
	span := uint64(max(SparseSpan, 100*n))
	r := rand.New(rand.NewPCG(7, 7))
	seen := make(map[uint64]bool, n)
	for i := 0; i < n; {
		id := r.Uint64N(span)
		if !seen[id] {
			seen[id] = true
			ids[i] = id
			i++
		}
	}
	return ids
}

// A Layout is one column of the memory table: how the pairs are stored.
type Layout struct {
	Name string
	Desc string
	// Baseline layouts use plain SET/MSET/INCR through the client, not a
	// Store.
	Baseline bool
	// Dict layouts compress values with a dictionary trained on the class
	// (see Data.Dictionary): Namespace.Codec is set by NamespaceFor.
	Dict *DictSpec
	// Namespace returns the layout's namespace for a key family and the
	// number of keys it will hold, without its dictionary.
	Namespace func(f KeyFamily, keys int) layout.Namespace
}

// NamespaceFor returns the layout's namespace for a key family, the number
// of keys and, for a Dict layout, the class's dictionary.
func (l Layout) NamespaceFor(f KeyFamily, keys int, dict *Dict) layout.Namespace {
	ns := l.Namespace(f, keys)
	if l.Dict != nil && dict != nil {
		ns.Codec = dict.Compression()
	}
	return ns
}

var zstdCodec = zipline.Compression{Backend: codec.Zstd}

// Layouts returns every layout: the main table's columns first, then the
// extra ones.
func Layouts() []Layout {
	return []Layout{
		{Name: "plain", Baseline: true, Desc: "plain SET / INCR of the application keys (the baseline)"},
		{Name: "zstd", Desc: "plain keys, values compressed with zstd (level 3, values ≥ 64 B): Namespace{Codec: zstd}",
			Namespace: func(f KeyFamily, _ int) layout.Namespace { return layout.Namespace{Prefix: f.Prefix, Codec: zstdCodec} }},
		{Name: "zipped", Desc: "zipped key names: Namespace{ZipAs}",
			Namespace: func(f KeyFamily, _ int) layout.Namespace { return layout.Namespace{Prefix: f.Prefix, ZipAs: f.ZipAs} }},
		{Name: "buckets", Desc: "hash buckets of consecutive ids sized by the server, key names not zipped: " +
			"Namespace{Buckets: DenseAuto()}, 126 ids a bucket on a default server",
			Namespace: func(f KeyFamily, _ int) layout.Namespace {
				return layout.Namespace{Prefix: f.Prefix, Buckets: layout.DenseAuto()}
			}},
		{Name: "buckets+zip", Desc: "DenseAuto() buckets and zipped key names",
			Namespace: func(f KeyFamily, _ int) layout.Namespace {
				return layout.Namespace{Prefix: f.Prefix, ZipAs: f.ZipAs, Buckets: layout.DenseAuto()}
			}},
		{Name: "buckets+zip+zstd", Desc: "DenseAuto() buckets, zipped key names and zstd",
			Namespace: func(f KeyFamily, _ int) layout.Namespace {
				return layout.Namespace{Prefix: f.Prefix, ZipAs: f.ZipAs, Buckets: layout.DenseAuto(), Codec: zstdCodec}
			}},
		{Name: "buckets+zip+dict", Dict: &DictSpec{},
			Desc: "DenseAuto() buckets, zipped key names and zstd-dict: a 16 KiB dictionary (codec.TrainDictionary's default) " +
				"trained on other values of the class, level 3",
			Namespace: func(f KeyFamily, _ int) layout.Namespace {
				return layout.Namespace{Prefix: f.Prefix, ZipAs: f.ZipAs, Buckets: layout.DenseAuto()}
			}},
		// Extra columns.
		{Name: "dense100+zip", Desc: "Dense(100) buckets and zipped key names: the main table's buckets before they were " +
			"sized by the server",
			Namespace: func(f KeyFamily, _ int) layout.Namespace {
				return layout.Namespace{Prefix: f.Prefix, ZipAs: f.ZipAs, Buckets: layout.Dense(100)}
			}},
		{Name: "buckets+zip+dict32k/l9", Dict: &DictSpec{Size: 32 << 10, Level: 9},
			Desc: "buckets+zip+dict with a 32 KiB dictionary and zstd level 9 (slower writes, same reads)",
			Namespace: func(f KeyFamily, _ int) layout.Namespace {
				return layout.Namespace{Prefix: f.Prefix, ZipAs: f.ZipAs, Buckets: layout.DenseAuto()}
			}},
		{Name: "dense512+zip", Desc: "Dense(512) buckets (the server's hash-max-listpack-entries) and zipped key names",
			Namespace: func(f KeyFamily, _ int) layout.Namespace {
				return layout.Namespace{Prefix: f.Prefix, ZipAs: f.ZipAs, Buckets: layout.Dense(512)}
			}},
		{Name: "dense126+zip", Desc: "Dense(126) buckets and zipped key names: for counters below 128, a full bucket's listpack " +
			"(7 + 126 × 4 B = 511 B) just fits jemalloc's 512-B class; sized to the allocator, so fragile",
			Namespace: func(f KeyFamily, _ int) layout.Namespace {
				return layout.Namespace{Prefix: f.Prefix, ZipAs: f.ZipAs, Buckets: layout.Dense(126)}
			}},
		{Name: "hashed+zip", Desc: "HashedFor(pairs) buckets (fnv hash of the id, about 256 keys each) and zipped key names",
			Namespace: func(f KeyFamily, keys int) layout.Namespace {
				return layout.Namespace{Prefix: f.Prefix, ZipAs: f.ZipAs, Buckets: layout.HashedFor(keys)}
			}},
		{Name: "buckets+zip, no guard", Desc: "buckets+zip with Oversize: OversizeInBucket, i.e. without the guard: " +
			"a value over hash-max-listpack-value goes in its bucket and turns it into a hashtable",
			Namespace: func(f KeyFamily, _ int) layout.Namespace {
				return layout.Namespace{Prefix: f.Prefix, ZipAs: f.ZipAs, Buckets: layout.DenseAuto(), Oversize: layout.OversizeInBucket}
			}},
	}
}

// MainLayouts are the memory table's columns.
func MainLayouts() []string {
	return []string{"plain", "zstd", "zipped", "buckets", "buckets+zip", "buckets+zip+zstd", "buckets+zip+dict"}
}

// LayoutByName returns the layout named name.
func LayoutByName(name string) (Layout, bool) {
	for _, l := range Layouts() {
		if l.Name == name {
			return l, true
		}
	}
	return Layout{}, false
}

// DictSpecs returns the dictionary set-ups of the dictionary layouts.
func DictSpecs() []DictSpec {
	var out []DictSpec
	for _, l := range Layouts() {
		if l.Dict != nil {
			out = append(out, *l.Dict)
		}
	}
	return out
}
