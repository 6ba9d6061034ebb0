package fileutil_test

import (
	"testing"

	"github.com/proflow-sdn/proflow/internal/fileutil"
	"github.com/proflow-sdn/proflow/internal/fileutil/fileutiltest"
)

// ReadFile and Open refuse a FIFO (without blocking on it), a directory
// and a device, with the check every loader's test uses.
func TestOpenRefusesNonRegular(t *testing.T) {
	t.Run("ReadFile", func(t *testing.T) {
		fileutiltest.RefusesNonRegular(t, "f", func(path string) error {
			_, err := fileutil.ReadFile(path, 1<<20)
			return err
		})
	})
	t.Run("Open", func(t *testing.T) {
		fileutiltest.RefusesNonRegular(t, "f", func(path string) error {
			f, err := fileutil.Open(path)
			if err == nil {
				f.Close()
			}
			return err
		})
	})
}
