package ziplineotel

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/ziplinekv/zipline"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// RegisterMetrics registers observable instruments that read c.Stats()
// each time the MeterProvider collects: the shared connection's queue,
// writes and reconnects, the dedicated connections, and compression (the
// package documentation lists them). opts is what c was created with; it
// gives the server and database attributes and the dedicated connections'
// limits. Call unregister before or after c.Close to stop reading c.
func RegisterMetrics(c *zipline.Client, opts zipline.Options, o ...Option) (unregister func() error, err error) {
	if c == nil {
		return nil, errors.New("ziplineotel: RegisterMetrics needs a Client")
	}
	cfg := newConfig(o)
	meter := cfg.meterProvider.Meter(ScopeName, metric.WithSchemaURL(semconv.SchemaURL))
	base := cfg.commonAttrs(opts)
	ms := statMetrics(opts, base)
	obs := make([]observer, len(ms))
	insts := make([]metric.Observable, len(ms))
	for i, m := range ms {
		obs[i] = observer{read: m.read, attrs: base, set: attribute.NewSet(base...)}
		unit, desc := metric.WithUnit(m.unit), metric.WithDescription(m.desc)
		var err error
		switch m.kind {
		case counter:
			obs[i].ints, err = meter.Int64ObservableCounter(m.name, unit, desc)
			insts[i] = obs[i].ints
		case upDownCounter:
			obs[i].ints, err = meter.Int64ObservableUpDownCounter(m.name, unit, desc)
			insts[i] = obs[i].ints
		case gauge:
			obs[i].floats, err = meter.Float64ObservableGauge(m.name, unit, desc)
			insts[i] = obs[i].floats
		}
		if err != nil {
			return nil, fmt.Errorf("ziplineotel: %s: %w", m.name, err)
		}
	}
	reg, err := meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		st := c.Stats()
		for _, p := range obs { // a copy each: readers may collect concurrently
			p.o = o
			p.read(&st, &p)
		}
		return nil
	}, insts...)
	if err != nil {
		return nil, err
	}
	return reg.Unregister, nil
}

type instrumentKind int

const (
	counter       instrumentKind = iota // Int64ObservableCounter: a cumulative count
	upDownCounter                       // Int64ObservableUpDownCounter: a current amount
	gauge                               // Float64ObservableGauge: a current value
)

// statMetric is one instrument read from zipline.Stats (or from the
// Client's Options): read reports its data points.
type statMetric struct {
	name, unit, desc string
	kind             instrumentKind
	read             func(st *zipline.Stats, p *observer)
}

