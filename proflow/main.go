// Command proflow wires the proflow packages into a tool: it simulates and
// evaluates policies on the simulated fabric, collects training data, trains
// and probes the learned agent, calibrates the reference baselines, serves
// tc statistics and drives a real Open vSwitch fabric.
//
// Usage:
//
//	proflow <command> [flags]
//
// Run "proflow help" for the list of commands and "proflow <command> -h"
// for a command's flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"

	"github.com/proflow-sdn/proflow/examples/ovsfabric/fabric"
)

// command is one subcommand of the tool.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env *env, args []string) error
}

// env carries what a command may touch, so commands stay testable.
type env struct {
	stdout, stderr io.Writer
	commands       []command
}

func main() {
	// The OVS fabric starts traffic generators by re-executing this binary.
	fabric.MaybeRunTraffic()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	e := &env{stdout: os.Stdout, stderr: os.Stderr}
	e.commands = commands()
	if err := e.dispatch(ctx, os.Args[1:]); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "proflow:", err)
		}
		os.Exit(exitCode(err))
	}
}

func exitCode(err error) int {
	if errors.Is(err, flag.ErrHelp) || errors.Is(err, errUsage) {
		return 2
	}
	return 1
}

var errUsage = errors.New("usage error")

func (e *env) dispatch(ctx context.Context, args []string) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		e.usage(e.stdout)
		if len(args) == 0 {
			return errUsage
		}
		return nil
	}
	for _, c := range e.commands {
		if c.name == args[0] {
			return c.run(ctx, e, args[1:])
		}
	}
	e.usage(e.stderr)
	return fmt.Errorf("unknown command %q: %w", args[0], errUsage)
}

func (e *env) usage(w io.Writer) {
	fmt.Fprintln(w, "Usage: proflow <command> [flags]\n\nCommands:")
	cs := append([]command(nil), e.commands...)
	sort.Slice(cs, func(i, j int) bool { return cs[i].name < cs[j].name })
	for _, c := range cs {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun \"proflow <command> -h\" for a command's flags.")
}

// newFlags returns a flag set that reports errors instead of exiting.
func (e *env) newFlags(name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet("proflow "+name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fmt.Fprintf(e.stderr, "Usage: proflow %s\n\n", usage)
		fs.PrintDefaults()
	}
	return fs
}
