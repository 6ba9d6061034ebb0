// Package fileutil holds the file-writing helpers the project's formats
// share: atomic replacement and CSV tables.
package fileutil

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// WriteAtomic writes a file through write and replaces path with it
// atomically: the data goes to a temporary file in path's directory, which is
// flushed, made 0644, synced and renamed over path, so a reader never sees a
// partial file. On error the temporary file is removed and path is untouched.
func WriteAtomic(path string, write func(io.Writer) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := write(bw); err != nil {
		return err
	}
	for _, step := range []func() error{bw.Flush, func() error { return f.Chmod(0o644) }, f.Sync, f.Close} {
		if err := step(); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// WriteCSV writes rows as a CSV file at path.
func WriteCSV(path string, rows [][]string) error {
	return WriteAtomic(path, func(w io.Writer) error {
		cw := csv.NewWriter(w)
		if err := cw.WriteAll(rows); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		return nil
	})
}
