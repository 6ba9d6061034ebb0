package policy

import (
	"fmt"

	"github.com/proflow-sdn/proflow"
)

// Static is the static reference policy of the paper: it never reroutes.
//
// # Rule
//
// The current switch scores 1, every other switch 0, so any gate keeps the
// flow where it is.
//
// # Parameters
//
// None. Static keeps no state and is safe for concurrent use.
type Static struct{}

var _ proflow.Policy = Static{}

// Score writes 1 for the current switch and 0 for the others.
func (Static) Score(scores []float64, in *proflow.Input) error {
	if err := checkInput("static", scores, in, false); err != nil {
		return err
	}
	clear(scores)
	scores[in.Current] = 1
	return nil
}

// checkInput checks what every reference policy relies on: an input, a
// current switch that indexes scores and, when obs is set, an observation
// with one sample per score.
func checkInput(name string, scores []float64, in *proflow.Input, obs bool) error {
	if in == nil {
		return fmt.Errorf("policy: %s: nil input", name)
	}
	if in.Current < 0 || in.Current >= len(scores) {
		return fmt.Errorf("policy: %s: current switch %d, want 0..%d", name, in.Current, len(scores)-1)
	}
	if !obs {
		return nil
	}
	if in.Obs == nil {
		return fmt.Errorf("policy: %s: nil observation", name)
	}
	if len(in.Obs.Switches) != len(scores) {
		return fmt.Errorf("policy: %s: observation has %d switch samples, want one per score (%d)", name, len(in.Obs.Switches), len(scores))
	}
	return nil
}
