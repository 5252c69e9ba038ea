package testkit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// LogRecorder is a slog.Handler that keeps every record, at every level, as
// one line of text: level, message and all attributes (including those from
// WithAttrs and WithGroup, with LogValuers resolved). Values are written
// raw, never quoted or escaped, so that a search for a secret finds it
// wherever it was logged. The zero value is ready to use, and a LogRecorder
// is safe for concurrent use; handlers derived with WithAttrs and WithGroup
// record into it.
//
//	var rec testkit.LogRecorder
//	logger := slog.New(&rec)
type LogRecorder struct {
	mu    sync.Mutex
	lines []string
}

// Lines returns a copy of the lines recorded so far, in order.
func (r *LogRecorder) Lines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.lines...)
}

// Enabled reports true: every level is recorded.
func (r *LogRecorder) Enabled(context.Context, slog.Level) bool { return true }

// Handle records rec.
func (r *LogRecorder) Handle(_ context.Context, rec slog.Record) error {
	return recHandler{root: r}.Handle(context.Background(), rec)
}

// WithAttrs returns a handler that records into r with attrs on every line.
func (r *LogRecorder) WithAttrs(attrs []slog.Attr) slog.Handler {
	return recHandler{root: r}.WithAttrs(attrs)
}

// WithGroup returns a handler that records into r with later attributes
// qualified by name.
func (r *LogRecorder) WithGroup(name string) slog.Handler {
	return recHandler{root: r}.WithGroup(name)
}

// recHandler is a LogRecorder with attributes and groups added.
type recHandler struct {
	root   *LogRecorder
	attrs  string // rendered, each preceded by a space
	prefix string // group names, each followed by "."
}

func (h recHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h recHandler) Handle(_ context.Context, rec slog.Record) error {
	var b strings.Builder
	b.WriteString(rec.Level.String())
	b.WriteByte(' ')
	b.WriteString(rec.Message)
	b.WriteString(h.attrs)
	rec.Attrs(func(a slog.Attr) bool {
		appendAttr(&b, h.prefix, a)
		return true
	})
	h.root.mu.Lock()
	h.root.lines = append(h.root.lines, b.String())
	h.root.mu.Unlock()
	return nil
}

func (h recHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	var b strings.Builder
	b.WriteString(h.attrs)
	for _, a := range attrs {
		appendAttr(&b, h.prefix, a)
	}
	h.attrs = b.String()
	return h
}

func (h recHandler) WithGroup(name string) slog.Handler {
	if name != "" {
		h.prefix += name + "."
	}
	return h
}

// appendAttr writes " key=value", or one such item per member of a group.
func appendAttr(b *strings.Builder, prefix string, a slog.Attr) {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return
	}
	if a.Value.Kind() == slog.KindGroup {
		if a.Key != "" {
			prefix += a.Key + "."
		}
		for _, m := range a.Value.Group() {
			appendAttr(b, prefix, m)
		}
		return
	}
	b.WriteByte(' ')
	b.WriteString(prefix)
	b.WriteString(a.Key)
	b.WriteByte('=')
	b.WriteString(rawValue(a.Value))
}

// rawValue renders v without quoting, so the bytes of a string or []byte
// value appear as they are.
func rawValue(v slog.Value) string {
	if v.Kind() != slog.KindAny {
		return v.String()
	}
	switch x := v.Any().(type) {
	case []byte:
		return string(x)
	case error:
		return x.Error()
	case fmt.Stringer:
		return x.String()
	default:
		return fmt.Sprintf("%+v", x)
	}
}

// CheckSecrets returns an error naming every place where one of secrets
// appears: a line of rec (which may be nil) or the text of one of errs or of
// any error they wrap. A secret is looked for as it is and, if different, as
// Go would escape it inside a quoted string (%q), since values are often
// quoted in messages. Empty secrets are ignored.
func CheckSecrets(secrets [][]byte, rec *LogRecorder, errs ...error) error {
	var texts []string
	if rec != nil {
		for _, l := range rec.Lines() {
			texts = append(texts, "log: "+l)
		}
	}
	for _, err := range errs {
		walkErrors(err, func(e error) { texts = append(texts, "error: "+e.Error()) })
	}
	var found []string
	for i, s := range secrets {
		if len(s) == 0 {
			continue
		}
		forms := [][]byte{s}
		if q := strconv.Quote(string(s)); q[1:len(q)-1] != string(s) {
			forms = append(forms, []byte(q[1:len(q)-1]))
		}
		for _, t := range texts {
			for _, f := range forms {
				if bytes.Contains([]byte(t), f) {
					found = append(found, fmt.Sprintf("secret %d (%q) in %s", i, s, t))
					break
				}
			}
		}
	}
	if len(found) > 0 {
		return errors.New("testkit: secrets leaked:\n" + strings.Join(found, "\n"))
	}
	return nil
}

// walkErrors calls f on err and every error it wraps.
func walkErrors(err error, f func(error)) {
	if err == nil {
		return
	}
	f(err)
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		walkErrors(u.Unwrap(), f)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			walkErrors(e, f)
		}
	}
}

// ExpectNoSecrets fails the test if CheckSecrets finds any of secrets in
// rec's lines or in errs.
func ExpectNoSecrets(tb testing.TB, secrets [][]byte, rec *LogRecorder, errs ...error) {
	tb.Helper()
	if err := CheckSecrets(secrets, rec, errs...); err != nil {
		tb.Error(err)
	}
}
