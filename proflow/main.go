// Command proflow wires the proflow packages into a tool: it simulates and
// evaluates policies on the simulated fabric, collects training data, trains
// and probes the learned agent, calibrates the reference baselines, serves
// tc statistics and drives a real Open vSwitch fabric.
//
// Usage:
//
//	proflow <command> [flags]
//
// "proflow version" (or -version) prints the module version and the VCS
// revision the binary was built from.
//
// Run "proflow help" for the list of commands and "proflow help <command>"
// (on stdout) or "proflow <command> -h" (on stderr) for a command's flags.
//
// Ctrl-C (SIGINT) or SIGTERM asks the running command to stop: it cancels
// the command's context, and the command winds down (fabric up, for one,
// tears its fabric down). A second Ctrl-C kills the process at once. A
// write to standard output that fails (proflow fabric run | head -3, whose
// reader goes away) cancels the context the same way, instead of the
// SIGPIPE that would kill the process in the middle of its work: fabric
// run, for one, tears its fabric down and exits with status 1.
//
// Exit status: 0 on success, and on help asked for (-h, -help or help
// anywhere); 2 for a usage error (no or an unknown command, a malformed or
// out-of-range flag, a stray argument); 1 for any other failure. exitCode
// decides it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/proflow-sdn/proflow/southbound/openflow/ovsfabric"
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
	// restart replaces the process with a fresh run of itself under the
	// given environment (restartSelf), for train's and distill's -kernels
	// portable; nil where the caller cannot be restarted, as in a test
	// that runs commands in its own process.
	restart func(environ []string) error
}

func main() {
	// The OVS fabric starts traffic generators by re-executing this binary.
	ovsfabric.MaybeRunTraffic()
	ctx, stop := signalContext()
	defer stop()
	ctx, stdout, cancel := stopOnOutputError(ctx, os.Stdout)
	defer cancel()
	e := &env{stdout: stdout, stderr: os.Stderr, restart: restartSelf}
	e.commands = commands()
	if err := e.dispatch(ctx, os.Args[1:]); err != nil {
		err = withCause(ctx, err)
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "proflow:", err)
		}
		os.Exit(exitCode(err))
	}
}

// signalContext returns a context cancelled by the first SIGINT or SIGTERM.
// That first signal also stops the catching (as the returned stop does), so
// a second one gets the default action and kills the process: a command
// that is slow to wind down can still be interrupted.
func signalContext() (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	context.AfterFunc(ctx, stop)
	return ctx, stop
}

// exitCode returns the process's exit status for the error a command
// returned: 0 for none and for flag.ErrHelp (help asked for is success, the
// usage is printed and nothing went wrong), 2 for a usage error, 1 otherwise.
func exitCode(err error) int {
	switch {
	case err == nil || errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	}
	return 1
}

var errUsage = errors.New("usage error")

func (e *env) dispatch(ctx context.Context, args []string) error {
	if len(args) == 0 {
		e.usage(e.stderr)
		return fmt.Errorf("no command: %w", errUsage)
	}
	if args[0] == "help" || isHelpFlag(args[0]) {
		return e.help(ctx, args[1:])
	}
	if args[0] == "-version" || args[0] == "--version" {
		args = append([]string{"version"}, args[1:]...)
	}
	c, err := e.lookup(args[0])
	if err != nil {
		e.usage(e.stderr)
		return err
	}
	return c.run(ctx, e, args[1:])
}

// help prints, on stdout, the list of commands, or with a command's name
// (and a sub-command's, as in help fabric down) that command's usage and
// flags: what "proflow CMD [SUB] -h" prints on stderr. An unknown command
// is a usage error naming the commands.
func (e *env) help(ctx context.Context, args []string) error {
	if len(args) == 0 {
		e.usage(e.stdout)
		return nil
	}
	c, err := e.lookup(args[0])
	if err != nil {
		return fmt.Errorf("help: %w", err)
	}
	he := *e
	he.stderr = e.stdout
	err = c.run(ctx, &he, append(slices.Clip(args[1:]), "-h"))
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return err
}

// lookup returns the command called name, or a usage error naming every
// command.
func (e *env) lookup(name string) (command, error) {
	cs := e.sortedCommands()
	names := make([]string, len(cs))
	for i, c := range cs {
		if c.name == name {
			return c, nil
		}
		names[i] = c.name
	}
	return command{}, fmt.Errorf("unknown command %q, want one of %s: %w", name, strings.Join(names, ", "), errUsage)
}

// sortedCommands returns the commands sorted by name.
func (e *env) sortedCommands() []command {
	cs := slices.Clone(e.commands)
	slices.SortFunc(cs, func(a, b command) int { return strings.Compare(a.name, b.name) })
	return cs
}

func (e *env) usage(w io.Writer) {
	fmt.Fprintln(w, "Usage: proflow <command> [flags]\n\nCommands:")
	for _, c := range e.sortedCommands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun \"proflow help <command>\" or \"proflow <command> -h\" for a command's flags.")
	fmt.Fprintln(w, "Ctrl-C stops a command cleanly; a second Ctrl-C kills it at once.")
	fmt.Fprintln(w, "Exit status: 0 success (and help), 1 failure, 2 usage error (bad command, flag or argument).")
}

// isHelpFlag reports whether arg asks for help the way the flag package
// understands it: -h, -help, --h or --help.
func isHelpFlag(arg string) bool {
	switch arg {
	case "-h", "-help", "--h", "--help":
		return true
	}
	return false
}

// parseFlags parses a command's flags. A malformed flag is a usage error
// (the flag package has printed the problem and the usage), and so is any
// argument left after the flags: the flag package stops at the first
// non-flag argument, so a stray word would silently drop every flag after
// it. -h and -help print the usage on stderr, as the flag package does, and
// return flag.ErrHelp (exit status 0).
func parseFlags(fs *flag.FlagSet, name string, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%s: %w: %w", name, err, errUsage)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%s: unexpected arguments %q: want flags only (flags after the first argument are not read): %w", name, fs.Args(), errUsage)
	}
	return nil
}

// makeOutputDirs creates the directory of each output file path (flag
// -name of command cmd) that does not exist yet, so that a long run does
// not lose its result to a missing directory at the end; an empty path is
// skipped. The error names the flag and the path.
func makeOutputDirs(cmd string, outputs ...[2]string) error {
	for _, o := range outputs {
		name, path := o[0], o[1]
		if path == "" {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("%s: -%s %s: create its directory: %w", cmd, name, path, err)
		}
	}
	return nil
}

// badFlag returns the usage error of an unacceptable flag value, naming the
// flag, the value and what was expected: "collect: -episodes 0: want at
// least 1".
func badFlag(cmd, name string, value any, want string) error {
	return fmt.Errorf("%s: -%s %v: want %s: %w", cmd, name, value, want, errUsage)
}

// checkNonNegative returns a badFlag error unless v is a finite number >= 0.
func checkNonNegative(cmd, name string, v float64) error {
	if !(v >= 0) || math.IsInf(v, 0) {
		return badFlag(cmd, name, v, "a finite number >= 0")
	}
	return nil
}

// checkAtLeastOne returns a badFlag error for each count below 1, joined.
func checkAtLeastOne(cmd string, counts ...flagInt) error {
	var errs []error
	for _, c := range counts {
		if c.value < 1 {
			errs = append(errs, badFlag(cmd, c.name, c.value, "at least 1"))
		}
	}
	return errors.Join(errs...)
}

// flagInt is an integer flag's name and value.
type flagInt struct {
	name  string
	value int
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
