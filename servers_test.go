package zipline

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ziplinekv/zipline/internal/testkit"
)

// onEveryServer runs fn against Redis 7.0 and Valkey 9.1, in RESP3 and in
// RESP2: results must not depend on either. kind tells fn which server it
// has, for commands only one of them has.
func onEveryServer(t *testing.T, fn func(t *testing.T, c *Client, kind testkit.Kind)) {
	t.Helper()
	for _, kind := range []testkit.Kind{testkit.Redis, testkit.Valkey} {
		for _, proto := range []int{3, 2} {
			t.Run(fmt.Sprintf("%s/RESP%d", kind, proto), func(t *testing.T) {
				srv := testkit.NewServer(t, testkit.Config{Kind: kind})
				c, err := New(Options{Addr: srv.Addr, Protocol: proto, Logger: quiet})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.Close() })
				fn(t, c, kind)
			})
		}
	}
}

// notOnServer checks that a command the server lacks was refused by the
// client, naming where it is.
func notOnServer(t *testing.T, what string, err error) {
	t.Helper()
	var ce *CommandError
	if !errors.As(err, &ce) || !strings.Contains(ce.Reason, "is not on this server") {
		t.Errorf("%s: %v, want a client-side refusal naming the servers that have it", what, err)
	}
}
