package main

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// copyModule copies the module tree src (read-only in the module cache) to
// dst, leaving out skipDirs. Copies are writable by their owner; regular
// files and folders only.
func copyModule(src, dst string) error {
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		r, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, r)
		switch {
		case d.IsDir() && skipDirs[r]:
			return filepath.SkipDir
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type().IsRegular():
			return copyFile(path, target)
		default:
			return nil // the module cache holds no links or devices
		}
	})
	if err != nil {
		return fmt.Errorf("copy %s to %s: %w", src, dst, err)
	}
	return nil
}

// copyFile copies one file, keeping its executable bits and adding the
// owner's write permission.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, fi.Mode().Perm()|0o200)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
