package trace_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/telemetry/trace"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func testMeta() trace.Meta {
	return trace.Meta{
		Source: "sim", Scenario: "S1", Policy: "reactive", Seed: 7,
		Topology:      proflow.PaperTopology(),
		Flow:          proflow.FlowID{Src: netip.MustParseAddr("10.0.0.1"), Dst: netip.MustParseAddr("10.0.0.8"), SrcPort: 5001, DstPort: 5201, Proto: proflow.ProtoTCP},
		InitialSwitch: 0, Interval: trace.Duration(500 * time.Millisecond),
		Start: t0, CongestionStart: t0.Add(20 * time.Second), End: t0.Add(140 * time.Second),
		SimConfig: []byte(`{"switches":4}`),
		Labels:    map[string]string{"b": "2", "a": "1"},
	}
}

func testObs(at time.Time, xi float64) *proflow.Observation {
	o := &proflow.Observation{Time: at}
	o.Resize(proflow.PaperTopology())
	o.Time = at
	for k := range o.Switches {
		o.Switches[k] = proflow.SwitchSample{TxRate: 2.4e7, OverflowRate: xi / float64(k+1), FlowCount: 2, ElephantRate: 2.3e7}
	}
	for l := range o.Leaves {
		o.Leaves[l] = proflow.LeafSample{IngressRate: 1e6 * float64(l), TransmitRate: 2e6}
	}
	o.Flow = proflow.FlowSample{Throughput: 2.3e7, CongestionRate: 3e6}
	return o
}

func testSteps(n int) []trace.Step {
	var out []trace.Step
	cur := 0
	for i := range n {
		at := t0.Add(time.Duration(i+1) * 500 * time.Millisecond)
		s := trace.Step{Seq: uint64(i + 1), Time: at, Obs: testObs(at, 23000+float64(i)), Switch: cur, Throughput: 2.31e7 - float64(i)}
		s.Decision = trace.Decision{Reason: proflow.ReasonStay, Scores: []float64{1, 0, 0.5, 0}, Best: 0, Target: -1, Cooldown: trace.Duration(3 * time.Second)}
		switch {
		case i < 2:
			s.Decision = trace.Decision{Reason: proflow.ReasonBaseline, Best: -1, Target: -1}
		case i == 3:
			s.Decision = trace.Decision{Reason: proflow.ReasonRerouted, Scores: []float64{0, 0, 1, 0}, Best: 2, Margin: 1, Votes: 3, Target: 2, Rerouted: true}
			cur = 2
		case i == 5:
			s.Obs = nil
			s.Decision = trace.Decision{Reason: proflow.ReasonTelemetry, Best: -1, Target: -1, Error: "proflow: telemetry: boom"}
		}
		out = append(out, s)
	}
	return out
}

func TestRoundTrip(t *testing.T) {
	want := &trace.Episode{Meta: testMeta(), Steps: testSteps(8)}
	want.Meta.Format = trace.Format
	for _, name := range []string{"ep.jsonl", "ep.jsonl.gz"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), name)
			if err := trace.WriteFile(path, want); err != nil {
				t.Fatal(err)
			}
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if gz := len(raw) > 2 && raw[0] == 0x1f && raw[1] == 0x8b; gz != strings.HasSuffix(name, ".gz") {
				t.Errorf("gzip compressed: %v, want %v", gz, strings.HasSuffix(name, ".gz"))
			}
			got, err := trace.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got, addrs); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
			// Writing the same episode twice gives the same bytes.
			again := filepath.Join(t.TempDir(), name)
			if err := trace.WriteFile(again, got); err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(again); !bytes.Equal(b, raw) {
				t.Error("rewriting the episode changed the file")
			}
		})
	}
	// In memory, and a gzip stream through NewReader.
	var buf bytes.Buffer
	if err := trace.Write(&buf, want); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(buf.String(), "\n"); lines != 9 {
		t.Errorf("%d lines, want 1 + 8", lines)
	}
	var zbuf bytes.Buffer
	zw := gzip.NewWriter(&zbuf)
	zw.Write(buf.Bytes())
	zw.Close()
	got, err := trace.Read(&zbuf)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got, addrs); diff != "" {
		t.Errorf("gzip stream round trip (-want +got):\n%s", diff)
	}
}

