package fanout

import "sync/atomic"

// Stats are a hub's counters since New. Connections and channels are
// current; the rest only grow.
type Stats struct {
	Conns    int // open connections
	Channels int // channels with at least one subscriber

	Accepted uint64 // upgrades completed
	Rejected uint64 // upgrade requests refused: bad handshake, origin, Authorize, shut down

	Broadcasts   uint64 // broadcasts that reached at least one subscriber
	Deliveries   uint64 // messages queued to connections
	Dropped      uint64 // messages not queued because the connection's queue was full (DropMessages)
	SlowClosed   uint64 // connections closed for a full queue (Disconnect) or a write past WriteTimeout
	Compressions uint64 // deflate runs: at most two per broadcast (shared stream, no history), never per connection
	SharedFrames uint64 // deliveries that used a channel's shared-context frame
	PayloadBytes uint64 // bytes of the messages queued, before framing and compression
	QueuedBytes  uint64 // bytes of the frames queued: what compression left of PayloadBytes, plus headers
	WireBytes    uint64 // bytes written to sockets, control frames included
	Writes       uint64 // write calls to sockets: under load, one carries many messages
	Inbound      uint64 // data messages received from clients (the hub reads and drops them)
}

type counters struct {
	accepted, rejected                                    atomic.Uint64
	broadcasts, deliveries, dropped, slowClosed           atomic.Uint64
	compressions, sharedFrames                            atomic.Uint64
	payloadBytes, queuedBytes, wireBytes, inbound, writes atomic.Uint64
}

// Stats returns the hub's counters.
func (h *Hub) Stats() Stats {
	h.mu.Lock()
	s := Stats{Conns: len(h.conns), Channels: len(h.channels)}
	h.mu.Unlock()
	c := &h.stats
	s.Accepted, s.Rejected = c.accepted.Load(), c.rejected.Load()
	s.Broadcasts, s.Deliveries, s.Dropped = c.broadcasts.Load(), c.deliveries.Load(), c.dropped.Load()
	s.SlowClosed, s.Compressions, s.SharedFrames = c.slowClosed.Load(), c.compressions.Load(), c.sharedFrames.Load()
	s.PayloadBytes, s.QueuedBytes, s.WireBytes = c.payloadBytes.Load(), c.queuedBytes.Load(), c.wireBytes.Load()
	s.Inbound, s.Writes = c.inbound.Load(), c.writes.Load()
	return s
}

// RelayStats are the counters of the hub's relays from a Source.
type RelayStats struct {
	Messages uint64 // messages received and broadcast
	Gaps     uint64 // gap events: messages may have been lost
	Errors   uint64 // errors from the source, and failed subscription updates
}

type relayCounters struct{ messages, gaps, errors atomic.Uint64 }

// RelayStats returns the counters of Relay.
func (h *Hub) RelayStats() RelayStats {
	r := &h.relayStats
	return RelayStats{Messages: r.messages.Load(), Gaps: r.gaps.Load(), Errors: r.errors.Load()}
}
