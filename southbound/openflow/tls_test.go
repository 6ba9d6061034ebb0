package openflow_test

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

	"github.com/proflow-sdn/proflow/southbound/openflow"
)

// testPKI is a CA with a server and a switch certificate, generated per test.
type testPKI struct {
	pool           *x509.CertPool
	server, client tls.Certificate
}

func newPKI(t *testing.T) testPKI {
	t.Helper()
	key := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	caKey := key()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "proflow test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	issue := func(serial int64, cn string, usage x509.ExtKeyUsage) tls.Certificate {
		k := key()
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			ExtKeyUsage: []x509.ExtKeyUsage{usage}, KeyUsage: x509.KeyUsageDigitalSignature,
			IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: k}
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return testPKI{pool: pool, server: issue(2, "controller", x509.ExtKeyUsageServerAuth), client: issue(3, "switch", x509.ExtKeyUsageClientAuth)}
}

func TestTLS(t *testing.T) {
	pki := newPKI(t)
	tb := newTestbed(t, func(c *openflow.Config) {
		c.TLS = &tls.Config{Certificates: []tls.Certificate{pki.server}, ClientCAs: pki.pool,
			ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12}
	})
	// newTestbed gives the switches Config.TLS as their client config; give
	// them a proper client config instead by restarting them.
	tb.swStop()
	tb.wg.Wait()
	clientConf := &tls.Config{Certificates: []tls.Certificate{pki.client}, RootCAs: pki.pool, ServerName: "127.0.0.1"}
	tb.runSwitches(clientConf)
	tb.ready()
	if err := tb.srv.Place(ctxT(t, 5*time.Second), fp, 2); err != nil {
		t.Fatal(err)
	}
	if got := tb.bothWays(fp); got != "agg3" {
		t.Errorf("over TLS the flow goes via %s, want agg3", got)
	}

	// A client without a certificate is refused: the handshake or the first
	// read fails and no switch gets through.
	for name, conf := range map[string]*tls.Config{
		"no certificate":   {RootCAs: pki.pool, ServerName: "127.0.0.1"},
		"self-signed cert": {RootCAs: pki.pool, ServerName: "127.0.0.1", Certificates: []tls.Certificate{newPKI(t).client}},
	} {
		c, err := tls.Dial("tcp", tb.addr, conf)
		if err == nil {
			_ = c.SetDeadline(time.Now().Add(2 * time.Second))
			_, err = c.Read(make([]byte, 8))
			c.Close()
		}
		if err == nil {
			t.Errorf("%s: connection accepted", name)
		}
	}
	// Plain TCP gets no OpenFlow hello either.
	c, err := net.Dial("tcp", tb.addr)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = c.Write([]byte{4, 0, 0, 8, 0, 0, 0, 1})
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	buf := make([]byte, 8)
	if n, _ := c.Read(buf); n == 8 && buf[0] == 4 && buf[1] == 0 {
		t.Error("a plain TCP client got an OpenFlow hello from a TLS server")
	}
	c.Close()
}