func TestStreaming(t *testing.T) {
	var buf bytes.Buffer
	w, err := trace.NewWriter(&buf, testMeta())
	if err != nil {
		t.Fatal(err)
	}
	if w.Meta().Format != trace.Format {
		t.Errorf("writer did not fill in the format: %q", w.Meta().Format)
	}
	steps := testSteps(5)
	for i := range steps {
		if err := w.Write(&steps[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(&steps[0]); err == nil {
		t.Error("Write after Close succeeded")
	}
	r, err := trace.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Meta().Scenario != "S1" {
		t.Errorf("meta %+v", r.Meta())
	}
	var actions []int
	var s trace.Step
	for {
		err := r.Next(&s)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		actions = append(actions, s.Action())
	}
	if diff := cmp.Diff([]int{0, 0, 0, 2, 2}, actions); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
}

func TestFromDecision(t *testing.T) {
	d := proflow.Decision{Seq: 3, Reason: proflow.ReasonPolicy, Scores: []float64{1, 2}, Best: 1, Margin: 1, Votes: 2,
		Cooldown: time.Second, Target: -1, Err: errors.New("bad"), Latency: time.Hour}
	got := trace.FromDecision(d)
	want := trace.Decision{Reason: proflow.ReasonPolicy, Scores: []float64{1, 2}, Best: 1, Margin: 1, Votes: 2, Cooldown: trace.Duration(time.Second), Target: -1, Error: "bad"}
	if diff := cmp.Diff(want, got, addrs); diff != "" {
		t.Errorf("FromDecision (-want +got):\n%s", diff)
	}
	d.Scores[0] = 9
	if got.Scores[0] != 1 {
		t.Error("FromDecision shares the scores")
	}
}

// A decision's forecast is kept when the policy made one, and reads back.
func TestFromDecisionForecast(t *testing.T) {
	d := proflow.Decision{Reason: proflow.ReasonVotes, Best: 1, Target: -1, Forecast: proflow.FlowForecast{OK: true, Throughput: 2e6, AppLimited: 0.25}}
	if got := trace.FromDecision(d).Forecast; got == nil || *got != (trace.Forecast{Throughput: 2e6, AppLimited: 0.25}) {
		t.Errorf("forecast %+v, want throughput 2e6 and app-limited share 0.25", got)
	}
	d.Forecast.OK = false
	if got := trace.FromDecision(d).Forecast; got != nil {
		t.Errorf("no forecast made: %+v, want none", got)
	}
	var buf bytes.Buffer
	w, err := trace.NewWriter(&buf, testMeta())
	if err != nil {
		t.Fatal(err)
	}
	steps := testSteps(2)
	steps[1].Decision.Forecast = &trace.Forecast{Throughput: 1.5e6, AppLimited: 1}
	for i := range steps {
		if err := w.Write(&steps[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	ep, err := trace.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if f := ep.Steps[1].Decision.Forecast; f == nil || f.Throughput != 1.5e6 || f.AppLimited != 1 || ep.Steps[0].Decision.Forecast != nil {
		t.Errorf("read back %+v and %+v, want none and the forecast", ep.Steps[0].Decision.Forecast, f)
	}
}

func TestWriterValidates(t *testing.T) {
	bad := testMeta()
	bad.Topology.Switches = nil
	if _, err := trace.NewWriter(io.Discard, bad); err == nil {
		t.Error("NewWriter accepted an invalid topology")
	}
	bad = testMeta()
	bad.Interval = 0
	bad.InitialSwitch = 7
	if _, err := trace.NewWriter(io.Discard, bad); err == nil || !strings.Contains(err.Error(), "initial_switch 7") || !strings.Contains(err.Error(), "interval 0s") {
		t.Errorf("NewWriter = %v, want both problems", err)
	}
	for _, c := range []struct {
		name   string
		change func(s *trace.Step)
		want   string
	}{
		{"switch out of range", func(s *trace.Step) { s.Switch = 4 }, "switch 4, want 0..3"},
		{"score count", func(s *trace.Step) { s.Decision.Scores = []float64{1} }, "scores has 1 values"},
		{"NaN score", func(s *trace.Step) { s.Decision.Scores[1] = math.NaN() }, "scores[1] is NaN"},
		{"target", func(s *trace.Step) { s.Decision.Target = 9 }, "target 9"},
		{"reroute in place", func(s *trace.Step) { s.Decision.Rerouted, s.Decision.Target = true, s.Switch }, "want another switch"},
		{"negative throughput", func(s *trace.Step) { s.Throughput = -1 }, "throughput -1"},
		{"forecast share", func(s *trace.Step) { s.Decision.Forecast = &trace.Forecast{Throughput: 1, AppLimited: 2} }, "decision.forecast throughput 1 and app-limited share 2"},
		{"invalid obs", func(s *trace.Step) { s.Obs.Switches[2].OverflowRate = math.Inf(1) }, "overflow_rate"},
		{"no reason", func(s *trace.Step) { s.Decision.Reason = "" }, "reason empty"},
		{"seq zero", func(s *trace.Step) { s.Seq = 0 }, "seq 0"},
		{"seq backwards", func(s *trace.Step) { s.Seq = 1 }, "seq 1 does not follow 1"},
		{"time backwards", func(s *trace.Step) { s.Time = t0 }, "is not after the previous step"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w, err := trace.NewWriter(io.Discard, testMeta())
			if err != nil {
				t.Fatal(err)
			}
			steps := testSteps(3)
			if err := w.Write(&steps[0]); err != nil {
				t.Fatal(err)
			}
			s := steps[2] // a step with scores and an observation
			s.Seq = 2
			c.change(&s)
			err = w.Write(&s)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Write = %v, want an error containing %q", err, c.want)
			}
		})
	}
}

// The flow IDs of a step's observation are checked on write as the
// Reader checks them on read: a trace the Writer produced reads back.
func TestWriterValidatesFlowIDs(t *testing.T) {
	good := testMeta().Flow
	write := func(id proflow.FlowID) ([]byte, error) {
		steps := testSteps(3)
		steps[2].Obs.FlowIDs = []proflow.FlowID{good, id}
		steps[2].Obs.Flows = []proflow.FlowSample{{Throughput: 1}, {Throughput: 2}}
		var buf bytes.Buffer
		err := trace.Write(&buf, &trace.Episode{Meta: testMeta(), Steps: steps})
		return buf.Bytes(), err
	}
	for _, c := range []struct {
		name string
		id   proflow.FlowID
		want string
	}{
		{"zero", proflow.FlowID{}, "source address is unset"},
		{"mixed families", proflow.FlowID{Src: good.Src, Dst: netip.MustParseAddr("fd00::8"), Proto: proflow.ProtoTCP}, "mixes address families"},
		{"ports without protocol", proflow.FlowID{Src: good.Src, Dst: good.Dst, SrcPort: 5001}, "sets ports without a protocol"},
		{"unknown protocol", proflow.FlowID{Src: good.Src, Dst: good.Dst, Proto: 1}, "protocol 1 is not supported"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := write(c.id)
			if err == nil || !strings.Contains(err.Error(), "step 2: obs: flow_ids[1]: ") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Write = %v, want an error naming obs.flow_ids[1] and containing %q", err, c.want)
			}
		})
	}
	any6 := proflow.FlowID{Src: netip.MustParseAddr("fd00::1"), Dst: netip.MustParseAddr("fd00::8")}
	b, err := write(any6)
	if err != nil {
		t.Fatal(err)
	}
	ep, err := trace.Read(bytes.NewReader(b))
	if err != nil || len(ep.Steps) != 3 {
		t.Fatalf("Read = %v, want the 3 steps back", err)
	}
	if got := ep.Steps[2].Obs.FlowIDs; len(got) != 2 || got[0] != good || got[1] != any6 {
		t.Errorf("flow IDs read back %v, want %v and %v", got, good, any6)
	}
}

// A step whose wall clock is not after the previous step's is refused on
// write even when its monotonic clock reading is, as the Reader (which sees
// only the wall clock) refuses it.
func TestWriterOrdersByWallClock(t *testing.T) {
	steps := testSteps(2)
	now := time.Now()
	steps[0].Time = now
	// The wall clock stepped back by a second while the monotonic clock
	// went on by one: what an NTP step between two time.Now calls gives.
	back := now.Add(-time.Second)
	(*struct {
		wall uint64
		ext  int64
		loc  *time.Location
	})(unsafe.Pointer(&back)).ext += int64(2 * time.Second)
	if !back.After(now) || !back.Round(0).Before(now.Round(0)) {
		t.Fatal("cannot make a time whose monotonic reading is after and wall clock before another: time.Time's layout changed, mend this test's struct")
	}
	steps[1].Time = back
	var buf bytes.Buffer
	err := trace.Write(&buf, &trace.Episode{Meta: testMeta(), Steps: steps})
	if err == nil || !strings.Contains(err.Error(), "step 1: time") || !strings.Contains(err.Error(), "is not after the previous step's") {
		t.Errorf("Write = %v, want step 1 refused for its time", err)
	}
	ep := &trace.Episode{Meta: testMeta(), Steps: steps}
	ep.Meta.Format = trace.Format
	if err := ep.Validate(); err == nil {
		t.Error("Episode.Validate accepted a wall clock going back")
	}
}

func TestReaderErrors(t *testing.T) {
	var good bytes.Buffer
	if err := trace.Write(&good, &trace.Episode{Meta: testMeta(), Steps: testSteps(3)}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(good.String(), "\n"), "\n")
	join := func(ls ...string) string { return strings.Join(ls, "\n") + "\n" }
	for _, c := range []struct {
		name, text, want string
	}{
		{"empty", "", "empty"},
		{"blank lines only", "\n\n", "empty"},
		{"bad meta json", "{", "line 1"},
		{"wrong format", strings.Replace(lines[0], trace.Format, "other/9", 1) + "\n", `format "other/9"`},
		{"unknown meta field", strings.Replace(lines[0], `{"format"`, `{"colour":"red","format"`, 1) + "\n", `unknown field "colour"`},
		{"unknown step field", join(lines[0], strings.Replace(lines[1], `{"seq"`, `{"extra":1,"seq"`, 1)), `line 2: json: unknown field "extra"`},
		{"steps out of order", join(lines[0], lines[2], lines[1]), "line 3: seq 1 does not follow 2"},
		{"bad step", join(lines[0], strings.Replace(lines[1], `"switch":0`, `"switch":9`, 1)), "line 2: switch 9"},
		{"two values on a line", join(lines[0], lines[1]+" {}"), "line 2: more than one JSON value"},
		{"truncated step", join(lines[0], lines[1][:40]), "line 2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := trace.Read(strings.NewReader(c.text))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Read = %v, want an error containing %q", err, c.want)
			}
		})
	}
	// Blank lines between steps are fine.
	ep, err := trace.Read(strings.NewReader(join(lines[0], "", lines[1], "   ", lines[2])))
	if err != nil || len(ep.Steps) != 2 {
		t.Errorf("Read with blank lines = %d steps, %v", len(ep.Steps), err)
	}
	if _, err := trace.ReadFile(filepath.Join(t.TempDir(), "missing.jsonl")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadFile of a missing file = %v", err)
	}
	path := filepath.Join(t.TempDir(), "x.jsonl.gz")
	if err := os.WriteFile(path, []byte{0x1f, 0x8b, 0, 1, 2}, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := trace.ReadFile(path); err == nil {
		t.Error("ReadFile of a corrupt gzip file succeeded")
	}
}

