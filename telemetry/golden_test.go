package telemetry_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/telemetry"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// goldenSequence is a scripted 40-sample episode on the paper topology: the
// baseline arrives at sample 8, the flow moves at samples 15 and 22, and a
// new episode starts at sample 30. Inputs use integer arithmetic only, so
// they are exact on every platform.
func goldenSequence(t *testing.T) []byte {
	t.Helper()
	topo := proflow.PaperTopology()
	enc, err := telemetry.NewEncoder(telemetry.DefaultEncoderConfig(topo))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "# %s, paper topology, default constants; regenerate: go test ./telemetry -run TestGoldenSequence -update\n", telemetry.StateLayout)
	fmt.Fprintf(&buf, "# sample current event: %d state entries\n", enc.Dim())
	var o proflow.Observation
	state := make(proflow.State, enc.Dim())
	current := 0
	for i := 1; i <= 40; i++ {
		event := "-"
		switch i {
		case 8:
			event = "baseline"
			if err := enc.SetBaseline(proflow.Baseline{Overflow: 23000, FlowCount: 2, Throughput: 23e6}); err != nil {
				t.Fatal(err)
			}
		case 15:
			event, current = "move", 2
		case 22:
			event, current = "move", 3
		case 30:
			event, current = "reset", 1
			enc.Reset()
		}
		o.Resize(topo)
		for k := range o.Switches {
			o.Switches[k] = proflow.SwitchSample{
				TxRate:       float64(10_000_000 + (i*37+k*11)%17*1_000_000),
				OverflowRate: float64(18_000 + (i*13+k*7)%23*1_000),
				FlowCount:    float64(2 + 2*((i/5+k)%6)),
				ElephantRate: float64((i + k) % 4 * 3_000_000),
			}
		}
		for l := range o.Leaves {
			o.Leaves[l] = proflow.LeafSample{
				IngressRate:  float64((i*5 + l*3) % 11 * 5_000_000),
				TransmitRate: float64((i*3 + l) % 7 * 4_000_000),
			}
		}
		o.Flow = proflow.FlowSample{
			Throughput:     float64(23_000_000 - (i*7)%13*1_500_000),
			CongestionRate: float64((i * 11) % 9 * 10_000_000),
		}
		if err := enc.Encode(state, &o, current); err != nil {
			t.Fatalf("sample %d: %v", i, err)
		}
		fmt.Fprintf(&buf, "%02d %d %s:", i, current, event)
		for _, v := range state {
			buf.WriteByte(' ')
			buf.Write(strconv.AppendFloat(nil, float64(v), 'g', -1, 32))
		}
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

// TestGoldenSequence pins the exact float32 output of a longer episode, so
// that any change to the encoding shows up as a diff of
// testdata/sequence.golden.
func TestGoldenSequence(t *testing.T) {
	got := goldenSequence(t)
	path := filepath.Join("testdata", "sequence.golden")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	if len(gl) != len(wl) {
		t.Fatalf("%s: got %d lines, want %d", path, len(gl), len(wl))
	}
	for i := range gl {
		if gl[i] != wl[i] {
			t.Errorf("%s line %d:\ngot  %s\nwant %s", path, i+1, gl[i], wl[i])
		}
	}
}
