package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

func versionCommand() command {
	return command{
		name:    "version",
		summary: "print the module version, the VCS revision and commit time the binary was built from, and the Go version",
		run:     runVersion,
	}
}

func runVersion(_ context.Context, e *env, args []string) error {
	fs := e.newFlags("version", "version (or proflow -version)")
	if err := parseFlags(fs, "version", args); err != nil {
		return err
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return fmt.Errorf("version: this binary records no build information, want one built with module support")
	}
	writeVersion(e.stdout, bi)
	return nil
}

// writeVersion writes what bi records of a build: the main module's
// version ("(devel)" or a pseudo-version for a build of a checkout), the VCS
// revision and whether the work tree had uncommitted changes, the time of
// that commit (Go records no build time), the Go version and the build tags.
func writeVersion(w io.Writer, bi *debug.BuildInfo) {
	s := map[string]string{}
	for _, kv := range bi.Settings {
		s[kv.Key] = kv.Value
	}
	rev := s["vcs.revision"]
	switch {
	case rev == "":
		rev = "unknown (not stamped: built by go run, go test or with -buildvcs=false)"
	case s["vcs.modified"] == "true":
		rev += " (modified: uncommitted changes)"
	}
	fmt.Fprintf(w, "proflow %s\n", cmp.Or(bi.Main.Version, "(unknown)"))
	fmt.Fprintf(w, "module:    %s\n", cmp.Or(bi.Main.Path, "unknown"))
	fmt.Fprintf(w, "revision:  %s\n", rev)
	fmt.Fprintf(w, "committed: %s\n", cmp.Or(s["vcs.time"], "unknown"))
	fmt.Fprintf(w, "go:        %s %s/%s\n", cmp.Or(bi.GoVersion, runtime.Version()), runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(w, "tags:      %s\n", cmp.Or(s["-tags"], "none"))
}
