package ziplineotel_test

import (
	"context"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/internal/testkit"
	ziplineotel "github.com/ziplinekv/zipline/otel"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// checkSpan checks a span's name, kind, attributes (exactly), status and
// scope.
func checkSpan(t *testing.T, s sdktrace.ReadOnlySpan, name string, want map[string]string, status codes.Code) {
	t.Helper()
	if s.Name() != name {
		t.Errorf("span name %q, want %q", s.Name(), name)
	}
	if s.SpanKind() != trace.SpanKindClient {
		t.Errorf("%s: kind %v, want client", name, s.SpanKind())
	}
	if d := diffAttrs(attrs(s.Attributes()), want); d != "" {
		t.Errorf("%s: attributes: %s", name, d)
	}
	if s.Status().Code != status {
		t.Errorf("%s: status %v %q, want %v", name, s.Status().Code, s.Status().Description, status)
	}
	if got := s.InstrumentationScope().Name; got != ziplineotel.ScopeName {
		t.Errorf("%s: scope %q, want %q", name, got, ziplineotel.ScopeName)
	}
	if len(s.Events()) != 0 {
		t.Errorf("%s: %d events, want none", name, len(s.Events()))
	}
}

// One span per command, child of the caller's span, with the conventions'
// attributes; a missing key is not an error.
func TestCommandSpans(t *testing.T) {
	r := newRig(t, zipline.Options{DB: 2})
	base := r.serverAttrs("redis")
	parent, root := r.tp.Tracer("test").Start(ctxTimeout(t), "parent")

	if err := r.c.Set(parent, "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	s := r.only(t)
	checkSpan(t, s, "SET", with(base, "db.operation.name", "SET"), codes.Unset)
	if s.Parent().SpanID() != root.SpanContext().SpanID() {
		t.Errorf("SET's parent is %v, want the caller's span %v", s.Parent().SpanID(), root.SpanContext().SpanID())
	}
	if !s.EndTime().After(s.StartTime()) {
		t.Errorf("SET span from %v to %v", s.StartTime(), s.EndTime())
	}

	if _, err := r.c.Get(parent, "missing"); !errors.Is(err, zipline.Nil) {
		t.Fatalf("Get of a missing key: %v, want Nil", err)
	}
	checkSpan(t, r.only(t), "GET", with(base, "db.operation.name", "GET"), codes.Unset)

	// The name is the one sent, which zipline upper-cases.
	if _, err := r.c.Do(parent, "hset", "h", "f", "1"); err != nil {
		t.Fatal(err)
	}
	checkSpan(t, r.only(t), "HSET", with(base, "db.operation.name", "HSET"), codes.Unset)
	root.End()
	r.ended()

	// A blocking command runs on a dedicated connection, still traced.
	if _, err := r.c.BLPop(ctxTimeout(t), 10*time.Millisecond, "nolist"); !errors.Is(err, zipline.Nil) {
		t.Fatalf("BLPop: %v, want Nil", err)
	}
	checkSpan(t, r.only(t), "BLPOP", with(base, "db.operation.name", "BLPOP"), codes.Unset)
}

// An error reply sets error.type and db.response.status_code to its
// prefix, and the span status to Error with no description, since the
// reply's text can quote arguments.
func TestErrorReplySpan(t *testing.T) {
	r := newRig(t, zipline.Options{})
	base := r.serverAttrs("redis")
	ctx := ctxTimeout(t)
	if err := r.c.Set(ctx, "str", []byte("v")); err != nil {
		t.Fatal(err)
	}
	r.ended()
	_, err := r.c.LPush(ctx, "str", []byte("x"))
	var se *zipline.ServerError
	if !errors.As(err, &se) || se.Prefix != "WRONGTYPE" {
		t.Fatalf("LPush on a string: %v, want WRONGTYPE", err)
	}
	s := r.only(t)
	checkSpan(t, s, "LPUSH", with(base, "db.operation.name", "LPUSH", "error.type", "WRONGTYPE", "db.response.status_code", "WRONGTYPE"), codes.Error)
	if s.Status().Description != "" {
		t.Errorf("status description %q, want none for an error reply", s.Status().Description)
	}

	if _, err := r.c.Do(ctx, "NOSUCHCMD", "arg"); !errors.As(err, &se) {
		t.Fatalf("unknown command: %v, want an error reply", err)
	}
	checkSpan(t, r.only(t), "NOSUCHCMD", with(base, "db.operation.name", "NOSUCHCMD", "error.type", "ERR", "db.response.status_code", "ERR"), codes.Error)
}

// A connection lost under a request, and a request whose context ends,
// are failures with zipline's and context's error names and messages.
func TestConnectionErrorSpans(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{})
	p := testkit.NewProxy(t, srv.Addr)
	r := newRig(t, zipline.Options{Addr: p.Addr(), HealthCheckInterval: -1})
	_, port, _ := strings.Cut(p.Addr(), ":")
	base := map[string]string{"db.system.name": "redis", "server.address": "127.0.0.1", "server.port": port, "db.namespace": "0"}
	ctx := ctxTimeout(t)
	if err := r.c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	r.ended()

	// The reply is cut: the request was written, its fate unknown.
	cut := p.Arm(testkit.Cut{After: 0, Reset: true, MaxConns: 1})
	if _, err := r.c.Get(ctx, "k"); !errors.Is(err, zipline.ErrConnLost) {
		t.Fatalf("Get through a cut: %v, want ErrConnLost", err)
	}
	<-cut.Fired()
	s := r.only(t)
	checkSpan(t, s, "GET", with(base, "db.operation.name", "GET", "error.type", "zipline.ErrConnLost"), codes.Error)
	if !strings.Contains(s.Status().Description, "connection lost") {
		t.Errorf("status description %q, want the error's message", s.Status().Description)
	}

	// The client reconnects; then a frozen server makes a deadline pass.
	deadline := time.Now().Add(5 * time.Second)
	for r.c.Ping(ctx) != nil {
		if time.Now().After(deadline) {
			t.Fatal("no reconnection")
		}
		time.Sleep(10 * time.Millisecond)
	}
	r.ended()
	p.Freeze(testkit.Both)
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	_, err := r.c.Get(short, "k")
	cancel()
	p.Thaw(testkit.Both)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Get past its deadline: %v", err)
	}
	checkSpan(t, r.only(t), "GET", with(base, "db.operation.name", "GET", "error.type", "context.DeadlineExceeded"), codes.Error)
}

