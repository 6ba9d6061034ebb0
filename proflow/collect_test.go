package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proflow-sdn/proflow/internal/fileutil"
	"github.com/proflow-sdn/proflow/internal/fileutil/fileutiltest"
	"github.com/proflow-sdn/proflow/training"
)

func TestCollectCommand(t *testing.T) {
	dir := t.TempDir()
	shares := filepath.Join(dir, "shares.json")
	if err := os.WriteFile(shares, []byte(`{"F_EARLY": 1, "H_PARTIAL": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "new", "corpus.dataset") // a directory collect creates
	traces := filepath.Join(dir, "traces")
	e, stdout, _ := newTestEnv()
	err := e.dispatch(context.Background(), []string{"collect", "-episodes", "2", "-seed", "3", "-out", out, "-shares", shares, "-traces", traces, "-parallel", "2"})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := training.LoadDataset(out)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(ds.Episodes()); got != 2 {
		t.Errorf("%d episodes in the dataset, want 2", got)
	}
	for _, want := range []string{"F_EARLY", "H_PARTIAL", "wrote " + out, "seed 3"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, stdout.String())
		}
	}

	// The written traces convert back into a dataset.
	back := filepath.Join(dir, "back.dataset")
	e, stdout, _ = newTestEnv()
	if err := e.dispatch(context.Background(), []string{"collect", "-from-traces", traces, "-out", back}); err != nil {
		t.Fatal(err)
	}
	ds2, err := training.LoadDataset(back)
	if err != nil {
		t.Fatal(err)
	}
	if ds2.Len() != ds.Len() {
		t.Errorf("%d transitions from the traces, want %d", ds2.Len(), ds.Len())
	}

	e, _, _ = newTestEnv()
	if err := e.dispatch(context.Background(), []string{"collect", "-shares", filepath.Join(dir, "missing.json"), "-out", out}); err == nil {
		t.Error("missing shares file: no error")
	}
}

// A -shares file that is not a regular file is refused without blocking:
// os.ReadFile blocked on a FIFO and read /dev/zero until memory ran out.
func TestCollectSharesRefusesNonRegular(t *testing.T) {
	out := filepath.Join(t.TempDir(), "corpus.dataset")
	fileutiltest.RefusesNonRegular(t, "shares.json", func(path string) error {
		e, _, _ := newTestEnv()
		return e.dispatch(context.Background(), []string{"collect", "-shares", path, "-out", out})
	})
	big := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(big, []byte(strings.Repeat(" ", 64<<10)+`{"A": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	e, _, _ := newTestEnv()
	if err := e.dispatch(context.Background(), []string{"collect", "-shares", big, "-out", out}); !errors.Is(err, fileutil.ErrTooLarge) {
		t.Errorf("-shares of more than 64 KiB: %v, want fileutil.ErrTooLarge", err)
	}
}
