package training_test

import (
	"fmt"

	"github.com/proflow-sdn/proflow/training"
)

// The real-transition reward of a healthy step (full throughput, no overflow
// beyond the flow's own) and of the same step with a crowd of five
// congesters on the switch (Δn⁺ = 10/12), with the default coefficients and
// with the no-crowd ablation (β = 0).
func ExampleRewardConfig_Real() {
	c := training.DefaultRewardConfig()
	healthy := training.RewardInputs{ThroughputNorm: 1}
	crowded := training.RewardInputs{ThroughputNorm: 1, CrowdExcess: 10.0 / 12}
	ablation := c
	ablation.Beta = 0
	fmt.Printf("healthy %.3f, crowded %.3f, crowded without the crowd term %.3f\n",
		c.Real(healthy), c.Real(crowded), ablation.Real(crowded))
	// Output: healthy 1.200, crowded 0.617, crowded without the crowd term 1.200
}