func TestEpisodeValidate(t *testing.T) {
	ep := &trace.Episode{Meta: testMeta(), Steps: testSteps(4)}
	ep.Meta.Format = trace.Format
	if err := ep.Validate(); err != nil {
		t.Fatal(err)
	}
	ep.Steps[3].Time = ep.Steps[2].Time
	if err := ep.Validate(); err == nil || !strings.Contains(err.Error(), "step 3") {
		t.Errorf("Validate = %v, want step 3 named", err)
	}
}

func TestCreateErrors(t *testing.T) {
	if _, err := trace.Create(filepath.Join(t.TempDir(), "no", "such", "dir.jsonl"), testMeta()); err == nil {
		t.Error("Create in a missing directory succeeded")
	}
	path := filepath.Join(t.TempDir(), "bad.jsonl")
	bad := testMeta()
	bad.Start = time.Time{}
	if _, err := trace.Create(path, bad); err == nil {
		t.Error("Create with invalid metadata succeeded")
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Create left a file behind after refusing the metadata: %v", err)
	}
}

// A trace is written step by step as the controller runs and read back as
// transitions.
func Example() {
	var buf bytes.Buffer
	w, err := trace.NewWriter(&buf, testMeta())
	if err != nil {
		panic(err)
	}
	for _, s := range testSteps(7) {
		if err := w.Write(&s); err != nil {
			panic(err)
		}
	}
	if err := w.Close(); err != nil {
		panic(err)
	}

	ep, err := trace.Read(&buf)
	if err != nil {
		panic(err)
	}
	fmt.Println(ep.Meta.Scenario, ep.Meta.Policy, ep.Meta.Interval)
	for i := 0; i+1 < len(ep.Steps); i++ {
		s, next := &ep.Steps[i], &ep.Steps[i+1]
		if s.Obs == nil || next.Obs == nil {
			continue // no observation: not a transition
		}
		fmt.Printf("s: ξ=%.0f on switch %d, a=%d, s': ξ=%.0f on switch %d\n",
			s.Obs.Switches[s.Switch].OverflowRate, s.Switch, s.Action(), next.Obs.Switches[next.Switch].OverflowRate, next.Switch)
	}
	// Output:
	// S1 reactive 500ms
	// s: ξ=23000 on switch 0, a=0, s': ξ=23001 on switch 0
	// s: ξ=23001 on switch 0, a=0, s': ξ=23002 on switch 0
	// s: ξ=23002 on switch 0, a=0, s': ξ=23003 on switch 0
	// s: ξ=23003 on switch 0, a=2, s': ξ=7668 on switch 2
}

