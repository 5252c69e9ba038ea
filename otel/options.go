package ziplineotel

import (
	"net"
	"strconv"

	"github.com/ziplinekv/zipline"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of the tracer and meter this
// package creates, for filtering and views.
const ScopeName = "github.com/ziplinekv/zipline/otel"

// An Option configures Instrument, NewHook or RegisterMetrics.
type Option func(*config)

type config struct {
	tracerProvider trace.TracerProvider
	meterProvider  metric.MeterProvider
	system         string
	queryText      bool
	attrs          []attribute.KeyValue
}

func newConfig(opts []Option) config {
	cfg := config{system: "redis"}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.tracerProvider == nil {
		cfg.tracerProvider = otel.GetTracerProvider()
	}
	if cfg.meterProvider == nil {
		cfg.meterProvider = otel.GetMeterProvider()
	}
	return cfg
}

// WithTracerProvider sets the TracerProvider that creates the spans.
// The default is the global one, otel.GetTracerProvider().
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) { c.tracerProvider = tp }
}

// WithMeterProvider sets the MeterProvider that creates the instruments.
// The default is the global one, otel.GetMeterProvider().
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) { c.meterProvider = mp }
}

// WithDBSystem sets the db.system.name attribute: "redis" by default, the
// value the semantic conventions define; "valkey", for instance, for a
// Valkey server. An empty name keeps the default.
func WithDBSystem(name string) Option {
	return func(c *config) {
		if name != "" {
			c.system = name
		}
	}
}

// WithQueryText records db.query.text on spans, sanitized as the semantic
// conventions require: the command name and a "?" for each argument, such
// as "SET ? ? ? ?" (keys are arguments too, so none is recorded). Batches
// record one such text, or the texts of their commands joined by "; ".
// Texts are cut at a command or argument boundary past 1024 bytes. It is off
// by default.
func WithQueryText() Option {
	return func(c *config) { c.queryText = true }
}

// WithAttributes adds attributes to every span and metric data point, for
// instance to tell apart two clients of the same server. They must have low
// cardinality, and they are recorded as given: never put keys, values or
// credentials in them.
func WithAttributes(attrs ...attribute.KeyValue) Option {
	return func(c *config) { c.attrs = append(c.attrs, attrs...) }
}

// commonAttrs returns the attributes of every span and data point of a
// Client configured by o: the system, the server and the database number,
// then the user's.
//
// The server is o.Addr (or the first seed in o.Addrs), split into
// server.address and server.port; with Network "unix" it is the socket
// path, with no port. db.namespace is o.DB, the database selected when each
// connection is set up: a Client from Dedicated that runs SELECT moves to
// another database, which its spans do not reflect.
func (c *config) commonAttrs(o zipline.Options) []attribute.KeyValue {
	attrs := []attribute.KeyValue{semconv.DBSystemNameKey.String(c.system)}
	addr := o.Addr
	if addr == "" && len(o.Addrs) > 0 {
		addr = o.Addrs[0]
	}
	if addr == "" {
		addr = zipline.DefaultAddr
	}
	if host, port, err := net.SplitHostPort(addr); o.Network != "unix" && err == nil {
		attrs = append(attrs, semconv.ServerAddress(host))
		if n, err := strconv.Atoi(port); err == nil {
			attrs = append(attrs, semconv.ServerPort(n))
		}
	} else {
		attrs = append(attrs, semconv.ServerAddress(addr))
	}
	attrs = append(attrs, semconv.DBNamespace(strconv.Itoa(o.DB)))
	return append(attrs, c.attrs...)
}
