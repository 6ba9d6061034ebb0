package trace_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proflow-sdn/proflow/internal/fileutil/fileutiltest"
	"github.com/proflow-sdn/proflow/telemetry/trace"
)

// writeTrace writes a valid trace of n steps to name in a new directory
// and returns its path and its plain (uncompressed) bytes.
func writeTrace(t *testing.T, name string, n int, extra []byte) (string, []byte) {
	t.Helper()
	var plain bytes.Buffer
	if err := trace.Write(&plain, &trace.Episode{Meta: testMeta(), Steps: testSteps(n)}); err != nil {
		t.Fatal(err)
	}
	plain.Write(extra)
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, plain.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, plain.Bytes()
}

func TestOpenGzNameNotGzip(t *testing.T) {
	path, _ := writeTrace(t, "episode.jsonl.gz", 2, nil)
	_, err := trace.ReadFile(path)
	want := "trace " + path + `: not gzip data (starts with 7b 22, gzip starts with 1f 8b), want a gzip-compressed JSON-lines trace, or rename the file without .gz`
	if err == nil || err.Error() != want {
		t.Errorf("ReadFile = %v\nwant %s", err, want)
	}
	// Renamed without .gz, the same bytes read.
	plain := strings.TrimSuffix(path, ".gz")
	if err := os.Rename(path, plain); err != nil {
		t.Fatal(err)
	}
	if ep, err := trace.ReadFile(plain); err != nil || len(ep.Steps) != 2 {
		t.Errorf("ReadFile(%s) = %v, want the 2 steps", plain, err)
	}
	// Garbage under a .gz name says the same, not "invalid character".
	junk := filepath.Join(t.TempDir(), "junk.gz")
	if err := os.WriteFile(junk, []byte("\xc8\x01 not a trace\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := trace.Open(junk); err == nil || !strings.Contains(err.Error(), "trace "+junk+": not gzip data (starts with c8 01") {
		t.Errorf("Open(junk.gz) = %v, want it called not gzip data", err)
	}
}

func TestReadNotATrace(t *testing.T) {
	_, err := trace.Read(strings.NewReader("\xc8\x01 not a trace\n"))
	if err == nil || !strings.Contains(err.Error(), "trace: line 1: metadata: invalid character") || !strings.Contains(err.Error(), "want a JSON-lines trace, its first line the metadata object") {
		t.Errorf("Read = %v, want the first line and what a trace looks like", err)
	}
}

func TestReadLineTooLong(t *testing.T) {
	long := append(bytes.Repeat([]byte("x"), 16<<20+1), '\n')
	path, data := writeTrace(t, "episode.jsonl", 1, long)
	ep, err := trace.ReadFile(path)
	want := "trace " + path + ": line 3: longer than 16777216 bytes, want one JSON record per line"
	if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "after 1 steps") {
		t.Errorf("ReadFile = %.300v\nwant it to start %q and say where reading stopped", err, want)
	}
	if ep == nil || len(ep.Steps) != 1 {
		t.Errorf("ReadFile returned %v, want the step before the long line", ep)
	}
	if _, err := trace.Read(bytes.NewReader(data)); err == nil || !strings.HasPrefix(err.Error(), "trace: line 3: longer than 16777216 bytes") {
		t.Errorf("Read = %.300v, want the long line 3 named", err)
	}
}

// The Writer refuses a line longer than the Reader takes, and writes one
// just within the limit, which reads back.
func TestWriteLineTooLong(t *testing.T) {
	steps := testSteps(3)
	s := &steps[2]
	s.Decision.Error = "x"
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	// A line is its JSON and a newline; the longest the Reader takes is
	// maxLine (16 MiB) bytes in all.
	fit := 16<<20 - 1 - len(b) + 1
	for _, c := range []struct {
		name string
		n    int
		want string
	}{{"at the limit", fit, ""}, {"one byte over", fit + 1, "trace: step 2: line of 16777217 bytes, want at most 16777216"}} {
		t.Run(c.name, func(t *testing.T) {
			steps := testSteps(3)
			steps[2].Decision.Error = strings.Repeat("x", c.n)
			var buf bytes.Buffer
			w, err := trace.NewWriter(&buf, testMeta())
			if err != nil {
				t.Fatal(err)
			}
			for i := range steps {
				if err = w.Write(&steps[i]); err != nil {
					break
				}
			}
			if c.want != "" {
				if err == nil || !strings.HasPrefix(err.Error(), c.want) {
					t.Fatalf("Write = %.200v, want an error starting %q", err, c.want)
				}
				// Refused before anything was written: the Writer goes on.
				steps[2].Decision.Error = "short"
				if err := w.Write(&steps[2]); err != nil {
					t.Fatalf("Write after the refused step: %v", err)
				}
			} else if err != nil {
				t.Fatalf("Write = %.200v, want the step written", err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			ep, err := trace.Read(&buf)
			if err != nil || len(ep.Steps) != 3 {
				t.Fatalf("Read = %.200v, want the 3 steps back", err)
			}
		})
	}
}

// A trace path that is not a regular file is refused without blocking
// (os.Open blocked on a FIFO).
func TestOpenRefusesNonRegular(t *testing.T) {
	fileutiltest.RefusesNonRegular(t, "ep.jsonl", func(path string) error {
		r, err := trace.Open(path)
		if err == nil {
			r.Close()
		}
		return err
	})
}

// Read holds every step in memory, so it refuses a trace of more steps
// than its bound, or whose lines hold more bytes than its bound, at the
// line that passes it, with the steps before it and an error naming the
// bound; a trace at the bounds reads whole. (Read applies MaxSteps and
// MaxReadBytes; ReadLimited takes small ones.)
func TestReadBounded(t *testing.T) {
	var buf bytes.Buffer
	if err := trace.Write(&buf, &trace.Episode{Meta: testMeta(), Steps: testSteps(5)}); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	lines := bytes.SplitAfter(data, []byte("\n"))
	upTo := func(n int) int64 { return int64(len(bytes.Join(lines[:n+1], nil))) } // metadata and n steps
	for _, c := range []struct {
		name  string
		steps int
		bytes int64
		read  int
		want  string
	}{
		{"at the bounds", 5, int64(len(data)), 5, ""},
		{"one step over", 4, int64(len(data)), 4,
			"trace: line 6: more than 4 steps, want at most 4 (trace.MaxSteps) in a trace read whole; read a longer one step by step with a Reader (reading stopped there, after 4 steps)"},
		{"one byte over", 5, upTo(3) - 1, 2,
			fmt.Sprintf("trace: line 4: the lines up to it hold %d bytes, want at most %d (trace.MaxReadBytes) in a trace read whole; read a longer one step by step with a Reader (reading stopped there, after 2 steps)", upTo(3), upTo(3)-1)},
	} {
		t.Run(c.name, func(t *testing.T) {
			ep, err := trace.ReadLimited(bytes.NewReader(data), c.steps, c.bytes)
			if c.want == "" && err != nil || c.want != "" && (err == nil || err.Error() != c.want) {
				t.Errorf("ReadLimited = %v\nwant %q", err, c.want)
			}
			if ep == nil {
				t.Fatalf("ReadLimited returned no episode, want the first %d steps", c.read)
			}
			if len(ep.Steps) != c.read {
				t.Errorf("ReadLimited returned %d steps, want the first %d", len(ep.Steps), c.read)
			}
		})
	}
	if trace.MaxSteps != 1<<20 || trace.MaxReadBytes != 4<<30 {
		t.Errorf("MaxSteps %d, MaxReadBytes %d; want 1<<20 and 4 GiB as documented", trace.MaxSteps, trace.MaxReadBytes)
	}
}
