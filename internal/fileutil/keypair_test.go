package fileutil_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proflow-sdn/proflow/internal/fileutil"
	"github.com/proflow-sdn/proflow/internal/testpki"
)

// ReadKeyPair loads a good pair and says which file is wrong otherwise:
// a missing certificate, a missing key, or a key of another certificate.
func TestReadKeyPair(t *testing.T) {
	ca := testpki.New(t, "fileutil test CA")
	dir := t.TempDir()
	key, cert, _ := ca.WritePEM(t, dir, "a", ca.Server(t, "a"))
	otherKey, _, _ := ca.WritePEM(t, dir, "b", ca.Server(t, "b"))
	if _, err := fileutil.ReadKeyPair(cert, key, 1<<20); err != nil {
		t.Fatalf("a good pair: %v", err)
	}
	missing := filepath.Join(dir, "missing.pem")
	for _, c := range []struct {
		name, cert, key, want string
	}{
		{"no certificate", missing, key, "certificate: "},
		{"no key", cert, missing, "key: "},
		{"another certificate's key", cert, otherKey, "certificate " + cert + " with key " + otherKey + ": "},
	} {
		_, err := fileutil.ReadKeyPair(c.cert, c.key, 1<<20)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error starting %q", c.name, err, c.want)
		}
	}
	if _, err := fileutil.ReadKeyPair(cert, key, 10); !errors.Is(err, fileutil.ErrTooLarge) {
		t.Errorf("a 10-byte bound: %v, want ErrTooLarge", err)
	}
}
