package layouts

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strconv"
	"sync"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/codec"
	"github.com/ziplinekv/zipline/testbed/corpus"
)

// A Class is a kind of value the benchmark stores, one row of the memory
// table.
type Class struct {
	Name string
	Desc string // for the report
	// Counter classes are written with INCR (HINCRBY in buckets), once per
	// key, as the article did: every value is 1.
	Counter bool
	// Small classes have every value shorter than a codec's minimum size
	// (64 B): compression leaves them as they are, and there is nothing to
	// train a dictionary on.
	Small bool
	// gen returns the values to store (pair i gets values[i%len(values)])
	// and a disjoint sample of the same kind to train a dictionary on.
	gen func(n int) (values, training [][]byte, err error)
}

// Seeds of the generated data: measured values and dictionary training
// samples come from different streams.
const (
	measureSeed = 1
	trainSeed   = 2
)

// trainingSamples is how many samples a dictionary is trained on for the
// generated classes (random.json has only 1,000 records, half of which are
// used for training).
const trainingSamples = 2000

// Classes returns the value classes, in report order.
func Classes() []Class {
	html := func(target int) Class {
		c := corpus.Class{Kind: corpus.HTML, Target: target}
		return Class{
			Name: "html" + strconv.Itoa(target),
			Desc: fmt.Sprintf("HTML fragments from the corpus generator, mean %d B", target),
			gen:  corpusGen(c),
		}
	}
	return []Class{
		{Name: "counters", Desc: "counters written by INCR, once per key (value 1), as in the article", Counter: true, Small: true},
		{Name: "ints", Desc: "random 9-digit integers (100000000..999999999)", gen: intsGen, Small: true},
		{Name: "english", Desc: "short English strings, 2-9 words from a list (about 10-60 B)", gen: englishGen, Small: true},
		html(100), html(500), html(1000), html(4000),
		{Name: "json-random", Desc: "real user records of random.json (simdjson-data, embedded), compact, mean 461 B " +
			"(records 500-999 stored, cycled; 0-499 train the dictionary)", gen: randomJSONGen},
		{Name: "json-98", Desc: "JSON from the corpus generator (tokens, flags, user summaries), mean 98 B", gen: corpusGen(corpus.JSON98)},
		{Name: "json-461", Desc: "JSON from the corpus generator (profiles, orders, events), mean 461 B", gen: corpusGen(corpus.JSON461)},
		{Name: "mixed", Desc: "random 9-digit integers, but every 100th value (id % 100 == 50) is an html500 fragment", gen: mixedGen},
	}
}

// ClassByName returns the class named name.
func ClassByName(name string) (Class, bool) {
	for _, c := range Classes() {
		if c.Name == name {
			return c, true
		}
	}
	return Class{}, false
}

func corpusGen(c corpus.Class) func(n int) ([][]byte, [][]byte, error) {
	return func(n int) ([][]byte, [][]byte, error) {
		return corpus.Generate(c, n, measureSeed), corpus.Generate(c, trainingSamples, trainSeed), nil
	}
}

func intsGen(n int) ([][]byte, [][]byte, error) {
	return randomInts(n, measureSeed), randomInts(trainingSamples, trainSeed), nil
}

func randomInts(n int, seed uint64) [][]byte {
	r := rand.New(rand.NewPCG(seed, 0x1a7e))
	out := make([][]byte, n)
	for i := range out {
		out[i] = strconv.AppendInt(nil, 100_000_000+r.Int64N(900_000_000), 10)
	}
	return out
}

// words are common English words, so that the strings have the letter and
// word statistics of short prose.
var words = []string{
	"the", "the", "the", "a", "a", "and", "and", "of", "of", "to", "to", "in", "is", "it", "you", "that",
	"he", "was", "for", "on", "are", "with", "as", "his", "they", "be", "at", "one", "have", "this",
	"from", "or", "had", "by", "word", "but", "what", "some", "we", "can", "out", "other", "were", "all",
	"there", "when", "up", "use", "your", "how", "said", "an", "each", "she", "which", "do", "their",
	"time", "if", "will", "way", "about", "many", "then", "them", "write", "would", "like", "so", "these",
	"her", "long", "make", "thing", "see", "him", "two", "has", "look", "more", "day", "could", "go",
	"come", "did", "number", "sound", "no", "most", "people", "my", "over", "know", "water", "than",
	"call", "first", "who", "may", "down", "side", "been", "now", "find", "any", "new", "work", "part",
	"take", "get", "place", "made", "live", "where", "after", "back", "little", "only", "round", "man",
	"year", "came", "show", "every", "good", "me", "give", "our", "under", "name", "very", "through",
	"just", "form", "sentence", "great", "think", "say", "help", "low", "line", "differ", "turn",
	"cause", "much", "mean", "before", "move", "right", "boy", "old", "too", "same", "tell", "does",
	"set", "three", "want", "air", "well", "also", "play", "small", "end", "put", "home", "read",
	"hand", "port", "large", "spell", "add", "even", "land", "here", "must", "big", "high", "such",
	"follow", "act", "why", "ask", "men", "change", "went", "light", "kind", "off", "need", "house",
	"picture", "try", "us", "again", "animal", "point", "mother", "world", "near", "build", "self",
	"earth", "father", "head", "stand", "own", "page", "should", "country", "found", "answer", "school",
	"grow", "study", "still", "learn", "plant", "cover", "food", "sun", "four", "between", "state",
	"keep", "eye", "never", "last", "let", "thought", "city", "tree", "cross", "farm", "hard", "start",
}

