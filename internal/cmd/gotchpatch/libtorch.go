package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// libtorchEnv names the environment variable that selects a libtorch other
// than Debian's: the root of an unpacked libtorch (holding include/ and lib/),
// typically a CUDA build.
const libtorchEnv = "PROFLOW_LIBTORCH"

// Debian's libtorch-dev puts the headers under /usr/include (a default
// search directory, apart from the C++ frontend's own root) and the shared
// libraries in the multiarch directory, also searched by default.
const (
	debianAPIInclude = "/usr/include/torch/csrc/api/include"
	debianCMakeDir   = "/usr/lib/x86_64-linux-gnu/cmake/Torch"
)

// libtorch describes the libtorch that gotch is compiled and linked against,
// and turns it into compiler and linker flags.
type libtorch struct {
	// Root is the PROFLOW_LIBTORCH folder, or "" for Debian's libtorch-dev.
	Root string
	// Version is TORCH_VERSION from torch/version.h, e.g. "1.13.0".
	Version string
	// Package is the installed libtorch-dev version for Debian's libtorch
	// (its headers say 1.13.0 for package 1.13.1+dfsg-4), else "".
	Package string
	// CXX11ABI is the _GLIBCXX_USE_CXX11_ABI value libtorch was built with.
	CXX11ABI int
	// CUDALibs are the CUDA libraries of Root's lib/ that gotch links, in
	// link order (e.g. torch_cuda, c10_cuda); empty for a CPU libtorch.
	CUDALibs []string
}

// cudaLibCandidates are libtorch's own CUDA libraries across releases (some
// 1.x releases split torch_cuda into torch_cuda_cu and torch_cuda_cpp). They
// pull in the CUDA runtime, cuBLAS and cuDNN that the libtorch archive
// bundles, so gotch never names those itself.
var cudaLibCandidates = []string{"torch_cuda", "torch_cuda_cu", "torch_cuda_cpp", "c10_cuda"}

// findLibtorch inspects the libtorch selected by PROFLOW_LIBTORCH (root) or,
// when root is empty, Debian's libtorch-dev.
func findLibtorch(root string) (*libtorch, error) {
	lt := &libtorch{Root: root, CXX11ABI: 1}
	apiInclude, cmakeDir := debianAPIInclude, debianCMakeDir
	if root != "" {
		abs, err := filepath.Abs(root)
		if err != nil {
			return nil, fmt.Errorf("%s=%q: %w", libtorchEnv, root, err)
		}
		if strings.ContainsAny(abs, " \t\n\"'`\\$") {
			return nil, fmt.Errorf("%s=%q: the path must not contain spaces, quotes or '$' (it goes into #cgo directives)", libtorchEnv, abs)
		}
		lt.Root = abs
		for _, d := range []string{"include", "lib"} {
			if fi, err := os.Stat(filepath.Join(abs, d)); err != nil || !fi.IsDir() {
				return nil, fmt.Errorf("%s=%q: expected an unpacked libtorch with %s/ inside", libtorchEnv, abs, d)
			}
		}
		apiInclude = filepath.Join(abs, "include", "torch", "csrc", "api", "include")
		cmakeDir = filepath.Join(abs, "share", "cmake", "Torch")
		for _, name := range cudaLibCandidates {
			if _, err := os.Stat(filepath.Join(abs, "lib", "lib"+name+".so")); err == nil {
				lt.CUDALibs = append(lt.CUDALibs, name)
			}
		}
	}

	v, err := readTorchVersion(filepath.Join(apiInclude, "torch", "version.h"))
	if err != nil {
		if root == "" {
			return nil, fmt.Errorf("Debian's libtorch-dev not found (run `make torch-deps` or apt-get install libtorch-dev): %w", err)
		}
		return nil, err
	}
	lt.Version = v
	if root == "" {
		lt.Package = debianPackageVersion()
	}

	// TorchConfig.cmake states the ABI libtorch was built with; official
	// archives come in both flavours. Without it, assume the compiler default.
	if abi, ok := readCXX11ABI(filepath.Join(cmakeDir, "TorchConfig.cmake")); ok {
		lt.CXX11ABI = abi
	}
	return lt, nil
}

// readTorchVersion returns the TORCH_VERSION string from torch/version.h.
func readTorchVersion(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read libtorch version: %w", err)
	}
	m := regexp.MustCompile(`(?s)#define\s+TORCH_VERSION\s+(?:\\\s*)?"([^"]+)"`).FindSubmatch(b)
	if m == nil {
		return "", fmt.Errorf("read libtorch version: no TORCH_VERSION string in %s", path)
	}
	return string(m[1]), nil
}

