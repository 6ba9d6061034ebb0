package openflow_test

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow/internal/testpki"

	"github.com/proflow-sdn/proflow/southbound/openflow"
)

// testPKI is a CA with a server and a switch certificate, generated per test.
type testPKI struct {
	pool           *x509.CertPool
	server, client tls.Certificate
}

func newPKI(t *testing.T) testPKI {
	ca := testpki.New(t, "proflow test CA")
	return testPKI{pool: ca.Pool, server: ca.Server(t, "controller"), client: ca.Client(t, "switch")}
}

func TestTLS(t *testing.T) {
	pki := newPKI(t)
	tb := newTestbed(t, func(c *openflow.Config) {
		c.TLS = &tls.Config{Certificates: []tls.Certificate{pki.server}, ClientCAs: pki.pool,
			ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12}
	})
	// newTestbed starts the switches without TLS, which the server refuses;
	// restart them with a client config of the test CA.
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
