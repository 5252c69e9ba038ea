package zipline

// The Client's compression, as the application sees it: DecodeValue,
// Stats().Compression, Raw. Options.Compression configures it (options.go);
// compression_codec.go does the work.

// DecodeValue returns what the application wrote from bytes a value was
// stored (or a message published) as: it expands a GLIDE envelope with the
// Client's codec and returns anything else unchanged. Commands expand their
// replies themselves; use it for bytes that reach the application another
// way, such as pub/sub messages received on a subscriber connection. It is
// the identity when compression is off.
func (c *Client) DecodeValue(b []byte) ([]byte, error) {
	if c.s.codec == nil {
		return b, nil
	}
	return c.s.codec.decodeValue(b)
}

// CompressionStats counts what compression did on this Client (Stats().Compression).
type CompressionStats struct {
	Compressed   uint64 // values stored compressed
	Skipped      uint64 // values stored as is: too small, already compressed, or not smaller
	BytesIn      uint64 // plaintext bytes of the compressed values
	BytesOut     uint64 // stored bytes of the compressed values, headers included
	Decompressed uint64 // values expanded on read
	Invalid      uint64 // values with a compression header that did not decode, returned as stored
}

// Ratio is BytesOut / BytesIn: the stored fraction of compressed values
// (0.4 means 60 % saved). It is 0 before anything was compressed.
func (s CompressionStats) Ratio() float64 {
	if s.BytesIn == 0 {
		return 0
	}
	return float64(s.BytesOut) / float64(s.BytesIn)
}

// compressionStats returns the Client's compression counters (Stats'
// Compression), which are zero when compression is off.
func (c *Client) compressionStats() CompressionStats {
	if c.s.codec == nil {
		return CompressionStats{}
	}
	var out CompressionStats
	for _, cdc := range c.s.codec.codecs() {
		st := cdc.Stats()
		out.Compressed += st.Compressed
		out.Skipped += st.Skipped
		out.BytesIn += st.BytesIn
		out.BytesOut += st.BytesOut
		out.Decompressed += st.Decompressed
		out.Invalid += st.Invalid
	}
	return out
}

// Raw returns a Client that shares c's connection but writes and reads
// values as they are, without compression: to store one value raw, or to
// look at the stored bytes of a compressed one. It is cheap; keep it or make
// it per call.
func (c *Client) Raw() *Client {
	r := *c
	r.codec = nil
	return &r
}
