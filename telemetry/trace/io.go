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
	"path/filepath"
	"strings"

	"github.com/proflow-sdn/proflow/internal/fileutil"
	"github.com/proflow-sdn/proflow/internal/jsonend"
)

// maxLine bounds one line of a trace, its newline included (a step of a
// very large fabric is still far below it). The Writer refuses a longer
// line, which the Reader could not read.
const maxLine = 16 << 20

// Bounds of a trace read whole by Read and ReadFile, which hold every step
// in memory: a huge or hostile trace is refused with an error naming the
// bound instead of exhausting memory. A Reader holds one step at a time
// and reads a trace of any length.
const (
	// MaxSteps bounds the steps Read and ReadFile hold: 1,048,576, six
	// days at the paper's 500 ms interval (the longest simulated episode,
	// see sim.Limits, keeps 8,400).
	MaxSteps = 1 << 20
	// MaxReadBytes bounds the lines, uncompressed and the metadata line
	// among them, that Read and ReadFile hold as steps: 4 GiB.
	MaxReadBytes = 4 << 30
)

// readLimits bound what readAll holds: Read and ReadFile use MaxSteps and
// MaxReadBytes; tests use smaller ones.
type readLimits struct {
	steps int
	bytes int64
}

var defaultReadLimits = readLimits{steps: MaxSteps, bytes: MaxReadBytes}

// order checks that the steps of a trace being written or read follow one
// another: it keeps the number and time of the last accepted step.
type order struct {
	prev Step // Seq and Time of the last accepted step
	n    int  // steps accepted
}

// check validates s against m and the last accepted step.
func (o *order) check(m *Meta, s *Step) error {
	var prev *Step
	if o.n > 0 {
		prev = &o.prev
	}
	return checkStep(m, prev, s)
}

// accept records s as the last step.
func (o *order) accept(s *Step) {
	o.prev = Step{Seq: s.Seq, Time: s.Time}
	o.n++
}

// Writer writes a trace: the metadata line, then one line per step. It
// validates what it writes, so a trace it produced always reads back.
// A Writer is not safe for concurrent use.
type Writer struct {
	meta Meta
	bw   *bufio.Writer
	gz   *gzip.Writer
	file *os.File // the temporary file of a Writer from Create
	path string   // where Close renames file to
	order
	err    error // the first failure that makes the trace unusable
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

// Create returns a Writer for the trace file at path; a path ending in
// ".gz" is gzip-compressed. It validates meta before touching the file
// system. The trace is written to a temporary file in path's directory,
// which Close renames over path once everything is written, so path only
// ever holds a complete trace, or whatever it held before.
//
// If any Write fails (an invalid step or an I/O error), the trace is
// incomplete: later Writes fail too, and Close removes the temporary file,
// leaves path untouched and returns the error. Abort does the same on
// demand.
func Create(path string, meta Meta) (*Writer, error) {
	meta.Format = Format
	if err := meta.Validate(); err != nil {
		return nil, fmt.Errorf("trace: create %s: %w", path, err)
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("trace: create %s: %w", path, err)
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
		os.Remove(f.Name())
		return nil, fmt.Errorf("trace: create %s: %w", path, err)
	}
	tw.path = path
	return tw, nil
}

// Meta returns the metadata the Writer wrote.
func (w *Writer) Meta() Meta { return w.meta }

// Write validates step s (against the metadata and the previous step) and
// writes it.
//
// A Writer from NewWriter refuses an invalid step without writing anything
// and stays usable. A Writer from Create does not: see Create. After an I/O
// error every Writer fails.
func (w *Writer) Write(s *Step) error {
	if w.closed {
		return errors.New("trace: write after close")
	}
	if w.err != nil {
		return fmt.Errorf("trace: write step %d after an earlier failure: %w", w.n, w.err)
	}
	if s == nil {
		return w.fail(fmt.Errorf("trace: step %d is nil", w.n), w.file != nil)
	}
	if err := w.check(&w.meta, s); err != nil {
		return w.fail(fmt.Errorf("trace: step %d: %w", w.n, err), w.file != nil)
	}
	b, err := encodeLine(s)
	if err != nil {
		return w.fail(fmt.Errorf("trace: step %d: %w", w.n, err), w.file != nil)
	}
	if _, err := w.bw.Write(b); err != nil {
		return w.fail(fmt.Errorf("trace: write step %d: %w", w.n, err), true)
	}
	w.accept(s)
	return nil
}

// fail returns err, remembering it first when it leaves the trace unusable.
func (w *Writer) fail(err error, sticky bool) error {
	if sticky {
		w.err = err
	}
	return err
}

// line writes v as one line.
func (w *Writer) line(v any) error {
	b, err := encodeLine(v)
	if err != nil {
		return err
	}
	_, err = w.bw.Write(b)
	return err
}

// encodeLine returns v as a line of JSON, refusing one longer than the
// Reader reads (maxLine).
func encodeLine(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	b = append(b, '\n')
	if len(b) > maxLine {
		return nil, fmt.Errorf("line of %d bytes, want at most %d (the longest a Reader reads)", len(b), maxLine)
	}
	return b, nil
}

// Flush writes buffered data to the underlying writer.
func (w *Writer) Flush() error {
	if err := w.bw.Flush(); err != nil {
		return fmt.Errorf("trace: flush: %w", err)
	}
	return nil
}

// Close flushes the trace. For a Writer from Create it finishes the gzip
// stream, syncs and closes the temporary file and renames it over the
// target path; if any step of that, or an earlier Write, failed, it removes
// the temporary file instead, leaving the target untouched, and returns the
// error. A Writer from NewWriter does not close the io.Writer it was given.
// Closing a closed Writer does nothing.
func (w *Writer) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	if w.err != nil {
		w.discard()
		if w.file != nil {
			return fmt.Errorf("trace: %s not written: %w", w.path, w.err)
		}
		return fmt.Errorf("trace: close: %w", w.err)
	}
	err := w.bw.Flush()
	if w.gz != nil {
		err = errors.Join(err, w.gz.Close())
	}
	if w.file == nil {
		if err != nil {
			return fmt.Errorf("trace: close: %w", err)
		}
		return nil
	}
	if err == nil {
		err = w.file.Chmod(0o644)
	}
	if err == nil {
		err = w.file.Sync()
	}
	if cerr := w.file.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(w.file.Name(), w.path)
	}
	if err != nil {
		os.Remove(w.file.Name())
		return fmt.Errorf("trace: write %s: %w", w.path, err)
	}
	return nil
}

