package ovsfabric

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// TeardownTimeout bounds how long TeardownContext lets a fabric's teardown
// run. Down takes a few seconds (it gives each OVS daemon up to 5 s to exit
// before killing it).
const TeardownTimeout = 60 * time.Second

// TeardownContext returns the context to tear a fabric down with once ctx,
// the context it ran under, may be cancelled (by Ctrl-C, a closed standard
// output or a deadline): it keeps ctx's values but not its cancellation,
// and ends after TeardownTimeout, so that a stuck command cannot hold the
// teardown forever. Call cancel when the teardown is done.
func TeardownContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), TeardownTimeout)
}

// stopGrace is how long a traffic generator has to exit after SIGTERM
// before its process group is killed.
const stopGrace = 2 * time.Second

// childAttr returns the process attributes of every process the fabric
// starts (ip, tc, the OVS daemons, the traffic generators).
//
// Setpgid puts the child in a process group of its own: a terminal's Ctrl-C
// (sent to the foreground process group) reaches proflow alone, which tears
// the fabric down in order instead of having its children die under it,
// and stopping a traffic generator signals its whole group.
//
// Pdeathsig kills the child when proflow dies, even by SIGKILL, so no
// traffic generator outlives it. The kernel sends it when the thread that
// started the child exits; the Go runtime ends a thread only when a
// goroutine locked to it returns without unlocking, which the fabric never
// does. It is not inherited across fork: the OVS daemons detach (fork,
// setsid) and outlive a killed proflow, as do the namespaces and links,
// which are kernel objects; Down (proflow fabric down), or the next Up with
// the same prefix and run directory, removes them.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// signalGroup sends sig to the process group that cmd leads (childAttr),
// falling back to the process alone when the group is gone.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	if cmd.Process == nil {
		return
	}
	if err := syscall.Kill(-cmd.Process.Pid, sig); err != nil {
		_ = cmd.Process.Signal(sig)
	}
}

// stopGroup asks cmd's process group to exit (SIGTERM) and kills it
// (SIGKILL) when exited is not closed within stopGrace. exited closes once
// the process has exited and its output has been read.
func stopGroup(cmd *exec.Cmd, exited <-chan struct{}) {
	signalGroup(cmd, syscall.SIGTERM)
	t := time.NewTimer(stopGrace)
	defer t.Stop()
	select {
	case <-exited:
	case <-t.C:
		signalGroup(cmd, syscall.SIGKILL)
		<-exited
	}
}

// daemonPids returns the pids of the running processes named name (an OVS
// daemon) whose command line holds the pid file arg that Up gives that
// daemon in runDir: the daemons of this fabric, found even when the pid
// file is missing (a daemon that had forked but not yet written it when its
// starter was killed, or a run directory removed by hand).
func daemonPids(name, runDir string) []int {
	want := "--pidfile=" + filepath.Join(runDir, name+".pid")
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue // gone
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if filepath.Base(args[0]) != name {
			continue
		}
		for _, a := range args[1:] {
			if a == want {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}
