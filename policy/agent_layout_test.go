package policy

import (
	"errors"
	"testing"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/telemetry"
)

// TestAgentTakesModelLayout: a deployment that pins no layout runs a v2
// model in v2 (EncoderConfig says so, and a v2 state scores); one pinned
// to v1 refuses it, naming the state layout.
func TestAgentTakesModelLayout(t *testing.T) {
	topo := proflow.PaperTopology()
	deploy := telemetry.DefaultEncoderConfig(topo)
	v2 := deploy.WithLayout(telemetry.StateLayoutV2)
	m, meta := testModel(t, v2)
	a, err := NewAgent(m, meta, deploy)
	if err != nil {
		t.Fatal(err)
	}
	if got := a.EncoderConfig(); got != v2 {
		t.Fatalf("EncoderConfig() = %+v, want the deployment's in v2 %+v", got, v2)
	}
	scores := make([]float64, topo.NumSwitches())
	if err := a.Score(scores, &proflow.Input{State: make(proflow.State, v2.Dim()), Current: 0}); err != nil {
		t.Errorf("score a v2 state: %v", err)
	}
	if err := a.Score(scores, &proflow.Input{State: make(proflow.State, deploy.Dim()), Current: 0}); err == nil {
		t.Error("scored a v1 state with a v2 model")
	}

	pinned := deploy
	pinned.Layout = telemetry.StateLayout
	_, err = NewAgent(m, meta, pinned)
	var mm *ModelMismatchError
	if !errors.As(err, &mm) || mm.Field != "state_layout" {
		t.Errorf("v2 model, deployment pinned to v1: %v, want a *ModelMismatchError on state_layout", err)
	}

	m1, meta1 := testModel(t, deploy)
	a1, err := NewAgent(m1, meta1, deploy)
	if err != nil {
		t.Fatal(err)
	}
	if got := a1.EncoderConfig(); got != deploy {
		t.Errorf("v1 model: EncoderConfig() = %+v, want the deployment's %+v", got, deploy)
	}
}