// Abort closes the Writer without finishing the trace. For a Writer from
// Create it removes the temporary file, so the target path keeps whatever
// it held before; for a Writer from NewWriter it only stops further
// writes (what was already flushed stays written). Aborting a closed Writer
// does nothing.
func (w *Writer) Abort() {
	if w.closed {
		return
	}
	w.closed = true
	w.discard()
}

// discard drops a Create Writer's temporary file.
func (w *Writer) discard() {
	if w.file != nil {
		w.file.Close()
		os.Remove(w.file.Name())
	}
}

// Reader reads a trace written by Writer, validating every line. It reads
// gzip-compressed traces transparently.
type Reader struct {
	sc    *bufio.Scanner
	meta  Meta
	line  int
	read  int64  // bytes of the lines read, newlines included
	where string // "trace", or "trace PATH" for a Reader from Open
	order
	gz   *gzip.Reader
	file *os.File
}

// NewReader reads and validates the metadata line of the trace in r.
func NewReader(r io.Reader) (*Reader, error) {
	return newReader(r, nil, "trace", false)
}

// gzipMagic starts every gzip stream.
var gzipMagic = [2]byte{0x1f, 0x8b}

// newReader reads the metadata line of the trace in r; where names the
// trace in errors. With wantGzip (a file named .gz) input that is not gzip
// is an error rather than read as plain text.
func newReader(r io.Reader, file *os.File, where string, wantGzip bool) (*Reader, error) {
	br := bufio.NewReader(r)
	tr := &Reader{file: file, where: where}
	magic, _ := br.Peek(len(gzipMagic))
	switch {
	case string(magic) == string(gzipMagic[:]):
		gz, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%s: gzip: %w", where, err)
		}
		tr.gz = gz
		r = gz
	case wantGzip && len(magic) > 0:
		return nil, fmt.Errorf("%s: not gzip data (starts with % x, gzip starts with % x), want a gzip-compressed JSON-lines trace, or rename the file without .gz", where, magic, gzipMagic)
	default:
		r = br
	}
	tr.sc = bufio.NewScanner(r)
	tr.sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	b, err := tr.next()
	if err == io.EOF {
		return nil, fmt.Errorf("%s: empty, want a metadata line first", where)
	}
	if err != nil {
		return nil, err
	}
	if err := strictUnmarshal(b, &tr.meta); err != nil {
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) {
			return nil, fmt.Errorf("%s: line 1: metadata: %w; want a JSON-lines trace, its first line the metadata object", where, err)
		}
		return nil, fmt.Errorf("%s: line 1: metadata: %w", where, err)
	}
	if err := tr.meta.Validate(); err != nil {
		return nil, fmt.Errorf("%s: line 1: %w", where, err)
	}
	return tr, nil
}

// Open opens the trace file at path and reads its metadata. A file whose
// name ends in ".gz" must be gzip-compressed; any other is read as it is,
// gzip-compressed or not. Close the Reader when done.
func Open(path string) (*Reader, error) {
	f, err := fileutil.Open(path)
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	r, err := newReader(f, f, "trace "+path, strings.HasSuffix(path, ".gz"))
	if err != nil {
		f.Close()
		return nil, err
	}
	return r, nil
}

// Meta returns the trace's metadata.
func (r *Reader) Meta() Meta { return r.meta }

