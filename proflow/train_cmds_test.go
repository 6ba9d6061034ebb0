//go:build torch

package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/policy"
	"github.com/proflow-sdn/proflow/policy/qnet"
	"github.com/proflow-sdn/proflow/telemetry"
	"github.com/proflow-sdn/proflow/training"
	"github.com/proflow-sdn/proflow/training/torchq"
)

// writeToyDataset writes a small dataset of random in-range states.
func writeToyDataset(t *testing.T, path string) telemetry.EncoderConfig {
	t.Helper()
	enc := telemetry.DefaultEncoderConfig(proflow.PaperTopology())
	writeToyDatasetOf(t, path, enc)
	return enc
}

// writeToyDatasetOf writes a small dataset of random in-range states
// encoded with enc.
func writeToyDatasetOf(t *testing.T, path string, enc telemetry.EncoderConfig) {
	t.Helper()
	writeToyDatasetEpisodes(t, path, enc, 6)
}

// writeToyDatasetEpisodes writes episodes episodes of 10 random in-range
// states encoded with enc.
func writeToyDatasetEpisodes(t *testing.T, path string, enc telemetry.EncoderConfig, episodes int) {
	t.Helper()
	nS := enc.NumSwitches
	ds, err := training.NewDataset(enc, "toy", true)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	state := func(cur int) []float32 {
		s := make([]float32, enc.Dim())
		for i := range s {
			s[i] = rng.Float32()
		}
		if err := training.ClampState(enc, s, cur); err != nil {
			t.Fatal(err)
		}
		return s
	}
	for e := range episodes {
		cur := e % nS
		s := state(cur)
		for st := range 10 {
			a := cur
			if st == 5 {
				a = (cur + 1) % nS
			}
			next := state(a)
			in := training.RewardInputs{ThroughputNorm: rng.Float64(), Overflow: rng.Float64(), CrowdExcess: rng.Float64()}
			if err := ds.Append(training.Transition{State: s, Action: a, Next: next, Done: st == 9, Current: cur,
				Episode: e, Step: st, ThroughputBaseline: 0.9, Inputs: &in}); err != nil {
				t.Fatal(err)
			}
			s, cur = next, a
		}
	}
	if err := ds.Save(path); err != nil {
		t.Fatal(err)
	}
}

func TestTrainCommand(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data.safetensors")
	enc := writeToyDataset(t, data)
	cfgPath := filepath.Join(dir, "train.json")
	cfg := `{"hidden":[32,32],"dynamics_hidden":[32],"batch_size":16,"dynamics_epochs":2,"fqi_epochs":2,"dyna_epochs":1,"dyna_rollouts":4,"held_out":0.2}`
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	// Directories train creates before it starts, so that the run's
	// result is not lost at the end.
	model := filepath.Join(dir, "out", "model.safetensors")
	dyn := filepath.Join(dir, "dyn", "dynamics.safetensors")
	var stdout, stderr bytes.Buffer
	e := &env{stdout: &stdout, stderr: &stderr}
	e.commands = commands()
	err := e.dispatch(context.Background(), []string{"train", "-data", data, "-config", cfgPath, "-out", model,
		"-dynamics", dyn, "-beta", "0", "-seed", "5", "-commit", "abc123", "-checkpoints", filepath.Join(dir, "ckpt"), "-kernels", "native"})
	if err != nil {
		t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	for _, want := range []string{"dataset ", "dynamics epoch 2/2", "fqi epoch 2/2", "dyna epoch 1/1", "wrote " + model, "wrote " + dyn} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, stdout.String())
		}
	}
	agent, err := policy.LoadAgent(model, enc)
	if err != nil {
		t.Fatal(err)
	}
	meta := agent.Metadata()
	if meta.Seed != "5" || meta.Commit != "abc123" || meta.MadeBy != "proflow train" || !strings.HasPrefix(meta.Corpus, "toy") {
		t.Errorf("metadata %+v", meta)
	}
	var got training.TrainConfig
	if err := json.Unmarshal([]byte(meta.Extra["train_config"]), &got); err != nil {
		t.Fatal(err)
	}
	if got.Reward.Beta != 0 || got.Seed != 5 || got.Hidden[0] != 32 {
		t.Errorf("recorded config: beta %v seed %d hidden %v; want the overrides", got.Reward.Beta, got.Seed, got.Hidden)
	}
	if host := meta.Extra[trainHostKey]; !strings.HasPrefix(host, "device cpu; ") {
		t.Errorf("recorded %s %q, want the machine, starting with the device", trainHostKey, host)
	}
	if _, _, err := training.LoadDynamics(dyn); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "ckpt", "q.ot")); err != nil {
		t.Error(err)
	}

	// Usage errors.
	for _, args := range [][]string{{"train"}, {"train", "-data", data, "-beta", "0.5", "-out", filepath.Join(dir, "x")}, {"train", "-data", filepath.Join(dir, "none")}} {
		if err := e.dispatch(context.Background(), args); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}

