package zipline

import (
	"context"
	"crypto/tls"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/internal/testkit"
)

// Certificates renewed while the client runs, with mutual TLS: the server's
// replaced by CONFIG SET tls-cert-file, the client's swapped in through
// tls.Config.GetClientCertificate, five times, beside 16 callers and
// dedicated connections made all along (each a new TLS handshake). No call
// fails; every renewal of the server's certificate is seen by the
// handshakes after it, and every client certificate is presented.
func TestCertificatesRenewUnderLoad(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{MutualTLS: true})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var clientCert atomic.Pointer[tls.Certificate]
	first, err := srv.ClientCertificate()
	if err != nil {
		t.Fatal(err)
	}
	clientCert.Store(&first)
	var seenMu sync.Mutex
	seenServer := map[string]bool{}      // serial numbers of the server certificates handshakes saw
	presentedClient := map[string]bool{} // and of the client certificates they presented
	cfg := &tls.Config{
		RootCAs:    srv.TLSConfig.RootCAs,
		MinVersion: tls.VersionTLS12,
		// The certificate is read at every handshake: renewing it is a
		// store, and connections made after it present the new one.
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			cert := clientCert.Load()
			seenMu.Lock()
			presentedClient[cert.Leaf.SerialNumber.String()] = true
			seenMu.Unlock()
			return cert, nil
		},
		VerifyConnection: func(cs tls.ConnectionState) error {
			seenMu.Lock()
			seenServer[cs.PeerCertificates[0].SerialNumber.String()] = true
			seenMu.Unlock()
			return nil
		},
	}
	c, err := New(Options{Addr: srv.TLSAddr, TLSConfig: cfg, Logger: quiet, MaxIdleDedicated: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	l := startRotationLoad(ctx, c, 16)
	renewals := soakCount(5, 30)
	for range renewals {
		serial, err := srv.RenewServerCertificate(ctx)
		if err != nil {
			t.Fatal(err)
		}
		cert, err := srv.ClientCertificate()
		if err != nil {
			t.Fatal(err)
		}
		clientCert.Store(&cert)
		// Wait until a handshake has seen the new server certificate and
		// presented the new client one (a server that refused it fails
		// that handshake, and so a call), and the callers have made 2,000
		// calls more with both in place.
		want, wantClient := strconv.FormatInt(serial, 10), cert.Leaf.SerialNumber.String()
		callsBefore := l.calls.Load()
		for deadline := time.Now().Add(10 * time.Second); ; {
			seenMu.Lock()
			ok := seenServer[want] && presentedClient[wantClient] && l.calls.Load() >= callsBefore+2000
			seenMu.Unlock()
			if ok {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no handshake saw the server's certificate %s and presented the client's %s", want, wantClient)
			}
			time.Sleep(10 * time.Millisecond) // bounded poll of the handshakes' record
		}
	}
	l.stop()
	t.Logf("%d calls, %d failed, %d TLS handshakes of dedicated connections", l.calls.Load(), l.failed.Load(), l.dedicated.Load())
	if l.failed.Load() != 0 {
		t.Errorf("%d calls failed through %d renewals; the first: %v", l.failed.Load(), renewals, l.firstErr.Load())
	}
	if st := c.Stats(); st.Reconnects != 0 {
		t.Errorf("the renewals caused %d reconnects", st.Reconnects)
	}
}
