package testbed

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"
)

// certAuthority is a throwaway CA that issues the certificates of a TLS
// server and of its clients, so that a test can renew either while the
// server runs (RenewServerCertificate, ClientCertificate).
type certAuthority struct {
	key    *ecdsa.PrivateKey
	cert   *x509.Certificate
	der    []byte
	serial atomic.Int64
}

func newCertAuthority() (*certAuthority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "zipline test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	ca := &certAuthority{key: key, cert: cert, der: der}
	ca.serial.Store(1)
	return ca, nil
}

// issue makes a certificate for 127.0.0.1 (a server's) or for a client,
// and returns it as PEM, and parsed, with its serial number.
func (ca *certAuthority) issue(server bool) (certPEM, keyPEM []byte, pair tls.Certificate, serial int64, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, pair, 0, err
	}
	serial = ca.serial.Add(1)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "zipline test client"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if server {
		tmpl.Subject.CommonName = "127.0.0.1"
		tmpl.IPAddresses, tmpl.DNSNames = []net.IP{net.ParseIP("127.0.0.1")}, []string{"localhost"}
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, nil, pair, 0, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, pair, 0, err
	}
	certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM = pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	pair, err = tls.X509KeyPair(certPEM, keyPEM)
	return certPEM, keyPEM, pair, serial, err
}

// pool is a certificate pool that trusts the CA.
func (ca *certAuthority) pool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	return pool
}

// tlsFiles writes a server certificate from ca into dir, and returns the
// server's TLS arguments and a client config that trusts the CA; with
// mutual, the server asks clients for certificates of the CA, and the
// client config presents one.
func tlsFiles(dir string, ca *certAuthority, mutual bool) (args []string, client *tls.Config, err error) {
	certPEM, keyPEM, _, _, err := ca.issue(true)
	if err != nil {
		return nil, nil, err
	}
	files := map[string][]byte{
		"ca.crt":     pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.der}),
		"server.crt": certPEM,
		"server.key": keyPEM,
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			return nil, nil, err
		}
	}
	auth := "no"
	client = &tls.Config{RootCAs: ca.pool(), MinVersion: tls.VersionTLS12}
	if mutual {
		auth = "yes"
		_, _, pair, _, err := ca.issue(false)
		if err != nil {
			return nil, nil, err
		}
		client.Certificates = []tls.Certificate{pair}
	}
	args = []string{
		"--tls-cert-file", filepath.Join(dir, "server.crt"), "--tls-key-file", filepath.Join(dir, "server.key"),
		"--tls-ca-cert-file", filepath.Join(dir, "ca.crt"), "--tls-auth-clients", auth,
	}
	return args, client, nil
}

// RenewServerCertificate gives the running server a new certificate from
// its CA (CONFIG SET tls-cert-file and tls-key-file), as an operator
// renews one: connections made from then on see it; open ones keep their
// session. It returns the new certificate's serial number.
func (s *Server) RenewServerCertificate(ctx context.Context) (int64, error) {
	if s.ca == nil {
		return 0, errors.New("testbed: the server has no TLS (Config.TLS)")
	}
	certPEM, keyPEM, _, serial, err := s.ca.issue(true)
	if err != nil {
		return 0, err
	}
	cert := filepath.Join(s.dir, fmt.Sprintf("server-%d.crt", serial))
	key := filepath.Join(s.dir, fmt.Sprintf("server-%d.key", serial))
	if err := os.WriteFile(cert, certPEM, 0o600); err != nil {
		return 0, err
	}
	if err := os.WriteFile(key, keyPEM, 0o600); err != nil {
		return 0, err
	}
	v, err := s.Do(ctx, "CONFIG", "SET", "tls-cert-file", cert, "tls-key-file", key)
	if err != nil {
		return 0, err
	}
	if v.IsError() {
		return 0, fmt.Errorf("testbed: CONFIG SET tls-cert-file: %s", v.Bytes())
	}
	return serial, nil
}

// ClientCertificate issues a new client certificate from the server's CA,
// for a server with Config.MutualTLS.
func (s *Server) ClientCertificate() (tls.Certificate, error) {
	if s.ca == nil {
		return tls.Certificate{}, errors.New("testbed: the server has no TLS (Config.TLS)")
	}
	_, _, pair, _, err := s.ca.issue(false)
	return pair, err
}