var addrs = cmpopts.EquateComparable(netip.Addr{})

// writeOld puts a valid two-step trace at path and returns its bytes.
func writeOld(t *testing.T, path string) []byte {
	t.Helper()
	if err := trace.WriteFile(path, &trace.Episode{Meta: testMeta(), Steps: testSteps(2)}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkUntouched fails unless path holds old and is the only file in its
// directory (no temporary file left behind).
func checkUntouched(t *testing.T, path string, old []byte) {
	t.Helper()
	if b, err := os.ReadFile(path); err != nil || !bytes.Equal(b, old) {
		t.Errorf("the existing trace was changed or lost (read error %v, %d bytes, want %d)", err, len(b), len(old))
	}
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if diff := cmp.Diff([]string{filepath.Base(path)}, names); diff != "" {
		t.Errorf("files in the directory (-want +got):\n%s", diff)
	}
}

func TestCreateInvalidMetaKeepsExistingFile(t *testing.T) {
	for _, name := range []string{"ep.jsonl", "ep.jsonl.gz"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), name)
			old := writeOld(t, path)
			bad := testMeta()
			bad.Start = time.Time{}
			if _, err := trace.Create(path, bad); err == nil || !strings.Contains(err.Error(), path) {
				t.Errorf("Create with invalid metadata = %v, want an error naming %s", err, path)
			}
			checkUntouched(t, path, old)
		})
	}
}

