//go:build !torch

package main

// torchCommands is empty without the torch build tag: training needs libtorch.
func torchCommands() []command { return nil }
