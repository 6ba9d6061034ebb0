package ovsfabric

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow/southbound/sim"
	"github.com/proflow-sdn/proflow/telemetry/hostagent"
)

func TestMoveBackoffAndBurst(t *testing.T) {
	for _, tc := range []struct {
		info hostagent.TCPInfo
		want bool
	}{
		{hostagent.TCPInfo{CAState: "loss", Backoff: 3, Retransmits: 3}, true},
		{hostagent.TCPInfo{CAState: "loss", Retransmits: 1}, true},
		{hostagent.TCPInfo{CAState: "loss"}, false},                 // the timer fired and a retransmission was acknowledged since
		{hostagent.TCPInfo{CAState: "recovery", Backoff: 1}, false}, // fast recovery, not a timeout
		{hostagent.TCPInfo{CAState: "open"}, false},
	} {
		if got := (MoveResult{AtMove: tc.info}).InRTO(); got != tc.want {
			t.Errorf("InRTO of %+v = %v, want %v", tc.info, got, tc.want)
		}
	}
	if got := reserveBurst(1.25e6, time.Second); got != 3.75e6 {
		t.Errorf("reserveBurst = %v, want 3.75e6 (2 s of 1.5 C)", got)
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]float64{"32kb": 32768, "1mb": 1 << 20, "1500b": 1500, "1500": 1500, "2K": 2048} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %v, %v, want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "kb", "-1kb", "x"} {
		if _, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q): no error", in)
		}
	}
}

func TestWriteMoveMatrix(t *testing.T) {
	cells := []MoveCell{{CC: "cubic", RTT: 50 * time.Millisecond, Case: MoveHealthy, Observe: 20 * time.Second, Results: []MoveResult{
		{Move: 1, Recovery: time.Second, Retrans: 4, Criterion: CriterionMet},
		{Move: 2, Recovery: 3 * time.Second, Retrans: 8, Criterion: CriterionMet},
		{Move: 3, Recovery: -1, Retrans: 6, Criterion: CriterionTimeout, AtMove: hostagent.TCPInfo{CAState: "loss", Backoff: 2, Retransmits: 2}},
	}}}
	sims := []sim.MoveCell{
		{Requested: 50 * time.Millisecond, Case: MoveHealthy, HMove: true, Model: sim.MoveModelHMove, Recovery: []time.Duration{1500 * time.Millisecond}},
		{Requested: 50 * time.Millisecond, Case: MoveHealthy, Model: sim.MoveModelWindow, Recovery: []time.Duration{500 * time.Millisecond}},
		{Requested: 50 * time.Millisecond, Case: MoveHealthy, Model: sim.MoveModelMeasured, Recovery: []time.Duration{3 * time.Second}},
	}
	var b bytes.Buffer
	if err := WriteMoveMatrix(&b, cells, sims); err != nil {
		t.Fatal(err)
	}
	// Recovery 1, 3 and never (the observation, 20 s): median 3 s; sim 1.5 s (−50%), 0.5 s (−83%) and 3 s (0%); one move in RTO.
	for _, want := range []string{"| cubic | 50ms | a | 3 (2) | 1 / 1 | 3 [1, 20] | 1 | 6 [4, 8] |", "| 1.5 | 0.5 | 3 | -50% / -83% / +0% |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	if err := WriteMoveMatrixCSV(&b, cells); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil || len(rows) != 4 || rows[3][10] != "-1" || rows[3][17] != "loss" || rows[3][19] != "true" || rows[1][19] != "false" {
		t.Errorf("CSV: %d rows (want 4), err %v, %q", len(rows), err, rows)
	}
	if err := PlotMoveMatrix(t.TempDir()+"/m.png", cells, sims); err != nil {
		t.Error(err)
	}
}
