package ovsfabric

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow/southbound/openflow"
)

// The baseline phase fits before the congestion: the default (4 discarded,
// 10 averaged) where there is room, fewer samples where there is less, an
// error where not even two fit.
func TestBaselinePhase(t *testing.T) {
	for _, c := range []struct {
		start            time.Duration
		warmup, samples  int
		wantErrSubstring string
	}{
		{10 * time.Second, 4, 10, ""},
		{5 * time.Second, 4, 5, ""},
		{3500 * time.Millisecond, 4, 2, ""},
		{3 * time.Second, 0, 0, "too early"},
	} {
		w, s, err := baselinePhase(c.start, 500*time.Millisecond, 4, 10)
		if c.wantErrSubstring != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErrSubstring) {
				t.Errorf("start %v: %v, want an error containing %q", c.start, err, c.wantErrSubstring)
			}
			continue
		}
		if err != nil || w != c.warmup || s != c.samples {
			t.Errorf("start %v: warmup %d, samples %d, %v; want %d, %d", c.start, w, s, err, c.warmup, c.samples)
		}
	}
}

func TestHostAddr(t *testing.T) {
	w := openflow.PaperFabric()
	if a, err := hostAddr(w, "h7"); err != nil || a != netip.MustParseAddr("10.0.0.7") {
		t.Errorf("hostAddr(h7) = %v, %v; want 10.0.0.7", a, err)
	}
	if _, err := hostAddr(w, "h9"); err == nil || !strings.Contains(err.Error(), `"h9"`) || !strings.Contains(err.Error(), "h8") {
		t.Errorf("hostAddr(h9) = %v, want an error naming h9 and the hosts there are", err)
	}
}

// The episode's output keeps its first write error: the episode stops on
// it (a closed pipe: nobody reads the episode any more), and nothing more
// is written.
func TestOutWriterKeepsFirstError(t *testing.T) {
	var b strings.Builder
	o := &outWriter{w: &b}
	if _, err := o.Write([]byte("line 1\n")); err != nil || o.err != nil {
		t.Fatalf("write: %v (kept %v), want nil", err, o.err)
	}
	o.w = failWriter{}
	if _, err := o.Write([]byte("line 2\n")); !errors.Is(err, syscall.EPIPE) || !errors.Is(o.err, syscall.EPIPE) {
		t.Fatalf("write to a closed pipe: %v (kept %v), want EPIPE", err, o.err)
	}
	o.w = &b
	if _, err := o.Write([]byte("line 3\n")); !errors.Is(err, syscall.EPIPE) || b.String() != "line 1\n" {
		t.Fatalf("write after the error: %v, output %q; want EPIPE and line 1 alone", err, b.String())
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, syscall.EPIPE }

// alive tells a running process from one that exited, reaped or not (a
// daemon's zombie, until its new parent reaps it).
func TestAlive(t *testing.T) {
	if !alive(os.Getpid()) {
		t.Errorf("alive(own pid %d) = false", os.Getpid())
	}
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	deadline := time.Now().Add(5 * time.Second)
	for alive(pid) { // a zombie once it exits: not waited for yet
		if time.Now().After(deadline) {
			t.Fatalf("alive(%d) still true 5 s after true started", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
		t.Errorf("the exited process %d was reaped before the test looked at its zombie: %v", pid, err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if alive(pid) {
		t.Errorf("alive(%d), a process that exited and was reaped, = true", pid)
	}
}