// readCXX11ABI returns the _GLIBCXX_USE_CXX11_ABI value in TorchConfig.cmake.
func readCXX11ABI(path string) (int, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	m := regexp.MustCompile(`_GLIBCXX_USE_CXX11_ABI=([01])`).FindSubmatch(b)
	if m == nil {
		return 0, false
	}
	return int(m[1][0] - '0'), true
}

// debianPackageVersion returns the installed libtorch-dev version, or "".
func debianPackageVersion() string {
	b, err := exec.Command("dpkg-query", "-W", "-f=${Version}", "libtorch-dev").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// IsCUDA reports whether gotch will link CUDA libraries.
func (lt *libtorch) IsCUDA() bool { return len(lt.CUDALibs) > 0 }

// String names the libtorch for reports and stub messages.
func (lt *libtorch) String() string {
	kind := "CPU"
	if lt.IsCUDA() {
		kind = "CUDA"
	}
	where := strings.TrimSpace("Debian libtorch-dev " + lt.Package)
	if lt.Root != "" {
		where = lt.Root
	}
	return fmt.Sprintf("libtorch %s (%s, %s)", lt.Version, kind, where)
}

// cxxFlags are the C++ flags for gotch's wrapper, both in the syntax-check
// passes and in the #cgo CXXFLAGS of the generated lib.go (where ${SRCDIR}
// stands for libtchDir). C++17 suits both libtorch 1.13 and 2.x. libtorch's
// headers are included as system headers (-isystem), which are searched
// before /usr/include but raise no warnings: under C++17 they would otherwise
// print pages of deprecation warnings on every build.
func (lt *libtorch) cxxFlags(libtchDir string) []string {
	flags := []string{"-std=c++17", "-I" + libtchDir, fmt.Sprintf("-D_GLIBCXX_USE_CXX11_ABI=%d", lt.CXX11ABI)}
	if lt.Root == "" {
		return append(flags, "-isystem", debianAPIInclude)
	}
	return append(flags,
		"-isystem", filepath.Join(lt.Root, "include"),
		"-isystem", filepath.Join(lt.Root, "include", "torch", "csrc", "api", "include"))
}

// ldFlags are the #cgo LDFLAGS of the generated lib.go. A custom libtorch is
// found at run time through an rpath. Its CUDA libraries are linked with
// --no-as-needed: nothing in gotch calls them directly, they register the
// CUDA kernels and hooks from static initialisers, and a linker that drops
// unreferenced libraries would leave torch::cuda::is_available() false.
func (lt *libtorch) ldFlags() []string {
	var flags []string
	if lt.Root != "" {
		lib := filepath.Join(lt.Root, "lib")
		flags = append(flags, "-L"+lib, "-Wl,-rpath,"+lib)
	}
	if lt.IsCUDA() {
		flags = append(flags, "-Wl,--no-as-needed")
		for _, l := range lt.CUDALibs {
			flags = append(flags, "-l"+l)
		}
	}
	return append(flags, "-ltorch", "-ltorch_cpu", "-lc10", "-lstdc++")
}

// libGo returns the replacement for gotch's libtch/lib.go. Upstream's file
// links the CUDA libraries unconditionally (its setup script rewrites it for
// CPU); this one carries exactly the flags for lt.
func (lt *libtorch) libGo() string {
	cxx := lt.cxxFlags("${SRCDIR}")
	var b strings.Builder
	b.WriteString("// Code generated by proflow's internal/cmd/gotchpatch; DO NOT EDIT.\n\n")
	fmt.Fprintf(&b, "// Build flags for %s.\n\n", lt)
	b.WriteString("package libtch\n\n")
	b.WriteString("// #cgo CFLAGS: -I${SRCDIR} -O3 -Wall -Wno-unused-variable -Wno-deprecated-declarations -Wno-c++11-narrowing -g -Wno-sign-compare -Wno-unused-function\n")
	fmt.Fprintf(&b, "// #cgo CXXFLAGS: %s -g -O3\n", strings.Join(cxx, " "))
	fmt.Fprintf(&b, "// #cgo LDFLAGS: %s\n", strings.Join(lt.ldFlags(), " "))
	b.WriteString("import \"C\"\n")
	return b.String()
}
