//go:build torch

package main

// trainCommands returns the libtorch-backed commands.
func trainCommands() []command { return nil }
