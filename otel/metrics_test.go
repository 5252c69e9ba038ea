package ziplineotel_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/codec"
	"github.com/ziplinekv/zipline/internal/testkit"
	ziplineotel "github.com/ziplinekv/zipline/otel"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// db.client.operation.duration: one measurement per command, batch or
// transaction, with the span's attributes and duration, in the buckets the
// conventions advise.
func TestOperationDuration(t *testing.T) {
	r := newRig(t, zipline.Options{})
	base := r.serverAttrs("redis")
	ctx := ctxTimeout(t)
	if err := r.c.Set(ctx, "str", []byte("v")); err != nil {
		t.Fatal(err)
	}
	if _, err := r.c.Get(ctx, "missing"); !errors.Is(err, zipline.Nil) {
		t.Fatal(err)
	}
	if _, err := r.c.LPush(ctx, "str", []byte("x")); err == nil {
		t.Fatal("LPush on a string: no error")
	}
	b := r.c.Batch()
	b.Set("a", []byte("1"))
	b.Set("b", []byte("2"))
	if err := b.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	spans := r.ended()

	m, ok := findMetric(r.collect(t), "db.client.operation.duration")
	if !ok {
		t.Fatal("no db.client.operation.duration")
	}
	if m.Unit != "s" {
		t.Errorf("unit %q, want s", m.Unit)
	}
	h, ok := m.Data.(metricdata.Histogram[float64])
	if !ok {
		t.Fatalf("data %T, want a float64 histogram", m.Data)
	}
	want := map[string]map[string]string{
		"SET":          with(base, "db.operation.name", "SET"),
		"GET":          with(base, "db.operation.name", "GET"),
		"LPUSH":        with(base, "db.operation.name", "LPUSH", "error.type", "WRONGTYPE", "db.response.status_code", "WRONGTYPE"),
		"PIPELINE SET": with(base, "db.operation.name", "PIPELINE SET"),
	}
	if len(h.DataPoints) != len(want) {
		t.Errorf("%d data points, want %d", len(h.DataPoints), len(want))
	}
	buckets := []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10}
	for _, dp := range h.DataPoints {
		got := attrs(dp.Attributes.ToSlice())
		op := got["db.operation.name"]
		if d := diffAttrs(got, want[op]); d != "" {
			t.Errorf("%s: attributes: %s", op, d)
		}
		if dp.Count != 1 {
			t.Errorf("%s: count %d, want 1", op, dp.Count)
		}
		if !slices.Equal(dp.Bounds, buckets) {
			t.Errorf("%s: bounds %v, want %v", op, dp.Bounds, buckets)
		}
		// Each measurement equals its span's duration.
		i := slices.IndexFunc(spans, func(s sdkSpan) bool { return s.Name() == op })
		if i < 0 {
			t.Errorf("no span %s", op)
			continue
		}
		d := spans[i].EndTime().Sub(spans[i].StartTime()).Seconds()
		if math.Abs(dp.Sum-d) > 1e-6 || d <= 0 {
			t.Errorf("%s: duration %gs, span %gs", op, dp.Sum, d)
		}
	}
}

// point is one data point of an observable instrument.
type point struct {
	attrs map[string]string
	value float64
}

// observed returns the points of the metric name, checking its unit and
// instrument kind ("counter", "updown" or "gauge").
func observed(t *testing.T, rm metricdata.ResourceMetrics, name, unit, kind string) []point {
	t.Helper()
	m, ok := findMetric(rm, name)
	if !ok {
		t.Errorf("no metric %s", name)
		return nil
	}
	if m.Unit != unit {
		t.Errorf("%s: unit %q, want %q", name, m.Unit, unit)
	}
	if m.Description == "" {
		t.Errorf("%s: no description", name)
	}
	var pts []point
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		if got := map[bool]string{true: "counter", false: "updown"}[d.IsMonotonic]; got != kind {
			t.Errorf("%s: a %s, want a %s", name, got, kind)
		}
		for _, dp := range d.DataPoints {
			pts = append(pts, point{attrs(dp.Attributes.ToSlice()), float64(dp.Value)})
		}
	case metricdata.Gauge[float64]:
		if kind != "gauge" {
			t.Errorf("%s: a gauge, want a %s", name, kind)
		}
		for _, dp := range d.DataPoints {
			pts = append(pts, point{attrs(dp.Attributes.ToSlice()), dp.Value})
		}
	default:
		t.Errorf("%s: data %T", name, m.Data)
	}
	return pts
}