func TestWriteFileInvalidStepKeepsExistingFile(t *testing.T) {
	for _, name := range []string{"ep.jsonl", "ep.jsonl.gz"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), name)
			old := writeOld(t, path)
			steps := testSteps(6)
			steps[4].Switch = 9 // invalid part-way
			err := trace.WriteFile(path, &trace.Episode{Meta: testMeta(), Steps: steps})
			if err == nil || !strings.Contains(err.Error(), "step 4") || !strings.Contains(err.Error(), "switch 9") {
				t.Errorf("WriteFile = %v, want an error naming step 4 and switch 9", err)
			}
			checkUntouched(t, path, old)

			fresh := filepath.Join(filepath.Dir(path), "new-"+name)
			if err := trace.WriteFile(fresh, &trace.Episode{Meta: testMeta(), Steps: steps}); err == nil {
				t.Error("WriteFile of an invalid episode to a new path succeeded")
			}
			if _, err := os.Stat(fresh); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("WriteFile left a file at the new path: %v", err)
			}
			if err := trace.WriteFile(path, nil); err == nil {
				t.Error("WriteFile of a nil episode succeeded")
			}
			checkUntouched(t, path, old)
		})
	}
}

func TestCreateReplacesOnlyOnClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ep.jsonl.gz")
	old := writeOld(t, path)
	steps := testSteps(5)

	// Until Close, path keeps the old trace; after it, the new one.
	w, err := trace.Create(path, testMeta())
	if err != nil {
		t.Fatal(err)
	}
	for i := range steps {
		if err := w.Write(&steps[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); !bytes.Equal(b, old) {
		t.Error("path changed before Close")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := trace.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(steps, got.Steps, addrs); diff != "" {
		t.Errorf("steps after Close (-want +got):\n%s", diff)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("trace file mode %v (%v), want 0644", fi.Mode().Perm(), err)
	}
	replaced, _ := os.ReadFile(path)

	// Abort and a failed Write both leave the file as it was.
	w, err = trace.Create(path, testMeta())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(&steps[0]); err != nil {
		t.Fatal(err)
	}
	w.Abort()
	if err := w.Write(&steps[1]); err == nil {
		t.Error("Write after Abort succeeded")
	}
	checkUntouched(t, path, replaced)

	w, err = trace.Create(path, testMeta())
	if err != nil {
		t.Fatal(err)
	}
	bad := steps[1]
	bad.Throughput = -1
	if err := w.Write(&steps[0]); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(&bad); err == nil {
		t.Fatal("Write of an invalid step succeeded")
	}
	if err := w.Write(&steps[1]); err == nil {
		t.Error("Write after a failed Write succeeded, want the trace marked incomplete")
	}
	if err := w.Close(); err == nil || !strings.Contains(err.Error(), "not written") || !strings.Contains(err.Error(), "throughput -1") {
		t.Errorf("Close after a failed Write = %v, want an error saying the trace was not written and why", err)
	}
	checkUntouched(t, path, replaced)
}

// TestReadCutShort reads traces that end part-way through, as a crash leaves
// them: the steps before the break come back with an error naming the line.
func TestReadCutShort(t *testing.T) {
	want := testSteps(60)
	var plain bytes.Buffer
	if err := trace.Write(&plain, &trace.Episode{Meta: testMeta(), Steps: want}); err != nil {
		t.Fatal(err)
	}
	var zbuf bytes.Buffer
	zw := gzip.NewWriter(&zbuf)
	zw.Write(plain.Bytes())
	zw.Close()
	cutPlain := plain.Bytes()[:plain.Len()/2]
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		data []byte
		want string // in the error
	}{
		{"plain, mid-line", cutPlain, "incomplete JSON value"},
		{"gzip, mid-stream", zbuf.Bytes()[:zbuf.Len()*2/3], "the input was cut short: unexpected EOF"},
	} {
		t.Run(c.name, func(t *testing.T) {
			check := func(what string, ep *trace.Episode, err error) {
				t.Helper()
				if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "reading stopped there") {
					t.Errorf("%s = %v, want an error containing %q and where reading stopped", what, err, c.want)
				}
				if ep == nil {
					t.Fatalf("%s returned no episode, want the steps read before the break", what)
				}
				if ep.Meta.Scenario != "S1" {
					t.Errorf("%s: meta %+v", what, ep.Meta)
				}
				n := len(ep.Steps)
				if n == 0 || n >= len(want) {
					t.Fatalf("%s read %d steps, want some but fewer than %d", what, n, len(want))
				}
				if !strings.Contains(err.Error(), fmt.Sprintf("after %d steps", n)) || !strings.Contains(err.Error(), fmt.Sprintf("line %d", n+2)) {
					t.Errorf("%s error %q, want line %d and %d steps", what, err, n+2, n)
				}
				if diff := cmp.Diff(want[:n], ep.Steps, addrs); diff != "" {
					t.Errorf("%s steps (-want +got):\n%s", what, diff)
				}
			}
			ep, err := trace.Read(bytes.NewReader(c.data))
			check("Read", ep, err)
			path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "")+".jsonl")
			if err := os.WriteFile(path, c.data, 0o644); err != nil {
				t.Fatal(err)
			}
			ep, err = trace.ReadFile(path)
			check("ReadFile", ep, err)
			if err != nil && !strings.Contains(err.Error(), path) {
				t.Errorf("ReadFile error %q does not name the file", err)
			}
		})
	}
}

