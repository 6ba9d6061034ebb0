package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeLibtorch lays out the parts of an unpacked libtorch archive that
// findLibtorch reads, with the given extra libraries under lib/.
func fakeLibtorch(t *testing.T, abi string, libs ...string) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"include/torch/csrc/api/include/torch/version.h": "#define TORCH_VERSION_MAJOR 2\n#define TORCH_VERSION \\\n  \"2.1.0\"\n",
		"share/cmake/Torch/TorchConfig.cmake":            `set(TORCH_CXX_FLAGS "-D_GLIBCXX_USE_CXX11_ABI=` + abi + `")`,
		"lib/libtorch.so":                                "",
	}
	for _, l := range libs {
		files["lib/lib"+l+".so"] = ""
	}
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestFindLibtorchCUDA(t *testing.T) {
	root := fakeLibtorch(t, "0", "torch_cuda", "c10_cuda")
	lt, err := findLibtorch(root)
	if err != nil {
		t.Fatal(err)
	}
	if lt.Version != "2.1.0" || lt.CXX11ABI != 0 || !lt.IsCUDA() {
		t.Errorf("findLibtorch = %+v, want version 2.1.0, ABI 0, CUDA", lt)
	}
	libGo := lt.libGo()
	lib := filepath.Join(root, "lib")
	for _, want := range []string{
		"-D_GLIBCXX_USE_CXX11_ABI=0",
		"-isystem " + filepath.Join(root, "include") + " ",
		"-isystem " + filepath.Join(root, "include", "torch", "csrc", "api", "include"),
		"#cgo LDFLAGS: -L" + lib + " -Wl,-rpath," + lib + " -Wl,--no-as-needed -ltorch_cuda -lc10_cuda -ltorch -ltorch_cpu -lc10 -lstdc++\n",
	} {
		if !strings.Contains(libGo, want) {
			t.Errorf("lib.go lacks %q:\n%s", want, libGo)
		}
	}
	if strings.Contains(libGo, "/usr/local/cuda") || strings.Contains(libGo, debianAPIInclude) {
		t.Errorf("lib.go for a custom libtorch names system paths:\n%s", libGo)
	}
}

func TestFindLibtorchCPUFolder(t *testing.T) {
	lt, err := findLibtorch(fakeLibtorch(t, "1"))
	if err != nil {
		t.Fatal(err)
	}
	if lt.IsCUDA() || strings.Contains(lt.libGo(), "cuda") {
		t.Errorf("a libtorch without CUDA libraries links CUDA:\n%s", lt.libGo())
	}
}

func TestFindLibtorchRejects(t *testing.T) {
	for name, root := range map[string]string{
		"missing":  filepath.Join(t.TempDir(), "nope"),
		"no lib/":  t.TempDir(),
		"space in": filepath.Join(t.TempDir(), "lib torch"),
	} {
		if _, err := findLibtorch(root); err == nil {
			t.Errorf("%s: findLibtorch(%q) succeeded", name, root)
		}
	}
}

func TestDebianLibGo(t *testing.T) {
	lt := &libtorch{Version: "1.13.0", CXX11ABI: 1}
	got := lt.libGo()
	for _, want := range []string{
		"#cgo CXXFLAGS: -std=c++17 -I${SRCDIR} -D_GLIBCXX_USE_CXX11_ABI=1 -isystem " + debianAPIInclude,
		"#cgo LDFLAGS: -ltorch -ltorch_cpu -lc10 -lstdc++\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("lib.go lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "cuda") {
		t.Errorf("CPU lib.go mentions CUDA:\n%s", got)
	}
}