// value returns the value of the point with exactly base plus kv as
// attributes, failing the test if there is none.
func value(t *testing.T, pts []point, name string, base map[string]string, kv ...string) float64 {
	t.Helper()
	want := with(base, kv...)
	for _, p := range pts {
		if diffAttrs(p.attrs, want) == "" {
			return p.value
		}
	}
	t.Errorf("%s: no point with attributes %v among %v", name, kv, pts)
	return math.NaN()
}

// The observable instruments report c.Stats(): the shared connection, the
// dedicated pool, compression; and stop once unregistered.
func TestStatsMetrics(t *testing.T) {
	r := newRig(t, zipline.Options{
		HealthCheckInterval: -1, // no PING of its own to count
		MaxDedicatedConns:   8,
		MaxIdleDedicated:    2,
		Compression:         zipline.Compression{Backend: codec.LZ4},
	})
	ctx := ctxTimeout(t)
	unregister, err := ziplineotel.RegisterMetrics(r.c, r.opts, ziplineotel.WithMeterProvider(r.mp))
	if err != nil {
		t.Fatal(err)
	}
	base := r.serverAttrs("redis")
	pool := "127.0.0.1:" + base["server.port"] + "/0"

	big := bytes.Repeat([]byte("compressible "), 100)
	if err := r.c.Set(ctx, "big", big); err != nil {
		t.Fatal(err)
	}
	if err := r.c.Set(ctx, "small", []byte("v")); err != nil {
		t.Fatal(err)
	}
	if v, err := r.c.Get(ctx, "big"); err != nil || !bytes.Equal(v, big) {
		t.Fatalf("Get big: %v", err)
	}
	d, err := r.c.Dedicated(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Ping(ctx); err != nil {
		t.Fatal(err)
	}

	// A request in flight on a paused server.
	resume := testkit.Pause(t, r.srv)
	done := make(chan error, 1)
	go func() { _, err := r.c.Get(ctx, "small"); done <- err }()
	for deadline := time.Now().Add(5 * time.Second); r.c.Stats().InFlight != 1; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the GET never went in flight")
		}
	}
	rm := r.collect(t)
	resume()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	st := r.c.Stats()

	g := func(name, unit, kind string, kv ...string) float64 {
		t.Helper()
		return value(t, observed(t, rm, name, unit, kind), name, base, kv...)
	}
	if v := g("zipline.pipeline.request.in_flight", "{request}", "updown"); v != 1 {
		t.Errorf("in flight %v, want 1", v)
	}
	if v := g("zipline.pipeline.request.queued", "{request}", "updown"); v != 0 {
		t.Errorf("queued %v, want 0", v)
	}
	if v := g("zipline.pipeline.pending.size", "By", "updown"); v <= 0 {
		t.Errorf("pending bytes %v, want some", v)
	}
	if v := g("zipline.pipeline.requests", "{request}", "counter"); v != float64(st.Requests) || v < 4 {
		t.Errorf("requests %v, Stats %d", v, st.Requests)
	}
	writes := observed(t, rm, "zipline.pipeline.writes", "{write}", "counter")
	if len(writes) != len(st.WriteSizes) {
		t.Errorf("%d write-size buckets, want %d", len(writes), len(st.WriteSizes))
	}
	var sum float64
	for _, p := range writes {
		sum += p.value
	}
	if sum != float64(st.Writes) || sum < 4 {
		t.Errorf("writes %v over the buckets, Stats %d", sum, st.Writes)
	}
	for label, i := range map[string]int{"1": 0, "2-3": 1, "4-7": 2, "1024-2047": 10, "2048+": 11} {
		v := value(t, writes, "zipline.pipeline.writes", base, "zipline.pipeline.write.requests", label)
		if v != float64(st.WriteSizes[i]) {
			t.Errorf("writes of %s requests: %v, Stats %d", label, v, st.WriteSizes[i])
		}
	}
	if v := g("zipline.pipeline.reconnects", "{reconnect}", "counter"); v != 0 {
		t.Errorf("reconnects %v, want 0", v)
	}

	conns := observed(t, rm, "db.client.connection.count", "{connection}", "updown")
	if v := value(t, conns, "used", base, "db.client.connection.pool.name", pool, "db.client.connection.state", "used"); v != 1 {
		t.Errorf("dedicated connections used: %v, want 1", v)
	}
	if v := value(t, conns, "idle", base, "db.client.connection.pool.name", pool, "db.client.connection.state", "idle"); v != 0 {
		t.Errorf("dedicated connections idle: %v, want 0", v)
	}
	if v := g("db.client.connection.max", "{connection}", "updown", "db.client.connection.pool.name", pool); v != 8 {
		t.Errorf("max connections %v, want 8", v)
	}
	if v := g("db.client.connection.idle.max", "{connection}", "updown", "db.client.connection.pool.name", pool); v != 2 {
		t.Errorf("max idle connections %v, want 2", v)
	}

	if v := g("zipline.compression.encodes", "{value}", "counter", "zipline.compression.outcome", "compressed"); v != 1 {
		t.Errorf("compressed %v, want 1", v)
	}
	if v := g("zipline.compression.encodes", "{value}", "counter", "zipline.compression.outcome", "skipped"); v != 1 {
		t.Errorf("skipped %v, want 1", v)
	}
	if v := g("zipline.compression.decodes", "{value}", "counter", "zipline.compression.outcome", "decompressed"); v != 1 {
		t.Errorf("decompressed %v, want 1", v)
	}
	if v := g("zipline.compression.decodes", "{value}", "counter", "zipline.compression.outcome", "invalid"); v != 0 {
		t.Errorf("invalid %v, want 0", v)
	}
	cs := st.Compression
	if v := g("zipline.compression.input.size", "By", "counter"); v != float64(len(big)) || v != float64(cs.BytesIn) {
		t.Errorf("compression input %v bytes, want %d", v, len(big))
	}
	if v := g("zipline.compression.output.size", "By", "counter"); v != float64(cs.BytesOut) || v <= 0 || v >= float64(len(big)) {
		t.Errorf("compression output %v bytes, Stats %d", v, cs.BytesOut)
	}
	if v := g("zipline.compression.ratio", "1", "gauge"); v != cs.Ratio() || v <= 0 || v >= 1 {
		t.Errorf("compression ratio %v, Stats %v", v, cs.Ratio())
	}

	// The lent connection comes back idle; a restart counts a reconnect. An
	// idle connection finds out its server went away when it is next used, so
	// the test uses it until it has reconnected (the first call may fail with
	// ErrConnLost).
	d.Close()
	testkit.Restart(t, r.srv)
	for i := 0; r.c.Stats().Reconnects == 0; i++ {
		if i == 100 {
			t.Fatal("no reconnect after 100 calls")
		}
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		_, err := r.c.Get(cctx, "small")
		cancel()
		if err != nil && !errors.Is(err, zipline.Nil) && !errors.Is(err, zipline.ErrConnLost) && !errors.Is(err, zipline.ErrNotSent) {
			t.Fatalf("Get after restart: %v", err)
		}
	}
	rm = r.collect(t)
	conns = observed(t, rm, "db.client.connection.count", "{connection}", "updown")
	if v := value(t, conns, "used", base, "db.client.connection.pool.name", pool, "db.client.connection.state", "used"); v != 0 {
		t.Errorf("dedicated connections used after Close: %v, want 0", v)
	}
	if v := g("zipline.pipeline.reconnects", "{reconnect}", "counter"); v != 1 {
		t.Errorf("reconnects %v, want 1", v)
	}

	if err := unregister(); err != nil {
		t.Fatal(err)
	}
	for _, sm := range r.collect(t).ScopeMetrics {
		for _, m := range sm.Metrics {
			if strings.HasPrefix(m.Name, "zipline.") || strings.HasPrefix(m.Name, "db.client.connection.") {
				t.Errorf("%s still reported after unregister", m.Name)
			}
		}
	}
	if _, err := ziplineotel.RegisterMetrics(nil, r.opts); err == nil {
		t.Error("RegisterMetrics(nil): no error")
	}
}

