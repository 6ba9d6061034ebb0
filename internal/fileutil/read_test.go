package fileutil

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// ReadFile refuses a file over the bound and reads a regular file (what
// else it refuses is TestOpenRefusesNonRegular's).
func TestReadFileRefusesLarge(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	if err := os.WriteFile(small, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(small, 5); err != nil || string(b) != "hello" {
		t.Fatalf("ReadFile(small) = %q, %v, want hello", b, err)
	}
	if _, err := ReadFile(small, 4); !errors.Is(err, ErrTooLarge) {
		t.Errorf("ReadFile(small, 4) = %v, want ErrTooLarge", err)
	}
}

// Open opens a regular file (what it refuses is TestOpenRefusesNonRegular's).
func TestOpenRegular(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	if err := os.WriteFile(small, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Open(small)
	if err != nil {
		t.Fatalf("Open(small) = %v, want the file", err)
	}
	b := make([]byte, 8)
	if n, err := f.Read(b); err != nil || string(b[:n]) != "hello" {
		t.Errorf("read %q, %v from the opened file, want hello", b[:n], err)
	}
	f.Close()
	if _, err := Open(filepath.Join(dir, "absent")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open(absent) = %v, want os.ErrNotExist", err)
	}
}
