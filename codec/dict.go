package codec

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"

	"github.com/klauspost/compress/zstd"
)

// Dictionary sizes for TrainDictionary.
const (
	// DefaultDictionarySize is the dictionary size TrainDictionary aims for
	// when maxSize is 0 (16 KiB).
	DefaultDictionarySize = 16 << 10
	// MinDictionarySize is the smallest maxSize TrainDictionary accepts. The
	// entropy tables alone take about 100-200 bytes.
	MinDictionarySize = 512
	// MinTrainingSamples is the fewest usable samples (at least 8 bytes
	// each) TrainDictionary accepts. It only rules out mistakes: a useful
	// dictionary needs hundreds of samples.
	MinTrainingSamples = 10
)

// WithDictionary gives the Codec a zstd dictionary in the standard format
// (magic 0xEC30A437, as written by "zstd --train" or TrainDictionary).
//
// It is required for backend ZstdDict, which writes values that need it, and
// optional for the others: whatever its backend, a Codec with a dictionary
// also reads ZstdDict values written with that dictionary. A ZstdDict value
// that names another dictionary (a different ID), or read by a Codec without
// one, is returned as stored, like any value a Codec cannot decode. The
// application must keep the dictionary for as long as values written with
// it are stored: without it they cannot be read back.
//
// New fails if dict does not parse as a zstd dictionary or has ID 0. The
// Codec keeps a copy of dict.
func WithDictionary(dict []byte) Option {
	return func(c *config) error {
		id, err := parseDictionary(dict)
		if err != nil {
			return err
		}
		c.dict, c.dictID = bytes.Clone(dict), id
		return nil
	}
}

// parseDictionary validates a zstd dictionary and returns its ID.
func parseDictionary(dict []byte) (id uint32, err error) {
	defer func() {
		// klauspost's parser is not fuzzed against hostile tables; New must
		// not panic on bad input.
		if recover() != nil {
			id, err = 0, errors.New("codec: invalid zstd dictionary")
		}
	}()
	if len(dict) < 4 || binary.LittleEndian.Uint32(dict) != 0xEC30A437 {
		return 0, errors.New("codec: not a zstd dictionary: it must start with the magic 37 a4 30 ec (raw content is not accepted)")
	}
	d, err := zstd.InspectDictionary(dict)
	if err != nil {
		return 0, fmt.Errorf("codec: invalid zstd dictionary: %w", err)
	}
	return d.ID(), nil
}

// zstdDictWindow is the smallest window of the dictionary encoders. Each of
// their workers keeps a history buffer of the window plus a block (128 KiB)
// from its first value on, where the shared encoders keep none until they
// see a value over 128 KiB; klauspost's default window, 8 MiB at the
// default level, would make that 8 MiB per worker. Small values, which
// dictionaries are for, never reach this far back; large ones lose little.
const zstdDictWindow = 512 << 10

// newZstdDictCompressor returns a compressor that writes frames with dict,
// which is validated. Unlike the plain zstd encoders, which are shared by
// level, it is owned by the Codec: its tables are built from the
// dictionary, and it goes away with the Codec.
func newZstdDictCompressor(level int, dict []byte) (compressor, error) {
	d, err := zstd.InspectDictionary(dict)
	if err != nil {
		return nil, fmt.Errorf("codec: invalid zstd dictionary: %w", err)
	}
	// The window must reach over the dictionary to the start of the value.
	window := zstdDictWindow
	for window < 2*d.ContentSize() && window < zstdMaxWindow {
		window *= 2
	}
	l := zstdEncoderLevel(level)
	opts := append(zstdEncoderOptions(l), zstd.WithWindowSize(window), zstd.WithEncoderDict(dict))
	enc, err := zstd.NewWriter(nil, opts...)
	if err != nil {
		return nil, fmt.Errorf("codec: zstd encoder with dictionary: %w", err)
	}
	return zstdCompressor{enc: enc}, nil
}

// Training limits: only the start of a sample matters for values this
// small, and the trainer holds 5 bytes per byte of sample, plus counters of
// 8 bytes per byte of sample rounded up to a power of 2 (at most 32 MiB).
const (
	maxTrainingSample = 64 << 10
	maxTrainingTotal  = 16 << 20
)

// Parameters of the segment selection (see coverContent): d-byte substrings
// are counted, and k-byte segments picked. On JSON records of 100-1000
// bytes, k from 64 to 512 with d of 6 or 8 gave ratios within 4 % of each
// other, and k of 16 or 32 up to 25 % worse; k = 128, d = 8 was among the
// best.
const (
	coverD = 8
	coverK = 128
)

