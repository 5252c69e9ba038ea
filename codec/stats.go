package codec

import "sync/atomic"

// Stats are a Codec's counters since it was created. They mirror GLIDE's
// compression statistics (client.GetStatistics), but per Codec rather than
// per process.
type Stats struct {
	// Compressed counts values Encode stored compressed
	// (GLIDE total_values_compressed).
	Compressed uint64
	// Skipped counts values Encode stored as is: shorter than the minimum
	// size, already carrying a header, not made shorter by compression, or
	// failed by the encoder (GLIDE compression_skipped_count).
	Skipped uint64
	// BytesIn is the plaintext size of the values counted in Compressed
	// (GLIDE total_original_bytes).
	BytesIn uint64
	// BytesOut is the stored size of the values counted in Compressed,
	// header included (GLIDE total_bytes_compressed).
	BytesOut uint64
	// Decompressed counts values Decode expanded
	// (GLIDE total_values_decompressed).
	Decompressed uint64
	// BytesDecompressed is the plaintext size of the values counted in
	// Decompressed (GLIDE total_bytes_decompressed).
	BytesDecompressed uint64
	// Invalid counts values that carried a header with a known backend id but
	// did not decode, so Decode returned them as stored: a corrupt payload,
	// or a ZstdDict value naming a dictionary the Codec does not hold.
	// GLIDE logs these and counts nothing.
	Invalid uint64
}

// Stats returns a snapshot of the Codec's counters. Each counter is read
// atomically, but the snapshot as a whole is not: calls running
// concurrently may be partly counted.
func (c *Codec) Stats() Stats {
	s := &c.stats
	return Stats{
		Compressed:        s.compressed.Load(),
		Skipped:           s.skipped.Load(),
		BytesIn:           s.bytesIn.Load(),
		BytesOut:          s.bytesOut.Load(),
		Decompressed:      s.decompressed.Load(),
		BytesDecompressed: s.bytesDecompressed.Load(),
		Invalid:           s.invalid.Load(),
	}
}

// cacheLine is large enough for the cache lines of common CPUs (64 bytes,
// 128 on Apple silicon and for adjacent-line prefetch on x86).
const cacheLine = 128

// counters are updated on every Encode and Decode, from many goroutines.
// The padding keeps them off the cache line of the Codec's read-only fields,
// which every call reads, and keeps the write-side counters apart from the
// read-side ones.
type counters struct {
	_            [cacheLine]byte
	compressed   atomic.Uint64
	skipped      atomic.Uint64
	bytesIn      atomic.Uint64
	bytesOut     atomic.Uint64
	_            [cacheLine - 32]byte
	decompressed atomic.Uint64
	invalid      atomic.Uint64

	bytesDecompressed atomic.Uint64
	_                 [cacheLine - 24]byte
}
