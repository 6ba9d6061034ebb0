package testpki

import (
	"crypto/tls"
	"crypto/x509"
	"testing"
)

func TestIssuedCertificatesVerify(t *testing.T) {
	ca := New(t, "test CA")
	srv := ca.Server(t, "server")
	if _, err := srv.Leaf.Verify(x509.VerifyOptions{Roots: ca.Pool, DNSName: "127.0.0.1"}); err != nil {
		t.Errorf("server certificate does not verify: %v", err)
	}
	cli := ca.Client(t, "client")
	if _, err := cli.Leaf.Verify(x509.VerifyOptions{Roots: ca.Pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("client certificate does not verify: %v", err)
	}
	if _, err := cli.Leaf.Verify(x509.VerifyOptions{Roots: New(t, "other").Pool}); err == nil {
		t.Error("a certificate verified against another CA")
	}
	key, cert, _ := ca.WritePEM(t, t.TempDir(), "client", cli)
	if _, err := tls.LoadX509KeyPair(cert, key); err != nil {
		t.Errorf("PEM files do not load: %v", err)
	}
}