// TrainDictionary builds a zstd dictionary of at most maxSize bytes (0 means
// DefaultDictionarySize) from samples of the values it will compress, for
// WithDictionary. The result is in the standard format, so "zstd -D" reads
// the values too.
//
// Samples should be typical values, one per slice, as stored: a few hundred
// at the very least, better a thousand or more, and in total about 10 to 100
// times maxSize. Fewer than MinTrainingSamples samples of at least 8 bytes,
// or samples that share no content, are an error. Samples are truncated to
// 64 KiB and only the first 16 MiB of them are used.
//
// Training is deterministic: the same samples and maxSize give the same
// bytes (with the same versions of this package and klauspost/compress),
// including the dictionary ID, which is derived from a hash of the
// dictionary (in zstd's private range, 32768 to 2^31-1). Values name the
// dictionary by that ID, so store the dictionary with the application's
// configuration, never in the cache alone: it is needed to read the values
// back. To change the dictionary, read values with a Codec holding the old
// one and rewrite them with the new one.
//
// The dictionary's content is chosen with the COVER algorithm of zstd's
// trainer (Liao, Petri, Moffat and Wirth, "Effective construction of
// relative Lempel-Ziv dictionaries", 2016); its entropy tables are built by
// klauspost/compress/zstd.BuildDict, tuned for the default level, and it
// works at every level. (klauspost's own trainer, dict.BuildZstdDict, is not
// used: its output depends on map iteration order, so it differs from run to
// run.) On JSON records of 300-500 bytes, values stored with a dictionary
// take 0.30-0.35 of their size, against 0.65-0.90 with plain zstd; see the
// package documentation.
func TrainDictionary(samples [][]byte, maxSize int) ([]byte, error) {
	switch {
	case maxSize == 0:
		maxSize = DefaultDictionarySize
	case maxSize < MinDictionarySize:
		return nil, fmt.Errorf("codec: dictionary size %d is below %d", maxSize, MinDictionarySize)
	}
	var used [][]byte
	total := 0
	for _, s := range samples {
		if len(s) < coverD {
			continue
		}
		s = s[:min(len(s), maxTrainingSample)]
		if total+len(s) > maxTrainingTotal {
			break
		}
		used = append(used, s)
		total += len(s)
	}
	if len(used) < MinTrainingSamples {
		return nil, fmt.Errorf("codec: %d usable samples (of %d), need at least %d of %d bytes or more; hundreds are better",
			len(used), len(samples), MinTrainingSamples, coverD)
	}

	// Leave room for the header and tables (about 110 bytes), then trim the
	// content if they turn out larger.
	content, err := coverContent(used, min(maxSize-128, total))
	if err != nil {
		return nil, err
	}
	for {
		dict, err := zstd.BuildDict(zstd.BuildDictOptions{
			ID:       1, // replaced below
			Contents: used,
			History:  content,
			Offsets:  [3]int{1, 4, 8}, // zstd's initial repeat offsets
			// libzstd 1.5.5 and older reject some dictionaries without it.
			CompatV155: true,
			Level:      zstdEncoderLevel(DefaultZstdLevel),
		})
		if err != nil {
			return nil, fmt.Errorf("codec: building the dictionary: %w", err)
		}
		if over := len(dict) - maxSize; over > 0 {
			// The front of the content holds the least useful segments.
			if over >= len(content)-coverD {
				return nil, fmt.Errorf("codec: dictionary size %d leaves no room for content", maxSize)
			}
			content = content[over:]
			continue
		}
		// The ID is a hash of everything else, so that two dictionaries
		// with the same ID are, but for a hash collision, the same.
		sum := sha256.Sum256(dict[8:])
		const first, span = 32768, 1<<31 - 32768
		binary.LittleEndian.PutUint32(dict[4:8], first+binary.LittleEndian.Uint32(sum[:])%span)
		if _, err := parseDictionary(dict); err != nil {
			return nil, fmt.Errorf("codec: built an invalid dictionary: %w", err)
		}
		return dict, nil
	}
}

