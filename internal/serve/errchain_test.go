package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/proflow-sdn/proflow"
)

// TestFlowErrorNamesFlowOnce checks issue 24's finding on error chains: a
// flow the controller refuses is named by proflow's AddFlow, and serve adds
// its prefix without naming the flow again; the sentinel still matches.
func TestFlowErrorNamesFlowOnce(t *testing.T) {
	const id = "tcp 10.9.0.1:5001->10.0.0.8:5201"
	_, err := New(context.Background(), simConfig(t, "flows:\n  list:\n    - {id: \""+id+"\", switch: agg1}\n"), Options{LogOutput: io.Discard})
	if err == nil {
		t.Fatal("New with a flow outside the fabric: nil error")
	}
	want := "serve: proflow: add flow " + id + ": the enforcer cannot carry it: "
	if !strings.HasPrefix(err.Error(), want) {
		t.Errorf("New = %q, want it to start %q", err, want)
	}
	if !errors.Is(err, proflow.ErrNotInFabric) {
		t.Errorf("New = %v, want it to match proflow.ErrNotInFabric", err)
	}
}

// checkFlows names a flow once, whether or not the southbound's own error
// names it.
func TestCheckFlowsNamesFlowOnce(t *testing.T) {
	const id = "tcp 10.0.0.1:5001->10.0.0.8:5201"
	for _, names := range []bool{true, false} {
		s := &Service{sb: &southbound{topo: proflow.PaperTopology(), enf: namingValidator{names: names}}}
		err := s.checkFlows([]FlowConfig{{ID: id}})
		if err == nil {
			t.Fatal("checkFlows with a refusing validator: nil error")
		}
		if n := strings.Count(err.Error(), "10.0.0.1:5001"); n != 1 {
			t.Errorf("validator names the flow: %v: %q names it %d times, want once", names, err, n)
		}
	}
}

// namingValidator refuses every flow, naming it in its error or not.
type namingValidator struct{ names bool }

func (namingValidator) Place(context.Context, proflow.FlowID, int) error { return nil }

func (v namingValidator) ValidateFlow(f proflow.FlowID) error {
	if v.names {
		return fmt.Errorf("south: flow %v: not carried", f)
	}
	return errors.New("south: not carried")
}
