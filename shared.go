package zipline

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/ziplinekv/zipline/internal/resp"
)

// shared is what a Client and the Clients made from it (Dedicated, Watch,
// Raw) have in common.
type shared struct {
	limits   resp.Limits
	codec    *valueCodec // as configured; a Raw Client has none of its own
	calls    *callPool
	requests sync.Pool
	hooks    hooks
	// routing holds the server's command table on a cluster (where keys
	// are, which commands read); nil on a single server. Set once, when the
	// Client connects (in the background with LazyConnect); read it with
	// commandTable.
	routing atomic.Pointer[serverCommands]
	// marksReads marks read-only commands on a Sentinel group (see
	// Options.marksReads).
	marksReads bool
	cache      *clientCache // nil when off
	// creds renews the connections' credentials (Options.Credentials);
	// nil with static ones.
	creds *credentialsRenewal
	// top is the Client's own carrier (not a lease's).
	top  carrier
	subs *subscriptions
	// server is what the first server reached said it is (HELLO), for
	// refusing commands it does not have with the version that has them;
	// nil until then.
	server   atomic.Pointer[serverVersion]
	subsOnce sync.Once
	closed   sync.Once
	closeErr error
	// opts comes last: it grows with every option added, and ahead of the
	// fields every call reads it moved them across cache lines (an option
	// added cost GET 64 B at 8 callers 5 % in the A/B).
	opts Options
}

// commandTable returns the server's command table on a cluster, nil
// elsewhere (or before the Client has connected).
func (s *shared) commandTable() serverCommands {
	if t := s.routing.Load(); t != nil {
		return *t
	}
	return nil
}

// notOnServer refuses a command the server does not have, saying which
// servers do: a *CommandError.
func (s *shared) notOnServer(spec *commandSpec) error {
	v := s.server.Load()
	if v == nil {
		return nil // not connected yet: the server decides
	}
	has := spec.missingOn(*v)
	if has == "" {
		return nil
	}
	return &CommandError{Command: spec.fullName(),
		Reason: fmt.Sprintf("is not on this server (%s %s); it is on %s", v.kind, v.version, has)}
}
