// Command gotchpatch prepares github.com/sugarme/gotch for proflow's
// torch-tagged builds, reproducibly and without touching the module cache.
//
// gotch is a cgo binding whose C++ wrapper is generated for one libtorch
// release and whose libtch/lib.go links CUDA libraries unconditionally.
// Against another libtorch (Debian's libtorch-dev 1.13.1 on our machines) it
// neither compiles nor links. gotchpatch:
//
//  1. finds the gotch version that go.mod requires and downloads it with
//     `go mod download`;
//  2. copies it into <out>/gotch (writable; the module cache stays intact);
//  3. replaces libtch/lib.go with cgo flags for the selected libtorch:
//     Debian's CPU libtorch by default, or the folder named by
//     PROFLOW_LIBTORCH (typically a CUDA build, whose CUDA libraries it then
//     links);
//  4. compiles the C++ wrapper (libtch/torch_api.cpp, which includes
//     torch_api_generated.cpp.h) with g++ -fsyntax-only, maps each compiler
//     error to the generated function containing it, and replaces only those
//     function bodies with a stub that throws (gotch returns that as an
//     error), repeating until the wrapper compiles;
//  5. writes <out>/gotch/PATCHED.txt (what was changed and why),
//     <out>/torch.work (a go.work whose replace points gotch at the copy) and,
//     after a warm-up build of gotch's cgo packages, a stamp that makes the
//     next run a no-op while nothing changed.
//
// Torch-tagged code is then built with
//
//	GOWORK=$PWD/build/torch.work go test -tags torch ./...
//
// Usage:
//
//	go run ./internal/cmd/gotchpatch [-out build] [-version v0.7.0] [-force] [-warm=false]
//
// See docs/torch.md.
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// gotchModule is the module this tool patches.
const gotchModule = "github.com/sugarme/gotch"

// Paths inside the copied module.
const (
	libtchDir     = "libtch"
	wrapperFile   = "torch_api.cpp"
	generatedFile = "torch_api_generated.cpp.h"
	stampFile     = ".stamp"
	reportFile    = "PATCHED.txt"
	workFile      = "torch.work"
)

// skipDirs are top-level folders of the gotch module that are not copied:
// example/ holds only sample programs and their data (60 MB in v0.7.0) and
// nothing imports it.
var skipDirs = map[string]bool{"example": true}

// options are the command-line settings.
type options struct {
	Out       string // build folder, relative to the working directory
	Version   string // gotch version; empty means the one go.mod requires
	CXX       string // C++ compiler for the syntax passes
	MaxPasses int    // compile-and-stub passes before giving up
	Force     bool   // redo everything even when the stamp is current
	Warm      bool   // compile gotch's cgo packages once at the end
}

func main() {
	var o options
	flag.StringVar(&o.Out, "out", "build", "build `folder` for the patched gotch and the workspace file")
	flag.StringVar(&o.Version, "version", "", "gotch `version` to patch (default: the version go.mod requires; the workspace replaces whatever go.mod requires with it)")
	flag.StringVar(&o.CXX, "cxx", envOr("CXX", "g++"), "C++ `compiler` used to find the functions that do not compile")
	flag.IntVar(&o.MaxPasses, "max-passes", 6, "compile-and-stub passes before giving up")
	flag.BoolVar(&o.Force, "force", false, "redo the patch even when the stamp says it is current")
	flag.BoolVar(&o.Warm, "warm", true, "compile gotch's cgo packages once, so failures show here and the build cache is warm")
	flag.Parse()

	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "gotchpatch:", err)
		os.Exit(1)
	}
}

// mainModule is what `go list -m -json` says about the main module.
type mainModule struct {
	Path      string
	Dir       string
	GoVersion string
}

// download is what `go mod download -json` says about gotch.
type download struct {
	Version string
	Dir     string
	Sum     string
	Error   string
}

