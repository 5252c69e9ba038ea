package ziplineotel

import (
	"context"
	"errors"

	"github.com/ziplinekv/zipline"
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// errorAttrs returns error.type, and db.response.status_code for an error
// reply, for a failed operation. See the package documentation for the
// values.
func errorAttrs(err error) []attribute.KeyValue {
	var se *zipline.ServerError
	if errors.As(err, &se) {
		code, ok := errorCode(se.Prefix)
		if !ok {
			return []attribute.KeyValue{semconv.ErrorTypeOther}
		}
		return []attribute.KeyValue{semconv.ErrorTypeKey.String(code), semconv.DBResponseStatusCode(code)}
	}
	return []attribute.KeyValue{semconv.ErrorTypeKey.String(errorType(err))}
}

// sentinels name the errors callers check for, most specific first: a
// pending-limit error also matches ErrNotSent, for instance.
var sentinels = []struct {
	err  error
	name string
}{
	{zipline.ErrConnLost, "zipline.ErrConnLost"},
	{zipline.ErrNotConnected, "zipline.ErrNotConnected"},
	{zipline.ErrPendingLimit, "zipline.ErrPendingLimit"},
	{zipline.ErrClosed, "zipline.ErrClosed"},
	{zipline.ErrTxFailed, "zipline.ErrTxFailed"},
	{zipline.ErrNotAllowed, "zipline.ErrNotAllowed"},
	{context.DeadlineExceeded, "context.DeadlineExceeded"},
	{context.Canceled, "context.Canceled"},
	{zipline.ErrNotSent, "zipline.ErrNotSent"},
}

// errorType names an error that is not an error reply: the sentinel it
// matches, else its Go type as semconv.ErrorType gives it
// ("*zipline.ReplyLimitError", "*net.OpError"), else "_OTHER" for an
// anonymous error made by errors.New.
func errorType(err error) string {
	for _, s := range sentinels {
		if errors.Is(err, s.err) {
			return s.name
		}
	}
	t := semconv.ErrorType(err).Value.AsString()
	if t == "*errors.errorString" {
		return semconv.ErrorTypeOther.Value.AsString()
	}
	return t
}

// errorCode returns an error reply's prefix if it looks like an error code
// (ERR, WRONGTYPE, NOSCRIPT, CLUSTERDOWN...): at most 32 upper-case
// letters, digits, '_' or '-'. Anything else, such as the first word of a
// script's error_reply, could be high in cardinality or carry data, and is
// not recorded.
func errorCode(prefix string) (string, bool) {
	if prefix == "" || len(prefix) > 32 {
		return "", false
	}
	for _, r := range prefix {
		if !('A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_' || r == '-') {
			return "", false
		}
	}
	return prefix, true
}

// statusDescription is the span status description of a failure: the
// error's message, except for an error reply, whose text can quote the
// command's arguments ("ERR unknown command 'x', with args beginning
// with: ..."), so that its code in error.type stands alone.
func statusDescription(err error) string {
	var se *zipline.ServerError
	if errors.As(err, &se) {
		return ""
	}
	return err.Error()
}