// Before anything is compressed there is no ratio, rather than a ratio
// of 0 that would read as perfect compression.
func TestNoRatioBeforeCompression(t *testing.T) {
	r := newRig(t, zipline.Options{})
	if _, err := ziplineotel.RegisterMetrics(r.c, r.opts, ziplineotel.WithMeterProvider(r.mp)); err != nil {
		t.Fatal(err)
	}
	if err := r.c.Set(context.Background(), "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	rm := r.collect(t)
	if _, ok := findMetric(rm, "zipline.pipeline.requests"); !ok {
		t.Fatal("nothing observed")
	}
	if m, ok := findMetric(rm, "zipline.compression.ratio"); ok {
		if g, ok := m.Data.(metricdata.Gauge[float64]); !ok || len(g.DataPoints) != 0 {
			t.Errorf("ratio reported before compression: %+v", m.Data)
		}
	}
}

// The client-side cache's metrics report Stats().Cache: hits and misses by
// result, invalidations, entries and bytes.
func TestCacheMetrics(t *testing.T) {
	r := newRig(t, zipline.Options{ClientCache: zipline.ClientCache{MaxBytes: 1 << 20}})
	if _, err := ziplineotel.RegisterMetrics(r.c, r.opts, ziplineotel.WithMeterProvider(r.mp)); err != nil {
		t.Fatal(err)
	}
	ctx := ctxTimeout(t)
	if err := r.c.Set(ctx, "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	view := r.c.Cached(time.Minute)
	for range 5 {
		if v, err := view.Get(ctx, "k"); err != nil || string(v) != "v" {
			t.Fatalf("cached Get: %q %v", v, err)
		}
	}
	if _, err := view.Get(ctx, "missing"); !errors.Is(err, zipline.Nil) {
		t.Fatalf("missing key: %v", err)
	}
	st := r.c.Stats().Cache
	if st.Hits == 0 || st.Misses == 0 || st.Entries == 0 {
		t.Fatalf("stats %+v: want hits, misses and entries", st)
	}
	rm := r.collect(t)
	base := r.serverAttrs("redis")
	g := func(name, unit, kind string, kv ...string) float64 {
		t.Helper()
		return value(t, observed(t, rm, name, unit, kind), name, base, kv...)
	}
	for _, c := range []struct {
		name, unit, kind string
		kv               []string
		want             float64
	}{
		{"zipline.cache.requests", "{request}", "counter", []string{"zipline.cache.result", "hit"}, float64(st.Hits)},
		{"zipline.cache.requests", "{request}", "counter", []string{"zipline.cache.result", "miss"}, float64(st.Misses)},
		{"zipline.cache.invalidations", "{key}", "counter", nil, float64(st.Invalidations)},
		{"zipline.cache.entries", "{entry}", "updown", nil, float64(st.Entries)},
		{"zipline.cache.size", "By", "updown", nil, float64(st.Bytes)},
	} {
		if v := g(c.name, c.unit, c.kind, c.kv...); v != c.want {
			t.Errorf("%s %v: %v, Stats %v", c.name, c.kv, v, c.want)
		}
	}
}
