//go:build unix

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// signalHelperEnv makes the test binary act as a command that catches the
// first interrupt with signalContext, then takes long to wind down.
const signalHelperEnv = "PROFLOW_SIGNAL_HELPER"

// commandHelperEnv makes the test binary run one proflow command line, its
// arguments separated by newlines in the variable, and exit with its
// status: a test can then run a command in a process of its own
// environment (TestTrainPinnedKernels).
const commandHelperEnv = "PROFLOW_COMMAND_HELPER"

func TestMain(m *testing.M) {
	if args := os.Getenv(commandHelperEnv); args != "" {
		e := &env{stdout: os.Stdout, stderr: os.Stderr, restart: restartSelf}
		e.commands = commands()
		if err := e.dispatch(context.Background(), strings.Split(args, "\n")); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if os.Getenv(signalHelperEnv) == "1" {
		ctx, stop := signalContext()
		defer stop()
		fmt.Println("ready")
		<-ctx.Done()
		fmt.Println("cancelled")
		time.Sleep(20 * time.Second) // a slow wind-down
		fmt.Println("finished")
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// The first Ctrl-C cancels the command's context; a second one kills the
// process instead of being swallowed while it winds down.
func TestSecondInterruptKills(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), signalHelperEnv+"=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	expect := func(want string) {
		t.Helper()
		if !lines.Scan() || lines.Text() != want {
			t.Fatalf("helper printed %q (%v), want %q", lines.Text(), lines.Err(), want)
		}
	}
	expect("ready")
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	expect("cancelled")
	// The helper stops catching right after the first signal; until it has,
	// a second one is still swallowed, so keep interrupting until it dies.
	done := make(chan error, 1)
	go func() {
		for lines.Scan() {
		}
		done <- cmd.Wait()
	}()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("helper ended with %v, want killed by SIGINT", err)
			}
			ws, ok := ee.Sys().(syscall.WaitStatus)
			if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGINT {
				t.Fatalf("helper ended with %v, want killed by SIGINT", err)
			}
			return
		case <-tick.C:
			cmd.Process.Signal(os.Interrupt)
		}
	}
}