// coverContent picks up to size bytes of dictionary content from samples
// with the COVER algorithm of zstd's trainer, in its fastcover form: a d-byte
// substring (dmer) is worth the number of samples that contain it (dmers are
// counted by hash, so a few share a count); the samples are cut into epochs,
// and each epoch in turn gives the k-byte segment whose distinct dmers are
// worth the most, whose dmers are then worth nothing. The first segments
// picked go at the end of the content, nearest to the data, where offsets
// are cheapest. Nothing is random and no map is iterated, so the result is
// deterministic.
func coverContent(samples [][]byte, size int) ([]byte, error) {
	const d, k = coverD, coverK
	n := 0
	for _, s := range samples {
		n += len(s)
	}
	// About one bucket per byte, 4 Ki to 4 Mi buckets.
	hashBits := min(max(bits.Len(uint(n)), 12), 22)
	data := make([]byte, 0, n)
	// dmers[p] is the bucket of the dmer at byte p of data, or -1 where
	// fewer than d bytes of its sample remain. worth, seen and active are
	// indexed by bucket.
	dmers := make([]int32, 0, n)
	worth := make([]int32, 1<<hashBits)
	seen := make([]int32, 1<<hashBits)
	maxWorth := int32(0)
	for si, s := range samples {
		data = append(data, s...)
		for p := range s {
			if p+d > len(s) {
				dmers = append(dmers, -1)
				continue
			}
			// d == 8: a whole word, multiplied by a 64-bit prime.
			h := int32((binary.LittleEndian.Uint64(s[p:]) * 0xcf1bbcdcb7a56463) >> (64 - hashBits))
			if seen[h] != int32(si)+1 { // count each sample once
				seen[h] = int32(si) + 1
				worth[h]++
				maxWorth = max(maxWorth, worth[h])
			}
			dmers = append(dmers, h)
		}
	}
	if maxWorth < 2 {
		return nil, errors.New("codec: the samples share no content: nothing to put in a dictionary")
	}
	active := seen // occurrences in the current window
	clear(active)

	// Epochs as in zstd's cover.c: about four segments per epoch fill the
	// dictionary, and an epoch is at least 10 segments long.
	epochs := max(1, size/k/4)
	epochSize := n / epochs
	if epochSize < 10*k {
		epochSize = min(10*k, n)
		epochs = max(1, n/epochSize)
	}
	maxZeroRuns := max(10, min(100, epochs/8))

	content := make([]byte, size)
	tail := size
	for epoch, zeroRuns := 0, 0; tail > 0; epoch = (epoch + 1) % epochs {
		begin, end := bestSegment(dmers, worth, active, epoch*epochSize, min((epoch+1)*epochSize, n), k-d+1)
		if begin == end {
			if zeroRuns++; zeroRuns >= maxZeroRuns {
				break
			}
			continue
		}
		zeroRuns = 0
		for _, h := range dmers[begin:end] {
			if h >= 0 {
				worth[h] = 0
			}
		}
		// The segment covers its dmers' bytes; the last one lies within its
		// sample, so within data.
		segment := min(end-begin+d-1, tail)
		if segment < d {
			break
		}
		tail -= segment
		copy(content[tail:], data[begin:begin+segment])
	}
	if tail == size {
		return nil, errors.New("codec: the samples share no content: nothing to put in a dictionary")
	}
	return content[tail:], nil
}

// bestSegment returns the window of at most win dmer positions in
// [from, to) whose distinct dmers are worth the most, trimmed of worthless
// positions at both ends; begin == end if none is worth anything. active
// must be all zero, and is left so.
func bestSegment(dmers, worth, active []int32, from, to, win int) (begin, end int) {
	var score, best int64
	b := from
	for e := from; e < to; e++ {
		if id := dmers[e]; id >= 0 {
			if active[id] == 0 {
				score += int64(worth[id])
			}
			active[id]++
		}
		if e-b+1 > win {
			if id := dmers[b]; id >= 0 {
				if active[id]--; active[id] == 0 {
					score -= int64(worth[id])
				}
			}
			b++
		}
		if score > best {
			best, begin, end = score, b, e+1
		}
	}
	for ; b < to; b++ {
		if id := dmers[b]; id >= 0 {
			active[id]--
		}
	}
	worthless := func(p int) bool { return dmers[p] < 0 || worth[dmers[p]] == 0 }
	for begin < end && worthless(begin) {
		begin++
	}
	for end > begin && worthless(end-1) {
		end--
	}
	return begin, end
}

// DictionaryIDOf returns the ID of a zstd dictionary in the standard format
// (as TrainDictionary writes it): the ID that every frame compressed with
// it carries, and that DictionaryOf reads back from a stored value.
func DictionaryIDOf(dict []byte) (uint32, error) {
	id, err := parseDictionary(dict)
	if err == nil && id == 0 {
		err = errors.New("codec: a zstd dictionary with ID 0 cannot be named by a value")
	}
	return id, err
}

// DictionaryOf returns the ID of the dictionary a stored value needs: for a
// ZstdDict value (header id 0x81), the ID its zstd frame's header names;
// ok is false for anything else (another backend, a frame that names no
// dictionary, bytes that are not a value). It reads only the headers, so a
// reader can fetch the dictionary before decoding (dictionaries kept in
// the server, as package layout does).
func DictionaryOf(value []byte) (id uint32, ok bool) {
	if len(value) < headerSize || !IsCompressed(value) || Backend(value[4]) != ZstdDict {
		return 0, false
	}
	f := value[headerSize:]
	// The frame: magic (4), then the frame header descriptor, whose low
	// two bits give the dictionary ID's size (0, 1, 2 or 4 bytes) and bit 5
	// says whether a window descriptor byte comes first.
	if len(f) < 5 || binary.LittleEndian.Uint32(f) != 0xFD2FB528 {
		return 0, false
	}
	fhd := f[4]
	at := 5
	if fhd&0x20 == 0 {
		at++ // the window descriptor
	}
	size := [4]int{0, 1, 2, 4}[fhd&3]
	if size == 0 || len(f) < at+size {
		return 0, false
	}
	for i := size - 1; i >= 0; i-- {
		id = id<<8 | uint32(f[at+i])
	}
	return id, id != 0
}
