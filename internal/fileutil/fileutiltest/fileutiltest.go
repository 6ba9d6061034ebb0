// Package fileutiltest checks in tests that a file loader refuses what is
// not a regular file (see fileutil.Open and fileutil.ReadFile) without
// blocking on it.
package fileutiltest

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow/internal/fileutil"
)

// Timeout is how long RefusesNonRegular waits for a load before it fails
// the test as blocked.
const Timeout = 5 * time.Second

// RefusesNonRegular checks, in subtests named fifo, directory and device,
// that load refuses a FIFO, a directory and a symbolic link to /dev/zero,
// each called name (in a temporary directory; a loader may want a suffix
// such as ".json"), with an error matching fileutil.ErrNotRegular. A load that has not returned
// after Timeout fails its subtest instead of hanging the test binary (the
// goroutine running it stays blocked). Run the subtests alone with -run
// NAME/fifo, for a loader that would read /dev/zero until memory runs out.
func RefusesNonRegular(t *testing.T, name string, load func(path string) error) {
	t.Helper()
	fifo := filepath.Join(t.TempDir(), name)
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), name)
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	device := filepath.Join(t.TempDir(), name)
	if err := os.Symlink("/dev/zero", device); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, path string }{{"fifo", fifo}, {"directory", dir}, {"device", device}} {
		t.Run(c.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { done <- load(c.path) }()
			select {
			case err := <-done:
				if !errors.Is(err, fileutil.ErrNotRegular) {
					t.Errorf("load %s: %v, want an error matching fileutil.ErrNotRegular", c.path, err)
				}
			case <-time.After(Timeout):
				t.Fatalf("load %s blocked for %v, want it refused as not a regular file", c.path, Timeout)
			}
		})
	}
}
