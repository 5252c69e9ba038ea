package ziplineotel

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/ziplinekv/zipline"
)

func TestErrorAttrs(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string // error.type=...[,db.response.status_code=...]
	}{
		{&zipline.ServerError{Prefix: "WRONGTYPE", Message: "WRONGTYPE Operation against a key"}, "error.type=WRONGTYPE,db.response.status_code=WRONGTYPE"},
		{fmt.Errorf("wrapped: %w", &zipline.ServerError{Prefix: "NOSCRIPT"}), "error.type=NOSCRIPT,db.response.status_code=NOSCRIPT"},
		{&zipline.ServerError{Prefix: "CROSS-SLOT_2"}, "error.type=CROSS-SLOT_2,db.response.status_code=CROSS-SLOT_2"},
		{&zipline.ServerError{Prefix: "user-data"}, "error.type=_OTHER"},
		{&zipline.ServerError{Prefix: strings.Repeat("A", 33)}, "error.type=_OTHER"},
		{&zipline.ServerError{Prefix: ""}, "error.type=_OTHER"},
		{fmt.Errorf("zipline: read: %w", zipline.ErrConnLost), "error.type=zipline.ErrConnLost"},
		{zipline.ErrNotConnected, "error.type=zipline.ErrNotConnected"},
		{zipline.ErrPendingLimit, "error.type=zipline.ErrPendingLimit"}, // also ErrNotSent
		{zipline.ErrClosed, "error.type=zipline.ErrClosed"},
		{zipline.ErrTxFailed, "error.type=zipline.ErrTxFailed"},
		{&zipline.CommandError{Command: "SELECT", Reason: "no"}, "error.type=zipline.ErrNotAllowed"},
		{context.DeadlineExceeded, "error.type=context.DeadlineExceeded"},
		{fmt.Errorf("queued: %w", context.Canceled), "error.type=context.Canceled"},
		{zipline.ErrNotSent, "error.type=zipline.ErrNotSent"},
		{&zipline.ReplyLimitError{What: "bulk length"}, "error.type=*zipline.ReplyLimitError"},
		{&net.OpError{Op: "dial", Err: errors.New("refused")}, "error.type=*net.OpError"},
		{errors.New("anonymous"), "error.type=_OTHER"},
	} {
		var got []string
		for _, kv := range errorAttrs(tc.err) {
			got = append(got, string(kv.Key)+"="+kv.Value.AsString())
		}
		if g := strings.Join(got, ","); g != tc.want {
			t.Errorf("%#v: %s, want %s", tc.err, g, tc.want)
		}
	}
}

func TestStatusDescription(t *testing.T) {
	se := &zipline.ServerError{Prefix: "ERR", Message: "ERR unknown command 'x', with args beginning with: 'secret'"}
	if d := statusDescription(fmt.Errorf("w: %w", se)); d != "" {
		t.Errorf("error reply: description %q, want none", d)
	}
	if d := statusDescription(zipline.ErrConnLost); d != zipline.ErrConnLost.Error() {
		t.Errorf("ErrConnLost: description %q", d)
	}
}

func TestQueryTextBound(t *testing.T) {
	var q queryText
	q.command("MSET", 2000)
	s := q.String()
	if len(s) > maxQueryText || len(s) < maxQueryText-1 || !strings.HasPrefix(s, "MSET ? ?") || !strings.HasSuffix(s, " ?") {
		t.Errorf("%d bytes: %.20q...%q", len(s), s, s[len(s)-10:])
	}
	q = queryText{}
	q.command(strings.Repeat("X", maxQueryText+1), 1)
	if q.String() != "" {
		t.Errorf("a name past the bound gave %q", q.String())
	}
}
