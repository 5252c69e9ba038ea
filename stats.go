package zipline

import (
	"github.com/ziplinekv/zipline/internal/pipe"
)

// Stats are a Client's counters (cumulative) and gauges (current), for
// monitoring: each maps onto one Prometheus counter or gauge, and the
// otel module exports them as OpenTelemetry metrics. On a Client from
// Dedicated or Watch they describe its one connection.
type Stats struct {
	// Writes, Requests and Reconnects count the system calls that wrote
	// requests, the requests written (a Batch counts once) and the
	// reconnects, on the shared connection. On a cluster they add up every
	// node's, those of nodes since gone included, and Reconnects also
	// counts the connections made to nodes after the first topology (a
	// promoted replica's, a new owner's).
	Writes, Requests, Reconnects uint64
	// WriteSizes is the histogram of requests per write: bucket i counts
	// writes of 2^i to 2^(i+1)-1 requests, the last one everything larger.
	WriteSizes [writeSizeBuckets]uint64
	// InFlight requests were written and wait for their replies; Queued
	// ones wait to be written; PendingBytes is the size of both, as counted
	// against Options.MaxPendingBytes.
	InFlight, Queued, PendingBytes int64
	// DedicatedOpen connections serve blocking commands, Watch and
	// Dedicated; DedicatedInUse of them are lent out now.
	DedicatedOpen, DedicatedInUse int
	// SoloOpen connections are lent to one caller at a time while callers
	// are few (Options.SoloConns); Writes, Requests and the gauges above
	// count theirs too.
	SoloOpen int
	// BulkOpen is 1 per server whose bulk lane is open
	// (Options.BulkThreshold); Writes, Requests and the gauges above count
	// its requests too.
	BulkOpen int
	// Compression counts what compression did.
	Compression CompressionStats
	// Cache counts what the client-side cache did.
	Cache CacheStats
	// Reauthenticated counts the connections authenticated again in place
	// with renewed credentials (Options.Credentials).
	Reauthenticated uint64
}

// Stats returns the Client's counters and gauges.
func (c *Client) Stats() Stats {
	var st Stats
	c.carrier.stats(&st)
	st.Compression = c.compressionStats()
	if c.s.cache != nil {
		st.Cache = c.s.cache.stats()
	}
	if c.s.creds != nil {
		st.Reauthenticated = c.s.creds.renewed.Load()
	}
	return st
}

// writeSizeBuckets is how many buckets Stats.WriteSizes has.
const writeSizeBuckets = pipe.WriteSizeBuckets

func (st *Stats) addPipe(p *pipe.Pipe) {
	st.addCounts(p)
	st.InFlight += p.InFlight()
	st.Queued += int64(p.Queued())
	st.PendingBytes += p.PendingBytes()
}

// addCounts adds p's counters (not its gauges) to st.
func (st *Stats) addCounts(p *pipe.Pipe) {
	ps := p.Stats()
	st.Writes += ps.Batches.Load()
	st.Requests += ps.Calls.Load()
	st.Reconnects += ps.Reconnect.Load()
	for i := range st.WriteSizes {
		st.WriteSizes[i] += ps.WriteSizes[i].Load()
	}
}

// addRetired adds the counters kept from connections since closed.
func (st *Stats) addRetired(r *Stats) {
	st.Writes += r.Writes
	st.Requests += r.Requests
	st.Reconnects += r.Reconnects
	for i := range st.WriteSizes {
		st.WriteSizes[i] += r.WriteSizes[i]
	}
}
