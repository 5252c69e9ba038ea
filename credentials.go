package zipline

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ziplinekv/zipline/internal/pipe"
)

// Credentials are a username and password from Options.Credentials, and
// when the server stops accepting them.
type Credentials struct {
	Username string // "" for the default user
	Password string
	// Expires is when the server stops accepting them (an IAM or Entra
	// token's end); zero when they do not expire on their own.
	Expires time.Time
}

// CredentialsFunc returns the credentials to authenticate with now:
// rotated passwords, or tokens that expire (ElastiCache and MemoryDB IAM
// tokens live 15 minutes, Entra's about an hour). Options.Credentials
// calls it for every new connection, and, before the credentials it
// returned expire, once more to authenticate every open connection again
// in place (AUTH on the connection, in line with its requests), so that a
// rotation drops no connection and fails no call. It should answer from a
// cache and be quick; its error fails the connection (or the renewal,
// which is tried again every second) and must not carry a secret.
type CredentialsFunc func(ctx context.Context) (Credentials, error)

// ErrCredentials is matched by every error of fetching credentials from
// Options.Credentials.
var ErrCredentials = pipe.ErrCredentials

// credentialsRenewal re-authenticates a Client's open connections before
// the credentials they authenticated with expire: at four fifths of their
// life (and at least a second before its end), with what the provider
// gives then. Dedicated connections and RESP2 subscriber connections are
// left out (see pipe.Credentials) and authenticate afresh when they
// reconnect.
type credentialsRenewal struct {
	provider CredentialsFunc
	set      *pipe.Credentials
	log      *slog.Logger

	mu sync.Mutex
	// due is when the next renewal must run (zero: none is due), before
	// the earliest expiry among the credentials fetched since the last.
	due  time.Time
	kick chan struct{}

	renewed atomic.Uint64
	stop    context.CancelFunc
	done    chan struct{}
}

func newCredentialsRenewal(provider CredentialsFunc, log *slog.Logger) *credentialsRenewal {
	r := &credentialsRenewal{provider: provider, log: log, kick: make(chan struct{}, 1), done: make(chan struct{})}
	r.set = &pipe.Credentials{Fetch: r.fetch}
	var ctx context.Context
	ctx, r.stop = context.WithCancel(context.Background())
	go r.run(ctx)
	return r
}

// fetch asks the provider, for a handshake or a renewal, and schedules
// the renewal their expiry calls for.
func (r *credentialsRenewal) fetch(ctx context.Context) (string, string, error) {
	c, err := r.provider(ctx)
	if err != nil {
		return "", "", err
	}
	if c.Password == "" {
		return "", "", errors.New("the provider returned no password")
	}
	if !c.Expires.IsZero() {
		now := time.Now()
		due := now.Add(c.Expires.Sub(now) * 4 / 5)
		if latest := c.Expires.Add(-time.Second); due.After(latest) {
			due = latest
		}
		r.mu.Lock()
		if r.due.IsZero() || due.Before(r.due) {
			r.due = due
			select {
			case r.kick <- struct{}{}:
			default:
			}
		}
		r.mu.Unlock()
	}
	return c.Username, c.Password, nil
}

// retryRenewal is how soon a renewal that failed is tried again.
const retryRenewal = time.Second

func (r *credentialsRenewal) run(ctx context.Context) {
	defer close(r.done)
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		r.mu.Lock()
		due := r.due
		r.mu.Unlock()
		t.Stop()
		var fire <-chan time.Time
		if !due.IsZero() {
			t.Reset(time.Until(due))
			fire = t.C
		}
		select {
		case <-ctx.Done():
			return
		case <-r.kick:
			continue
		case <-fire:
		}
		r.mu.Lock()
		r.due = time.Time{} // the renewal's own fetch sets the next
		r.mu.Unlock()
		if _, err := r.renew(ctx); err != nil && ctx.Err() == nil {
			r.log.Warn("zipline: renewing the credentials of open connections failed; retrying", "err", err)
			r.mu.Lock()
			if retry := time.Now().Add(retryRenewal); r.due.IsZero() || retry.Before(r.due) {
				r.due = retry
			}
			r.mu.Unlock()
		}
	}
}

// RenewCredentials authenticates every open connection again, in place and
// now, with what Options.Credentials returns: for credentials the
// application rotates itself (a password changed, a token refreshed
// early), where Expires would schedule the renewal too late or not at all.
// When it returns, the shared and solo connections are renewed;
// dedicated connections authenticate again before they are next lent, and
// connections being made fetch the credentials anew. It returns how many
// connections it renewed, and fails without Options.Credentials, or with
// the provider's or the server's first error (a connection the server
// refused stays authenticated as it was).
func (c *Client) RenewCredentials(ctx context.Context) (int, error) {
	r := c.s.creds
	if r == nil {
		return 0, errors.New("zipline: RenewCredentials needs Options.Credentials")
	}
	return r.renew(ctx)
}

// renew authenticates every open connection again now, and counts them.
func (r *credentialsRenewal) renew(ctx context.Context) (int, error) {
	n, err := r.set.Renew(ctx)
	r.renewed.Add(uint64(n))
	return n, err
}

func (r *credentialsRenewal) close() {
	r.stop()
	<-r.done
}
