package policy

import (
	"strings"
	"testing"
)

// The reference rules' JSON configurations name a badly typed field by
// its JSON name and say what it wants, as the gate's do, instead of
// encoding/json's Go field path (".plain.fraction of type float64").
func TestRuleConfigErrorNamesField(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
		read           func(string) error
	}{
		{"throughput-drop number", `{"fraction": "x"}`, "fraction: a string, want a number", func(in string) error {
			_, err := ReadThroughputDropConfig(strings.NewReader(in))
			return err
		}},
		{"throughput-drop integer", `{"consecutive": 1.5}`, "consecutive 1.5, want a whole number", func(in string) error {
			_, err := ReadThroughputDropConfig(strings.NewReader(in))
			return err
		}},
		{"throughput-drop not an object", `[1]`, "an array, want a JSON object", func(in string) error {
			_, err := ReadThroughputDropConfig(strings.NewReader(in))
			return err
		}},
		{"latency-threshold number", `{"ratio": "x"}`, "ratio: a string, want a number", func(in string) error {
			_, err := ReadLatencyThresholdConfig(strings.NewReader(in))
			return err
		}},
		{"latency-threshold not an object", `"x"`, "a string, want a JSON object", func(in string) error {
			_, err := ReadLatencyThresholdConfig(strings.NewReader(in))
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.read(tc.in)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "plain") {
				t.Errorf("%s: error %v, want one containing %q and no Go type path", tc.in, err, tc.want)
			}
		})
	}
}
