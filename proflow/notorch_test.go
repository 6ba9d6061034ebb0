//go:build !torch

package main

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// Without the torch tag, train is listed and says how to build a proflow
// that has it, instead of being an unknown command.
func TestTrainWithoutTorch(t *testing.T) {
	e, _, _ := newTestEnv()
	err := e.dispatch(context.Background(), []string{"train", "-data", "corpus.dataset"})
	if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "train: needs libtorch") || !strings.Contains(err.Error(), "-tags torch") {
		t.Errorf("train: %v, want a usage error saying it needs a build with -tags torch", err)
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
