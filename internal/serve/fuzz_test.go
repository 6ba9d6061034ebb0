package serve

import (
	"bytes"
	"testing"
)

// FuzzConfigParse feeds arbitrary bytes to the config's parse, validation
// and effective config: none panics, and a config that parses prints an
// effective config that parses back to the same effective config.
func FuzzConfigParse(f *testing.F) {
	for _, s := range []string{validSim, validOF, "gate: {votes: 3}\n", "a: &a [*a]\n", "---\n---\n", "flows: {list: [{id: \"tcp 1.2.3.4:1->5.6.7.8:2\", weight: 1e308}]}\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data)
		if err != nil {
			return
		}
		_ = c.Validate()
		out, err := c.Effective()
		if err != nil {
			t.Fatalf("Effective: %v", err)
		}
		back, err := Parse(out)
		if err != nil {
			t.Fatalf("Parse(Effective) = %v\ninput %q\neffective:\n%s", err, data, out)
		}
		again, err := back.Effective()
		if err != nil {
			t.Fatalf("Effective again: %v", err)
		}
		if !bytes.Equal(out, again) {
			t.Fatalf("effective config not stable:\n%s\nthen:\n%s", out, again)
		}
	})
}
