package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"syscall"
)

// The values of train's and distill's -kernels flag.
const (
	// kernelsPortable pins libtorch's and OpenBLAS's kernels and thread
	// counts to portableKernelEnv, so that a fit is the same bytes on any
	// CPU that has AVX2 and FMA, whatever its core count or newer
	// extensions (docs/torch.md, "The same fit on another CPU").
	kernelsPortable = "portable"
	// kernelsNative leaves the environment as it is: the kernels and
	// thread counts the libraries choose for this CPU.
	kernelsNative = "native"
)

// portableKernelEnv returns the settings of -kernels portable, one
// KEY=value per kernel variable (kernelEnv is derived from it): OpenBLAS's Haswell kernels and one
// thread, one OpenMP thread for ATen's parallel loops and ATen's AVX2
// kernels.
func portableKernelEnv() []string {
	return []string{"OPENBLAS_CORETYPE=Haswell", "OPENBLAS_NUM_THREADS=1", "OMP_NUM_THREADS=1", "ATEN_CPU_CAPABILITY=avx2"}
}

// cpuFlags returns the extension flags of a /proc/cpuinfo (its "flags" or,
// on arm64, "Features" lines) and the first CPU model it names ("" when
// none); nil cpuinfo gives none of either.
func cpuFlags(cpuinfo io.Reader) (model string, flags map[string]bool) {
	flags = map[string]bool{}
	if cpuinfo == nil {
		return "", flags
	}
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
	return model, flags
}

// canRunPortable reports whether a CPU with these flags can run the
// portable kernels, which need AVX2 and FMA.
func canRunPortable(flags map[string]bool) bool { return flags["avx2"] && flags["fma"] }

// localCPUFlags is cpuFlags of this machine's /proc/cpuinfo (none where
// there is no such file).
func localCPUFlags() map[string]bool {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return map[string]bool{}
	}
	defer f.Close()
	_, flags := cpuFlags(f)
	return flags
}

// defaultKernels is -kernels' default on a CPU with these flags: portable
// where the CPU can run the pinned kernels, native elsewhere.
func defaultKernels(flags map[string]bool) string {
	if canRunPortable(flags) {
		return kernelsPortable
	}
	return kernelsNative
}

// kernelsUsage is the -kernels flag's help; the flag package adds the
// default, defaultKernels of this CPU.
func kernelsUsage() string {
	return fmt.Sprintf("%q: pin libtorch's and OpenBLAS's kernels and thread counts (%s; the process restarts itself with them when its environment lacks them), so that the fit is the same bytes on any CPU with AVX2 and FMA; %q: the kernels this CPU chooses",
		kernelsPortable, strings.Join(portableKernelEnv(), " "), kernelsNative)
}

// pinnedEnviron returns environ with portableKernelEnv's settings in place
// of any other value of those variables, and the settings it had to
// add or change ("KEY=value", or "KEY=value (was old)"); none when environ
// already pins the kernels.
func pinnedEnviron(environ []string) (out, changed []string) {
	want := map[string]string{}
	for _, kv := range portableKernelEnv() {
		k, v, _ := strings.Cut(kv, "=")
		want[k] = v
	}
	had := map[string]string{}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		if _, pinned := want[k]; pinned {
			had[k] = v
			continue
		}
		out = append(out, kv)
	}
	for _, kv := range portableKernelEnv() {
		k, v, _ := strings.Cut(kv, "=")
		out = append(out, kv)
		switch old, ok := had[k]; {
		case !ok:
			changed = append(changed, kv)
		case old != v:
			changed = append(changed, fmt.Sprintf("%s (was %s)", kv, old))
		}
	}
	return out, changed
}

// pinKernels applies cmd's -kernels mode before libtorch does any work.
// OpenBLAS and OpenMP read their settings when they load, before main, so
// pinning takes a restart: where environ does not already pin the kernels,
// pinKernels says so on stderr and calls restart with the pinned
// environment (restartSelf in the binary, which does not return when it
// succeeds; nil where the caller cannot restart, which is then an error).
// Native, or an environment already pinned, returns nil at once. Portable on
// a CPU without AVX2 and FMA is a usage error.
func pinKernels(cmd, mode string, flags map[string]bool, environ []string, restart func(environ []string) error, stderr io.Writer) error {
	switch mode {
	case kernelsNative:
		return nil
	case kernelsPortable:
	default:
		return badFlag(cmd, "kernels", mode, fmt.Sprintf("%q or %q", kernelsPortable, kernelsNative))
	}
	if !canRunPortable(flags) {
		var missing []string
		for _, f := range []string{"avx2", "fma"} {
			if !flags[f] {
				missing = append(missing, f)
			}
		}
		return fmt.Errorf("%s: -kernels %s needs a CPU with AVX2 and FMA, and this one lacks %s: want -kernels %s (the fit will then depend on this CPU): %w",
			cmd, kernelsPortable, strings.Join(missing, " and "), kernelsNative, errUsage)
	}
	pinned, changed := pinnedEnviron(environ)
	if len(changed) == 0 {
		return nil
	}
	if restart == nil {
		return fmt.Errorf("%s: -kernels %s: the environment lacks %s, read when libtorch and OpenBLAS load, and this process cannot restart itself: want them set before it starts, or -kernels %s: %w",
			cmd, kernelsPortable, strings.Join(changed, " "), kernelsNative, errUsage)
	}
	fmt.Fprintf(stderr, "%s: -kernels %s: restarting with %s (libtorch and OpenBLAS read them when they load)\n", cmd, kernelsPortable, strings.Join(changed, " "))
	if err := restart(pinned); err != nil {
		return fmt.Errorf("%s: -kernels %s: restart with the pinned kernels: %w (or set %s yourself, or -kernels %s)",
			cmd, kernelsPortable, err, strings.Join(portableKernelEnv(), " "), kernelsNative)
	}
	return nil
}

// restartSelf replaces this process with a fresh run of its own binary and
// arguments under environ; it returns only when that fails. The process
// keeps its PID, open files and CPU affinity.
func restartSelf(environ []string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	return syscall.Exec(exe, slices.Clone(os.Args), environ)
}
