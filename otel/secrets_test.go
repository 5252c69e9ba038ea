package ziplineotel_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/internal/testkit"
	ziplineotel "github.com/ziplinekv/zipline/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// Nothing exported, in any span, event, status, attribute or metric data
// point, contains a key, a value, a username or a password, even with
// db.query.text on, through commands that carry them as arguments (ACL
// SETUSER, AUTH), error replies that quote them, scripts, batches,
// transactions and Watch.
func TestNoSecrets(t *testing.T) {
	const (
		user      = "otel-user-4d1f"
		password  = "pw-7c1f3b9e-secret"
		wrongPass = "wrongpw-0a8e61-secret"
		key       = "key-5e2a0d71-secret"
		field     = "field-83b2c6-secret"
		value     = "value-9b3c44e8-secret"
	)
	secrets := []string{user, password, wrongPass, key, field, value}

	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer tp.Shutdown(context.Background())
	defer mp.Shutdown(context.Background())
	otelOpts := []ziplineotel.Option{
		ziplineotel.WithTracerProvider(tp), ziplineotel.WithMeterProvider(mp), ziplineotel.WithQueryText(),
	}
	ctx := ctxTimeout(t)
	srv := testkit.NewServer(t, testkit.Config{})

	// The user is created through an instrumented client, so that the
	// password goes through the hook as an argument.
	adminOpts := zipline.Options{Addr: srv.Addr, Logger: quiet}
	if err := ziplineotel.Instrument(&adminOpts, otelOpts...); err != nil {
		t.Fatal(err)
	}
	admin, err := zipline.New(adminOpts)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.Do(ctx, "ACL", "SETUSER", user, "on", ">"+password, "~*", "&*", "+@all"); err != nil {
		t.Fatal(err)
	}

	opts := zipline.Options{Addr: srv.Addr, Username: user, Password: password, Logger: quiet}
	if err := ziplineotel.Instrument(&opts, otelOpts...); err != nil {
		t.Fatal(err)
	}
	c, err := zipline.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	unregister, err := ziplineotel.RegisterMetrics(c, opts, otelOpts...)
	if err != nil {
		t.Fatal(err)
	}
	defer unregister()
	if who, err := c.Do(ctx, "ACL", "WHOAMI"); err != nil {
		t.Fatal(err)
	} else if s, _ := who.AsString(); s != user {
		t.Fatalf("connected as %q, want %q", s, user)
	}

	// Successes, which carry the secrets as arguments and replies.
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(c.Set(ctx, key, []byte(value), zipline.EX(time.Minute)))
	if v, err := c.Get(ctx, key); err != nil || string(v) != value {
		t.Fatalf("Get: %q, %v", v, err)
	}
	_, err = c.Do(ctx, "ECHO", value)
	must(err)
	_, err = c.HSet(ctx, key+"h", zipline.FieldValue{Field: field, Value: []byte(value)})
	must(err)
	_, err = c.Do(ctx, "EVAL", "return ARGV[1]", 0, value)
	must(err)
	b := c.Batch()
	b.Set(key, []byte(value))
	b.Get(key)
	b.Do("ECHO", value)
	must(b.Exec(ctx))
	tx := c.Tx()
	tx.Set(key, []byte(value))
	tx.HGet(key+"h", field)
	must(tx.Exec(ctx))
	must(c.Watch(ctx, func(w *zipline.Client) error {
		if _, err := w.Get(ctx, key); err != nil {
			return err
		}
		tx := w.Tx()
		tx.Set(key, []byte(value))
		return tx.Exec(ctx)
	}, key))
	_, err = c.BLPop(ctx, 10*time.Millisecond, key+"list")
	if err != zipline.Nil {
		t.Fatalf("BLPop: %v", err)
	}

	// Failures whose error replies quote arguments, or are made of them.
	failures := []func() error{
		func() error { _, err := c.Do(ctx, "NOSUCHCMD", key, value); return err }, // "with args beginning with: ..."
		func() error { _, err := c.LPush(ctx, key, []byte(value)); return err },   // WRONGTYPE
		func() error {
			_, err := c.Do(ctx, "EVAL", "return {err = ARGV[1] .. ' as prefix'}", 0, value)
			return err
		},
		func() error {
			_, err := c.Do(ctx, "EVAL", "return redis.error_reply('ERR ' .. ARGV[1])", 0, value)
			return err
		},
		func() error { _, err := c.Do(ctx, "EVAL", "error(ARGV[1])", 0, value); return err },
		func() error {
			tx := c.Tx()
			tx.Do("NOSUCHCMD", key, value) // refused while queued: EXECABORT
			return tx.Exec(ctx)
		},
	}
	for i, f := range failures {
		if err := f(); err == nil {
			t.Fatalf("failure %d did not fail", i)
		}
	}
	// AUTH, right and wrong, on a dedicated connection where it is allowed.
	d, err := c.Dedicated(ctx)
	must(err)
	_, err = d.Do(ctx, "AUTH", user, password)
	must(err)
	if _, err := d.Do(ctx, "AUTH", user, wrongPass); err == nil {
		t.Fatal("AUTH with a wrong password succeeded")
	}
	d.Close()

	// Positive controls: markers recorded on purpose in a span attribute,
	// an event and a metric attribute must show up in the dump, proving
	// that it covers them.
	controls := []string{"control-span-attr", "control-event-attr", "control-metric-attr"}
	_, span := tp.Tracer("control").Start(ctx, "control", trace.WithAttributes(attribute.String("c", controls[0])))
	span.AddEvent("e", trace.WithAttributes(attribute.String("c", controls[1])))
	span.End()
	ctr, err := mp.Meter("control").Int64Counter("control")
	must(err)
	ctr.Add(ctx, 1, metric.WithAttributes(attribute.String("c", controls[2])))

	spans := rec.Ended()
	var rm metricdata.ResourceMetrics
	must(reader.Collect(ctx, &rm))
	dump := dumpTelemetry(t, spans, rm)
	for _, c := range controls {
		if !strings.Contains(dump, c) {
			t.Fatalf("the dump misses the control %q: it does not cover everything", c)
		}
	}
	if len(spans) < 20 {
		t.Fatalf("only %d spans: %v", len(spans), spanNames(spans))
	}
	if _, ok := findMetric(rm, "db.client.operation.duration"); !ok {
		t.Fatal("no durations recorded")
	}
	for _, s := range secrets {
		if i := strings.Index(dump, s); i >= 0 {
			t.Errorf("secret %q exported: ...%s...", s, dump[max(0, i-200):min(len(dump), i+len(s)+50)])
		}
	}

	// db.query.text holds command names and placeholders only, and the
	// connection's own AUTH (in its handshake) is no span.
	textRe := regexp.MustCompile(`^[A-Z]+( \?)*(; [A-Z]+( \?)*)*$`)
	auths := 0
	for _, s := range spans {
		for _, kv := range s.Attributes() {
			if kv.Key == "db.query.text" && !textRe.MatchString(kv.Value.AsString()) {
				t.Errorf("%s: db.query.text %q", s.Name(), kv.Value.AsString())
			}
		}
		if s.Name() == "AUTH" || s.Name() == "HELLO" {
			auths++
		}
	}
	if auths != 2 {
		t.Errorf("%d AUTH or HELLO spans, want the 2 sent with Do", auths)
	}
}

// dumpTelemetry renders everything an exporter would send, as JSON and as
// Go values, for searching.
func dumpTelemetry(t *testing.T, spans []sdktrace.ReadOnlySpan, rm metricdata.ResourceMetrics) string {
	t.Helper()
	var b bytes.Buffer
	stubs := tracetest.SpanStubsFromReadOnlySpans(spans)
	for _, v := range []any{stubs, rm} {
		j, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(j)
		fmt.Fprintf(&b, "\n%+v\n", v)
	}
	return b.String()
}
