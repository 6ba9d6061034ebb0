package tcstat

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"

	"github.com/proflow-sdn/proflow/internal/fileutil"
)

// maxPEMBytes bounds a certificate, key or client CA file (PEM), as
// proflow serve bounds its own.
const maxPEMBytes = 1 << 20

// ServerTLSConfig returns the TLS settings of an agent serving the
// certificate and key in certFile and keyFile (PEM). With clientCAFile set,
// clients must present a certificate signed by one of the CAs in it (PEM);
// empty, any client may connect (use a bearer token then). TLS 1.2 is the
// oldest version accepted. Wrap the agent's listener with tls.NewListener.
// Each file must be a regular file of at most 1 MiB: anything else (a
// FIFO, a device, a directory) is refused without being read.
func ServerTLSConfig(certFile, keyFile, clientCAFile string) (*tls.Config, error) {
	cert, err := fileutil.ReadKeyPair(certFile, keyFile, maxPEMBytes)
	if err != nil {
		return nil, fmt.Errorf("tcstat: TLS %w", err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if clientCAFile == "" {
		return cfg, nil
	}
	pem, err := fileutil.ReadFile(clientCAFile, maxPEMBytes)
	if err != nil {
		return nil, fmt.Errorf("tcstat: TLS client CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("tcstat: TLS client CA %s: no PEM certificate in it, want one or more", clientCAFile)
	}
	cfg.ClientCAs = pool
	cfg.ClientAuth = tls.RequireAndVerifyClientCert
	return cfg, nil
}
