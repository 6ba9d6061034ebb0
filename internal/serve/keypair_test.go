package serve

import (
	"testing"

	"github.com/proflow-sdn/proflow/internal/fileutil/fileutiltest"
	"github.com/proflow-sdn/proflow/internal/testpki"
)

// The TLS key pair of a southbound is read bounded and from regular files
// only, the certificate and the key alike (tls.LoadX509KeyPair blocked on
// a FIFO and read a device without end), and a good pair still loads.
func TestLoadKeyPairRefusesNonRegular(t *testing.T) {
	ca := testpki.New(t, "proflow test CA")
	key, cert, _ := ca.WritePEM(t, t.TempDir(), "switch", ca.Server(t, "switch"))
	if _, err := loadKeyPair(cert, key); err != nil {
		t.Fatalf("a good key pair: %v", err)
	}
	fileutiltest.RefusesNonRegular(t, "cert.pem", func(path string) error {
		_, err := loadKeyPair(path, key)
		return err
	})
	fileutiltest.RefusesNonRegular(t, "key.pem", func(path string) error {
		_, err := loadKeyPair(cert, path)
		return err
	})
}
