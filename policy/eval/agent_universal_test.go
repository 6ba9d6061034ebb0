package eval

import (
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/policy"
	"github.com/proflow-sdn/proflow/policy/qnet"
	"github.com/proflow-sdn/proflow/telemetry"
)

// AgentPolicy deploys a universal model on each episode's own topology,
// whatever the topology it was loaded for.
func TestAgentPolicyUniversalModel(t *testing.T) {
	paper := proflow.PaperTopology()
	ref := telemetry.DefaultEncoderConfig(paper).WithLayout(telemetry.StateLayoutV2)
	m, err := qnet.New([]int{ref.CandidateDim(), 8, 1}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "universal.safetensors")
	if err := qnet.Save(path, m, qnet.NewUniversalMetadata(ref)); err != nil {
		t.Fatal(err)
	}
	spec, err := AgentPolicy("universal", path, policy.GateConfig{}, paper)
	if err != nil {
		t.Fatal(err)
	}
	six := proflow.Topology{Switches: []string{"a", "b", "c", "d", "e", "f"}, Leaves: []string{"x", "y"}, BucketRate: 4 * paper.BucketRate}
	for _, topo := range []proflow.Topology{paper, six} {
		enc, pol, _, err := spec.New(topo)
		if err != nil {
			t.Fatalf("%d switches: %v", topo.NumSwitches(), err)
		}
		a, ok := pol.(*policy.Agent)
		if !ok || !a.Universal() || a.EncoderConfig().NumSwitches != topo.NumSwitches() || enc.Dim() != a.EncoderConfig().Dim() {
			t.Errorf("%d switches: policy %T, encoder dim %d; want a universal *policy.Agent for %d switches with a matching encoder",
				topo.NumSwitches(), pol, enc.Dim(), topo.NumSwitches())
		}
	}
}
