package training_test

import (
	"fmt"

	"github.com/proflow-sdn/proflow/training"
)

// The real-transition reward of a healthy step and of the same step with a
// crowd of five congesters on the switch (Δn⁺ = 10/12), with the default
// coefficients and with the no-crowd ablation (β = 0).
func ExampleRewardConfig_Real() {
	c := training.DefaultRewardConfig()
	healthy := training.RewardInputs{ThroughputNorm: 1, Overflow: 0.46}
	crowded := training.RewardInputs{ThroughputNorm: 1, Overflow: 0.46, CrowdExcess: 10.0 / 12}
	ablation := c
	ablation.Beta = 0
	fmt.Printf("healthy %.3f, crowded %.3f, crowded without the crowd term %.3f\n",
		c.Real(healthy), c.Real(crowded), ablation.Real(crowded))
	// Output: healthy 0.878, crowded 0.378, crowded without the crowd term 0.878
}
