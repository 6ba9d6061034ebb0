//go:build linux

package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow/internal/syncbuf"
	"github.com/proflow-sdn/proflow/southbound/openflow/ovsfabric"
)

// Issue 22, item 5: proflow fabric run tears its fabric down however it is
// stopped: its standard output closed after the first lines (proflow fabric
// run | head -3), SIGINT or SIGTERM while the fabric is being built (as
// ovsdb-server starts, among the namespaces, as the bridges are added) or
// while the episode runs (the protected flow alone, then with congesters).
// Each time the binary must exit by itself within 30 s with status 1 and
// leave no OVS daemon of its run directory, no namespace or link of its
// prefix, no traffic generator (no process runs the binary) and the
// machine-wide lock free; each case's fabric comes up where the previous
// case's was, so the lock and the names were free for it. A SIGKILL leaves
// the daemons, namespaces and links (package ovsfabric's Teardown) but no
// traffic generator, and proflow fabric down removes the rest. About 45 s
// as root; skipped when not root, failed when root lacks the fabric's
// tools.
func TestFabricRunTeardown(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipping: not root (the OVS fabric needs network namespaces, veth and tc)")
	}
	if err := ovsfabric.Check(); err != nil {
		t.Fatalf("root, but the fabric cannot be built: %v", err)
	}
	// The run directory is where make ovs-down looks for the fabrics of
	// crashed test processes.
	prefix := fmt.Sprintf("d%02d-", os.Getpid()%100)
	fab := teardownFabric{bin: buildProflow(t, t.TempDir()), prefix: prefix, runDir: filepath.Join("/tmp/proflow-ovs-test", prefix)}
	t.Cleanup(func() { fab.down(t) }) // whatever a failed case left

	interrupt := func(sig syscall.Signal, stderrHas string) func(*testing.T, *fabricRun) {
		return func(t *testing.T, r *fabricRun) {
			r.waitStderr(t, stderrHas)
			_ = r.cmd.Process.Signal(sig)
		}
	}
	afterLines := func(sig syscall.Signal, n int) func(*testing.T, *fabricRun) {
		return func(t *testing.T, r *fabricRun) {
			r.readLines(t, n)
			_ = r.cmd.Process.Signal(sig)
		}
	}
	for _, c := range []struct {
		name string
		stop func(*testing.T, *fabricRun)
		// wantStderr is what the error printed must say, if anything.
		wantStderr string
		// killed: stop kills proflow (SIGKILL); proflow fabric down
		// must remove what it leaves.
		killed bool
	}{
		{"stdout closed after 3 lines", func(t *testing.T, r *fabricRun) {
			r.readLines(t, 3) // the two header lines and second 1
			r.stdout.Close()
		}, "broken pipe", false},
		{"SIGINT as ovsdb-server starts", interrupt(syscall.SIGINT, `cmd="ovsdb-server `), "", false},
		{"SIGTERM among the namespaces", interrupt(syscall.SIGTERM, `cmd="ip netns add `+fab.prefix+"h4"), "", false},
		{"SIGINT as the bridges are added", interrupt(syscall.SIGINT, "add-br"), "", false},
		// Second 1 of the episode: the protected flow alone.
		{"SIGTERM before the congestion", afterLines(syscall.SIGTERM, 3), "terminated signal received", false},
		// Second 5: the congesters have started (at 4 s).
		{"SIGINT with the congesters running", afterLines(syscall.SIGINT, 7), "interrupt signal received", false},
		{"SIGKILL with the congesters running, then fabric down", afterLines(syscall.SIGKILL, 7), "", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			r := fab.run(t)
			c.stop(t, r)
			stopped := time.Now()
			err := r.wait(t, 30*time.Second)
			t.Logf("stopped %v after the start, exited %v later", stopped.Sub(start).Round(time.Millisecond), time.Since(stopped).Round(time.Millisecond))
			var ee *exec.ExitError
			switch {
			case c.killed:
				// The kernel kills the traffic generators as proflow dies.
				fab.waitNoProcesses(t, fab.bin, 2*time.Second)
				fab.down(t)
			case !errors.As(err, &ee) || ee.ExitCode() != 1:
				t.Errorf("proflow fabric run ended with %v, want exit status 1 (an error, not killed by a signal)", err)
			case !strings.Contains(r.stderr.String(), c.wantStderr):
				t.Errorf("stderr lacks %q", c.wantStderr)
			}
			fab.assertTornDown(t)
			if t.Failed() {
				t.Logf("stderr:\n%s", r.stderr.String())
			}
		})
	}
}

