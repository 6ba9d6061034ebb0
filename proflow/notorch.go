//go:build !torch

package main

import (
	"context"
	"flag"
	"fmt"
	"slices"
)

// torchCommands stands in for the commands that need libtorch: without the
// torch build tag, train and distill only say how to build a proflow that
// has them.
func torchCommands() []command {
	return []command{{
		name:    "train",
		summary: "train the Q-network offline (needs a build with libtorch: -tags torch)",
		run:     runTrainWithoutTorch,
	}, {
		name:    "distill",
		summary: "fit one universal Q-network to the mean Q-values of several (needs a build with libtorch: -tags torch)",
		run:     runDistillWithoutTorch,
	}}
}

// runDistillWithoutTorch refuses distill and says how to build a proflow
// that has it.
func runDistillWithoutTorch(_ context.Context, e *env, args []string) error {
	if slices.ContainsFunc(args, isHelpFlag) {
		fmt.Fprintf(e.stderr, "Usage: proflow distill [flags]\n\ndistill: %s.\n", noTorch)
		return flag.ErrHelp
	}
	return fmt.Errorf("distill: %s", noTorch)
}

// noTorch says why train is missing and how to build a proflow with it.
const noTorch = "built without libtorch (-tags torch): see docs/torch.md; " +
	"build a proflow that has it with make model-bin (writes build/model/proflow-torch), or after make torch-setup with " +
	"GOWORK=$PWD/build/torch.work go build -tags torch ./proflow"

// trainFlagsWithoutTorch declares the flags of the torch build's train
// (train_cmds.go; TestTrainFlagsMatchTorchBuild keeps them in step), so
// that a bad command line is a usage error here too.
func trainFlagsWithoutTorch(e *env) *flag.FlagSet {
	fs := e.newFlags("train", "train -data DATASET[,DATASET...] [-universal] [-config train.json] [-out model.safetensors] [flags]")
	for _, name := range []string{"data", "config", "out", "dynamics", "device", "checkpoints", "commit", "gate", "kernels"} {
		fs.String(name, "", "")
	}
	fs.Uint64("seed", 0, "")
	fs.Float64("beta", 0, "")
	fs.Bool("universal", false, "")
	return fs
}

// runTrainWithoutTorch refuses train: a bad command line as the torch
// build would (exit 2), a good one because this build cannot train (exit 1).
func runTrainWithoutTorch(_ context.Context, e *env, args []string) error {
	if slices.ContainsFunc(args, isHelpFlag) {
		fmt.Fprintf(e.stderr, "Usage: proflow train [flags]\n\ntrain: %s.\n", noTorch)
		return flag.ErrHelp
	}
	fs := trainFlagsWithoutTorch(e)
	if err := parseFlags(fs, "train", args); err != nil {
		return err
	}
	if fs.Lookup("data").Value.String() == "" {
		return fmt.Errorf("train: -data is required: %w", errUsage)
	}
	return fmt.Errorf("train: %s", noTorch)
}
