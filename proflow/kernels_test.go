package main

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPinnedEnviron(t *testing.T) {
	environ := []string{"PATH=/bin", "OMP_NUM_THREADS=8", "OPENBLAS_CORETYPE=Haswell", "HOME=/root"}
	got, changed := pinnedEnviron(environ)
	want := []string{"PATH=/bin", "HOME=/root", "OPENBLAS_CORETYPE=Haswell", "OPENBLAS_NUM_THREADS=1", "OMP_NUM_THREADS=1", "ATEN_CPU_CAPABILITY=avx2"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pinned environment (-want +got):\n%s", diff)
	}
	wantChanged := []string{"OPENBLAS_NUM_THREADS=1", "OMP_NUM_THREADS=1 (was 8)", "ATEN_CPU_CAPABILITY=avx2"}
	if diff := cmp.Diff(wantChanged, changed); diff != "" {
		t.Errorf("changed settings (-want +got):\n%s", diff)
	}
	if again, none := pinnedEnviron(got); len(none) != 0 || !slices.Equal(again, got) {
		t.Errorf("an environment already pinned: changed %v, environment %v; want none changed, the same", none, again)
	}
}

func TestDefaultKernels(t *testing.T) {
	_, x86 := cpuFlags(strings.NewReader("model name : Xeon\nflags : sse2 avx avx2 fma\n"))
	_, old := cpuFlags(strings.NewReader("model name : Xeon\nflags : sse2 avx\n"))
	_, arm := cpuFlags(strings.NewReader("Features : fp asimd sve\n"))
	for _, c := range []struct {
		name  string
		flags map[string]bool
		want  string
	}{{"AVX2 and FMA", x86, kernelsPortable}, {"AVX only", old, kernelsNative}, {"arm64", arm, kernelsNative}, {"no cpuinfo", map[string]bool{}, kernelsNative}} {
		if got := defaultKernels(c.flags); got != c.want {
			t.Errorf("%s: default -kernels %q, want %q", c.name, got, c.want)
		}
	}
}

func TestPinKernels(t *testing.T) {
	_, x86 := cpuFlags(strings.NewReader("flags : avx avx2 fma\n"))
	var restartedWith []string
	restart := func(environ []string) error { restartedWith = environ; return nil }
	var stderr bytes.Buffer

	// Not pinned yet: a restart with the pinned environment, said on stderr.
	if err := pinKernels("train", kernelsPortable, x86, []string{"PATH=/bin"}, restart, &stderr); err != nil {
		t.Fatal(err)
	}
	if want := append([]string{"PATH=/bin"}, portableKernelEnv()...); !slices.Equal(restartedWith, want) {
		t.Errorf("restarted with %v, want %v", restartedWith, want)
	}
	if want := "train: -kernels portable: restarting with " + strings.Join(portableKernelEnv(), " "); !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}

	// Already pinned, or native: no restart.
	for _, c := range []struct {
		mode    string
		environ []string
	}{{kernelsPortable, restartedWith}, {kernelsNative, []string{"PATH=/bin"}}} {
		called := false
		if err := pinKernels("train", c.mode, x86, c.environ, func([]string) error { called = true; return nil }, &stderr); err != nil || called {
			t.Errorf("-kernels %s with %v: %v, restarted %v; want no error, no restart", c.mode, c.environ, err, called)
		}
	}

	// Mistakes and failures, each naming what to do.
	_, noFMA := cpuFlags(strings.NewReader("flags : avx avx2\n"))
	failing := func([]string) error { return errors.New("exec format error") }
	for _, c := range []struct {
		name    string
		mode    string
		flags   map[string]bool
		restart func([]string) error
		want    string
		usage   bool
	}{
		{"bad mode", "fast", x86, restart, `-kernels fast: want "portable" or "native"`, true},
		{"no FMA", kernelsPortable, noFMA, restart, "needs a CPU with AVX2 and FMA, and this one lacks fma: want -kernels native", true},
		{"cannot restart", kernelsPortable, x86, nil, "the environment lacks OPENBLAS_CORETYPE=Haswell", true},
		{"restart fails", kernelsPortable, x86, failing, "restart with the pinned kernels: exec format error (or set OPENBLAS_CORETYPE=Haswell", false},
	} {
		err := pinKernels("distill", c.mode, c.flags, []string{"PATH=/bin"}, c.restart, &stderr)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "distill: ") {
			t.Errorf("%s: %v, want an error from distill with %q", c.name, err, c.want)
			continue
		}
		if got := errors.Is(err, errUsage); got != c.usage {
			t.Errorf("%s: usage error %v, want %v", c.name, got, c.usage)
		}
	}
}
