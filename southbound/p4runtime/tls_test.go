package p4runtime

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

// selfSigned returns a server certificate for 127.0.0.1 and a pool trusting it.
func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "p4runtime target"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IsCA: true, BasicConstraintsValid: true,
	}
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
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pool
}

func TestTLS(t *testing.T) {
	cert, pool := selfSigned(t)
	f := newFabric(t, nil, grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13})))
	cfg := f.config(10)
	cfg.TLS = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS13}
	c := dial(t, cfg)
	ctx, cancel := ctxT(t)
	defer cancel()
	if err := c.Place(ctx, testFlow, 3); err != nil {
		t.Fatal(err)
	}
	if got, err := f.where(testFlow); err != nil || got != 3 {
		t.Errorf("Where = %d, %v; want 3", got, err)
	}
	// A plaintext client cannot arbitrate with a TLS server.
	plain := f.config(20)
	plain.CallTimeout = 200 * time.Millisecond
	ctx2, cancel2 := ctxT(t)
	defer cancel2()
	ctx2, cancel3 := contextWithTimeout(ctx2, 500*time.Millisecond)
	defer cancel3()
	if pc, err := Dial(ctx2, plain); err == nil {
		pc.Close()
		t.Error("plaintext client dialled a TLS server")
	}
}
