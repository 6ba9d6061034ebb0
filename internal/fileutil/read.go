package fileutil

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"syscall"
)

// Errors of ReadFile, Open and CheckRegular.
var (
	// ErrNotRegular marks a path that names something other than a
	// regular file: a directory, a device (/dev/zero), a FIFO, a socket.
	ErrNotRegular = errors.New("not a regular file")
	// ErrTooLarge marks a file larger than the reader's bound.
	ErrTooLarge = errors.New("file too large")
)

// CheckRegular returns nil when path names a regular file of at most
// maxBytes bytes (following symbolic links); else an error wrapping
// ErrNotRegular or ErrTooLarge, or the os error. It never opens the file,
// so a FIFO does not block it.
func CheckRegular(path string, maxBytes int64) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	return checkInfo(path, fi, maxBytes)
}

func checkInfo(path string, fi os.FileInfo, maxBytes int64) error {
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is a %s: %w, want a regular file", path, kind(fi.Mode()), ErrNotRegular)
	}
	if fi.Size() > maxBytes {
		return fmt.Errorf("%s holds %d bytes: %w, want at most %d", path, fi.Size(), ErrTooLarge, maxBytes)
	}
	return nil
}

func kind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&os.ModeNamedPipe != 0:
		return "FIFO"
	case m&os.ModeSocket != 0:
		return "socket"
	case m&os.ModeDevice != 0:
		return "device"
	}
	return "special file"
}

// ReadFile reads the regular file at path whole, refusing anything that
// is not a regular file (CheckRegular) and a file of more than maxBytes
// bytes, even one that grows while it is read. Unlike os.ReadFile it does
// not block on a FIFO and does not read /dev/zero until memory runs out.
func ReadFile(path string, maxBytes int64) ([]byte, error) {
	f, err := openRegular(path, maxBytes)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(data)) > maxBytes {
		return nil, fmt.Errorf("%s grew past %d bytes while read: %w, want at most %d", path, maxBytes, ErrTooLarge, maxBytes)
	}
	return data, nil
}

// Open opens the regular file at path for reading, as os.Open does, but
// refuses anything that is not a regular file (a directory, a device, a
// FIFO, a socket) with an error wrapping ErrNotRegular. It does not block
// on a FIFO, not even one that replaces path between its check and the
// open. It is for readers that bound what they read themselves; ReadFile
// reads a small file whole.
func Open(path string) (*os.File, error) {
	return openRegular(path, math.MaxInt64)
}

// openRegular opens path for reading once CheckRegular accepts it, and
// checks the opened file again.
func openRegular(path string, maxBytes int64) (*os.File, error) {
	if err := CheckRegular(path, maxBytes); err != nil {
		return nil, err
	}
	// O_NONBLOCK: should path be replaced by a FIFO after the check, open
	// returns at once; the check of the open file below refuses it. It
	// changes nothing for a regular file.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		err = checkInfo(path, fi, maxBytes)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
