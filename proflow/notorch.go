//go:build !torch

package main

import (
	"context"
	"flag"
	"fmt"
	"slices"
)

// torchCommands stands in for the commands that need libtorch: without the
// torch build tag, train only says how to build a proflow that has it.
func torchCommands() []command {
	return []command{{
		name:    "train",
		summary: "train the Q-network offline (needs a build with libtorch: -tags torch)",
		run:     runTrainWithoutTorch,
	}}
}

// noTorch says why train is missing and how to build a proflow with it.
const noTorch = "needs libtorch, and this proflow was built without it (no -tags torch): " +
	"build one with make model-bin (writes build/model/proflow-torch), or after make torch-setup with " +
	"GOWORK=$PWD/build/torch.work go build -tags torch ./proflow (see docs/torch.md)"

func runTrainWithoutTorch(_ context.Context, e *env, args []string) error {
	if slices.ContainsFunc(args, isHelpFlag) {
		fmt.Fprintf(e.stderr, "Usage: proflow train [flags]\n\ntrain %s.\n", noTorch)
		return flag.ErrHelp
	}
	return fmt.Errorf("train: %s: %w", noTorch, errUsage)
}
