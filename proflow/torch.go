//go:build torch

package main

// torchCommands lists the commands that need libtorch (training, probing).
func torchCommands() []command { return trainCommands() }
