package ziplineotel

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ziplinekv/zipline"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// durationBuckets are the bucket boundaries, in seconds, that the semantic
// conventions advise for db.client.operation.duration.
var durationBuckets = []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10}

// Instrument adds the hook of NewHook to opts.Hooks, after the hooks
// already there, so that its spans and durations describe the commands as
// they go to the server. Call it once opts has its address and database,
// and before zipline.New.
func Instrument(opts *zipline.Options, o ...Option) error {
	if opts == nil {
		return errors.New("ziplineotel: Instrument needs non-nil Options")
	}
	h, err := NewHook(*opts, o...)
	if err != nil {
		return err
	}
	opts.Hooks = append(opts.Hooks[:len(opts.Hooks):len(opts.Hooks)], h) // never into a shared array
	return nil
}

// NewHook returns a hook that traces every command, batch and transaction
// of a Client configured by opts, and records their durations in the
// db.client.operation.duration histogram. opts gives the server and
// database attributes; the hook does not keep it. Use NewHook instead of
// Instrument to place the hook elsewhere in Options.Hooks.
func NewHook(opts zipline.Options, o ...Option) (zipline.Hook, error) {
	cfg := newConfig(o)
	meter := cfg.meterProvider.Meter(ScopeName, metric.WithSchemaURL(semconv.SchemaURL))
	duration, err := meter.Float64Histogram("db.client.operation.duration",
		metric.WithUnit("s"),
		metric.WithDescription("Duration of database client operations."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	if err != nil {
		return nil, err
	}
	return &hook{
		tracer:     cfg.tracerProvider.Tracer(ScopeName, trace.WithSchemaURL(semconv.SchemaURL)),
		duration:   duration,
		attrs:      cfg.commonAttrs(opts),
		system:     cfg.system,
		queryText:  cfg.queryText,
		clientKind: trace.WithSpanKind(trace.SpanKindClient),
	}, nil
}

// hook is the zipline.Hook behind NewHook.
type hook struct {
	tracer     trace.Tracer
	duration   metric.Float64Histogram
	attrs      []attribute.KeyValue // on every span and data point
	system     string               // db.system.name, the span name of last resort
	queryText  bool
	clientKind trace.SpanStartOption

	// ops caches the attributes of each operation name, which are the
	// same for every span and successful measurement of it. Do accepts any
	// name, so the cache stops growing at maxCachedOps names.
	ops  sync.Map // operation name → *opAttrs
	nops atomic.Int32
}

const maxCachedOps = 512

// opAttrs are the attributes of one operation name.
type opAttrs struct {
	span []attribute.KeyValue // h.attrs and db.operation.name
	ok   metric.RecordOption  // the same, for a successful measurement
}

func (h *hook) opAttrs(name string) *opAttrs {
	if a, ok := h.ops.Load(name); ok {
		return a.(*opAttrs)
	}
	span := append(h.attrs[:len(h.attrs):len(h.attrs)], semconv.DBOperationName(name))
	a := &opAttrs{span: span, ok: metric.WithAttributeSet(attribute.NewSet(span...))}
	if h.nops.Load() < maxCachedOps {
		if _, loaded := h.ops.LoadOrStore(name, a); !loaded {
			h.nops.Add(1)
		}
	}
	return a
}

// operation is what a span and a duration describe: one command, or one
// batch or transaction.
type operation struct {
	name      string // db.operation.name; empty if unknown
	batchSize int    // db.operation.batch.size; -1 when not a batch
	text      string // db.query.text; empty when not recorded
}

// DialHook leaves dialing alone: connections are not operations.
func (h *hook) DialHook(next zipline.DialFunc) zipline.DialFunc { return next }

func (h *hook) ProcessHook(next zipline.ProcessFunc) zipline.ProcessFunc {
	return func(ctx context.Context, cmd *zipline.Cmd) error {
		op := operation{name: cmd.Name(), batchSize: -1}
		if h.queryText {
			var t queryText
			t.command(op.name, len(cmd.Args()))
			op.text = t.String()
		}
		ctx, span, start := h.start(ctx, op)
		err := next(ctx, cmd)
		failure := err
		if failure == nil {
			_, failure = cmd.Reply()
		}
		h.end(ctx, span, start, op, failure)
		return err
	}
}

func (h *hook) ProcessBatchHook(next zipline.ProcessBatchFunc) zipline.ProcessBatchFunc {
	return func(ctx context.Context, cmds []*zipline.Cmd) error {
		op, tx := h.batchOperation(cmds)
		ctx, span, start := h.start(ctx, op)
		err := next(ctx, cmds)
		failure := err
		if failure == nil {
			failure = batchError(cmds, tx)
		}
		h.end(ctx, span, start, op, failure)
		return err
	}
}

// batchOperation names a batch as the Redis conventions name pipelines
// and transactions: "PIPELINE" or "MULTI", followed by the command name
// when every command has the same one ("MULTI INCR"). The batch size
// counts the commands given, not the MULTI and EXEC around them. A
// pipeline of one command is that command, as the conventions require; a
// transaction of one stays a transaction ("MULTI SET"), with no size.
func (h *hook) batchOperation(cmds []*zipline.Cmd) (op operation, tx bool) {
	names := make([]string, len(cmds))
	for i, c := range cmds {
		names[i] = c.Name()
	}
	n := len(cmds)
	tx = n >= 2 && names[0] == "MULTI" && names[n-1] == "EXEC"
	if tx {
		cmds, names = cmds[1:n-1], names[1:n-1]
	}
	same := true
	for _, name := range names {
		same = same && name == names[0]
	}
	op.batchSize = len(cmds)
	prefix := "PIPELINE"
	if tx {
		prefix = "MULTI"
	}
	switch {
	case len(cmds) == 1 && !tx:
		op.name = names[0]
	case len(cmds) == 0 || !same:
		op.name = prefix
	default:
		op.name = prefix + " " + names[0]
	}
	if op.batchSize == 1 {
		op.batchSize = -1
	}
	if h.queryText {
		op.text = batchText(cmds, names)
	}
	return op, tx
}

// start starts op's span, with the attributes that sampling may use.
func (h *hook) start(ctx context.Context, op operation) (context.Context, trace.Span, time.Time) {
	name, attrs := op.name, h.attrs
	if name != "" {
		attrs = h.opAttrs(name).span
	} else {
		name = h.system // the conventions' fallback
	}
	if op.batchSize >= 0 || op.text != "" {
		attrs = attrs[:len(attrs):len(attrs)] // shared: append copies
		if op.batchSize >= 0 {
			attrs = append(attrs, semconv.DBOperationBatchSize(op.batchSize))
		}
		if op.text != "" {
			attrs = append(attrs, semconv.DBQueryText(op.text))
		}
	}
	start := time.Now()
	ctx, span := h.tracer.Start(ctx, name, h.clientKind, trace.WithTimestamp(start), trace.WithAttributes(attrs...))
	return ctx, span, start
}

// end ends op's span and records its duration, the same for both, with
// err (nil on success) as error.type, db.response.status_code and the span
// status.
func (h *hook) end(ctx context.Context, span trace.Span, start time.Time, op operation, err error) {
	now := time.Now()
	if errors.Is(err, zipline.Nil) { // a missing key is an answer, not a failure
		err = nil
	}
	attrs, point := h.attrs, metric.RecordOption(nil)
	if op.name != "" {
		a := h.opAttrs(op.name)
		attrs, point = a.span, a.ok
	}
	if err != nil {
		errAttrs := errorAttrs(err)
		span.SetAttributes(errAttrs...)
		span.SetStatus(codes.Error, statusDescription(err))
		attrs, point = append(attrs[:len(attrs):len(attrs)], errAttrs...), nil
	}
	span.End(trace.WithTimestamp(now))
	if point == nil {
		point = metric.WithAttributes(attrs...)
	}
	h.duration.Record(ctx, now.Sub(start).Seconds(), point)
}

// batchError returns the error that Batch.Exec returns for these replies,
// nil if there is none: for a pipeline, the first error reply; for a
// transaction, MULTI's or EXEC's error, ErrTxFailed when a watched key
// changed, or the first error among EXEC's results.
func batchError(cmds []*zipline.Cmd, tx bool) error {
	if !tx {
		for _, c := range cmds {
			if _, err := c.Reply(); err != nil && !errors.Is(err, zipline.Nil) {
				return err
			}
		}
		return nil
	}
	if _, err := cmds[0].Reply(); err != nil {
		return err
	}
	exec, err := cmds[len(cmds)-1].Reply()
	switch {
	case err != nil:
		return err
	case exec.IsNil():
		return zipline.ErrTxFailed
	}
	results, err := exec.AsSlice()
	if err != nil {
		return err
	}
	for _, r := range results {
		// The As methods return an error reply's *ServerError.
		var se *zipline.ServerError
		if _, err := r.AsBool(); errors.As(err, &se) {
			return se
		}
	}
	return nil
}

// maxQueryText bounds db.query.text, which the conventions allow to
// truncate.
const maxQueryText = 1024

// queryText builds a sanitized db.query.text: command names, and "?" for
// each argument, so that it can hold no key or value. Past maxQueryText
// it drops whatever does not fit whole.
type queryText struct {
	b    strings.Builder
	full bool
}

func (t *queryText) write(s string) bool {
	if t.full || t.b.Len()+len(s) > maxQueryText {
		t.full = true
		return false
	}
	t.b.WriteString(s)
	return true
}

// command appends a command of nargs arguments.
func (t *queryText) command(name string, nargs int) {
	if !t.write(name) {
		return
	}
	for range nargs {
		if !t.write(" ?") {
			return
		}
	}
}

func (t *queryText) String() string { return t.b.String() }

// batchText is the text of a batch: the commands' common text, or their
// texts joined by "; ".
func batchText(cmds []*zipline.Cmd, names []string) string {
	texts := make([]string, len(cmds))
	same := true
	for i, c := range cmds {
		var t queryText
		t.command(names[i], len(c.Args()))
		texts[i] = t.String()
		same = same && texts[i] == texts[0]
	}
	if len(texts) == 0 {
		return ""
	}
	if same {
		return texts[0]
	}
	var t queryText
	t.write(texts[0])
	for _, s := range texts[1:] {
		if !t.write("; " + s) {
			break
		}
	}
	return t.String()
}
