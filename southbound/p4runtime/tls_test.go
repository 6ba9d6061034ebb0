package p4runtime

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow/internal/testpki"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

// serverCert returns a server certificate for 127.0.0.1 and a pool trusting its CA.
func serverCert(t *testing.T) (tls.Certificate, *x509.CertPool) {
	ca := testpki.New(t, "p4runtime test CA")
	return ca.Server(t, "p4runtime target"), ca.Pool
}

func TestTLS(t *testing.T) {
	cert, pool := serverCert(t)
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
	ctx2, cancel2 := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel2()
	if pc, err := Dial(ctx2, plain); err == nil {
		pc.Close()
		t.Error("plaintext client dialled a TLS server")
	}
}