// run performs the whole preparation described in the package comment.
func run(o options) error {
	start := time.Now()
	mod, err := findMainModule()
	if err != nil {
		return err
	}
	out, err := filepath.Abs(o.Out)
	if err != nil {
		return fmt.Errorf("build folder %q: %w", o.Out, err)
	}
	version := o.Version
	if version == "" {
		if version, err = requiredVersion(mod.Dir); err != nil {
			return err
		}
	}
	dl, err := downloadGotch(mod.Dir, version)
	if err != nil {
		return err
	}
	lt, err := findLibtorch(os.Getenv(libtorchEnv))
	if err != nil {
		return err
	}

	gotchDir := filepath.Join(out, "gotch")
	key, err := stampKey(dl, lt, o.CXX)
	if err != nil {
		return err
	}
	current, why := stampCurrent(gotchDir, key)
	if o.Force {
		current, why = false, "-force"
	}
	if !current {
		fmt.Printf("gotchpatch: preparing %s@%s for %s (%s)\n", gotchModule, dl.Version, lt, why)
		if err := patch(dl, lt, gotchDir, o); err != nil {
			return err
		}
	}

	// The workspace follows go.mod (its go line) and is cheap: it is
	// rewritten whenever it differs, without redoing the patch.
	workPath := filepath.Join(out, workFile)
	if err := writeIfChanged(workPath, workspace(out, mod, dl.Version)); err != nil {
		return fmt.Errorf("write workspace: %w", err)
	}
	if current {
		fmt.Printf("gotchpatch: %s@%s for %s is up to date in %s\n", gotchModule, dl.Version, lt, rel(gotchDir))
		return nil
	}

	if o.Warm {
		if err := warmBuild(mod.Dir, workPath, lt); err != nil {
			return err
		}
	}
	// The stamp goes last: an interrupted run is redone from scratch.
	if err := os.WriteFile(filepath.Join(gotchDir, stampFile), []byte(key), 0o644); err != nil {
		return fmt.Errorf("write stamp: %w", err)
	}
	fmt.Printf("gotchpatch: done in %s; torch builds use GOWORK=%s\n", time.Since(start).Round(time.Second), workPath)
	return nil
}

// patch makes a fresh copy of gotch in gotchDir, gives it cgo flags for lt
// and stubs the generated functions that do not compile, then writes the
// report.
func patch(dl download, lt *libtorch, gotchDir string, o options) error {
	t0 := time.Now()
	if err := os.RemoveAll(gotchDir); err != nil {
		return fmt.Errorf("remove old copy: %w", err)
	}
	if err := copyModule(dl.Dir, gotchDir); err != nil {
		return err
	}
	libGo := filepath.Join(gotchDir, libtchDir, "lib.go")
	if err := os.WriteFile(libGo, []byte(lt.libGo()), 0o644); err != nil {
		return fmt.Errorf("rewrite cgo flags: %w", err)
	}
	failures, passes, err := stubUntilCompiles(filepath.Join(gotchDir, libtchDir), lt, o)
	if err != nil {
		return err
	}
	report := filepath.Join(gotchDir, reportFile)
	if err := writeReport(report, dl, lt, o.CXX, passes, failures); err != nil {
		return err
	}
	fmt.Printf("gotchpatch: stubbed %d generated functions in %d compile passes (%s); see %s\n",
		len(failures), passes, time.Since(t0).Round(time.Second), rel(report))
	return nil
}

// writeIfChanged writes content to path unless the file already holds it.
func writeIfChanged(path, content string) error {
	if old, err := os.ReadFile(path); err == nil && string(old) == content {
		return nil
	}
	return os.WriteFile(path, []byte(content), 0o644)
}