// A step's recheck round-trips, moves the flow when it rerouted (Moved,
// Action), and is validated against its step.
func TestStepRecheck(t *testing.T) {
	steps := testSteps(3)
	s := &steps[2]
	s.Decision.Recheck = trace.Duration(200 * time.Millisecond)
	s.Recheck = &trace.Recheck{Time: s.Time.Add(200 * time.Millisecond), Load: 2.5,
		Decision: trace.Decision{Reason: proflow.ReasonRerouted, Best: 1, Votes: 20, Target: 1, Rerouted: true}}
	m := testMeta()
	if err := s.Validate(&m); err != nil {
		t.Fatalf("valid recheck: %v", err)
	}
	if to, at, ok := s.Moved(); !ok || to != 1 || !at.Equal(s.Recheck.Time) || s.Action() != 1 {
		t.Errorf("Moved() = %d, %v, %v; Action() = %d; want the recheck's move to 1 at %v", to, at, ok, s.Action(), s.Recheck.Time)
	}
	var buf bytes.Buffer
	m.Format = trace.Format
	if err := trace.Write(&buf, &trace.Episode{Meta: m, Steps: steps}); err != nil {
		t.Fatal(err)
	}
	ep, err := trace.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(steps, ep.Steps, addrs); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	for _, c := range []struct {
		edit func(s *trace.Step)
		want string
	}{
		{func(s *trace.Step) { s.Recheck.Time = s.Time }, "recheck.time"},
		{func(s *trace.Step) { s.Recheck.Load = math.NaN() }, "recheck.load NaN"},
		{func(s *trace.Step) { s.Recheck.Decision.Target = 9 }, "recheck.decision.target 9"},
		{func(s *trace.Step) { s.Recheck.Decision.Target = s.Switch }, "recheck.decision.rerouted with target 0 from switch 0"},
		{func(s *trace.Step) { s.Decision.Recheck = -1 }, "decision.recheck -1ns"},
		{func(s *trace.Step) {
			s.Decision = trace.Decision{Reason: proflow.ReasonRerouted, Best: 2, Target: 2, Rerouted: true}
		}, "a recheck after a step that rerouted"},
	} {
		bad := *s
		rc := *s.Recheck
		bad.Recheck = &rc
		c.edit(&bad)
		if err := bad.Validate(&m); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want one containing %q", err, c.want)
		}
	}
}