// A batch is one span: "PIPELINE", with the command name when they all
// share it, and its size; a batch of one is that command.
func TestBatchSpans(t *testing.T) {
	r := newRig(t, zipline.Options{})
	base := r.serverAttrs("redis")
	ctx := ctxTimeout(t)

	b := r.c.Batch()
	b.Set("a", []byte("1"))
	b.Set("b", []byte("2"))
	b.Set("c", []byte("3"))
	if err := b.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	checkSpan(t, r.only(t), "PIPELINE SET", with(base, "db.operation.name", "PIPELINE SET", "db.operation.batch.size", "3"), codes.Unset)

	b = r.c.Batch()
	b.Set("a", []byte("1"))
	b.Get("missing")
	b.Incr("n")
	if err := b.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	checkSpan(t, r.only(t), "PIPELINE", with(base, "db.operation.name", "PIPELINE", "db.operation.batch.size", "3"), codes.Unset)

	b = r.c.Batch()
	b.Get("a")
	if err := b.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	checkSpan(t, r.only(t), "GET", with(base, "db.operation.name", "GET"), codes.Unset)

	// Exec's error is the first error reply; the span's too.
	b = r.c.Batch()
	b.Incr("n")
	b.LPush("a", []byte("x"))
	b.Get("a")
	if err := b.Exec(ctx); err == nil {
		t.Fatal("batch with a WRONGTYPE: no error")
	}
	checkSpan(t, r.only(t), "PIPELINE", with(base, "db.operation.name", "PIPELINE", "db.operation.batch.size", "3",
		"error.type", "WRONGTYPE", "db.response.status_code", "WRONGTYPE"), codes.Error)
}

// A transaction is one span: "MULTI", with the command name when they all
// share it, and the size of what runs between MULTI and EXEC.
func TestTxSpans(t *testing.T) {
	r := newRig(t, zipline.Options{})
	base := r.serverAttrs("redis")
	ctx := ctxTimeout(t)

	tx := r.c.Tx()
	tx.Incr("x")
	tx.Incr("y")
	if err := tx.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	checkSpan(t, r.only(t), "MULTI INCR", with(base, "db.operation.name", "MULTI INCR", "db.operation.batch.size", "2"), codes.Unset)

	tx = r.c.Tx()
	tx.Set("s", []byte("v"))
	tx.Get("s")
	if err := tx.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	checkSpan(t, r.only(t), "MULTI", with(base, "db.operation.name", "MULTI", "db.operation.batch.size", "2"), codes.Unset)

	tx = r.c.Tx()
	tx.Set("s", []byte("v"))
	if err := tx.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	checkSpan(t, r.only(t), "MULTI SET", with(base, "db.operation.name", "MULTI SET"), codes.Unset)

	// An error among EXEC's results.
	tx = r.c.Tx()
	tx.LPush("s", []byte("x"))
	tx.Incr("x")
	if err := tx.Exec(ctx); err == nil {
		t.Fatal("transaction with a WRONGTYPE: no error")
	}
	checkSpan(t, r.only(t), "MULTI", with(base, "db.operation.name", "MULTI", "db.operation.batch.size", "2",
		"error.type", "WRONGTYPE", "db.response.status_code", "WRONGTYPE"), codes.Error)

	// A watched key changes: EXEC's null reply, ErrTxFailed.
	err := r.c.Watch(ctx, func(w *zipline.Client) error {
		if _, err := w.Get(ctx, "s"); err != nil {
			return err
		}
		if err := r.c.Set(ctx, "s", []byte("changed")); err != nil {
			return err
		}
		tx := w.Tx()
		tx.Set("s", []byte("mine"))
		return tx.Exec(ctx)
	}, "s")
	if !errors.Is(err, zipline.ErrTxFailed) {
		t.Fatalf("Watch: %v, want ErrTxFailed", err)
	}
	spans := r.ended()
	if got, want := strings.Join(spanNames(spans), " "), "WATCH GET SET MULTI SET UNWATCH"; got != want {
		t.Fatalf("spans %q, want %q", got, want)
	}
	checkSpan(t, spans[3], "MULTI SET", with(base, "db.operation.name", "MULTI SET", "error.type", "zipline.ErrTxFailed"), codes.Error)
}

