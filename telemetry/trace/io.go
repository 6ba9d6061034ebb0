package trace

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// maxLine bounds one line of a trace (a step of a very large fabric is
// still far below it).
const maxLine = 16 << 20

// Writer writes a trace: the metadata line, then one line per step. It
// validates what it writes, so a trace it produced always reads back.
// A Writer is not safe for concurrent use.
type Writer struct {
	meta   Meta
	bw     *bufio.Writer
	gz     *gzip.Writer
	file   *os.File
	prev   Step
	n      int
	closed bool
}

// NewWriter validates meta (filling in Format) and writes it to w.
func NewWriter(w io.Writer, meta Meta) (*Writer, error) {
	return newWriter(w, meta, nil, nil)
}

func newWriter(w io.Writer, meta Meta, gz *gzip.Writer, file *os.File) (*Writer, error) {
	meta.Format = Format
	if err := meta.Validate(); err != nil {
		return nil, err
	}
	tw := &Writer{meta: meta, bw: bufio.NewWriter(w), gz: gz, file: file}
	if err := tw.line(&meta); err != nil {
		return nil, fmt.Errorf("trace: write metadata: %w", err)
	}
	return tw, nil
}

// Create creates the file at path and returns a Writer on it; a path ending
// in ".gz" is gzip-compressed. Close the Writer to finish the file.
func Create(path string, meta Meta) (*Writer, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	var w io.Writer = f
	var gz *gzip.Writer
	if strings.HasSuffix(path, ".gz") {
		gz = gzip.NewWriter(f)
		w = gz
	}
	tw, err := newWriter(w, meta, gz, f)
	if err != nil {
		f.Close()
		os.Remove(path)
		return nil, err
	}
	return tw, nil
}

// Meta returns the metadata the Writer wrote.
func (w *Writer) Meta() Meta { return w.meta }

// Write validates step s (against the metadata and the previous step) and
// writes it.
func (w *Writer) Write(s *Step) error {
	if w.closed {
		return errors.New("trace: write after close")
	}
	var prev *Step
	if w.n > 0 {
		prev = &w.prev
	}
	if err := checkStep(&w.meta, prev, s); err != nil {
		return fmt.Errorf("trace: step %d: %w", w.n, err)
	}
	if err := w.line(s); err != nil {
		return fmt.Errorf("trace: write step %d: %w", w.n, err)
	}
	w.prev = Step{Seq: s.Seq, Time: s.Time}
	w.n++
	return nil
}

func (w *Writer) line(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = w.bw.Write(b)
	return err
}

// Flush writes buffered data to the underlying writer.
func (w *Writer) Flush() error {
	if err := w.bw.Flush(); err != nil {
		return fmt.Errorf("trace: flush: %w", err)
	}
	return nil
}

// Close flushes the trace and, for a Writer from Create, finishes the gzip
// stream and closes the file. A Writer from NewWriter does not close the
// io.Writer it was given.
func (w *Writer) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	err := w.bw.Flush()
	if w.gz != nil {
		err = errors.Join(err, w.gz.Close())
	}
	if w.file != nil {
		err = errors.Join(err, w.file.Close())
	}
	if err != nil {
		return fmt.Errorf("trace: close: %w", err)
	}
	return nil
}

// Reader reads a trace written by Writer, validating every line. It reads
// gzip-compressed traces transparently.
type Reader struct {
	sc   *bufio.Scanner
	meta Meta
	line int
	prev Step
	n    int
	gz   *gzip.Reader
	file *os.File
}

// NewReader reads and validates the metadata line of the trace in r.
func NewReader(r io.Reader) (*Reader, error) {
	return newReader(r, nil)
}

func newReader(r io.Reader, file *os.File) (*Reader, error) {
	br := bufio.NewReader(r)
	tr := &Reader{file: file}
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("trace: gzip: %w", err)
		}
		tr.gz = gz
		r = gz
	} else {
		r = br
	}
	tr.sc = bufio.NewScanner(r)
	tr.sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	b, err := tr.next()
	if err == io.EOF {
		return nil, errors.New("trace: empty, want a metadata line first")
	}
	if err != nil {
		return nil, err
	}
	if err := strictUnmarshal(b, &tr.meta); err != nil {
		return nil, fmt.Errorf("trace: line 1: metadata: %w", err)
	}
	if err := tr.meta.Validate(); err != nil {
		return nil, fmt.Errorf("trace: line 1: %w", err)
	}
	return tr, nil
}

// Open opens the trace file at path (gzip-compressed or not) and reads its
// metadata. Close the Reader when done.
func Open(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	r, err := newReader(f, f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// Meta returns the trace's metadata.
func (r *Reader) Meta() Meta { return r.meta }

// Next reads the next step into s. It returns io.EOF after the last step,
// and an error naming the line for a malformed or invalid one.
func (r *Reader) Next(s *Step) error {
	b, err := r.next()
	if err != nil {
		return err
	}
	*s = Step{}
	if err := strictUnmarshal(b, s); err != nil {
		return fmt.Errorf("trace: line %d: %w", r.line, err)
	}
	var prev *Step
	if r.n > 0 {
		prev = &r.prev
	}
	if err := checkStep(&r.meta, prev, s); err != nil {
		return fmt.Errorf("trace: line %d: %w", r.line, err)
	}
	r.prev = Step{Seq: s.Seq, Time: s.Time}
	r.n++
	return nil
}

func (r *Reader) next() ([]byte, error) {
	for r.sc.Scan() {
		r.line++
		if b := bytes.TrimSpace(r.sc.Bytes()); len(b) > 0 {
			return b, nil
		}
	}
	if err := r.sc.Err(); err != nil {
		return nil, fmt.Errorf("trace: line %d: %w", r.line+1, err)
	}
	return nil, io.EOF
}

// Close releases the gzip reader and, for a Reader from Open, the file.
func (r *Reader) Close() error {
	var err error
	if r.gz != nil {
		err = r.gz.Close()
	}
	if r.file != nil {
		err = errors.Join(err, r.file.Close())
	}
	return err
}

func strictUnmarshal(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("more than one JSON value on the line")
	}
	return nil
}

// Read reads a whole trace from r.
func Read(r io.Reader) (*Episode, error) {
	tr, err := NewReader(r)
	if err != nil {
		return nil, err
	}
	defer tr.Close()
	return readAll(tr)
}

func readAll(tr *Reader) (*Episode, error) {
	ep := &Episode{Meta: tr.Meta()}
	for {
		var s Step
		err := tr.Next(&s)
		if err == io.EOF {
			return ep, nil
		}
		if err != nil {
			return nil, err
		}
		ep.Steps = append(ep.Steps, s)
	}
}

// ReadFile reads the whole trace file at path.
func ReadFile(path string) (*Episode, error) {
	tr, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer tr.Close()
	ep, err := readAll(tr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ep, nil
}

// Write writes a whole episode to w.
func Write(w io.Writer, ep *Episode) error {
	tw, err := NewWriter(w, ep.Meta)
	if err != nil {
		return err
	}
	for i := range ep.Steps {
		if err := tw.Write(&ep.Steps[i]); err != nil {
			return err
		}
	}
	return tw.Close()
}

// WriteFile writes a whole episode to the file at path (gzip-compressed if
// path ends in ".gz").
func WriteFile(path string, ep *Episode) error {
	tw, err := Create(path, ep.Meta)
	if err != nil {
		return err
	}
	for i := range ep.Steps {
		if err := tw.Write(&ep.Steps[i]); err != nil {
			tw.Close()
			return err
		}
	}
	return tw.Close()
}