// Next reads the next step into s. It returns io.EOF after the last step,
// and an error naming the line for a malformed or invalid one, or for input
// that ends in the middle of a line or of its gzip stream.
func (r *Reader) Next(s *Step) error {
	b, err := r.next()
	if err != nil {
		return err
	}
	*s = Step{}
	if err := strictUnmarshal(b, s); err != nil {
		rerr := r.sc.Err()
		switch {
		case rerr != nil && errors.Is(err, io.ErrUnexpectedEOF):
			// The partial last line of input cut short.
			return fmt.Errorf("%s: line %d: incomplete, the input was cut short: %w", r.where, r.line, rerr)
		case rerr != nil:
			return fmt.Errorf("%s: line %d: %v; the input was cut short: %w", r.where, r.line, err, rerr)
		case errors.Is(err, io.ErrUnexpectedEOF):
			return fmt.Errorf("%s: line %d: incomplete JSON value: %w", r.where, r.line, err)
		}
		return fmt.Errorf("%s: line %d: %w", r.where, r.line, err)
	}
	if err := r.check(&r.meta, s); err != nil {
		return fmt.Errorf("%s: line %d: %w", r.where, r.line, err)
	}
	r.accept(s)
	return nil
}

func (r *Reader) next() ([]byte, error) {
	for r.sc.Scan() {
		r.line++
		r.read += int64(len(r.sc.Bytes())) + 1
		if b := bytes.TrimSpace(r.sc.Bytes()); len(b) > 0 {
			return b, nil
		}
	}
	switch err := r.sc.Err(); {
	case errors.Is(err, bufio.ErrTooLong):
		return nil, fmt.Errorf("%s: line %d: longer than %d bytes, want one JSON record per line: %w", r.where, r.line+1, maxLine, err)
	case err != nil:
		return nil, fmt.Errorf("%s: line %d: %w", r.where, r.line+1, err)
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
	if jsonend.End(dec) != nil {
		return errors.New("more than one JSON value on the line")
	}
	return nil
}

// Read reads a whole trace from r.
//
// If a step line is malformed or invalid, or the input ends in the middle of
// a line or of its gzip stream (a trace cut short by a crash), Read returns
// the episode with the steps before that line together with an error naming
// the line where reading stopped and how many steps were read. The episode
// is nil only when the metadata line cannot be read. A trace of more than
// MaxSteps steps, or whose lines hold more than MaxReadBytes bytes, is
// refused the same way at the line that passes the bound: read such a trace
// step by step with a Reader.
func Read(r io.Reader) (*Episode, error) {
	tr, err := NewReader(r)
	if err != nil {
		return nil, err
	}
	defer tr.Close()
	return readAll(tr, defaultReadLimits)
}

func readAll(tr *Reader, lim readLimits) (*Episode, error) {
	ep := &Episode{Meta: tr.Meta()}
	for {
		var s Step
		err := tr.Next(&s)
		if err == io.EOF {
			return ep, nil
		}
		switch {
		case err != nil:
		case len(ep.Steps) >= lim.steps:
			err = fmt.Errorf("%s: line %d: more than %d steps, want at most %d (trace.MaxSteps) in a trace read whole; read a longer one step by step with a Reader",
				tr.where, tr.line, lim.steps, lim.steps)
		case tr.read > lim.bytes:
			err = fmt.Errorf("%s: line %d: the lines up to it hold %d bytes, want at most %d (trace.MaxReadBytes) in a trace read whole; read a longer one step by step with a Reader",
				tr.where, tr.line, tr.read, lim.bytes)
		}
		if err != nil {
			return ep, fmt.Errorf("%w (reading stopped there, after %d steps)", err, len(ep.Steps))
		}
		ep.Steps = append(ep.Steps, s)
	}
}

// ReadFile reads the whole trace file at path. Like Read, it returns the
// steps read before a bad or cut-short line, or before the line that passes
// MaxSteps or MaxReadBytes, together with the error.
func ReadFile(path string) (*Episode, error) {
	tr, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer tr.Close()
	return readAll(tr, defaultReadLimits)
}

// Write writes a whole episode to w. It stops at the first invalid step and
// returns its error; w may then hold the beginning of the trace. Use
// WriteFile for a file that must hold either the whole trace or nothing new.
func Write(w io.Writer, ep *Episode) error {
	if ep == nil {
		return errors.New("trace: write: episode is nil")
	}
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
// path ends in ".gz") through a temporary file, as Create does: if the
// metadata or any step is invalid, or writing fails, it returns the error
// and path keeps whatever it held before.
func WriteFile(path string, ep *Episode) error {
	if ep == nil {
		return fmt.Errorf("trace: write %s: episode is nil", path)
	}
	tw, err := Create(path, ep.Meta)
	if err != nil {
		return err
	}
	for i := range ep.Steps {
		if err := tw.Write(&ep.Steps[i]); err != nil {
			tw.Abort()
			return fmt.Errorf("trace: %s not written: %w", path, err)
		}
	}
	return tw.Close()
}