// db.query.text is off by default; WithQueryText records the command name
// and a "?" per argument.
func TestQueryText(t *testing.T) {
	ctx := ctxTimeout(t)
	plain := newRig(t, zipline.Options{})
	if err := plain.c.Set(ctx, "k", []byte("v"), zipline.EX(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, ok := attrs(plain.only(t).Attributes())["db.query.text"]; ok {
		t.Error("db.query.text recorded by default")
	}

	r := newRig(t, zipline.Options{}, ziplineotel.WithQueryText())
	text := func() string {
		t.Helper()
		return attrs(r.only(t).Attributes())["db.query.text"]
	}
	if err := r.c.Set(ctx, "k", []byte("v"), zipline.EX(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got := text(); got != "SET ? ? ? ?" {
		t.Errorf("SET k v EX 60: %q", got)
	}
	if err := r.c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if got := text(); got != "PING" {
		t.Errorf("PING: %q", got)
	}

	b := r.c.Batch()
	b.Set("a", []byte("1"))
	b.Set("b", []byte("2"))
	b.Exec(ctx)
	if got := text(); got != "SET ? ?" {
		t.Errorf("batch of SETs: %q", got)
	}
	b = r.c.Batch()
	b.Set("a", []byte("1"))
	b.Get("a")
	b.Exec(ctx)
	if got := text(); got != "SET ? ?; GET ?" {
		t.Errorf("batch of SET, GET: %q", got)
	}
	tx := r.c.Tx()
	tx.Incr("n")
	tx.Del("a", "b")
	tx.Exec(ctx)
	if got := text(); got != "INCR ?; DEL ? ?" {
		t.Errorf("transaction: %q", got)
	}

	// A long command is cut at an argument, within the bound.
	pairs := make([]zipline.KeyValue, 1000)
	for i := range pairs {
		pairs[i] = zipline.KeyValue{Key: "k" + strconv.Itoa(i), Value: []byte("v")}
	}
	if err := r.c.MSet(ctx, pairs...); err != nil {
		t.Fatal(err)
	}
	got := text()
	if len(got) > 1024 || len(got) < 1000 || !regexp.MustCompile(`^MSET( \?)+$`).MatchString(got) {
		t.Errorf("MSET of 1000 pairs: %d bytes, %.40q...", len(got), got)
	}
}

// WithDBSystem names the system, for Valkey; the span names do not change.
func TestValkeySystem(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{Kind: testkit.Valkey})
	r := newRig(t, zipline.Options{Addr: srv.Addr}, ziplineotel.WithDBSystem("valkey"))
	r.srv = srv
	if err := r.c.Set(ctxTimeout(t), "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	checkSpan(t, r.only(t), "SET", with(r.serverAttrs("valkey"), "db.operation.name", "SET"), codes.Unset)
}

// Over a unix socket, server.address is the socket's path and there is no
// port.
func TestUnixSocket(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{UnixSocket: true})
	r := newRig(t, zipline.Options{Network: "unix", Addr: srv.Socket})
	if err := r.c.Ping(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}
	checkSpan(t, r.only(t), "PING", map[string]string{
		"db.system.name": "redis", "server.address": srv.Socket, "db.namespace": "0", "db.operation.name": "PING",
	}, codes.Unset)
}

// Without WithTracerProvider and WithMeterProvider, the global providers
// are used.
func TestGlobalProviders(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer tp.Shutdown(context.Background())
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(tp)
	defer otel.SetTracerProvider(prev)

	srv := testkit.NewServer(t, testkit.Config{})
	opts := zipline.Options{Addr: srv.Addr, Logger: quiet}
	if err := ziplineotel.Instrument(&opts, ziplineotel.WithAttributes()); err != nil {
		t.Fatal(err)
	}
	c, err := zipline.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Ping(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}
	if got := spanNames(rec.Ended()); len(got) != 1 || got[0] != "PING" {
		t.Errorf("global provider recorded %v, want [PING]", got)
	}
}

// WithAttributes adds to every span; Instrument refuses nil Options.
func TestOptions(t *testing.T) {
	if err := ziplineotel.Instrument(nil); err == nil {
		t.Error("Instrument(nil): no error")
	}
	r := newRig(t, zipline.Options{}, ziplineotel.WithAttributes(attribute.String("app.cache", "sessions")))
	if err := r.c.Ping(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}
	checkSpan(t, r.only(t), "PING", with(r.serverAttrs("redis"), "db.operation.name", "PING", "app.cache", "sessions"), codes.Unset)
}
