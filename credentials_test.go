package zipline

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/internal/testkit"
)

// rotatingUser is a provider of credentials that a test rotates: a new
// ACL user (and password) each time, whose credentials expire soon after
// they are handed out.
type rotatingUser struct {
	mu      sync.Mutex
	user    string
	pass    string
	life    time.Duration
	fetches atomic.Int64
}

func (r *rotatingUser) credentials(context.Context) (Credentials, error) {
	r.fetches.Add(1)
	r.mu.Lock()
	defer r.mu.Unlock()
	c := Credentials{Username: r.user, Password: r.pass}
	if r.life != 0 {
		c.Expires = time.Now().Add(r.life)
	}
	return c, nil
}

func (r *rotatingUser) set(user, pass string) {
	r.mu.Lock()
	r.user, r.pass = user, pass
	r.mu.Unlock()
}

// Credentials that rotate while 16 callers read and write, and dedicated
// connections come and go: every few hundred milliseconds a new ACL user
// is made, handed out by the provider, and once the open connections have
// authenticated as it in place (CLIENT LIST says so, of the same
// connections), the previous user is deleted, which would disconnect any
// connection still authenticated as it. No call fails, the shared
// connection never reconnects, and every connection renewed is the one it
// was.
func TestCredentialsRotateUnderLoad(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	admin := func(args ...any) {
		t.Helper()
		if _, err := srv.Do(ctx, args...); err != nil {
			t.Fatal(err)
		}
	}
	newUser := func(n int) (string, string) {
		user, pass := "app"+strconv.Itoa(n), fmt.Sprintf("pw-%d-%d", n, time.Now().UnixNano())
		admin("ACL", "SETUSER", user, "on", ">"+pass, "~*", "&*", "+@all")
		return user, pass
	}
	prov := &rotatingUser{life: 1500 * time.Millisecond}
	prov.set(newUser(0))
	c, err := New(Options{Addr: srv.Addr, Logger: quiet, Credentials: prov.credentials, ClientName: "rotating"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	l := startRotationLoad(ctx, c, 16)

	rotations := soakCount(6, 40)
	for n := 1; n <= rotations; n++ {
		user, pass := newUser(n)
		prov.set(user, pass)
		// Wait until every connection of the client (its name) is the new
		// user: the shared and solo ones renewed in place, dedicated ones
		// when lent again.
		awaitUser(t, srv, "rotating", user)
		admin("ACL", "DELUSER", "app"+strconv.Itoa(n-1)) // disconnects whoever still is that user
	}
	l.stop()
	st := c.Stats()
	t.Logf("%d calls, %d failed; %d fetches, %d connections renewed, %d reconnects", l.calls.Load(), l.failed.Load(),
		prov.fetches.Load(), st.Reauthenticated, st.Reconnects)
	if l.failed.Load() != 0 {
		t.Errorf("%d calls failed through %d rotations; the first: %v", l.failed.Load(), rotations, l.firstErr.Load())
	}
	if st.Reconnects != 0 {
		t.Errorf("the rotations caused %d reconnects", st.Reconnects)
	}
	if st.Reauthenticated < uint64(rotations) {
		t.Errorf("%d connections renewed in place through %d rotations", st.Reauthenticated, rotations)
	}
}

// awaitUser waits (bounded) until every connection named name is
// authenticated as user.
func awaitUser(t *testing.T, srv *testkit.Server, name, user string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		v, err := srv.Do(context.Background(), "CLIENT", "LIST")
		if err != nil {
			t.Fatal(err)
		}
		stale := 0
		for _, line := range strings.Split(string(v.Bytes()), "\n") {
			if strings.Contains(line, " name="+name+" ") && !strings.Contains(line, " user="+user+" ") {
				stale++
			}
		}
		if stale == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d connections not authenticated as %s:\n%s", stale, user, v.Bytes())
		}
		time.Sleep(20 * time.Millisecond) // bounded poll of the server's client list
	}
}

