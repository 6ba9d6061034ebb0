package main

import (
	"bufio"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// cFunc is one top-level function definition in gotch's generated C++
// wrapper (torch_api_generated.cpp.h).
//
// The generator writes every function in the same shape, which is what makes
// line-based parsing safe:
//
//	void atg_abs(tensor *out__, tensor self) {
//	  PROTECT(
//	    auto outputs__ = torch::abs(*self);
//	    out__[0] = new torch::Tensor(outputs__);
//	  )
//	}
//
// Non-void functions (int, int64_t, double, tensor) add a `return 0;` (or
// similar) after PROTECT. First and Last are 1-based line numbers of the
// signature line and of the closing brace.
type cFunc struct {
	Name       string
	ReturnType string
	Signature  string // the whole first line, ending in "{"
	First      int
	Last       int
}

// signatureRE matches the first line of a generated function: a return type,
// the function name and a parameter list on one line, ending in "{".
var signatureRE = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_ ]*?[ *]+)([A-Za-z_][A-Za-z0-9_]*)\((.*)\)\s*\{\s*$`)

// parseFuncs splits the generated wrapper into its function definitions.
// Lines outside any function (comments, blank lines) are ignored. It fails if
// a function is not closed, so a change in the generator's layout is noticed
// rather than patched blindly.
func parseFuncs(src string) ([]cFunc, error) {
	var funcs []cFunc
	var cur *cFunc
	sc := bufio.NewScanner(strings.NewReader(src))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if cur != nil {
			if line == "}" {
				cur.Last = n
				funcs = append(funcs, *cur)
				cur = nil
			}
			continue
		}
		m := signatureRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		cur = &cFunc{
			Name:       m[2],
			ReturnType: strings.TrimSpace(m[1]),
			Signature:  line,
			First:      n,
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("scan generated wrapper: %w", err)
	}
	if cur != nil {
		return nil, fmt.Errorf("function %s at line %d has no closing brace at column 0", cur.Name, cur.First)
	}
	return funcs, nil
}

// funcAt returns the function whose definition spans line n, if any.
// funcs must be sorted by First, as parseFuncs returns them.
func funcAt(funcs []cFunc, n int) (cFunc, bool) {
	i := sort.Search(len(funcs), func(i int) bool { return funcs[i].Last >= n })
	if i < len(funcs) && funcs[i].First <= n {
		return funcs[i], true
	}
	return cFunc{}, false
}

// diagnostic is one compiler message that points into a given file.
type diagnostic struct {
	Line    int
	Message string // the text after "file:line:col: ", e.g. "error: no member named …"
}

// diagnosticsFor extracts, from g++ output, every message located in a file
// whose name ends in fileName: errors, and the "required from here" and
// "in expansion of macro" notes that tie an error inside a libtorch header
// back to the line of the wrapper that caused it. The caller compiles with
// -w, so no warning can be mistaken for a failure.
func diagnosticsFor(output, fileName string) []diagnostic {
	re := regexp.MustCompile(`(?m)^(\S*` + regexp.QuoteMeta(fileName) + `):(\d+):(?:\d+:)?\s*(.*)$`)
	var ds []diagnostic
	for _, m := range re.FindAllStringSubmatch(output, -1) {
		n, err := strconv.Atoi(m[2])
		if err != nil {
			continue
		}
		ds = append(ds, diagnostic{Line: n, Message: strings.TrimSpace(m[3])})
	}
	return ds
}

// failure is a generated function that the compiler rejected, with the first
// error reported for it.
type failure struct {
	Func  cFunc
	Error string
}

// failingFuncs maps compiler diagnostics to the generated functions that
// contain them. Diagnostics outside any function are returned separately:
// they mean something other than a generated body is wrong, which stubbing
// cannot fix.
func failingFuncs(funcs []cFunc, ds []diagnostic) (failed []failure, stray []diagnostic) {
	seen := map[string]int{}
	for _, d := range ds {
		f, ok := funcAt(funcs, d.Line)
		if !ok {
			stray = append(stray, d)
			continue
		}
		i, dup := seen[f.Name]
		if !dup {
			seen[f.Name] = len(failed)
			failed = append(failed, failure{Func: f})
			i = len(failed) - 1
		}
		if failed[i].Error == "" && strings.HasPrefix(d.Message, "error:") {
			failed[i].Error = strings.TrimSpace(strings.TrimPrefix(d.Message, "error:"))
		}
	}
	return failed, stray
}

// stubBody returns the replacement for a rejected function: the original
// signature, and a body that throws inside PROTECT, so gotch's usual error
// path (torch_last_err, returned by Go as an error) reports the call instead
// of crashing. Non-void functions return a value-initialised result (0,
// 0.0 or nullptr) after PROTECT, as the generated code itself does.
func stubBody(f cFunc, libtorch string) []string {
	msg := fmt.Sprintf("gotch: %s is not available: its generated wrapper does not compile against %s (stubbed by proflow's gotchpatch)", f.Name, libtorch)
	lines := []string{
		"// gotchpatch: stubbed, the generated body does not compile against " + libtorch + ".",
		f.Signature,
		"  PROTECT(",
		"    throw std::runtime_error(" + strconv.Quote(msg) + ");",
		"  )",
	}
	if f.ReturnType != "void" {
		lines = append(lines, "  return {};")
	}
	return append(lines, "}")
}

// applyStubs replaces the bodies of the given functions in src and returns
// the new source. Functions are identified by their line span in src, so the
// spans must come from parsing this very src.
func applyStubs(src string, stubs []cFunc, libtorch string) string {
	byFirst := make(map[int]cFunc, len(stubs))
	for _, f := range stubs {
		byFirst[f.First] = f
	}
	lines := strings.Split(src, "\n")
	out := make([]string, 0, len(lines))
	for i := 0; i < len(lines); i++ {
		f, ok := byFirst[i+1]
		if !ok {
			out = append(out, lines[i])
			continue
		}
		out = append(out, stubBody(f, libtorch)...)
		i = f.Last - 1 // skip the old body, closing brace included
	}
	return strings.Join(out, "\n")
}