// englishGen makes short sentences: 2 to 9 words, capitalised, with a full
// stop.
func englishGen(n int) ([][]byte, [][]byte, error) {
	return sentences(n, measureSeed), sentences(trainingSamples, trainSeed), nil
}

func sentences(n int, seed uint64) [][]byte {
	r := rand.New(rand.NewPCG(seed, 0xe9))
	out := make([][]byte, n)
	for i := range out {
		var b []byte
		for w := range 2 + r.IntN(8) {
			word := words[r.IntN(len(words))]
			if w == 0 {
				b = append(b, word[0]-'a'+'A')
				b = append(b, word[1:]...)
				continue
			}
			b = append(append(b, ' '), word...)
		}
		out[i] = append(b, '.')
	}
	return out
}

// mixedGen makes integers with one HTML fragment per hundred ids: the case
// where one value per bucket is too large for a listpack.
func mixedGen(n int) ([][]byte, [][]byte, error) {
	html := corpus.Class{Kind: corpus.HTML, Target: 500}
	vals := randomInts(n, measureSeed)
	frags := corpus.Generate(html, (n+99)/100, measureSeed)
	for i := range vals {
		if i%100 == 50 {
			vals[i] = frags[i/100]
		}
	}
	return vals, corpus.Generate(html, trainingSamples, trainSeed), nil
}

// randomJSONGen serves random.json's user records: the second half is
// stored (cycled through), the first half trains the dictionary.
func randomJSONGen(int) ([][]byte, [][]byte, error) {
	real, err := corpus.RealJSON()
	if err != nil {
		return nil, nil, err
	}
	recs := real["random"]
	half := len(recs) / 2
	return recs[half:], recs[:half], nil
}

// Data is a class's values, generated once and shared by its cells.
type Data struct {
	Class    Class
	Values   [][]byte // pair i stores Values[i%len(Values)]
	Training [][]byte // dictionary samples, disjoint from Values
	// Dropped is how many generated training samples were left out because
	// they equal a stored value (small generated documents repeat).
	Dropped int

	mu    sync.Mutex
	dicts map[DictSpec]*Dict
}

// Value returns the value of pair i.
func (d *Data) Value(i int) []byte {
	if d.Class.Counter {
		return []byte("1")
	}
	return d.Values[i%len(d.Values)]
}

// MeanSize is the mean size of the values stored for n pairs.
func (d *Data) MeanSize(n int) float64 {
	if d.Class.Counter || n == 0 {
		return 1
	}
	total := 0
	for i := range n {
		total += len(d.Value(i))
	}
	return float64(total) / float64(n)
}

// DictSpec sets up dictionary compression: the dictionary's maximum size
// (0: codec.DefaultDictionarySize, 16 KiB) and the zstd level (0: the
// default, 3).
type DictSpec struct{ Size, Level int }

func (s DictSpec) String() string {
	size, level := s.Size, s.Level
	if size == 0 {
		size = codec.DefaultDictionarySize
	}
	if level == 0 {
		level = codec.DefaultZstdLevel
	}
	return fmt.Sprintf("%d KiB dictionary, level %d", size>>10, level)
}

// A Dict is a dictionary trained on a class and a ZstdDict codec using it.
type Dict struct {
	Spec  DictSpec
	Bytes []byte
	Codec *codec.Codec
}

// Compression is the namespace codec that uses the dictionary.
func (d *Dict) Compression() zipline.Compression {
	return zipline.Compression{Backend: codec.ZstdDict, Dictionary: d.Bytes, Level: d.Spec.Level}
}