// teardownFabric names the fabric that TestFabricRunTeardown builds.
type teardownFabric struct{ bin, prefix, runDir string }

// fabricRun is one proflow fabric run, its standard output a pipe read by
// the test.
type fabricRun struct {
	cmd    *exec.Cmd
	stdout *os.File // the pipe's read end
	lines  *bufio.Reader
	stderr syncbuf.Buffer
	exited chan error
	done   bool
}

// run starts S1 with the congestion at 4 s and 6 s of window after it, with
// the fabric's commands logged (-v) on stderr.
func (f teardownFabric) run(t *testing.T) *fabricRun {
	t.Helper()
	rd, wr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r := &fabricRun{stdout: rd, lines: bufio.NewReader(rd), exited: make(chan error, 1)}
	r.cmd = exec.Command(f.bin, "fabric", "run", "-v", "-scenario", "S1", "-policy", "static", "-warmup", "4s", "-duration", "6s",
		"-prefix", f.prefix, "-rundir", f.runDir, "-listen", freePort(t))
	r.cmd.Stdout, r.cmd.Stderr = wr, &r.stderr
	err = r.cmd.Start()
	wr.Close() // the child holds the write end now: closing rd breaks its pipe
	if err != nil {
		rd.Close()
		t.Fatal(err)
	}
	go func() { r.exited <- r.cmd.Wait() }()
	t.Cleanup(func() {
		if !r.done {
			_ = r.cmd.Process.Kill()
			<-r.exited
		}
		rd.Close()
	})
	return r
}

// readLines reads n lines of the run's standard output, then keeps reading
// it in the background.
func (r *fabricRun) readLines(t *testing.T, n int) {
	t.Helper()
	got := make(chan error, 1)
	go func() {
		for range n {
			if _, err := r.lines.ReadString('\n'); err != nil {
				got <- err
				return
			}
		}
		got <- nil
	}()
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("standard output ended before line %d: %v", n, err)
		}
	case <-time.After(90 * time.Second): // Up may wait for another test's fabric
		t.Fatalf("no %d lines on standard output within 90 s", n)
	}
}

// drain keeps reading the run's standard output, so that it never blocks.
func (r *fabricRun) drain() {
	go func() { _, _ = io.Copy(io.Discard, r.lines) }()
}