// universalToyData writes, in a fresh directory, toy datasets of the
// paper's fabric (small) and of 6 switches (big) and a train config small
// enough for a test; it returns the directory, the paths and the small
// dataset's and the big one's encoders.
func universalToyData(t *testing.T) (dir, small, big, cfgPath string, enc, encBig telemetry.EncoderConfig) {
	t.Helper()
	dir = t.TempDir()
	small, big = filepath.Join(dir, "small.dataset"), filepath.Join(dir, "big.dataset")
	enc = telemetry.DefaultEncoderConfig(proflow.PaperTopology())
	writeToyDatasetOf(t, small, enc)
	encBig = enc
	encBig.NumSwitches = 6
	writeToyDatasetOf(t, big, encBig)
	cfgPath = filepath.Join(dir, "train.json")
	cfg := `{"dynamics_hidden":[16],"batch_size":16,"dynamics_epochs":1,"fqi_epochs":1,"dyna_epochs":1,"dyna_rollouts":4,"held_out":0.2}`
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, small, big, cfgPath, enc, encBig
}

// train -universal on two datasets of different sizes writes one universal
// model that records both corpora, and a dynamics model per size.
func TestTrainCommandUniversal(t *testing.T) {
	dir, small, big, cfgPath, enc, encBig := universalToyData(t)
	model, dyn := filepath.Join(dir, "u.safetensors"), filepath.Join(dir, "u.dynamics.safetensors")
	e, stdout, _ := newTestEnv()
	err := e.dispatch(context.Background(), []string{"train", "-universal", "-data", small + "," + big, "-config", cfgPath,
		"-out", model, "-dynamics", dyn, "-commit", "abc", "-kernels", "native"})
	if err != nil {
		t.Fatalf("%v\nstdout:\n%s", err, stdout.String())
	}
	for _, want := range []string{"; by fabric: 4x3 held-out ", "wrote " + model + " (universal Q-network [34 128 128 1]",
		"wrote " + dyn + " (dynamics model 4x3", "wrote " + filepath.Join(dir, "u.dynamics-6x3.safetensors") + " (dynamics model 6x3"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, stdout.String())
		}
	}
	_, meta, err := qnet.Load(model)
	if err != nil {
		t.Fatal(err)
	}
	if !meta.Universal() || meta.Encoder != enc || !strings.Contains(meta.Corpus, "small.dataset: fabric 4x3, 60 transitions") ||
		!strings.Contains(meta.Corpus, "; toy ("+big+": fabric 6x3, 60 transitions") {
		t.Errorf("metadata %+v: want a universal model, the first dataset's encoder and both corpora", meta)
	}
	if d, _, err := training.LoadDynamics(filepath.Join(dir, "u.dynamics-6x3.safetensors")); err != nil || d.Encoder() != encBig {
		t.Errorf("6x3 dynamics model: %v", err)
	}
}

// distill fits a student to two toy universal teachers on two fabrics'
// datasets and records them; a dataset scaled otherwise than the teachers
// is refused, naming the field.
func TestDistillCommand(t *testing.T) {
	dir, small, big, cfgPath, enc, _ := universalToyData(t)
	var teachers []string
	for _, seed := range []string{"1", "2"} {
		m := filepath.Join(dir, "t"+seed+".safetensors")
		e, stdout, _ := newTestEnv()
		if err := e.dispatch(context.Background(), []string{"train", "-universal", "-data", small + "," + big, "-config", cfgPath,
			"-seed", seed, "-out", m, "-dynamics", filepath.Join(dir, "d"+seed+".safetensors"), "-commit", "abc", "-kernels", "native"}); err != nil {
			t.Fatalf("train: %v\n%s", err, stdout)
		}
		teachers = append(teachers, m)
	}
	student := filepath.Join(dir, "students", "student.safetensors") // a directory distill creates
	e, stdout, _ := newTestEnv()
	if err := e.dispatch(context.Background(), []string{"distill", "-teachers", strings.Join(teachers, ","), "-data", small + "," + big,
		"-epochs", "2", "-out", student, "-commit", "abc", "-kernels", "native"}); err != nil {
		t.Fatalf("distill: %v\n%s", err, stdout)
	}
	if want := "wrote " + student + " (universal Q-network [34 128 128 1] from 2 teachers"; !strings.Contains(stdout.String(), want) {
		t.Errorf("output lacks %q:\n%s", want, stdout)
	}
	if _, meta, err := qnet.Load(student); err != nil || !meta.Universal() || meta.Encoder != enc ||
		meta.Extra["distill_teachers"] != strings.Join(teachers, ",") || meta.MadeBy != "proflow distill" ||
		!strings.HasPrefix(meta.Extra[trainHostKey], "device cpu; ") {
		t.Errorf("student metadata %+v (%v): want a universal model with the teachers' encoder, their names and the machine", meta, err)
	}

	other := filepath.Join(dir, "other.dataset")
	encOther := enc
	encOther.FlowCountScale *= 2
	writeToyDatasetOf(t, other, encOther)
	e, _, _ = newTestEnv()
	err := e.dispatch(context.Background(), []string{"distill", "-teachers", strings.Join(teachers, ","), "-data", other, "-out", student, "-kernels", "native"})
	if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), "dataset "+other+" has encoder.flow_count_scale") {
		t.Errorf("a dataset scaled otherwise: %v (exit %d), want a usage error naming encoder.flow_count_scale", err, exitCode(err))
	}
}