// Dictionary trains (once per spec) a zstd dictionary on the class's
// training samples, which are not among the stored values.
func (d *Data) Dictionary(spec DictSpec) (*Dict, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if dc, ok := d.dicts[spec]; ok {
		return dc, nil
	}
	if d.Class.Small {
		return nil, fmt.Errorf("layouts: %s values are too small to compress", d.Class.Name)
	}
	dict, err := codec.TrainDictionary(d.Training, spec.Size)
	if err != nil {
		return nil, err
	}
	c, err := codec.New(codec.ZstdDict, codec.WithDictionary(dict), codec.WithLevel(spec.Level))
	if err != nil {
		return nil, err
	}
	dc := &Dict{Spec: spec, Bytes: dict, Codec: c}
	if d.dicts == nil {
		d.dicts = map[DictSpec]*Dict{}
	}
	d.dicts[spec] = dc
	return dc, nil
}

// disjoint returns the samples that are not among values: a dictionary
// must not be trained on the values it is measured on. Small generated
// documents repeat (html100 has about 46,000 distinct values in 100,000),
// so an independent sample would otherwise share many of them.
func disjoint(samples, values [][]byte) ([][]byte, int) {
	seen := make(map[uint64]bool, len(values))
	h := fnv.New64a()
	sum := func(b []byte) uint64 {
		h.Reset()
		h.Write(b)
		return h.Sum64()
	}
	for _, v := range values {
		seen[sum(v)] = true
	}
	out := samples[:0:0]
	for _, s := range samples {
		if !seen[sum(s)] {
			out = append(out, s)
		}
	}
	return out, len(samples) - len(out)
}

// DataSet generates and caches each class's data for a number of pairs.
type DataSet struct {
	Pairs int

	mu   sync.Mutex
	data map[string]*Data
}

// Get returns the data of the named class, generating it on first use.
func (s *DataSet) Get(name string) (*Data, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d, ok := s.data[name]; ok {
		return d, nil
	}
	c, ok := ClassByName(name)
	if !ok {
		return nil, fmt.Errorf("layouts: unknown value class %q", name)
	}
	d := &Data{Class: c}
	if c.gen != nil {
		var err error
		if d.Values, d.Training, err = c.gen(max(s.Pairs, 1)); err != nil {
			return nil, err
		}
		d.Training, d.Dropped = disjoint(d.Training, d.Values)
	}
	if s.data == nil {
		s.data = map[string]*Data{}
	}
	s.data[name] = d
	return d, nil
}

// ClassStat describes a class's values as stored by the compressing
// layouts.
type ClassStat struct {
	Class          Class
	Mean           float64 // mean value size, B
	Fit            float64 // fraction of values ≤ 64 B
	Zstd           Encoded // with zstd
	Dicts          []Encoded
	DistinctValues int
	Training       int // dictionary training samples
	TrainingBytes  int
	Dropped        int // training samples left out: equal to a stored value
}

// Encoded is the effect of one codec on a class's values.
type Encoded struct {
	Name      string
	Mean      float64 // mean stored size, header included
	Fit       float64 // fraction ≤ 64 B
	DictBytes int     // dictionary size, if any
}

// Stat measures the first n values of d, encoded with zstd and with the
// dictionaries of specs.
func (d *Data) Stat(n int, specs ...DictSpec) (ClassStat, error) {
	st := ClassStat{Class: d.Class, Mean: d.MeanSize(n), DistinctValues: len(d.Values), Training: len(d.Training), Dropped: d.Dropped}
	for _, t := range d.Training {
		st.TrainingBytes += len(t)
	}
	if d.Class.Counter {
		st.Fit = 1
		return st, nil
	}
	count := min(n, len(d.Values))
	fit := 0
	for _, v := range d.Values[:count] {
		if len(v) <= 64 {
			fit++
		}
	}
	st.Fit = float64(fit) / float64(max(count, 1))
	measure := func(name string, c *codec.Codec, dictBytes int) Encoded {
		e := Encoded{Name: name, DictBytes: dictBytes}
		var buf []byte
		total, fit := 0, 0
		for _, v := range d.Values[:count] {
			buf, _ = c.Encode(buf[:0], v)
			total += len(buf)
			if len(buf) <= 64 {
				fit++
			}
		}
		e.Mean, e.Fit = float64(total)/float64(max(count, 1)), float64(fit)/float64(max(count, 1))
		return e
	}
	z, err := codec.New(codec.Zstd)
	if err != nil {
		return st, err
	}
	st.Zstd = measure("zstd", z, 0)
	if d.Class.Small {
		return st, nil
	}
	for _, spec := range specs {
		dc, err := d.Dictionary(spec)
		if err != nil {
			return st, err
		}
		st.Dicts = append(st.Dicts, measure(spec.String(), dc.Codec, len(dc.Bytes)))
	}
	return st, nil
}
