package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/proflow-sdn/proflow/internal/fileutil"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
)

// listTraces returns the trace files (*.jsonl, *.jsonl.gz) directly in
// dir, sorted by name; none is not an error.
func listTraces(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir) // sorted by name
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, ent := range entries {
		if n := ent.Name(); !ent.IsDir() && (strings.HasSuffix(n, ".jsonl") || strings.HasSuffix(n, ".jsonl.gz")) {
			paths = append(paths, filepath.Join(dir, n))
		}
	}
	return paths, nil
}

// writePNG renders p at width × height into the PNG file path, in memory
// first and then through a temporary file renamed over path, so a reader
// never sees half an image.
func writePNG(path string, p *plot.Plot, width, height vg.Length) error {
	img, err := p.WriterTo(width, height, "png")
	if err != nil {
		return err
	}
	return fileutil.WriteAtomic(path, func(w io.Writer) error {
		_, err := img.WriteTo(w)
		return err
	})
}
