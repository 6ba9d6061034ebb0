//go:build !torch

package main

import (
	"context"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Without the torch tag, train and distill are listed; a good command line fails with
// exit 1 saying how to build a proflow that has it, a bad one is a usage
// error (exit 2) as in the torch build.
func TestTrainWithoutTorch(t *testing.T) {
	for _, c := range []struct {
		args []string
		exit int
		want string
	}{
		{[]string{"train", "-data", "corpus.dataset"}, 1, "train: built without libtorch (-tags torch): see docs/torch.md"},
		{[]string{"train", "-data", "corpus.dataset", "-seed", "3", "-beta", "-0.5", "-out", "m.safetensors"}, 1, "see docs/torch.md"},
		{[]string{"train", "-bogus", "1"}, 2, "flag provided but not defined: -bogus"},
		{[]string{"train", "-seed", "many", "-data", "x"}, 2, "-seed"},
		{[]string{"train", "-data", "x", "stray"}, 2, `unexpected arguments ["stray"]`},
		{[]string{"train"}, 2, "train: -data is required"},
		{[]string{"distill", "-teachers", "a.safetensors,b.safetensors", "-data", "x"}, 1, "distill: built without libtorch (-tags torch): see docs/torch.md"},
	} {
		e, _, _ := newTestEnv()
		err := e.dispatch(context.Background(), c.args)
		if err == nil || exitCode(err) != c.exit || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v (exit %d), want exit %d with %q", c.args, err, exitCode(err), c.exit, c.want)
		}
	}
	e, out, _ := newTestEnv()
	if err := e.dispatch(context.Background(), []string{"help"}); err != nil || !strings.Contains(out.String(), "  train ") {
		t.Errorf("help: %v, stdout %q; want train listed", err, out)
	}
	e, out, _ = newTestEnv()
	if err := e.dispatch(context.Background(), []string{"help", "train"}); err != nil || !strings.Contains(out.String(), "-tags torch") {
		t.Errorf("help train: %v, stdout %q; want how to build it, exit 0", err, out)
	}
}

// TestTrainFlagsMatchTorchBuild reads the flags the torch build's train
// declares (train_cmds.go, which this build does not compile) and checks
// that trainFlagsWithoutTorch declares the same names with the same types.
func TestTrainFlagsMatchTorchBuild(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "train_cmds.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var torch []string
	ast.Inspect(f, func(n ast.Node) bool {
		fn, ok := n.(*ast.FuncDecl)
		if ok && fn.Name.Name != "runTrain" {
			return false
		}
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) == 0 {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "fs" {
			return true
		}
		if lit, ok := call.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
			name, _ := strconv.Unquote(lit.Value)
			torch = append(torch, name+" "+sel.Sel.Name)
		}
		return true
	})
	if len(torch) == 0 {
		t.Fatal("no flags found in train_cmds.go's runTrain")
	}
	e, _, _ := newTestEnv()
	var here []string
	trainFlagsWithoutTorch(e).VisitAll(func(fl *flag.Flag) {
		// *flag.uint64Value is declared with FlagSet.Uint64, and so on.
		kind := strings.TrimSuffix(strings.TrimPrefix(fmt.Sprintf("%T", fl.Value), "*flag."), "Value")
		here = append(here, fl.Name+" "+strings.ToUpper(kind[:1])+kind[1:])
	})
	slices.Sort(torch)
	slices.Sort(here)
	if !slices.Equal(torch, here) {
		t.Errorf("train flags: torch build %v, this build %v; want the same", torch, here)
	}
}