// Flag and config mistakes are reported before the dataset is read: the
// dataset here does not exist, and the error must be about the mistake.
func TestTrainCommandChecksBeforeLoading(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.dataset")
	noDyn := filepath.Join(dir, "nodyn.json")
	if err := os.WriteFile(noDyn, []byte(`{"dynamics_epochs":0,"dyna_epochs":0}`), 0o644); err != nil {
		t.Fatal(err)
	}
	lag := filepath.Join(dir, "lag.json")
	if err := os.WriteFile(lag, []byte(`{"decision_lag":5}`), 0o644); err != nil {
		t.Fatal(err)
	}
	gate16 := filepath.Join(dir, "gate.json")
	if err := os.WriteFile(gate16, []byte(`{"margin":0.2,"votes":16,"cooldown":15000000000}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args  []string
		want  string
		usage bool
	}{
		{[]string{"-config", noDyn, "-dynamics", filepath.Join(dir, "d.safetensors")}, "dynamics_epochs 0", true},
		{[]string{"-config", lag, "-gate", gate16}, "decision_lag 5 values a move made 5 intervals after the first vote for it, but the gate has 16 votes: want votes = decision_lag + 1", true},
		{[]string{"-config", lag}, "but the gate has 3 votes", true},
		{[]string{"-beta", "0.5"}, "-beta 0.5: want a finite number <= 0", true},
		{[]string{"-device", "tpu"}, `-device tpu: want "cpu" or "cuda"`, true},
		{[]string{"-kernels", "fast"}, `-kernels fast: want "portable" or "native"`, true},
		{[]string{"stray", "-seed", "2"}, "unexpected arguments", true},
		{[]string{"-data", missing + "," + missing}, "-data names 2 datasets: training across fabrics needs -universal", true},
		{[]string{"-universal", "-data", "a.dataset,,b.dataset"}, "want dataset files separated by commas, none empty", true},
		{[]string{"-out", filepath.Join(noDyn, "model.safetensors")}, "-out " + filepath.Join(noDyn, "model.safetensors") + ": create its directory", false},
	}
	if _, err := torchq.Device(training.DeviceCUDA); err != nil {
		cases = append(cases, struct {
			args  []string
			want  string
			usage bool
		}{[]string{"-device", "cuda"}, "CUDA requested but not available", false})
	}
	for _, c := range cases {
		e, _, _ := newTestEnv()
		args := append([]string{"train", "-data", missing}, c.args...)
		err := e.dispatch(context.Background(), args)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "missing.dataset") {
			t.Errorf("%q: %v, want an error about %q before the dataset is read", args, err, c.want)
			continue
		}
		if got := errors.Is(err, errUsage); got != c.usage {
			t.Errorf("%q: usage error %v, want %v (%v)", args, got, c.usage, err)
		}
	}
}

// TestTrainPinnedKernels trains one toy model in child processes that may
// use every CPU or only CPU 0 (taskset), started with none of the kernel
// settings in their environment: with -kernels portable, train restarts
// itself with them, the weights are the same bytes either way and the
// model records the settings; with -kernels native, the thread count
// changes the weights. mk/model.mk passes MODEL_PORTABLE on to every
// training it runs.
func TestTrainPinnedKernels(t *testing.T) {
	mk, err := os.ReadFile("../mk/model.mk")
	if err != nil {
		t.Fatal(err)
	}
	trains := 0
	for _, line := range strings.Split(string(mk), "\n") {
		if strings.Contains(line, "$(MODEL_BIN) train ") {
			trains++
			if !strings.Contains(line, "$(model_kernels)") {
				t.Errorf("mk/model.mk trains without MODEL_PORTABLE's -kernels: %q", strings.TrimSpace(line))
			}
		}
	}
	if trains == 0 {
		t.Error("mk/model.mk runs no $(MODEL_BIN) train")
	}
	if !canRunPortable(localCPUFlags()) {
		t.Fatal("this CPU lacks AVX2 or FMA, which -kernels portable needs")
	}
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		t.Fatalf("taskset (util-linux) is needed to run a training on one CPU: %v", err)
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "data.safetensors")
	// Large enough batches and layers for OpenBLAS and ATen to split their
	// work across threads.
	writeToyDatasetEpisodes(t, data, telemetry.DefaultEncoderConfig(proflow.PaperTopology()), 80)
	cfgPath := filepath.Join(dir, "train.json")
	cfg := `{"hidden":[256,256],"dynamics_hidden":[64],"batch_size":256,"dynamics_epochs":1,"fqi_epochs":3,"dyna_epochs":1,"dyna_rollouts":4,"held_out":0.1}`
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	train := func(name, kernels string, oneCPU bool) []byte {
		t.Helper()
		out := filepath.Join(dir, name+".safetensors")
		args := []string{"train", "-data", data, "-config", cfgPath, "-out", out, "-seed", "3", "-commit", "x", "-kernels", kernels}
		argv := []string{os.Args[0], "-test.run=^$"}
		if oneCPU {
			argv = append([]string{taskset, "-c", "0"}, argv...)
		}
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = []string{commandHelperEnv + "=" + strings.Join(args, "\n")}
		for _, kv := range os.Environ() {
			k, _, _ := strings.Cut(kv, "=")
			if !slices.Contains(kernelEnv(), k) {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, b)
		}
		pinned := kernels == kernelsPortable
		if restarted := strings.Contains(string(b), "train: -kernels portable: restarting with "+strings.Join(portableKernelEnv(), " ")); restarted != pinned {
			t.Errorf("%s: said it restarted with the pinned kernels %v, want %v:\n%s", name, restarted, pinned, b)
		}
		m, meta, err := qnet.Load(out)
		if err != nil {
			t.Fatal(err)
		}
		host := meta.Extra[trainHostKey]
		if want := "; kernels pinned by " + strings.Join(portableKernelEnv(), " "); pinned != strings.HasSuffix(host, want) {
			t.Errorf("%s: recorded %s %q; pinned %v, so want %q at its end %v", name, trainHostKey, host, pinned, want, pinned)
		}
		var w []byte // every weight's and bias's bits, layer by layer
		for l := range m.NumLayers() {
			layer := m.Layer(l)
			for _, v := range append(layer.Weight, layer.Bias...) {
				w = binary.LittleEndian.AppendUint32(w, math.Float32bits(v))
			}
		}
		return w
	}
	all, one := train("all", kernelsPortable, false), train("one", kernelsPortable, true)
	if !bytes.Equal(all, one) {
		t.Errorf("-kernels portable: the weights trained on every CPU (%d of them) differ from those trained on CPU 0", runtime.NumCPU())
	}
	// Without the pinning the thread count changes the sums, so the
	// comparison above can fail; on one CPU there is nothing to tell apart.
	if runtime.NumCPU() >= 2 && bytes.Equal(train("all-free", kernelsNative, false), train("one-free", kernelsNative, true)) {
		t.Errorf("-kernels native gave the same weights on %d CPUs and on one: the toy training no longer splits its work across threads, so the pinned comparison shows nothing", runtime.NumCPU())
	}
}

// In a process that cannot restart itself (a test's, e.restart nil),
// -kernels portable without the settings in the environment is refused
// before the dataset is read, naming what to do.
func TestTrainKernelsNeedRestart(t *testing.T) {
	if !canRunPortable(localCPUFlags()) {
		t.Fatal("this CPU lacks AVX2 or FMA, which -kernels portable needs")
	}
	if _, changed := pinnedEnviron(os.Environ()); len(changed) == 0 {
		t.Fatal("this test's own environment pins the kernels; run it without " + strings.Join(kernelEnv(), ", "))
	}
	e, _, _ := newTestEnv()
	missing := filepath.Join(t.TempDir(), "missing.dataset")
	err := e.dispatch(context.Background(), []string{"train", "-data", missing, "-kernels", "portable"})
	if err == nil || !strings.Contains(err.Error(), "cannot restart itself: want them set before it starts, or -kernels native") || strings.Contains(err.Error(), "missing.dataset") {
		t.Errorf("train -kernels portable in-process: %v, want the restart refused before the dataset is read", err)
	}
}
