package zipline_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ziplinekv/zipline"
)

// tokenSource stands for an identity provider that issues short-lived
// tokens (an ElastiCache IAM token lives 15 minutes).
type tokenSource struct {
	mu      sync.Mutex
	token   string
	expires time.Time
}

// current returns a cached token, and a new one when the cached one is
// past two thirds of its life: the Client asks for every new connection,
// so the provider answers from memory.
func (s *tokenSource) current(ctx context.Context) (zipline.Credentials, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if time.Until(s.expires) < 5*time.Minute {
		s.token, s.expires = "token-from-the-identity-provider", time.Now().Add(15*time.Minute)
	}
	return zipline.Credentials{Username: "app", Password: s.token, Expires: s.expires}, nil
}

// Rotating credentials: the Client asks the CredentialsFunc for every new
// connection, and before the credentials expire it asks again and
// authenticates every open connection in place, so that a rotation drops
// no connection and fails no call.
func ExampleCredentialsFunc() {
	tokens := &tokenSource{}
	c, err := zipline.New(zipline.Options{Addr: "cache.example.internal:6379", Credentials: tokens.current})
	if err != nil {
		fmt.Println(err) // matches zipline.ErrCredentials when the provider failed
		return
	}
	defer c.Close()
	fmt.Println(c.Stats().Reauthenticated, "connections authenticated again so far")
}

// Renewing certificates: tls.Config's callbacks are read at every
// handshake, so a certificate renewed on disk is presented by the
// connections made after it is loaded; the ones open keep their session.
// The server's renewed certificate needs nothing on the client's side while
// its CA stays the same.
func Example_certificateRenewal() {
	var clientCert atomic.Pointer[tls.Certificate]
	load := func() error { // call again when the files are renewed (a timer, or a file watcher)
		cert, err := tls.LoadX509KeyPair("/etc/cache/client.crt", "/etc/cache/client.key")
		if err != nil {
			return err
		}
		clientCert.Store(&cert)
		return nil
	}
	if err := load(); err != nil {
		fmt.Println(err)
		return
	}
	caPEM, err := os.ReadFile("/etc/cache/ca.crt")
	if err != nil {
		fmt.Println(err)
		return
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	c, err := zipline.New(zipline.Options{
		Addr: "cache.example.internal:6380",
		TLSConfig: &tls.Config{
			RootCAs:    roots,
			MinVersion: tls.VersionTLS12,
			GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
				return clientCert.Load(), nil
			},
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
}
