package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/proflow-sdn/proflow/policy"
	"github.com/proflow-sdn/proflow/policy/qnet"
)

// proflow gate replaces the gate a model records and nothing else: the
// weights and the other metadata stay, the old gate is kept beside, and
// policy.LoadModel returns the new one.
func TestGateCommand(t *testing.T) {
	dir := t.TempDir()
	gatePath := filepath.Join(dir, "gate.json")
	if err := os.WriteFile(gatePath, []byte(`{"margin": 0.2, "votes": 16, "cooldown": "15s", "tolerance": 3,
		"distress": {"fraction": 0.9, "consecutive": 2, "smoothing": 0.1}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	src := "../models/default.safetensors"
	out := filepath.Join(dir, "model.safetensors")
	e, stdout, _ := newTestEnv()
	if err := e.dispatch(context.Background(), []string{"gate", "-model", src, "-gate", gatePath, "-out", out, "-commit", "abc123"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "wrote "+out) {
		t.Errorf("stdout %q, want it to name %s", stdout, out)
	}
	m0, meta0, err := qnet.Load(src)
	if err != nil {
		t.Fatal(err)
	}
	m1, meta1, err := qnet.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	var w0, w1 bytes.Buffer // the weights, written with the same metadata
	if err := errors.Join(qnet.Write(&w0, m0, meta0), qnet.Write(&w1, m1, meta0)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(w0.Bytes(), w1.Bytes()) {
		t.Error("the weights changed")
	}
	want, err := policy.LoadGateConfig(gatePath)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := policy.ModelGate(meta1); err != nil || got != want {
		t.Errorf("recorded gate %+v, %v; want %+v", got, err, want)
	}
	if meta1.Extra[modelGatePreviousKey] != meta0.Extra[policy.ModelGateKey] {
		t.Errorf("previous gate %q, want the model's old %q", meta1.Extra[modelGatePreviousKey], meta0.Extra[policy.ModelGateKey])
	}
	if !strings.Contains(meta1.Extra[modelGateRecordedKey], "at commit abc123") {
		t.Errorf("%s = %q, want the commit", modelGateRecordedKey, meta1.Extra[modelGateRecordedKey])
	}
	for k, v := range meta0.Extra {
		if k != policy.ModelGateKey && k != modelGatePreviousKey && k != modelGateRecordedKey && meta1.Extra[k] != v {
			t.Errorf("metadata %s changed: %q → %q", k, v, meta1.Extra[k])
		}
	}
	recorded := meta1.Extra[policy.ModelGateKey]
	meta0.Extra, meta1.Extra = nil, nil
	if diff := cmp.Diff(meta0, meta1); diff != "" {
		t.Errorf("metadata changed (-before +after):\n%s", diff)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"gate", "-gate", gatePath}, "-model is required"},
		{[]string{"gate", "-model", src}, "-gate is required"},
	} {
		e, _, _ := newTestEnv()
		if err := e.dispatch(context.Background(), tc.args); !errors.Is(err, errUsage) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want a usage error containing %q", tc.args, err, tc.want)
		}
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"votes": 0}`), 0o644); err != nil {
		t.Fatal(err)
	}
	e, _, _ = newTestEnv()
	if err := e.dispatch(context.Background(), []string{"gate", "-model", out, "-gate", bad}); err == nil || !strings.Contains(err.Error(), "votes 0") {
		t.Errorf("a bad gate: %v, want an error naming votes 0", err)
	}
	if _, meta, err := qnet.Load(out); err != nil || meta.Extra[policy.ModelGateKey] != recorded {
		t.Errorf("the model's gate after a refused one: %q, %v; want %q kept", meta.Extra[policy.ModelGateKey], err, recorded)
	}
}
