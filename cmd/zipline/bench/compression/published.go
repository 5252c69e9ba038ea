package compression

import "github.com/ziplinekv/zipline/codec"

// GLIDE's published figures, from the blog "Transparent Compression in
// Valkey GLIDE" (valkey-io/valkey-io.github.io PR #469, its section on the
// benchmark): Go GLIDE at default levels, 10,000
// values per class, Valkey 8.0 on an 8-vCPU Graviton3 host with the client
// on another.

// PublishedSaving is the memory GLIDE saved per class, as fractions
// (zstd, LZ4). The blog's headline gives 27.8 % for LZ4 on json-1884,
// its table 31.8 %; the table's figure is kept.
var PublishedSaving = map[string][2]float64{
	"json-98":     {0.008, 0.000},
	"json-461":    {0.276, 0.150},
	"json-1884":   {0.493, 0.318},
	"html-193":    {0.200, 0.105},
	"html-556":    {0.372, 0.279},
	"html-1247":   {0.490, 0.389},
	"session-198": {0.118, 0.000},
	"session-480": {0.169, 0.000},
	"session-951": {0.241, 0.115},
}

// Published returns GLIDE's published saving for class and backend.
func Published(class string, b Backend) (float64, bool) {
	s, ok := PublishedSaving[class]
	switch {
	case !ok:
		return 0, false
	case b == Zstd:
		return s[0], true
	case b == LZ4:
		return s[1], true
	}
	return 0, false
}

// PublishedHeadline is the blog's headline json-1884 table: MB of server
// memory without compression, with zstd and with LZ4.
var PublishedHeadline = [3]float64{21.4, 10.9, 15.5}

// PublishedSETRow is one row of the blog's SET throughput tables.
type PublishedSETRow struct {
	Goroutines, Batch int
	None, Zstd, LZ4   float64 // SET TPS
}

// PublishedBatchSlice is the blog's "representative slice at 10
// goroutines": SET TPS per batch size.
var PublishedBatchSlice = []PublishedSETRow{
	{10, 1, 17891, 16881, 17894},
	{10, 5, 82951, 74472, 83842},
	{10, 10, 152649, 117218, 152778},
	{10, 20, 275326, 172454, 260032},
	{10, 50, 491173, 232056, 453602},
}

// PublishedScaling is the blog's "scaling with goroutines" table. The blog
// labels it batch 1, but its 10-goroutine row repeats the batch-10 row of
// the slice above (zstd and LZ4 exactly), and 18K SET TPS from one
// goroutine at batch 1 would be an 55 µs round trip; batch 10 is the
// likelier reading, and the report says so.
var PublishedScaling = []PublishedSETRow{
	{1, 10, 18205, 13327, 17058},
	{2, 10, 32919, 24074, 32963},
	{4, 10, 63996, 50648, 61789},
	{8, 10, 124916, 94587, 118091},
	{10, 10, 146831, 117218, 152778},
	{25, 10, 348691, 203420, 349196},
	{100, 10, 498108, 204558, 484338},
}

// PublishedRatioRange is the range of SET TPS ratios (compressed /
// uncompressed) the blog reports over its 40 configurations per backend.
var PublishedRatioRange = map[Backend][2]float64{Zstd: {0.41, 0.97}, LZ4: {0.87, 1.07}}

// Compressibility is how a set of values compresses with zipline's codec
// at default levels, value by value, as stored: header included, and a
// value that would not shrink kept as is.
type Compressibility struct {
	Name      string
	Values    int
	MeanSize  float64
	Zstd, LZ4 float64 // total stored bytes / total plaintext bytes
	// ZstdMean, LZ4Mean are the mean of the per-value ratios.
	ZstdMean, LZ4Mean float64
}

// Measure compresses values with zipline's codec (zstd and LZ4 at their
// default levels) and returns the ratios.
func Measure(name string, values [][]byte) (Compressibility, error) {
	r := Compressibility{Name: name, Values: len(values)}
	if len(values) == 0 {
		return r, nil
	}
	var plain, zs, ls float64
	var buf []byte
	for _, b := range []codec.Backend{codec.Zstd, codec.LZ4} {
		c, err := codec.New(b)
		if err != nil {
			return r, err
		}
		var total, mean float64
		for _, v := range values {
			buf, _ = c.Encode(buf[:0], v)
			total += float64(len(buf))
			mean += float64(len(buf)) / float64(max(len(v), 1))
			if b == codec.Zstd {
				plain += float64(len(v))
			}
		}
		if b == codec.Zstd {
			zs, r.ZstdMean = total, mean/float64(len(values))
		} else {
			ls, r.LZ4Mean = total, mean/float64(len(values))
		}
	}
	r.MeanSize = plain / float64(len(values))
	if plain > 0 {
		r.Zstd, r.LZ4 = zs/plain, ls/plain
	}
	return r, nil
}