// statMetrics lists the instruments of RegisterMetrics. A new field of
// zipline.Stats (the client-side cache's hits, misses, invalidations,
// evictions and bytes, say) is exported by adding an entry here, and to
// the table in the package documentation.
//
// Names follow the semantic conventions: the conventions' own metric where
// one exists (db.client.connection.*, for the pool of dedicated
// connections), and otherwise the zipline namespace, because metrics
// specific to one client must not claim a name in db.client.*.
func statMetrics(opts zipline.Options, base []attribute.KeyValue) []statMetric {
	pool := poolName(base)
	used := []attribute.KeyValue{pool, semconv.DBClientConnectionStateUsed}
	idle := []attribute.KeyValue{pool, semconv.DBClientConnectionStateIdle}
	maxConns := int64(opts.MaxDedicatedConns)
	if maxConns <= 0 {
		maxConns = zipline.DefaultMaxDedicatedConns
	}
	maxIdle := int64(opts.MaxIdleDedicated)
	switch {
	case maxIdle == 0:
		maxIdle = zipline.DefaultMaxIdleDedicated
	case maxIdle < 0:
		maxIdle = 0
	}
	sizes := writeSizeAttrs(len(zipline.Stats{}.WriteSizes))
	compressed := attribute.String("zipline.compression.outcome", "compressed")
	skipped := attribute.String("zipline.compression.outcome", "skipped")
	decompressed := attribute.String("zipline.compression.outcome", "decompressed")
	invalid := attribute.String("zipline.compression.outcome", "invalid")
	hit := attribute.String("zipline.cache.result", "hit")
	miss := attribute.String("zipline.cache.result", "miss")
	evicted := attribute.String("zipline.cache.reason", "evicted")
	expired := attribute.String("zipline.cache.reason", "expired")

	return []statMetric{
		// The shared, pipelined connection.
		{"zipline.pipeline.request.in_flight", "{request}", "Requests written to the shared connection and waiting for their replies.", upDownCounter,
			func(st *zipline.Stats, p *observer) { p.int(st.InFlight) }},
		{"zipline.pipeline.request.queued", "{request}", "Requests waiting to be written to the shared connection.", upDownCounter,
			func(st *zipline.Stats, p *observer) { p.int(st.Queued) }},
		{"zipline.pipeline.pending.size", "By", "Bytes of the requests queued or in flight on the shared connection, as counted against Options.MaxPendingBytes.", upDownCounter,
			func(st *zipline.Stats, p *observer) { p.int(st.PendingBytes) }},
		{"zipline.pipeline.requests", "{request}", "Requests written to the shared connection; a batch or transaction counts once.", counter,
			func(st *zipline.Stats, p *observer) { p.uint(st.Requests) }},
		{"zipline.pipeline.writes", "{write}", "Writes to the shared connection, by the number of requests each carried (zipline.pipeline.write.requests); their sum is the number of writes.", counter,
			func(st *zipline.Stats, p *observer) {
				for i, n := range st.WriteSizes {
					p.uint(n, sizes[i])
				}
			}},
		{"zipline.pipeline.reconnects", "{reconnect}", "Reconnections of the shared connection.", counter,
			func(st *zipline.Stats, p *observer) { p.uint(st.Reconnects) }},

		// The pool of dedicated connections (blocking commands, Watch,
		// Dedicated), in the conventions' connection-pool metrics.
		{"db.client.connection.count", "{connection}", "The number of connections that are currently in state described by the state attribute.", upDownCounter,
			func(st *zipline.Stats, p *observer) {
				p.int(int64(st.DedicatedInUse), used...)
				p.int(int64(st.DedicatedOpen-st.DedicatedInUse), idle...)
			}},
		{"db.client.connection.max", "{connection}", "The maximum number of open connections allowed.", upDownCounter,
			func(_ *zipline.Stats, p *observer) { p.int(maxConns, pool) }},
		{"db.client.connection.idle.max", "{connection}", "The maximum number of idle open connections allowed.", upDownCounter,
			func(_ *zipline.Stats, p *observer) { p.int(maxIdle, pool) }},

		// The client-side cache (Client.Cached).
		{"zipline.cache.requests", "{request}", "Reads through the client-side cache, by result: hit (served locally) or miss.", counter,
			func(st *zipline.Stats, p *observer) {
				p.uint(st.Cache.Hits, hit)
				p.uint(st.Cache.Misses, miss)
			}},
		{"zipline.cache.invalidations", "{key}", "Keys the server said changed, and whole flushes, in the client-side cache.", counter,
			func(st *zipline.Stats, p *observer) { p.uint(st.Cache.Invalidations) }},
		{"zipline.cache.removals", "{entry}", "Entries dropped from the client-side cache, by reason: evicted for room, or expired.", counter,
			func(st *zipline.Stats, p *observer) {
				p.uint(st.Cache.Evictions, evicted)
				p.uint(st.Cache.Expirations, expired)
			}},
		{"zipline.cache.entries", "{entry}", "Entries held by the client-side cache.", upDownCounter,
			func(st *zipline.Stats, p *observer) { p.int(st.Cache.Entries) }},
		{"zipline.cache.size", "By", "Bytes held by the client-side cache, entries' bookkeeping included.", upDownCounter,
			func(st *zipline.Stats, p *observer) { p.int(st.Cache.Bytes) }},

		// Compression.
		{"zipline.compression.encodes", "{value}", "Values written with compression on, by outcome: compressed, or skipped (stored as they are).", counter,
			func(st *zipline.Stats, p *observer) {
				p.uint(st.Compression.Compressed, compressed)
				p.uint(st.Compression.Skipped, skipped)
			}},
		{"zipline.compression.decodes", "{value}", "Values read with a compression header, by outcome: decompressed, or invalid (returned as stored).", counter,
			func(st *zipline.Stats, p *observer) {
				p.uint(st.Compression.Decompressed, decompressed)
				p.uint(st.Compression.Invalid, invalid)
			}},
		{"zipline.compression.input.size", "By", "Plaintext bytes of the values stored compressed.", counter,
			func(st *zipline.Stats, p *observer) { p.uint(st.Compression.BytesIn) }},
		{"zipline.compression.output.size", "By", "Stored bytes of the values stored compressed, headers included.", counter,
			func(st *zipline.Stats, p *observer) { p.uint(st.Compression.BytesOut) }},
		{"zipline.compression.ratio", "1", "Stored bytes over plaintext bytes of the values stored compressed (0.4 saves 60%); absent before any value is compressed.", gauge,
			func(st *zipline.Stats, p *observer) {
				if st.Compression.BytesIn > 0 {
					p.float(st.Compression.Ratio())
				}
			}},
	}
}

