package policy

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/proflow-sdn/proflow/policy/qnet"
)

// A bad gate in a model's metadata (or a gate file) is refused with an
// error that names the field by its path (drain.horizon, not horizon) and
// says what it wants, in the JSON's own terms (not "Go struct field
// .plain.votes of type int"), with the input it quotes clipped at 64
// bytes however long the value is.
func TestModelGateErrorNamesField(t *testing.T) {
	long := strings.Repeat("x", 300)
	const prefix = "policy: model metadata gate_config: decode: "
	const fields = "margin, votes, cooldown, tolerance, distress, pareto, window, reserve, drain, gap, idle, hold"
	const duration = `, want a Go duration such as "15s" or a number of nanoseconds`
	clipped := `"` + long[:64] + `"… (236 more bytes)`
	for _, c := range []struct{ name, in, want string }{
		{"string for an integer", `{"votes": "three"}`, "votes: a string, want a whole number"},
		{"fraction for an integer", `{"votes": 1.5}`, "votes 1.5, want a whole number"},
		{"boolean for an integer", `{"votes": true}`, "votes: a boolean, want a whole number"},
		{"string for a number", `{"margin": "0.2"}`, "margin: a string, want a number"},
		{"nested field", `{"distress": {"forecast": "yes"}}`, "distress.forecast: a string, want true or false"},
		{"nested object", `{"drain": "on"}`, "drain: a string, want a JSON object"},
		{"nested number", `{"drain": {"depth": [1]}}`, "drain.depth: an array, want a number"},
		{"not an object", `[1, 2]`, "an array, want a JSON object"},
		{"unknown field", `{"vote": 3}`, `unknown field "vote", want one of ` + fields},
		{"unknown nested field", `{"drain": {"depth": 53.3, "deep": 1}}`, `drain: unknown field "deep", want one of depth, rate, horizon, waive, recheck`},
		{"unknown distress field", `{"distress": {"debounce": 3}}`, `distress: unknown field "debounce", want one of fraction, consecutive, smoothing, forecast`},
		{"long unknown field", `{"` + long + `": 1}`, `unknown field ` + clipped + `, want one of ` + fields},
		{"nested duration", `{"drain": {"depth": 53.3, "horizon": true}}`, "drain.horizon true" + duration},
		{"long duration string", `{"cooldown": "` + long + `"}`, "cooldown " + clipped + duration},
		{"long duration value", `{"window": ["` + long + `"]}`, `window ["` + long[:62] + `… (240 more bytes)` + duration},
		{"long nested duration", `{"drain": {"horizon": "` + long + `"}}`, "drain.horizon " + clipped + duration},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ModelGate(qnet.Metadata{Extra: map[string]string{ModelGateKey: c.in}})
			if err == nil || err.Error() != prefix+c.want {
				t.Errorf("ModelGate(%.80s) = %v\nwant %s", c.in, err, prefix+c.want)
			}
		})
	}
	// The decoder's error is still there underneath.
	var te *json.UnmarshalTypeError
	if _, err := ReadGateConfig(strings.NewReader(`{"votes": "three"}`)); !errors.As(err, &te) {
		t.Errorf("ReadGateConfig = %v, want it to wrap the *json.UnmarshalTypeError", err)
	}
}
