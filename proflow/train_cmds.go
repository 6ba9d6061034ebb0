//go:build torch

package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/proflow-sdn/proflow/policy"
	"github.com/proflow-sdn/proflow/policy/eval"
	"github.com/proflow-sdn/proflow/policy/qnet"
	"github.com/proflow-sdn/proflow/telemetry"
	"github.com/proflow-sdn/proflow/training"
	"github.com/proflow-sdn/proflow/training/torchq"
)

// trainCommands returns the libtorch-backed commands.
func trainCommands() []command {
	return []command{{
		name:    "train",
		summary: "train the Q-network offline (dynamics model, fitted Q-iteration, Dyna) and write the model file",
		run:     runTrain,
	}, {
		name:    "distill",
		summary: "fit one universal Q-network to the mean Q-values of several (an ensemble at one network's cost)",
		run:     runDistill,
	}}
}

func runDistill(ctx context.Context, e *env, args []string) error {
	fs := e.newFlags("distill", "distill -teachers MODEL,MODEL[,...] -data DATASET[,DATASET...] [-out model.safetensors] [flags]")
	teacherList := fs.String("teachers", "", "universal model files whose mean Q-value the student learns (required); the first's metadata, gate and interval included, is the student's")
	data := fs.String("data", "", "datasets whose states s_t the student is fitted on, comma-separated (required; the teachers' training corpora)")
	out := fs.String("out", "model.safetensors", "student model file to write")
	def := torchq.DefaultDistillConfig()
	epochs := fs.Int("epochs", def.Epochs, "passes over the states")
	batch := fs.Int("batch", def.BatchSize, "states per gradient step")
	lr := fs.Float64("lr", def.LearningRate, "Adam step size of the first epoch (it falls along a half cosine to 2% of it)")
	marginW := fs.Float64("margin-weight", def.MarginWeight, "weight of the decision margins' error against the Q-values'")
	seed := fs.Uint64("seed", def.Seed, "seed of the student's initialisation, split and step order")
	device := fs.String("device", def.Device, `"cpu" or "cuda"`)
	commit := fs.String("commit", "", "source revision recorded in the model (default: git rev-parse HEAD, when available)")
	cpu := localCPUFlags()
	kernels := fs.String("kernels", defaultKernels(cpu), kernelsUsage())
	if err := parseFlags(fs, "distill", args); err != nil {
		return err
	}
	if *teacherList == "" || *data == "" {
		fs.Usage()
		return fmt.Errorf("distill: -teachers and -data are required: %w", errUsage)
	}
	tpaths, dpaths := strings.Split(*teacherList, ","), strings.Split(*data, ",")
	if slices.Contains(tpaths, "") {
		return badFlag("distill", "teachers", *teacherList, "model files separated by commas, none empty")
	}
	if slices.Contains(dpaths, "") {
		return badFlag("distill", "data", *data, "dataset files separated by commas, none empty")
	}
	cfg := def
	cfg.Epochs, cfg.BatchSize, cfg.LearningRate, cfg.MarginWeight, cfg.Seed, cfg.Device = *epochs, *batch, *lr, *marginW, *seed, *device
	var teachers []*qnet.Model
	var meta qnet.Metadata
	for i, p := range tpaths {
		m, md, err := qnet.Load(p)
		if err != nil {
			return fmt.Errorf("distill: teacher %s: %w", p, err)
		}
		if !md.Universal() {
			return fmt.Errorf("distill: teacher %s is a per-fabric model, want a universal one (q_layout %s): %w", p, telemetry.CandidateLayout, errUsage)
		}
		if i == 0 {
			meta = md
		} else if field, mine, first, ok := md.Encoder.ScalingMismatch(meta.Encoder); !ok {
			return fmt.Errorf("distill: teacher %s has %s %s, the first teacher %s: want teachers of one layout and scaling: %w",
				p, field, mine, first, errUsage)
		}
		teachers = append(teachers, m)
	}
	if err := makeOutputDirs("distill", [2]string{"out", *out}); err != nil {
		return err
	}
	if err := pinKernels("distill", *kernels, cpu, os.Environ(), e.restart, e.stderr); err != nil {
		return err
	}
	dss, corpus, err := loadDatasets(e, dpaths)
	if err != nil {
		return fmt.Errorf("distill: %w", err)
	}
	for i, ds := range dss {
		if field, mine, teachers, ok := ds.Encoder.ScalingMismatch(meta.Encoder); !ok {
			return fmt.Errorf("distill: dataset %s has %s %s, the teachers %s: want the teachers' layout and scaling: %w",
				dpaths[i], field, mine, teachers, errUsage)
		}
	}
	student, report, err := torchq.Distill(ctx, cfg, teachers, dss, e.stdout)
	if err != nil {
		return fmt.Errorf("distill: %w", err)
	}
	if *commit == "" {
		*commit = gitCommit(ctx)
	}
	cfgJSON, err := json.Marshal(cfg)
	if err != nil {
		return fmt.Errorf("distill: %w", err)
	}
	meta.MadeBy = "proflow distill"
	meta.Corpus = corpus
	meta.Seed = strconv.FormatUint(cfg.Seed, 10)
	meta.Commit = *commit
	meta.Created = time.Now().UTC().Format(time.RFC3339)
	meta.Extra = maps.Clone(meta.Extra)
	if meta.Extra == nil {
		meta.Extra = map[string]string{}
	}
	meta.Extra["distill_config"] = string(cfgJSON)
	meta.Extra["distill_teachers"] = *teacherList
	meta.Extra[trainHostKey] = localTrainHost(cfg.Device)
	if err := qnet.Save(*out, student, meta); err != nil {
		return fmt.Errorf("distill: %w", err)
	}
	last := report[len(report)-1]
	fmt.Fprintf(e.stdout, "wrote %s (universal Q-network %v from %d teachers; held-out greedy agreement %.4f, margin error %.4f; %s)\n",
		*out, student.Sizes(), len(teachers), last.Agreement, last.MarginError, last.Elapsed.Round(time.Millisecond))
	return nil
}