// poolName is db.client.connection.pool.name as the conventions build it
// when a pool has no name: "server.address:server.port/db.namespace".
func poolName(base []attribute.KeyValue) attribute.KeyValue {
	var addr, port, ns string
	for _, a := range base {
		switch a.Key {
		case semconv.ServerAddressKey:
			addr = a.Value.AsString()
		case semconv.ServerPortKey:
			port = ":" + strconv.FormatInt(a.Value.AsInt64(), 10)
		case semconv.DBNamespaceKey:
			ns = "/" + a.Value.AsString()
		}
	}
	return semconv.DBClientConnectionPoolName(addr + port + ns)
}

// writeSizeAttrs labels the buckets of Stats.WriteSizes: bucket i holds
// writes of 2^i to 2^(i+1)-1 requests, the last one everything larger.
func writeSizeAttrs(n int) []attribute.KeyValue {
	attrs := make([]attribute.KeyValue, n)
	for i := range attrs {
		lo, hi := 1<<i, 1<<(i+1)-1
		var label string
		switch {
		case i == n-1:
			label = strconv.Itoa(lo) + "+"
		case lo == hi:
			label = strconv.Itoa(lo)
		default:
			label = strconv.Itoa(lo) + "-" + strconv.Itoa(hi)
		}
		attrs[i] = attribute.String("zipline.pipeline.write.requests", label)
	}
	return attrs
}

// observer reports one instrument's data points during a collection, each
// with the common attributes and the point's own.
type observer struct {
	read   func(st *zipline.Stats, p *observer)
	ints   metric.Int64Observable
	floats metric.Float64Observable
	attrs  []attribute.KeyValue // common to every point
	set    attribute.Set        // attrs as a set, for points with no others
	o      metric.Observer      // set on the copy that a collection uses
}

func (p *observer) attrOption(extra []attribute.KeyValue) metric.ObserveOption {
	if len(extra) == 0 {
		return metric.WithAttributeSet(p.set)
	}
	all := make([]attribute.KeyValue, 0, len(p.attrs)+len(extra))
	return metric.WithAttributes(append(append(all, p.attrs...), extra...)...)
}

func (p *observer) int(v int64, extra ...attribute.KeyValue) {
	p.o.ObserveInt64(p.ints, v, p.attrOption(extra))
}

// uint reports a cumulative counter, which cannot in practice pass
// MaxInt64 but is clamped there rather than wrap.
func (p *observer) uint(v uint64, extra ...attribute.KeyValue) {
	p.int(int64(min(v, math.MaxInt64)), extra...)
}

func (p *observer) float(v float64, extra ...attribute.KeyValue) {
	p.o.ObserveFloat64(p.floats, v, p.attrOption(extra))
}
