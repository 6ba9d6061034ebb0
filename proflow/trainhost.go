package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
)

// trainHostKey is the model metadata key under which proflow train and
// proflow distill record the machine that fitted the weights.
const trainHostKey = "train_host"

// hostExtensions are the CPU extensions that choose libtorch's and its
// BLAS's CPU kernels, and with them the order in which a fit's sums are
// taken.
var hostExtensions = []string{"avx", "avx2", "fma", "avx512f", "avx512_bf16", "avx512_fp16", "amx_tile", "asimd", "sve"}

// kernelEnv returns the environment variables that pin the kernels and
// thread counts of libtorch and its BLAS, read when the libraries load:
// OpenBLAS's core type (its kernels, otherwise chosen from the CPU it
// detects) and thread count, the OpenMP thread count of ATen's parallel
// loops, and ATen's vectorised kernels, in portableKernelEnv's order, whose
// settings train and distill give them (-kernels portable) so that a fit
// does not depend on the CPU it runs on.
func kernelEnv() []string {
	var keys []string
	for _, kv := range portableKernelEnv() {
		k, _, _ := strings.Cut(kv, "=")
		keys = append(keys, k)
	}
	return keys
}

// trainHost describes the machine a training run fits on, for a model's
// provenance: the device, the platform, the CPU count, the CPU's model and
// kernel-choosing extensions (read from cpuinfo, /proc/cpuinfo's format;
// "unknown CPU" when it is nil or names none), the Go version and, when
// any is set (getenv, nil for none), the kernelEnv settings that pinned the
// kernels. Two runs with the same code, corpora and seed give bit-identical
// weights on one machine but, unless the kernels are pinned, not on another
// (models/README.md, "Reproducing the committed weights"); this says which
// machine, and which kernels, a model's weights belong to.
func trainHost(device string, cpuinfo io.Reader, getenv func(string) string) string {
	model, flags := cpuFlags(cpuinfo)
	if model == "" {
		model = "unknown CPU"
	}
	var ext []string
	for _, f := range hostExtensions {
		if flags[f] {
			ext = append(ext, f)
		}
	}
	desc := fmt.Sprintf("device %s; %s/%s, %d CPUs; %s", device, runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), model)
	if len(ext) > 0 {
		desc += " (" + strings.Join(ext, " ") + ")"
	}
	desc += "; " + runtime.Version()
	var pinned []string
	if getenv != nil {
		for _, k := range kernelEnv() {
			if v := getenv(k); v != "" {
				pinned = append(pinned, k+"="+v)
			}
		}
	}
	if len(pinned) > 0 {
		desc += "; kernels pinned by " + strings.Join(pinned, " ")
	}
	return desc
}

// localTrainHost is trainHost for this machine and process, reading
// /proc/cpuinfo where there is one.
func localTrainHost(device string) string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return trainHost(device, nil, os.Getenv)
	}
	defer f.Close()
	return trainHost(device, f, os.Getenv)
}
