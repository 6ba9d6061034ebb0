package main

import (
	"bufio"
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

// trainHost describes the machine a training run fits on, for a model's
// provenance: the device, the platform, the CPU count, the CPU's model and
// kernel-choosing extensions (read from cpuinfo, /proc/cpuinfo's format;
// "unknown CPU" when it is nil or names none) and the Go version. Two runs
// with the same code, corpora and seed give bit-identical weights on one
// machine but not on another (models/README.md, "Reproducing the committed
// weights"); this says which machine a model's weights belong to.
func trainHost(device string, cpuinfo io.Reader) string {
	model, flags := "", map[string]bool{}
	if cpuinfo != nil {
		sc := bufio.NewScanner(cpuinfo)
		sc.Buffer(make([]byte, 0, 64*1024), 1024*1024) // flags lines are long
		for sc.Scan() {
			key, val, ok := strings.Cut(sc.Text(), ":")
			if !ok {
				continue
			}
			switch strings.TrimSpace(key) {
			case "model name", "Model", "cpu model":
				if model == "" {
					model = strings.TrimSpace(val)
				}
			case "flags", "Features":
				for _, f := range strings.Fields(val) {
					flags[f] = true
				}
			}
		}
	}
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
	return desc + "; " + runtime.Version()
}

// localTrainHost is trainHost for this machine, reading /proc/cpuinfo
// where there is one.
func localTrainHost(device string) string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return trainHost(device, nil)
	}
	defer f.Close()
	return trainHost(device, f)
}