func runTrain(ctx context.Context, e *env, args []string) error {
	fs := e.newFlags("train", "train -data DATASET[,DATASET...] [-universal] [-config train.json] [-out model.safetensors] [flags]")
	data := fs.String("data", "", "dataset file (training.Dataset, safetensors), or with -universal a comma-separated list of them, one per fabric size; the first is the reference fabric (required)")
	universal := fs.Bool("universal", false, `train a universal Q-network (one MLP scoring each switch's candidate row, for fabrics of any size; "universal": true in the config does the same)`)
	cfgPath := fs.String("config", "", "TrainConfig JSON file; fields it leaves out keep their defaults")
	out := fs.String("out", "model.safetensors", "model file to write (the pure-Go Q-network that policy.LoadAgent reads)")
	dynOut := fs.String("dynamics", "", "also write the dynamics model to this file (for analysis and probing); with several datasets the first's, and each other's beside it with its size before the extension (x.dynamics-6x3.safetensors)")
	device := fs.String("device", "", `"cpu" or "cuda" (overrides the config)`)
	seed := fs.Uint64("seed", 0, "training seed (overrides the config)")
	beta := fs.Float64("beta", 0, "crowd-penalty coefficient β <= 0 of both rewards (overrides the config; 0 is the no-crowd ablation)")
	ckpt := fs.String("checkpoints", "", "directory for per-epoch gotch checkpoints (overrides the config)")
	commit := fs.String("commit", "", "source revision recorded in the model (default: git rev-parse HEAD, when available)")
	gatePath := fs.String("gate", "", "GateConfig JSON file recorded in the model as the stability gate it is meant to run behind (default: policy.DefaultGateConfig)")
	cpu := localCPUFlags()
	kernels := fs.String("kernels", defaultKernels(cpu), kernelsUsage())
	if err := parseFlags(fs, "train", args); err != nil {
		return err
	}
	if *data == "" {
		fs.Usage()
		return fmt.Errorf("train: -data is required: %w", errUsage)
	}
	paths := strings.Split(*data, ",")
	if slices.Contains(paths, "") {
		return badFlag("train", "data", *data, "dataset files separated by commas, none empty")
	}

	gate := policy.DefaultGateConfig()
	if *gatePath != "" {
		var err error
		if gate, err = eval.LoadGateConfig(*gatePath); err != nil {
			return fmt.Errorf("train: -gate: %w", err)
		}
	}
	gateJSON, err := json.Marshal(gate)
	if err != nil {
		return fmt.Errorf("train: -gate: %w", err)
	}
	cfg, err := trainConfig(*cfgPath, *universal)
	if err != nil {
		return fmt.Errorf("train: %w", err)
	}
	var bad []error
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "device":
			cfg.Device = *device
			if *device != training.DeviceCPU && *device != training.DeviceCUDA {
				bad = append(bad, badFlag("train", "device", *device, fmt.Sprintf("%q or %q", training.DeviceCPU, training.DeviceCUDA)))
			}
		case "seed":
			cfg.Seed = *seed
		case "beta":
			cfg.Reward.Beta = *beta
			if !(*beta <= 0) || math.IsInf(*beta, 0) {
				bad = append(bad, badFlag("train", "beta", *beta, "a finite number <= 0 (the crowd penalty; 0 disables it)"))
			}
		case "checkpoints":
			cfg.CheckpointDir = *ckpt
		}
	})
	if err := errors.Join(bad...); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("train: %w", err)
	}
	if cfg.DecisionLag > 0 && gate.Votes != cfg.DecisionLag+1 {
		return fmt.Errorf("train: the config's decision_lag %d values a move made %d intervals after the first vote for it, but the gate has %d votes: want votes = decision_lag + 1 (-gate): %w",
			cfg.DecisionLag, cfg.DecisionLag, gate.Votes, errUsage)
	}
	// Everything that can fail without the datasets fails before loading
	// them (a corpus takes a while to read).
	if len(paths) > 1 && !cfg.Universal {
		return fmt.Errorf("train: -data names %d datasets: training across fabrics needs -universal (or \"universal\": true in the config): %w", len(paths), errUsage)
	}
	if *dynOut != "" && cfg.DynamicsEpochs == 0 {
		return fmt.Errorf("train: -dynamics %s: the config trains no dynamics model (dynamics_epochs 0), want dynamics_epochs >= 1 or no -dynamics: %w", *dynOut, errUsage)
	}
	if _, err := torchq.Device(cfg.Device); err != nil {
		return fmt.Errorf("train: %w", err)
	}
	if err := makeOutputDirs("train", [2]string{"out", *out}, [2]string{"dynamics", *dynOut}); err != nil {
		return err
	}
	if err := pinKernels("train", *kernels, cpu, os.Environ(), e.restart, e.stderr); err != nil {
		return err
	}

	dss, corpus, err := loadDatasets(e, paths)
	if err != nil {
		return fmt.Errorf("train: %w", err)
	}
	ref := dss[0]
	var encs []telemetry.EncoderConfig
	for _, ds := range dss {
		encs = append(encs, ds.Encoder)
	}
	if err := training.CheckFabrics(encs, cfg.Universal); err != nil {
		return fmt.Errorf("train: -data: %w", err)
	}
	res, err := torchq.TrainMulti(ctx, dss, cfg, e.stdout)
	if err != nil {
		return fmt.Errorf("train: %w", err)
	}

	if *commit == "" {
		*commit = gitCommit(ctx)
	}
	cfgJSON, err := json.Marshal(cfg)
	if err != nil {
		return fmt.Errorf("train: %w", err)
	}
	meta, kind := qnet.NewMetadata(ref.Encoder), "Q-network"
	if cfg.Universal {
		meta, kind = qnet.NewUniversalMetadata(ref.Encoder), "universal Q-network"
	}
	meta.MadeBy = "proflow train"
	meta.Corpus = corpus
	meta.Seed = strconv.FormatUint(cfg.Seed, 10)
	meta.Commit = *commit
	meta.Created = time.Now().UTC().Format(time.RFC3339)
	meta.Extra = map[string]string{"train_config": string(cfgJSON), eval.ModelGateKey: string(gateJSON), trainHostKey: localTrainHost(cfg.Device)}
	if ref.Profile != "" || ref.ProfileDigest != "" {
		meta.Extra[eval.ModelProfileKey], meta.Extra[eval.ModelProfileDigestKey] = ref.Profile, ref.ProfileDigest
	}
	for k, v := range ref.ModelExtra() { // the control interval
		meta.Extra[k] = v
	}
	if err := qnet.Save(*out, res.Q, meta); err != nil {
		return fmt.Errorf("train: %w", err)
	}
	fmt.Fprintf(e.stdout, "wrote %s (%s %v, %s)\n", *out, kind, res.Q.Sizes(), res.Report.Elapsed.Round(time.Millisecond))
	if *dynOut != "" {
		if res.Dynamics == nil {
			return errors.New("train: -dynamics given, but the config trains no dynamics model (dynamics_epochs 0)")
		}
		p := training.Provenance{MadeBy: meta.MadeBy, Corpus: meta.Corpus, Seed: meta.Seed, Commit: meta.Commit, Created: meta.Created}
		for i, d := range res.FabricDynamics {
			path := *dynOut
			if i > 0 {
				path = sizedPath(path, training.FabricName(d.Encoder()))
			}
			if err := training.SaveDynamics(path, d, p); err != nil {
				return fmt.Errorf("train: %w", err)
			}
			fmt.Fprintf(e.stdout, "wrote %s (dynamics model %s %v)\n", path, training.FabricName(d.Encoder()), d.Net().Sizes())
		}
	}
	return nil
}

