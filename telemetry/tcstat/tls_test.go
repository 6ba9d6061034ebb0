package tcstat_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proflow-sdn/proflow/internal/fileutil"
	"github.com/proflow-sdn/proflow/internal/fileutil/fileutiltest"
	"github.com/proflow-sdn/proflow/internal/testpki"
	"github.com/proflow-sdn/proflow/telemetry/tcstat"
)

// ServerTLSConfig reads its certificate, key and client CA as every other
// configuration file is read: a path that is not a regular file is refused
// without blocking (os.ReadFile blocked on a FIFO and read /dev/zero until
// memory ran out).
func TestServerTLSConfigRefusesNonRegular(t *testing.T) {
	ca := testpki.New(t, "tcstat test CA")
	keyFile, certFile, caFile := ca.WritePEM(t, t.TempDir(), "agent", ca.Server(t, "agent"))
	for _, c := range []struct {
		name string
		load func(path string) error
	}{
		{"ca", func(p string) error { _, err := tcstat.ServerTLSConfig(certFile, keyFile, p); return err }},
		{"cert", func(p string) error { _, err := tcstat.ServerTLSConfig(p, keyFile, caFile); return err }},
		{"key", func(p string) error { _, err := tcstat.ServerTLSConfig(certFile, p, caFile); return err }},
	} {
		t.Run(c.name, func(t *testing.T) { fileutiltest.RefusesNonRegular(t, c.name+".pem", c.load) })
	}
}

// A client CA, certificate or key file over 1 MiB is refused by its size,
// with an error naming the file and the bound.
func TestServerTLSConfigRefusesLargeFile(t *testing.T) {
	ca := testpki.New(t, "tcstat test CA")
	dir := t.TempDir()
	keyFile, certFile, caFile := ca.WritePEM(t, dir, "agent", ca.Server(t, "agent"))
	big := filepath.Join(dir, "big.pem")
	pem, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	// Valid PEM padded past the bound, so only the size can refuse it.
	data := append(pem, make([]byte, 1<<20)...)
	if err := os.WriteFile(big, data, 0o600); err != nil {
		t.Fatal(err)
	}
	for name, args := range map[string][3]string{
		"ca":   {certFile, keyFile, big},
		"cert": {big, keyFile, caFile},
		"key":  {certFile, big, caFile},
	} {
		_, err := tcstat.ServerTLSConfig(args[0], args[1], args[2])
		if !errors.Is(err, fileutil.ErrTooLarge) || !strings.Contains(err.Error(), big) || !strings.Contains(err.Error(), "want at most 1048576") {
			t.Errorf("ServerTLSConfig with a %d-byte %s file = %v, want fileutil.ErrTooLarge naming the file and the bound", len(data), name, err)
		}
	}
}
