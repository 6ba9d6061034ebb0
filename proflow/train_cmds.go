//go:build torch

package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/proflow-sdn/proflow/policy"
	"github.com/proflow-sdn/proflow/policy/eval"
	"github.com/proflow-sdn/proflow/policy/qnet"
	"github.com/proflow-sdn/proflow/training"
	"github.com/proflow-sdn/proflow/training/torchq"
)

// trainCommands returns the libtorch-backed commands.
func trainCommands() []command {
	return []command{{
		name:    "train",
		summary: "train the Q-network offline (dynamics model, fitted Q-iteration, Dyna) and write the model file",
		run:     runTrain,
	}}
}

func runTrain(ctx context.Context, e *env, args []string) error {
	fs := e.newFlags("train", "train -data DATASET [-config train.json] [-out model.safetensors] [flags]")
	data := fs.String("data", "", "dataset file (training.Dataset, safetensors) (required)")
	cfgPath := fs.String("config", "", "TrainConfig JSON file; fields it leaves out keep their defaults")
	out := fs.String("out", "model.safetensors", "model file to write (the pure-Go Q-network that policy.LoadAgent reads)")
	dynOut := fs.String("dynamics", "", "also write the dynamics model to this file (for analysis and probing)")
	device := fs.String("device", "", `"cpu" or "cuda" (overrides the config)`)
	seed := fs.Uint64("seed", 0, "training seed (overrides the config)")
	beta := fs.Float64("beta", 0, "crowd-penalty coefficient β <= 0 of both rewards (overrides the config; 0 is the no-crowd ablation)")
	ckpt := fs.String("checkpoints", "", "directory for per-epoch gotch checkpoints (overrides the config)")
	commit := fs.String("commit", "", "source revision recorded in the model (default: git rev-parse HEAD, when available)")
	gatePath := fs.String("gate", "", "GateConfig JSON file recorded in the model as the stability gate it is meant to run behind (default: policy.DefaultGateConfig)")
	if err := parseFlags(fs, "train", args); err != nil {
		return err
	}
	if *data == "" {
		fs.Usage()
		return fmt.Errorf("train: -data is required: %w", errUsage)
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
	cfg := training.DefaultTrainConfig()
	if *cfgPath != "" {
		var err error
		if cfg, err = training.LoadTrainConfig(*cfgPath); err != nil {
			return fmt.Errorf("train: %w", err)
		}
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
	// Everything that can fail without the dataset fails before loading it
	// (a corpus takes a while to read).
	if *dynOut != "" && cfg.DynamicsEpochs == 0 {
		return fmt.Errorf("train: -dynamics %s: the config trains no dynamics model (dynamics_epochs 0), want dynamics_epochs >= 1 or no -dynamics: %w", *dynOut, errUsage)
	}
	if _, err := torchq.Device(cfg.Device); err != nil {
		return fmt.Errorf("train: %w", err)
	}

	ds, err := training.LoadDataset(*data)
	if err != nil {
		return fmt.Errorf("train: %w", err)
	}
	st := ds.Stats()
	fmt.Fprintf(e.stdout, "dataset %s: %v\n", *data, st)
	res, err := torchq.Train(ctx, ds, cfg, e.stdout)
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
	corpus := fmt.Sprintf("%s (%s: %d transitions, %d episodes, %d reroutes)", ds.Corpus, *data, st.Transitions, st.Episodes, st.Reroutes)
	meta := qnet.NewMetadata(ds.Encoder)
	meta.MadeBy = "proflow train"
	meta.Corpus = strings.TrimSpace(corpus)
	meta.Seed = strconv.FormatUint(cfg.Seed, 10)
	meta.Commit = *commit
	meta.Created = time.Now().UTC().Format(time.RFC3339)
	meta.Extra = map[string]string{"train_config": string(cfgJSON), eval.ModelGateKey: string(gateJSON)}
	if ds.Profile != "" || ds.ProfileDigest != "" {
		meta.Extra[eval.ModelProfileKey], meta.Extra[eval.ModelProfileDigestKey] = ds.Profile, ds.ProfileDigest
	}
	for k, v := range ds.ModelExtra() { // the control interval
		meta.Extra[k] = v
	}
	if err := qnet.Save(*out, res.Q, meta); err != nil {
		return fmt.Errorf("train: %w", err)
	}
	fmt.Fprintf(e.stdout, "wrote %s (Q-network %v, %s)\n", *out, res.Q.Sizes(), res.Report.Elapsed.Round(time.Millisecond))
	if *dynOut != "" {
		if res.Dynamics == nil {
			return errors.New("train: -dynamics given, but the config trains no dynamics model (dynamics_epochs 0)")
		}
		p := training.Provenance{MadeBy: meta.MadeBy, Corpus: meta.Corpus, Seed: meta.Seed, Commit: meta.Commit, Created: meta.Created}
		if err := training.SaveDynamics(*dynOut, res.Dynamics, p); err != nil {
			return fmt.Errorf("train: %w", err)
		}
		fmt.Fprintf(e.stdout, "wrote %s (dynamics model %v)\n", *dynOut, res.Dynamics.Net().Sizes())
	}
	return nil
}

// gitCommit returns the current git revision, or "" outside a repository.
func gitCommit(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
