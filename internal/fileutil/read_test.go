package fileutil

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// ReadFile refuses a device, a FIFO (without blocking on it), a directory
// and a file over the bound, and reads a regular file.
func TestReadFileRefusesNonRegularAndLarge(t *testing.T) {
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
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/dev/zero", fifo, dir} {
		done := make(chan error, 1)
		go func() { _, err := ReadFile(p, 1<<20); done <- err }()
		select {
		case err := <-done:
			if !errors.Is(err, ErrNotRegular) {
				t.Errorf("ReadFile(%s) = %v, want ErrNotRegular", p, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("ReadFile(%s) blocked", p)
		}
	}
}

// Open refuses a device, a FIFO (without blocking on it) and a directory,
// and opens a regular file of any size.
func TestOpenRefusesNonRegular(t *testing.T) {
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
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/dev/zero", fifo, dir} {
		done := make(chan error, 1)
		go func() {
			f, err := Open(p)
			if err == nil {
				f.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, ErrNotRegular) {
				t.Errorf("Open(%s) = %v, want ErrNotRegular", p, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("Open(%s) blocked", p)
		}
	}
}
