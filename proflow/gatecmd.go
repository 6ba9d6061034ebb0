package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os/exec"
	"strings"
	"time"

	"github.com/proflow-sdn/proflow/policy"
	"github.com/proflow-sdn/proflow/policy/qnet"
)

// modelGatePreviousKey keeps, in a model whose gate proflow gate replaced,
// the gate it recorded before, so the change can be read back.
const modelGatePreviousKey = "gate_config_previous"

// modelGateRecordedKey says when and at which commit proflow gate
// recorded the model's gate.
const modelGateRecordedKey = "gate_recorded"

func gateCommand() command {
	return command{
		name:    "gate",
		summary: "record in a model file the stability gate it is to run behind (the same weights; the gate it recorded before is kept beside)",
		run:     runGate,
	}
}

// runGate rewrites a model's recorded gate (policy.ModelGateKey), the one
// policy.LoadModel returns with the agent, leaving its weights and every
// other metadata field as they were.
func runGate(ctx context.Context, e *env, args []string) error {
	fs := e.newFlags("gate", "gate -model FILE -gate FILE [-out FILE] [-commit REV]")
	model := fs.String("model", "", "the model file (.safetensors) whose gate to set (required)")
	gate := fs.String("gate", "", "the gate settings, a GateConfig JSON file (required)")
	out := fs.String("out", "", "where to write the model (default: over -model)")
	commit := fs.String("commit", "", "the commit recorded beside the gate (default: git rev-parse HEAD)")
	if err := parseFlags(fs, "gate", args); err != nil {
		return err
	}
	switch {
	case *model == "":
		return fmt.Errorf("gate: -model is required, want the model file whose gate to set: %w", errUsage)
	case *gate == "":
		return fmt.Errorf("gate: -gate is required, want a GateConfig JSON file: %w", errUsage)
	}
	if *out == "" {
		*out = *model
	}
	cfg, err := policy.LoadGateConfig(*gate)
	if err != nil {
		return fmt.Errorf("gate: %w", err)
	}
	m, meta, err := qnet.Load(*model)
	if err != nil {
		return fmt.Errorf("gate: %w", err)
	}
	gateJSON, err := json.Marshal(cfg)
	if err != nil {
		return fmt.Errorf("gate: %w", err)
	}
	extra := maps.Clone(meta.Extra)
	if extra == nil {
		extra = map[string]string{}
	}
	if old, ok := meta.Extra[policy.ModelGateKey]; ok {
		extra[modelGatePreviousKey] = old
	}
	if *commit == "" {
		*commit = gitCommit(ctx)
	}
	extra[policy.ModelGateKey] = string(gateJSON)
	extra[modelGateRecordedKey] = fmt.Sprintf("%s at commit %s", time.Now().UTC().Format(time.RFC3339), *commit)
	meta.Extra = extra
	if err := qnet.Save(*out, m, meta); err != nil {
		return fmt.Errorf("gate: %w", err)
	}
	fmt.Fprintf(e.stdout, "wrote %s: gate %s\n", *out, gateJSON)
	return nil
}

// gitCommit returns the current git revision, or "" outside a repository.
// It does not mark a dirty tree: callers that record provenance say so.
func gitCommit(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
