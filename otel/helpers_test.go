package ziplineotel_test

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/internal/testkit"
	ziplineotel "github.com/ziplinekv/zipline/otel"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.uber.org/goleak"
)

// Clients and servers are closed by each test; goleak checks that their
// goroutines are gone.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var quiet = slog.New(slog.DiscardHandler)

// rig is an instrumented Client with in-memory exporters.
type rig struct {
	srv    *testkit.Server
	opts   zipline.Options // as given to zipline.New, hooks included
	c      *zipline.Client
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
	tp     *sdktrace.TracerProvider
	mp     *sdkmetric.MeterProvider
}

// newRig starts a redis-server (unless opts.Addr is set, then srv is nil)
// and an instrumented Client of it, configured by opts and o.
func newRig(t *testing.T, opts zipline.Options, o ...ziplineotel.Option) *rig {
	t.Helper()
	r := &rig{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	r.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(r.spans))
	r.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(r.reader))
	t.Cleanup(func() {
		r.tp.Shutdown(context.Background())
		r.mp.Shutdown(context.Background())
	})
	if opts.Addr == "" {
		r.srv = testkit.NewServer(t, testkit.Config{})
		opts.Addr = r.srv.Addr
	}
	if opts.Logger == nil {
		opts.Logger = quiet
	}
	o = append([]ziplineotel.Option{ziplineotel.WithTracerProvider(r.tp), ziplineotel.WithMeterProvider(r.mp)}, o...)
	if err := ziplineotel.Instrument(&opts, o...); err != nil {
		t.Fatal(err)
	}
	c, err := zipline.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	r.opts, r.c = opts, c
	return r
}

// ended returns the spans ended so far and forgets them.
func (r *rig) ended() []sdktrace.ReadOnlySpan {
	s := r.spans.Ended()
	r.spans.Reset()
	return s
}

// only returns the one span ended since the last call, failing otherwise.
func (r *rig) only(t *testing.T) sdktrace.ReadOnlySpan {
	t.Helper()
	s := r.ended()
	if len(s) != 1 {
		t.Fatalf("%d spans ended, want 1: %v", len(s), spanNames(s))
	}
	return s[0]
}

func (r *rig) collect(t *testing.T) metricdata.ResourceMetrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	return rm
}

func spanNames(spans []sdktrace.ReadOnlySpan) []string {
	var names []string
	for _, s := range spans {
		names = append(names, s.Name())
	}
	return names
}

// attrs renders attributes as a map of key to value, for comparisons.
func attrs(kvs []attribute.KeyValue) map[string]string {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value.Emit()
	}
	return m
}

// serverAttrs are the attributes every span and data point of r carries.
func (r *rig) serverAttrs(system string) map[string]string {
	return map[string]string{
		"db.system.name": system,
		"server.address": "127.0.0.1",
		"server.port":    strconv.Itoa(r.srv.Port),
		"db.namespace":   strconv.Itoa(r.opts.DB),
	}
}

// with returns base plus the pairs k1, v1, k2, v2...
func with(base map[string]string, kv ...string) map[string]string {
	m := maps.Clone(base)
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// diffAttrs describes how got differs from want; "" if equal.
func diffAttrs(got, want map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if g, ok := got[k]; !ok {
			fmt.Fprintf(&b, "missing %s=%q; ", k, want[k])
		} else if g != want[k] {
			fmt.Fprintf(&b, "%s=%q, want %q; ", k, g, want[k])
		}
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[k]; !ok {
			fmt.Fprintf(&b, "unexpected %s=%q; ", k, got[k])
		}
	}
	return b.String()
}

func ctxTimeout(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// findMetric returns the metric named name, and whether there is one.
func findMetric(rm metricdata.ResourceMetrics, name string) (metricdata.Metrics, bool) {
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				return m, true
			}
		}
	}
	return metricdata.Metrics{}, false
}

type sdkSpan = sdktrace.ReadOnlySpan
