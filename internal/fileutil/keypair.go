package fileutil

import (
	"crypto/tls"
	"fmt"
)

// ReadKeyPair reads a PEM certificate and its private key as
// tls.LoadX509KeyPair does, but each with ReadFile: from a regular file of
// at most maxBytes, so a FIFO or a device in their place is refused
// without being read. Its errors say which of the two was wrong:
// "certificate: …", "key: …", or "certificate FILE with key FILE: …" for
// a pair that does not match or does not parse.
func ReadKeyPair(certFile, keyFile string, maxBytes int64) (tls.Certificate, error) {
	certPEM, err := ReadFile(certFile, maxBytes)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("certificate: %w", err)
	}
	keyPEM, err := ReadFile(keyFile, maxBytes)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("key: %w", err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("certificate %s with key %s: %w", certFile, keyFile, err)
	}
	return cert, nil
}