// findMainModule asks the go command for the main module, outside any
// workspace so that a stale GOWORK cannot interfere.
func findMainModule() (mainModule, error) {
	var m mainModule
	b, err := goCmd("", "list", "-m", "-json")
	if err != nil {
		return m, fmt.Errorf("find main module: %w", err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("find main module: decode go list output: %w", err)
	}
	if m.Dir == "" {
		return m, errors.New("find main module: run gotchpatch inside the proflow module")
	}
	return m, nil
}

// requiredVersion returns the gotch version go.mod requires: go.mod is the
// single place where the gotch version is pinned.
func requiredVersion(dir string) (string, error) {
	b, err := goCmd(dir, "list", "-m", "-f", "{{.Version}}", gotchModule)
	if err != nil {
		return "", fmt.Errorf("gotch version: go.mod must require %s (e.g. `go get %s@v0.7.0`): %w", gotchModule, gotchModule, err)
	}
	return strings.TrimSpace(string(b)), nil
}

// downloadGotch makes sure the module is in the module cache and returns
// where it is, with its checksum.
func downloadGotch(dir, version string) (download, error) {
	var d download
	b, err := goCmd(dir, "mod", "download", "-json", gotchModule+"@"+version)
	// go mod download -json reports per-module errors in its JSON output.
	if jerr := json.Unmarshal(b, &d); jerr == nil && d.Error != "" {
		return d, fmt.Errorf("download %s@%s: %s", gotchModule, version, d.Error)
	}
	if err != nil {
		return d, fmt.Errorf("download %s@%s: %w", gotchModule, version, err)
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return d, fmt.Errorf("download %s@%s: decode go output: %w", gotchModule, version, err)
	}
	return d, nil
}

// goCmd runs the go command in dir with workspaces off and returns stdout.
func goCmd(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		return b, fmt.Errorf("go %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return b, nil
}

// stampKey identifies everything the result depends on: this program (by
// the hash of its own executable, as Go builds are reproducible), the gotch
// module, the libtorch and the compiler.
func stampKey(dl download, lt *libtorch, cxx string) (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("stamp: find own executable: %w", err)
	}
	f, err := os.Open(exe)
	if err != nil {
		return "", fmt.Errorf("stamp: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("stamp: hash own executable: %w", err)
	}
	return fmt.Sprintf("tool %s\ngotch %s %s\n%s abi=%d cuda=%v\ncxx %s\n",
		hex.EncodeToString(h.Sum(nil))[:16], dl.Version, dl.Sum, lt, lt.CXX11ABI, lt.CUDALibs, cxx), nil
}

// stampCurrent reports whether a previous run left a complete patch for
// key; when it did not, why names the first difference found.
func stampCurrent(gotchDir, key string) (ok bool, why string) {
	stamp, err := os.ReadFile(filepath.Join(gotchDir, stampFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, "no previous result"
	case err != nil:
		return false, err.Error()
	case string(stamp) != key:
		return false, "inputs changed: " + firstDiff(string(stamp), key)
	}
	return true, ""
}

// firstDiff returns the first line of want that differs from have.
func firstDiff(have, want string) string {
	h, w := strings.Split(have, "\n"), strings.Split(want, "\n")
	for i, line := range w {
		if i >= len(h) || h[i] != line {
			return strconv.Quote(line)
		}
	}
	return "(trailing lines)"
}

// genprotoMonolith is a version of the google.golang.org/genproto module
// from after googleapis/api and googleapis/rpc moved to modules of their
// own. The P4Runtime client's go.mod requires a monolith of 2023 that still
// holds them; module mode does not mind, but in workspace mode the go
// command finds those packages in two modules (the monolith and the split
// modules grpc and etcd's client use) and refuses the build as ambiguous.
// The workspace therefore replaces the monolith by this later one.
const genprotoMonolith = "google.golang.org/genproto v0.0.0-20261026165753-2ffab32bce7e"

// workspace returns the go.work used by torch-tagged builds: the proflow
// module, with gotch replaced by the patched copy and the genproto monolith
// by genprotoMonolith. Paths are relative to the build folder, so the
// checkout can move.
func workspace(out string, mod mainModule, version string) string {
	use := rel2(out, mod.Dir)
	return fmt.Sprintf(`// Code generated by proflow's internal/cmd/gotchpatch; DO NOT EDIT.
//
// Workspace for builds with -tags torch: GOWORK=<this file> go test -tags torch ./...
// It resolves %s@%s to the copy patched for the local libtorch, and the
// genproto monolith to one without the packages of googleapis/api and
// googleapis/rpc, which would otherwise be ambiguous in workspace mode.

go %s

use %s

replace %s => ./gotch

replace google.golang.org/genproto => %s
`, gotchModule, version, mod.GoVersion, use, gotchModule, genprotoMonolith)
}

// stubUntilCompiles runs syntax-only compiles of the wrapper and stubs the
// generated functions that fail, until it compiles. It returns every stubbed
// function with its first error, and the number of compiler passes.
func stubUntilCompiles(dir string, lt *libtorch, o options) ([]failure, int, error) {
	genPath := filepath.Join(dir, generatedFile)
	var all []failure
	stubbed := map[string]bool{}
	for pass := 1; pass <= o.MaxPasses; pass++ {
		t0 := time.Now()
		output, ok, err := syntaxCheck(dir, lt, o.CXX)
		if err != nil {
			return nil, pass, err
		}
		if ok {
			fmt.Printf("gotchpatch: pass %d: the wrapper compiles (%s)\n", pass, time.Since(t0).Round(time.Second))
			return all, pass, nil
		}
		src, err := os.ReadFile(genPath)
		if err != nil {
			return nil, pass, fmt.Errorf("read generated wrapper: %w", err)
		}
		funcs, err := parseFuncs(string(src))
		if err != nil {
			return nil, pass, fmt.Errorf("parse %s: %w", generatedFile, err)
		}
		failed, stray := failingFuncs(funcs, diagnosticsFor(output, generatedFile))
		if len(stray) > 0 || len(failed) == 0 {
			return nil, pass, fmt.Errorf("pass %d: the wrapper fails outside the generated functions, which stubbing cannot fix:\n%s", pass, tail(output, 40))
		}
		var stubs []cFunc
		for _, f := range failed {
			if stubbed[f.Func.Name] {
				return nil, pass, fmt.Errorf("pass %d: %s still fails after being stubbed:\n%s", pass, f.Func.Name, tail(output, 40))
			}
			stubbed[f.Func.Name] = true
			stubs = append(stubs, f.Func)
			all = append(all, f)
		}
		if err := os.WriteFile(genPath, []byte(applyStubs(string(src), stubs, lt.String())), 0o644); err != nil {
			return nil, pass, fmt.Errorf("write stubs: %w", err)
		}
		fmt.Printf("gotchpatch: pass %d: stubbed %d functions (%s)\n", pass, len(stubs), time.Since(t0).Round(time.Second))
	}
	return nil, o.MaxPasses, fmt.Errorf("the wrapper still does not compile after %d passes", o.MaxPasses)
}

// syntaxCheck compiles the wrapper with the flags lib.go gives cgo, without
// generating code (a full -O3 build takes minutes; parsing and template
// instantiation, which is where version mismatches show, take seconds).
// Warnings are off, so every diagnostic belongs to an error. ok reports a
// clean compile; err is for failures to run the compiler at all.
func syntaxCheck(dir string, lt *libtorch, cxx string) (output string, ok bool, err error) {
	args := append([]string{"-fsyntax-only", "-w", "-fmax-errors=0"}, lt.cxxFlags(dir)...)
	args = append(args, wrapperFile)
	cmd := exec.Command(cxx, args...)
	cmd.Dir = dir
	b, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return string(b), true, nil
	case errors.As(err, &exit):
		return string(b), false, nil
	default:
		return string(b), false, fmt.Errorf("run %s: %w", cxx, err)
	}
}

// warmBuild compiles gotch's packages through the workspace, as torch-tagged
// builds will: it proves the cgo flags link and fills the build cache, so the
// first `go test -tags torch` does not spend minutes in the C++ compiler.
func warmBuild(dir, work string, lt *libtorch) error {
	t0 := time.Now()
	fmt.Println("gotchpatch: compiling gotch's cgo packages (first time: about 2 minutes on 2 cores)")
	cmd := exec.Command("go", "build", gotchModule+"/nn", gotchModule+"/ts", gotchModule+"/libtch")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK="+work, "CGO_ENABLED=1")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("build gotch against %s: %w", lt, err)
	}
	fmt.Printf("gotchpatch: gotch builds (%s)\n", time.Since(t0).Round(time.Second))
	return nil
}

// writeReport records what was changed, so a reader of build/gotch knows
// which gotch functions will return an error instead of running.
func writeReport(path string, dl download, lt *libtorch, cxx string, passes int, failures []failure) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s@%s (%s), patched by proflow's internal/cmd/gotchpatch\n", gotchModule, dl.Version, dl.Sum)
	fmt.Fprintf(&b, "for %s, _GLIBCXX_USE_CXX11_ABI=%d, compiler %s\n\n", lt, lt.CXX11ABI, cxx)
	fmt.Fprintf(&b, "libtch/lib.go: replaced; cgo flags:\n")
	fmt.Fprintf(&b, "  CXXFLAGS: %s\n  LDFLAGS:  %s\n\n", strings.Join(lt.cxxFlags("${SRCDIR}"), " "), strings.Join(lt.ldFlags(), " "))
	fmt.Fprintf(&b, "libtch/%s: %d generated functions stubbed (they set gotch's error and return a zero value) after %d compile passes:\n",
		generatedFile, len(failures), passes)
	for _, f := range failures {
		fmt.Fprintf(&b, "  %-48s %s\n", f.Func.Name, firstLine(f.Error))
	}
	for d := range skipDirs {
		fmt.Fprintf(&b, "\nnot copied: %s/ (sample programs and data; nothing imports it)\n", d)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// envOr returns the environment variable, or def when it is unset or empty.
func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// rel shortens path relative to the working directory for messages.
func rel(path string) string {
	wd, err := os.Getwd()
	if err != nil {
		return path
	}
	return rel2(wd, path)
}

// rel2 returns target relative to base, or target itself if it has none.
func rel2(base, target string) string {
	r, err := filepath.Rel(base, target)
	if err != nil {
		return target
	}
	return r
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// firstLine returns s up to its first newline, shortened for the report.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	const max = 160
	if len(s) > max {
		s = s[:max] + "…"
	}
	if s == "" {
		s = "(error reported inside a libtorch header)"
	}
	return s
}
