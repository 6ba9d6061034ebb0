package main

import (
	"runtime"
	"strings"
	"testing"
)

func TestTrainHost(t *testing.T) {
	const cpuinfo = `processor	: 0
vendor_id	: GenuineIntel
model name	: Intel(R) Xeon(R) Processor
flags		: fpu sse2 avx avx2 fma avx512f avx512_fp16 amx_tile popcnt

processor	: 1
model name	: Intel(R) Xeon(R) Processor
flags		: fpu sse2 avx avx2 fma avx512f avx512_fp16 amx_tile popcnt
`
	got := trainHost("cpu", strings.NewReader(cpuinfo), nil)
	want := "device cpu; " + runtime.GOOS + "/" + runtime.GOARCH
	if !strings.HasPrefix(got, want) {
		t.Errorf("trainHost = %q, want it to start with %q", got, want)
	}
	for _, w := range []string{"Intel(R) Xeon(R) Processor (avx avx2 fma avx512f avx512_fp16 amx_tile)", runtime.Version()} {
		if !strings.Contains(got, w) {
			t.Errorf("trainHost = %q, want %q in it", got, w)
		}
	}
	if strings.Contains(got, "popcnt") || strings.Count(got, "Xeon") != 1 {
		t.Errorf("trainHost = %q: only the kernel-choosing extensions, the model once", got)
	}

	// An arm64 cpuinfo names its features on a Features line.
	arm := trainHost("cuda", strings.NewReader("processor : 0\nFeatures : fp asimd sve crc32\nCPU part : 0xd0c\n"), nil)
	if !strings.Contains(arm, "device cuda;") || !strings.Contains(arm, "unknown CPU (asimd sve)") {
		t.Errorf("arm64 cpuinfo: %q, want the device, unknown CPU and asimd sve", arm)
	}
	if none := trainHost("cpu", nil, nil); !strings.Contains(none, "; unknown CPU; ") || strings.Contains(none, "pinned") {
		t.Errorf("no cpuinfo: %q, want unknown CPU, no extension list and no pinned kernels", none)
	}

	// The kernel settings, in kernelEnv's order, the unset ones left out.
	env := map[string]string{"OMP_NUM_THREADS": "1", "OPENBLAS_CORETYPE": "Haswell", "GOMAXPROCS": "3"}
	pinned := trainHost("cpu", nil, func(k string) string { return env[k] })
	if want := "; kernels pinned by OPENBLAS_CORETYPE=Haswell OMP_NUM_THREADS=1"; !strings.HasSuffix(pinned, want) {
		t.Errorf("pinned kernels: %q, want it to end with %q", pinned, want)
	}
}
