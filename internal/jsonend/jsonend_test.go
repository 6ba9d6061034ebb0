package jsonend

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestEnd(t *testing.T) {
	for _, tc := range []struct {
		in   string
		ok   bool
		want string // in the error
	}{
		{`{"a": 1}`, true, ""},
		{"{\"a\": 1}\n\t ", true, ""},
		{`{"a": 1}]`, false, "data after the JSON value"},
		{`{"a": 1}}`, false, "data after the JSON value"},
		{`{"a": 1} {`, false, `"{"`},
		{`{"a": 1} 7`, false, `"7"`},
		{`{"a": 1} "` + strings.Repeat("x", 100) + `"`, false, "…"},
		{`{"a": 1} x`, false, "invalid character"},
	} {
		dec := json.NewDecoder(strings.NewReader(tc.in))
		var v map[string]int
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("%q: decode: %v", tc.in, err)
		}
		err := End(dec)
		if (err == nil) != tc.ok {
			t.Errorf("End after %q = %v, want ok %v", tc.in, err, tc.ok)
			continue
		}
		if err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("End after %q = %q, want it to contain %q", tc.in, err, tc.want)
		}
	}
}