// A password the application rotates (no expiry to schedule a renewal by)
// reaches the open connections through RenewCredentials: they authenticate
// again in place, and deleting the previous user then drops none.
func TestRenewCredentials(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin := func(args ...any) {
		t.Helper()
		if _, err := srv.Do(ctx, args...); err != nil {
			t.Fatal(err)
		}
	}
	prov := &rotatingUser{} // no expiry
	for n := range 4 {
		admin("ACL", "SETUSER", "static"+strconv.Itoa(n), "on", ">pw-"+strconv.Itoa(n), "~*", "&*", "+@all")
	}
	prov.set("static0", "pw-0")
	c, err := New(Options{Addr: srv.Addr, Logger: quiet, Credentials: prov.credentials, ClientName: "pushed"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	l := startRotationLoad(ctx, c, 8)
	for n := 1; n < 4; n++ {
		user := "static" + strconv.Itoa(n)
		prov.set(user, "pw-"+strconv.Itoa(n))
		renewed, err := c.RenewCredentials(ctx)
		if err != nil || renewed == 0 {
			t.Fatalf("RenewCredentials: %d renewed, %v", renewed, err)
		}
		awaitUser(t, srv, "pushed", user) // dedicated connections: when lent again
		admin("ACL", "DELUSER", "static"+strconv.Itoa(n-1))
	}
	l.stop()
	if l.failed.Load() != 0 {
		t.Errorf("%d calls failed through 3 rotations; the first: %v", l.failed.Load(), l.firstErr.Load())
	}
	if st := c.Stats(); st.Reconnects != 0 {
		t.Errorf("the rotations caused %d reconnects", st.Reconnects)
	}
	static, err := New(Options{Addr: srv.Addr, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer static.Close()
	if _, err := static.RenewCredentials(ctx); err == nil {
		t.Error("RenewCredentials without Options.Credentials: no error")
	}
}

// A provider that fails, or gives credentials the server refuses, fails
// New with a clear error that carries no password; the options refuse a
// provider beside static credentials.
func TestCredentialsErrors(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{})
	ctx := context.Background()
	if _, err := srv.Do(ctx, "ACL", "SETUSER", "app", "on", ">right-secret", "~*", "+@all"); err != nil {
		t.Fatal(err)
	}
	failing := func(context.Context) (Credentials, error) { return Credentials{}, errors.New("vault unreachable") }
	_, err := New(Options{Addr: srv.Addr, Logger: quiet, Credentials: failing})
	if !errors.Is(err, ErrCredentials) || !strings.Contains(err.Error(), "vault unreachable") {
		t.Errorf("a failing provider: %v, want ErrCredentials with its reason", err)
	}
	wrong := func(context.Context) (Credentials, error) {
		return Credentials{Username: "app", Password: "wrong-secret"}, nil
	}
	_, err = New(Options{Addr: srv.Addr, Logger: quiet, Credentials: wrong})
	if err == nil || !strings.Contains(err.Error(), "WRONGPASS") || strings.Contains(err.Error(), "secret") {
		t.Errorf("a wrong password: %v, want WRONGPASS without the password", err)
	}
	_, err = New(Options{Addr: srv.Addr, Password: "right-secret", Credentials: wrong})
	if err == nil || !strings.Contains(err.Error(), "Options.Credentials") {
		t.Errorf("a provider beside a password: %v", err)
	}
	right := func(context.Context) (Credentials, error) {
		return Credentials{Username: "app", Password: "right-secret"}, nil
	}
	c, err := New(Options{Addr: srv.Addr, Logger: quiet, Credentials: right})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if v, err := c.Do(ctx, "ACL", "WHOAMI"); err != nil || mustString(v) != "app" {
		t.Errorf("ACL WHOAMI = %v %v", v, err)
	}
}

func mustString(v Value) string { s, _ := v.AsString(); return s }