// waitStderr waits until the run's standard error holds s.
func (r *fabricRun) waitStderr(t *testing.T, s string) {
	t.Helper()
	r.drain()
	deadline := time.Now().Add(90 * time.Second) // Up may wait for another test's fabric
	for !strings.Contains(r.stderr.String(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q on stderr within 90 s", s)
		}
		select {
		case err := <-r.exited:
			r.done = true
			t.Fatalf("proflow fabric run exited (%v) before %q on stderr", err, s)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// wait waits up to d for the run to exit and returns how it ended.
func (r *fabricRun) wait(t *testing.T, d time.Duration) error {
	t.Helper()
	r.drain()
	select {
	case err := <-r.exited:
		r.done = true
		return err
	case <-time.After(d):
		_ = r.cmd.Process.Kill()
		err := <-r.exited
		r.done = true
		t.Errorf("proflow fabric run still running %v after it was stopped; killed", d)
		return err
	}
}

// down runs proflow fabric down on the test's fabric.
func (f teardownFabric) down(t *testing.T) {
	out, err := exec.Command(f.bin, "fabric", "down", "-prefix", f.prefix, "-rundir", f.runDir).CombinedOutput()
	if err != nil {
		t.Errorf("proflow fabric down: %v\n%s", err, out)
	}
}

// assertTornDown checks that nothing of the fabric is left: a namespace or
// link with its prefix, its run directory, a live process that mentions
// the run directory (an OVS daemon) or runs the binary (a traffic
// generator, whose namespace lives on as long as it does), the lock held
// by one of those.
func (f teardownFabric) assertTornDown(t *testing.T) {
	t.Helper()
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		t.Errorf("ip netns list: %v", err)
	}
	var left []string
	for _, line := range strings.Split(string(out), "\n") {
		if ns, _, _ := strings.Cut(line, " "); strings.HasPrefix(ns, f.prefix) {
			left = append(left, ns)
		}
	}
	if len(left) > 0 {
		t.Errorf("namespaces left: %s", strings.Join(left, " "))
	}
	out, err = exec.Command("ip", "-o", "link", "show").Output()
	if err != nil {
		t.Errorf("ip link show: %v", err)
	}
	left = nil
	for _, line := range strings.Split(string(out), "\n") {
		if fields := strings.Fields(line); len(fields) > 1 && strings.HasPrefix(fields[1], f.prefix) {
			name, _, _ := strings.Cut(strings.TrimSuffix(fields[1], ":"), "@")
			left = append(left, name)
		}
	}
	if len(left) > 0 {
		t.Errorf("links left: %s", strings.Join(left, " "))
	}
	if _, err := os.Stat(f.runDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("run directory %s left (%v)", f.runDir, err)
	}
	for _, p := range f.processes() {
		t.Errorf("process left: %d %s", p.pid, p.cmdline)
	}
	f.assertLockFree(t)
}

// waitNoProcesses waits up to d until no live process runs exe.
func (f teardownFabric) waitNoProcesses(t *testing.T, exe string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		var left []string
		for _, p := range f.processes() {
			if p.exe == exe {
				left = append(left, fmt.Sprintf("%d %s", p.pid, p.cmdline))
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%s still runs %v after proflow died:\n%s", exe, d, strings.Join(left, "\n"))
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// process is a live process's pid, executable and command line (spaces
// between the arguments).
type process struct {
	pid          int
	exe, cmdline string
}

// processes returns the live processes (zombies excluded) that run the
// binary or whose command line mentions the run directory.
func (f teardownFabric) processes() []process {
	var ps []process
	eachProcess(func(pid int, dir string) {
		b, err := os.ReadFile(filepath.Join(dir, "cmdline"))
		if err != nil || len(b) == 0 { // gone, a zombie or a kernel thread
			return
		}
		cmdline := strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
		exe, _ := os.Readlink(filepath.Join(dir, "exe"))
		if exe == f.bin || strings.Contains(cmdline, f.runDir) {
			ps = append(ps, process{pid, exe, cmdline})
		}
	})
	return ps
}

// eachProcess calls fn with the pid and /proc directory of every process
// but the test's own.
func eachProcess(fn func(pid int, dir string)) {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil && pid != os.Getpid() {
			fn(pid, filepath.Join("/proc", e.Name()))
		}
	}
}

// assertLockFree checks that the fabric lock can be taken, or, when another
// test's fabric holds it (go test runs packages at once), that no process
// of this fabric holds it.
func (f teardownFabric) assertLockFree(t *testing.T) {
	t.Helper()
	lf, err := os.OpenFile(ovsfabric.LockFile, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Errorf("open the fabric lock: %v", err)
		return
	}
	defer lf.Close()
	err = syscall.Flock(int(lf.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if err == nil {
		_ = syscall.Flock(int(lf.Fd()), syscall.LOCK_UN)
		return
	}
	if !errors.Is(err, syscall.EWOULDBLOCK) {
		t.Errorf("flock %s: %v", ovsfabric.LockFile, err)
		return
	}
	ours := map[int]bool{}
	for _, p := range f.processes() {
		ours[p.pid] = true
	}
	for _, pid := range lockHolders(ovsfabric.LockFile) {
		if ours[pid] {
			t.Errorf("the fabric lock %s is held by process %d of this fabric", ovsfabric.LockFile, pid)
		} else {
			t.Logf("the fabric lock is held by process %d, not this fabric's (another test's fabric)", pid)
		}
	}
}

// lockHolders returns the processes that have path open.
func lockHolders(path string) []int {
	var pids []int
	eachProcess(func(pid int, dir string) {
		fds, _ := os.ReadDir(filepath.Join(dir, "fd"))
		for _, fd := range fds {
			if target, _ := os.Readlink(filepath.Join(dir, "fd", fd.Name())); target == path {
				pids = append(pids, pid)
				return
			}
		}
	})
	return pids
}