// trainConfig returns the TrainConfig of the file at path (the defaults
// when path is empty), read for a universal run when universal is set.
func trainConfig(path string, universal bool) (training.TrainConfig, error) {
	switch {
	case path != "" && universal:
		return training.LoadTrainConfigUniversal(path)
	case path != "":
		return training.LoadTrainConfig(path)
	case universal:
		return training.ReadTrainConfigUniversal(strings.NewReader("{}"))
	}
	return training.DefaultTrainConfig(), nil
}

// loadDatasets reads the datasets at paths, printing each one's figures,
// and checks that they share a control interval (a model records one). It
// returns them with the corpus the model records: every dataset's, one
// after the other.
func loadDatasets(e *env, paths []string) ([]*training.Dataset, string, error) {
	var dss []*training.Dataset
	var corpus []string
	for i, path := range paths {
		ds, err := training.LoadDataset(path)
		if err != nil {
			return nil, "", err
		}
		if i > 0 && ds.Interval != dss[0].Interval {
			return nil, "", fmt.Errorf("-data: %s has a control interval of %v, %s %v: want datasets collected at one interval",
				path, ds.Interval, paths[0], dss[0].Interval)
		}
		st := ds.Stats()
		fmt.Fprintf(e.stdout, "dataset %s: %v\n", path, st)
		size := ""
		if len(paths) > 1 {
			size = "fabric " + training.FabricName(ds.Encoder) + ", "
		}
		corpus = append(corpus, strings.TrimSpace(fmt.Sprintf("%s (%s: %s%d transitions, %d episodes, %d reroutes)",
			ds.Corpus, path, size, st.Transitions, st.Episodes, st.Reroutes)))
		dss = append(dss, ds)
	}
	return dss, strings.Join(corpus, "; "), nil
}

// sizedPath returns path with "-"+size before its extension:
// x.dynamics.safetensors becomes x.dynamics-6x3.safetensors.
func sizedPath(path, size string) string {
	ext := filepath.Ext(path)
	return strings.TrimSuffix(path, ext) + "-" + size + ext
}
