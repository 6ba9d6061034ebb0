// Package testpki makes throw-away certificate authorities for TLS tests:
// ECDSA P-256 keys, a CA with keyCertSign, leaf certificates for 127.0.0.1
// with a server or client extended key usage, and PEM files in the form
// both crypto/tls and OpenSSL (Open vSwitch) accept.
package testpki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CA is a test certificate authority.
type CA struct {
	Cert *x509.Certificate
	Pool *x509.CertPool // trusts only this CA
	key  *ecdsa.PrivateKey
	next int64
}

// New returns a fresh CA named cn, valid for a day.
func New(t testing.TB, cn string) *CA {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &CA{Cert: cert, Pool: pool, key: key, next: 2}
}

// Server issues a certificate for 127.0.0.1 with the server-auth usage.
func (ca *CA) Server(t testing.TB, cn string) tls.Certificate {
	return ca.issue(t, cn, x509.ExtKeyUsageServerAuth)
}

// Client issues a certificate for 127.0.0.1 with the client-auth usage.
func (ca *CA) Client(t testing.TB, cn string) tls.Certificate {
	return ca.issue(t, cn, x509.ExtKeyUsageClientAuth)
}

func (ca *CA) issue(t testing.TB, cn string, usage x509.ExtKeyUsage) tls.Certificate {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(ca.next), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}
	ca.next++
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
}

// WritePEM writes c's key (PKCS #8), c's certificate and the CA certificate
// as PEM files NAME-privkey.pem, NAME-cert.pem and cacert.pem under dir.
func (ca *CA) WritePEM(t testing.TB, dir, name string, c tls.Certificate) (keyPath, certPath, caPath string) {
	t.Helper()
	keyDER, err := x509.MarshalPKCS8PrivateKey(c.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	write := func(path, typ string, der []byte, mode os.FileMode) string {
		if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), mode); err != nil {
			t.Fatal(err)
		}
		return path
	}
	return write(filepath.Join(dir, name+"-privkey.pem"), "PRIVATE KEY", keyDER, 0o600),
		write(filepath.Join(dir, name+"-cert.pem"), "CERTIFICATE", c.Certificate[0], 0o644),
		write(filepath.Join(dir, "cacert.pem"), "CERTIFICATE", ca.Cert.Raw, 0o644)
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
