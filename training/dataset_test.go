package training

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/proflow-sdn/proflow/internal/fileutil/fileutiltest"
	"github.com/proflow-sdn/proflow/internal/safetensors"
	"github.com/proflow-sdn/proflow/policy"
	"github.com/proflow-sdn/proflow/policy/qnet"
	"github.com/proflow-sdn/proflow/telemetry"
)

// randomState returns an in-range state with the flow on switch cur.
func randomState(enc telemetry.EncoderConfig, rng *rand.Rand, cur int) []float32 {
	s := make([]float32, enc.Dim())
	for i := range s {
		s[i] = rng.Float32()
	}
	if err := ClampState(enc, s, cur); err != nil {
		panic(err)
	}
	return s
}

// testDataset builds episodes of steps transitions each; every fifth step
// of an episode moves the flow to the next switch.
func testDataset(t testing.TB, episodes, steps int, inputs bool) *Dataset {
	t.Helper()
	enc := testEncoder()
	d, err := NewDataset(enc, "test corpus", inputs)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for e := range episodes {
		cur := e % enc.NumSwitches
		s := randomState(enc, rng, cur)
		for st := range steps {
			a := cur
			if st%5 == 4 {
				a = (cur + 1) % enc.NumSwitches
			}
			next := randomState(enc, rng, a)
			tr := Transition{State: s, Action: a, Reward: rng.Float32(), Next: next, Done: st == steps-1,
				Current: cur, Episode: 100 + e, Step: st, ThroughputBaseline: 0.92}
			if inputs {
				tr.Inputs = &RewardInputs{ThroughputNorm: rng.Float64() * 1.1, Overflow: rng.Float64(), CrowdExcess: rng.Float64()}
			}
			if err := d.Append(tr); err != nil {
				t.Fatal(err)
			}
			s, cur = next, a
		}
	}
	return d
}

var datasetCmp = cmp.Options{cmp.AllowUnexported(Dataset{}), cmpopts.EquateEmpty()}

func TestDatasetAppendAt(t *testing.T) {
	d := testDataset(t, 3, 10, true)
	if d.Len() != 30 || d.Dim() != 34 || d.NumSwitches() != 4 {
		t.Fatalf("Len %d Dim %d NumSwitches %d, want 30, 34, 4", d.Len(), d.Dim(), d.NumSwitches())
	}
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	tr := d.At(14)
	if tr.Episode != 101 || tr.Step != 4 || tr.Action != (tr.Current+1)%4 || !d.IsReroute(14) || tr.Inputs == nil {
		t.Errorf("At(14) = episode %d step %d current %d action %d inputs %v, want episode 101 step 4, a reroute",
			tr.Episode, tr.Step, tr.Current, tr.Action, tr.Inputs)
	}
	st := d.Stats()
	if st.Transitions != 30 || st.Episodes != 3 || st.Reroutes != 6 || st.Done != 3 {
		t.Errorf("Stats = %+v, want 30 transitions, 3 episodes, 6 reroutes, 3 done", st)
	}

	enc := testEncoder()
	rng := rand.New(rand.NewPCG(3, 4))
	good := Transition{State: randomState(enc, rng, 0), Next: randomState(enc, rng, 2), Action: 2, Current: 0, ThroughputBaseline: 1,
		Inputs: &RewardInputs{}}
	for name, mutate := range map[string]func(*Transition){
		"short state":            func(t *Transition) { t.State = t.State[:10] },
		"action out of range":    func(t *Transition) { t.Action = 4 },
		"current out of range":   func(t *Transition) { t.Current = -1 },
		"placement vs current":   func(t *Transition) { t.Current = 1 },
		"placement vs action":    func(t *Transition) { t.Action = 3 },
		"zero baseline":          func(t *Transition) { t.ThroughputBaseline = 0 },
		"no reward inputs":       func(t *Transition) { t.Inputs = nil },
		"NaN in state":           func(t *Transition) { t.State = append([]float32(nil), t.State...); t.State[3] = float32(nan()) },
		"negative episode":       func(t *Transition) { t.Episode = -1 },
		"non-finite reward":      func(t *Transition) { t.Reward = float32(nan()) },
		"next without a one-hot": func(t *Transition) { t.Next = make([]float32, 34) },
	} {
		tr := good
		mutate(&tr)
		if err := d.Append(tr); err == nil {
			t.Errorf("%s: Append accepted it", name)
		}
	}
	if d.Len() != 30 {
		t.Errorf("refused transitions changed Len to %d", d.Len())
	}
	if err := d.Append(good); err != nil {
		t.Errorf("valid transition: %v", err)
	}
}

func nan() float64 { var z float64; return z / z }

func TestDatasetSplitByEpisode(t *testing.T) {
	d := testDataset(t, 10, 7, false)
	train, held, err := d.Split(0.3, rand.New(rand.NewPCG(7, 7)))
	if err != nil {
		t.Fatal(err)
	}
	if got := len(held.Episodes()); got != 3 {
		t.Errorf("held-out episodes %d, want 3 of 10", got)
	}
	if train.Len()+held.Len() != d.Len() {
		t.Errorf("split sizes %d + %d, want %d", train.Len(), held.Len(), d.Len())
	}
	inTrain := map[int32]bool{}
	for _, e := range train.Episode {
		inTrain[e] = true
	}
	for _, e := range held.Episode {
		if inTrain[e] {
			t.Errorf("episode %d in both parts", e)
		}
	}
	for _, part := range []*Dataset{train, held} {
		if err := part.Validate(); err != nil {
			t.Error(err)
		}
	}
	// Same rng seed, same split.
	train2, _, _ := d.Split(0.3, rand.New(rand.NewPCG(7, 7)))
	if diff := cmp.Diff(train, train2, datasetCmp); diff != "" {
		t.Errorf("split not deterministic (-first +second):\n%s", diff)
	}
	// SplitIndices names the same transitions.
	ti, hi, err := d.SplitIndices(0.3, rand.New(rand.NewPCG(7, 7)))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(train, d.Subset(ti), datasetCmp); diff != "" {
		t.Errorf("SplitIndices' train part differs from Split's (-Split +SplitIndices):\n%s", diff)
	}
	if diff := cmp.Diff(held, d.Subset(hi), datasetCmp); diff != "" {
		t.Errorf("SplitIndices' held-out part differs from Split's (-Split +SplitIndices):\n%s", diff)
	}
	// Edge cases: at least one, never all.
	_, held, _ = d.Split(0.01, rand.New(rand.NewPCG(1, 1)))
	if len(held.Episodes()) != 1 {
		t.Errorf("frac 0.01 of 10 episodes held %d, want 1", len(held.Episodes()))
	}
	one := testDataset(t, 1, 5, false)
	train, held, _ = one.Split(0.5, rand.New(rand.NewPCG(1, 1)))
	if train.Len() != 5 || held.Len() != 0 {
		t.Errorf("one episode split %d/%d, want all in train", train.Len(), held.Len())
	}
	_, held, _ = d.Split(0, rand.New(rand.NewPCG(1, 1)))
	if held.Len() != 0 {
		t.Errorf("frac 0 held %d transitions", held.Len())
	}
	for _, frac := range []float64{-0.1, 1, nan()} {
		if _, _, err := d.Split(frac, rand.New(rand.NewPCG(1, 1))); err == nil {
			t.Errorf("Split(%v): no error", frac)
		}
	}
}

func TestDatasetRelabel(t *testing.T) {
	d := testDataset(t, 2, 10, true)
	c := DefaultRewardConfig()
	if err := d.Relabel(c); err != nil {
		t.Fatal(err)
	}
	for i := range d.Len() {
		in := *d.At(i).Inputs
		if want := float32(c.Real(in)); d.R[i] != want {
			t.Fatalf("R[%d] = %v, want %v", i, d.R[i], want)
		}
	}
	ablation := c
	ablation.Beta = 0
	if err := d.Relabel(ablation); err != nil {
		t.Fatal(err)
	}
	if in := *d.At(0).Inputs; d.R[0] != float32(ablation.Real(in)) {
		t.Errorf("relabel with beta 0: R[0] = %v, want %v", d.R[0], ablation.Real(in))
	}
	if err := testDataset(t, 1, 3, false).Relabel(c); err == nil {
		t.Error("Relabel of a dataset without reward inputs: no error")
	}
}

func TestDatasetRoundTrip(t *testing.T) {
	for _, inputs := range []bool{false, true} {
		d := testDataset(t, 3, 8, inputs)
		if inputs {
			d.Profile, d.ProfileDigest, d.Interval = "testbed", "sha256:0123", 500*time.Millisecond
		}
		var buf bytes.Buffer
		if err := d.Write(&buf); err != nil {
			t.Fatal(err)
		}
		back, err := ReadDataset(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(d, back, datasetCmp); diff != "" {
			t.Errorf("round trip (inputs %v) (-wrote +read):\n%s", inputs, diff)
		}
	}
	// Through a file, and an empty dataset.
	path := filepath.Join(t.TempDir(), "d.safetensors")
	empty, _ := NewDataset(testEncoder(), "", false)
	if err := empty.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := LoadDataset(path)
	if err != nil {
		t.Fatal(err)
	}
	if back.Len() != 0 {
		t.Errorf("empty dataset read back with %d transitions", back.Len())
	}
	if _, err := LoadDataset(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v, want ErrNotExist", err)
	}
}

func TestReadDatasetRefuses(t *testing.T) {
	d := testDataset(t, 2, 4, true)
	var buf bytes.Buffer
	if err := d.Write(&buf); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	if _, err := ReadDataset(bytes.NewReader(good[:len(good)-3])); !errors.Is(err, safetensors.ErrTruncated) {
		t.Errorf("truncated: %v, want ErrTruncated", err)
	}
	if _, err := ReadDataset(bytes.NewReader(append(append([]byte(nil), good...), 0))); err == nil {
		t.Error("trailing byte: no error")
	}
	// A file of another format.
	var other bytes.Buffer
	if err := safetensors.Write(&other, map[string]string{"format": "something"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadDataset(&other); err == nil {
		t.Error("other format: no error")
	}
	// An action that does not match the next state's one-hot.
	bad := testDataset(t, 1, 3, false)
	bad.A[1] = (bad.A[1] + 1) % 4
	buf.Reset()
	if err := bad.Write(&buf); err == nil {
		t.Error("Write of an inconsistent dataset: no error")
	}
}

func FuzzReadDataset(f *testing.F) {
	d := testDataset(f, 1, 3, true)
	var buf bytes.Buffer
	if err := d.Write(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte{})
	f.Add([]byte("\x02\x00\x00\x00\x00\x00\x00\x00{}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := ReadDataset(bytes.NewReader(b))
		if err != nil {
			return
		}
		if err := d.Validate(); err != nil {
			t.Fatalf("ReadDataset returned an invalid dataset: %v", err)
		}
		var out bytes.Buffer
		if err := d.Write(&out); err != nil {
			t.Fatalf("Write of a dataset ReadDataset accepted: %v", err)
		}
	})
}

// rewriteVersion returns the dataset file good with its format_version
// replaced by v.
func rewriteVersion(t *testing.T, good []byte, v string) []byte {
	t.Helper()
	meta, tensors, err := safetensors.Read(bytes.NewReader(good), MaxDatasetBytes)
	if err != nil {
		t.Fatal(err)
	}
	meta["format_version"] = v
	var list []safetensors.Tensor
	for name, tn := range tensors {
		tn.Name = name
		list = append(list, tn)
	}
	var buf bytes.Buffer
	if err := safetensors.Write(&buf, meta, list); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Version 1 files marked every episode's last transition done although the
// episodes were only cut off; they are read with no transition done. Other
// versions are refused with an error naming the version.
func TestReadDatasetVersions(t *testing.T) {
	d := testDataset(t, 3, 5, true) // done on every episode's last step
	if d.Stats().Done != 3 {
		t.Fatalf("test dataset has %d done, want 3", d.Stats().Done)
	}
	var buf bytes.Buffer
	if err := d.Write(&buf); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	// Version 2 keeps done as written (a terminal state stays terminal).
	back, err := ReadDataset(bytes.NewReader(rewriteVersion(t, good, "2")))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(d, back, datasetCmp); diff != "" {
		t.Errorf("version 2 (-wrote +read):\n%s", diff)
	}
	v1, err := ReadDataset(bytes.NewReader(rewriteVersion(t, good, "1")))
	if err != nil {
		t.Fatalf("version 1: %v", err)
	}
	if st := v1.Stats(); st.Done != 0 || st.Transitions != 15 {
		t.Errorf("version 1 read with %d done of %d transitions, want 0 of 15", st.Done, st.Transitions)
	}
	all := make([]int, d.Len())
	for i := range all {
		all[i] = i
	}
	want := d.Subset(all) // a copy
	clear(want.Done)
	if diff := cmp.Diff(want, v1, datasetCmp); diff != "" {
		t.Errorf("version 1 differs beyond done (-want +read):\n%s", diff)
	}
	for _, v := range []string{"3", "", "0"} {
		_, err := ReadDataset(bytes.NewReader(rewriteVersion(t, good, v)))
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("format_version %q", v)) {
			t.Errorf("version %q: %v, want an error naming the format_version", v, err)
		}
	}
}

// TestDatasetWithoutDrain: a dataset written before the drain input existed
// (no drain tensor) reads back, relabels with κ = 0, and refuses κ > 0
// rather than charging every transition nothing.
func TestDatasetWithoutDrain(t *testing.T) {
	d := testDataset(t, 3, 8, true)
	if d.Drain == nil {
		t.Fatal("a new dataset with reward inputs does not keep the drain input")
	}
	d.Drain = nil
	var buf bytes.Buffer
	if err := d.Write(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := ReadDataset(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if back.Drain != nil {
		t.Errorf("drain %v read from a file without it, want nil", back.Drain)
	}
	c := DefaultRewardConfig()
	if err := back.Relabel(c); err != nil {
		t.Errorf("relabel with kappa 0: %v", err)
	}
	c.Kappa = 0.5
	if err := back.Relabel(c); err == nil || !strings.Contains(err.Error(), "drain") {
		t.Errorf("relabel with kappa 0.5 without the drain input: %v, want an error naming it", err)
	}
}

// TestDatasetWithoutOutcomeColumns: a dataset written before the
// app_limited and deficit columns existed (its next states alone held
// those inputs) reads back with both columns filled from its next states,
// and a dataset lacking them still lags to the same rewards; a column of
// the wrong length or in a layout without its feature is refused.
func TestDatasetWithoutOutcomeColumns(t *testing.T) {
	enc := testEncoder().WithLayout(telemetry.StateLayoutV3)
	d, err := FromEpisodes([]Episode{servedEpisode(1), drainingEpisode(enc, 2)}, enc, DefaultRewardConfig(), "unit")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.AppLimited) != d.Len() || len(d.Deficit) != d.Len() {
		t.Fatalf("%d app-limited and %d deficit inputs for %d transitions", len(d.AppLimited), len(d.Deficit), d.Len())
	}
	appLimited, deficit := d.AppLimited, d.Deficit
	if !slices.ContainsFunc(appLimited, func(v float32) bool { return v > 0 }) || !slices.ContainsFunc(deficit, func(v float32) bool { return v > 0 }) {
		t.Fatalf("app-limited %v, deficit %v: want some of each above 0, or the test checks nothing", appLimited, deficit)
	}
	c := DefaultRewardConfig()
	c.Served, c.DeficitDrain, c.Kappa = true, true, 0.7
	if err := d.Relabel(c); err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(d.R)

	d.AppLimited, d.Deficit = nil, nil
	old := writeRead(t, d)
	if diff := cmp.Diff([][]float32{appLimited, deficit}, [][]float32{old.AppLimited, old.Deficit}); diff != "" {
		t.Errorf("columns read from a file without them are not the next states' features (-want +read):\n%s", diff)
	}
	l, err := d.Lagged(2)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([][]float32{appLimited, deficit}, [][]float32{l.AppLimited, l.Deficit}); diff != "" {
		t.Errorf("a dataset lacking the columns lags to other ones (-want +lagged):\n%s", diff)
	}
	for name, ds := range map[string]*Dataset{"read": old, "lagged": l, "lacking": d} {
		if err := ds.Relabel(c); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, ds.R); diff != "" {
			t.Errorf("%s: relabelled rewards differ (-want +got):\n%s", name, diff)
		}
	}

	for _, tc := range []struct {
		name   string
		mutate func(*Dataset)
		want   string
	}{
		{"short app_limited", func(d *Dataset) { d.AppLimited = appLimited[1:] }, "app_limited has 7 entries"},
		{"short deficit", func(d *Dataset) { d.Deficit = deficit[1:] }, "deficit has 7 entries"},
	} {
		bad := old.Subset([]int{0, 1, 2, 3, 4, 5, 6, 7})
		tc.mutate(bad)
		if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Validate = %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
	v2, err := FromEpisodes([]Episode{servedEpisode(1)}, testEncoder().WithLayout(telemetry.StateLayoutV2), DefaultRewardConfig(), "unit")
	if err != nil {
		t.Fatal(err)
	}
	if v2.Deficit != nil {
		t.Errorf("a v2 dataset keeps a deficit column %v, want none", v2.Deficit)
	}
	v2.Deficit = make([]float32, v2.Len())
	if err := v2.Validate(); err == nil || !strings.Contains(err.Error(), "deficit has 4 entries (reward inputs kept: true, layout proflow-state-v2)") {
		t.Errorf("deficit column in layout v2: Validate = %v, want an error naming the layout", err)
	}
}

// TestDatasetModelExtra checks what a model trained on a dataset records
// about it: the control interval, which the policy reads back; nothing
// for a dataset that records none.
func TestDatasetModelExtra(t *testing.T) {
	d := testDataset(t, 1, 3, false)
	if extra := d.ModelExtra(); len(extra) != 0 {
		t.Errorf("ModelExtra of a dataset without interval = %v, want none", extra)
	}
	d.Interval = 250 * time.Millisecond
	extra := d.ModelExtra()
	if diff := cmp.Diff(map[string]string{policy.ModelIntervalKey: "250ms"}, extra); diff != "" {
		t.Errorf("ModelExtra (-want +got):\n%s", diff)
	}
	meta := qnet.NewMetadata(d.Encoder)
	meta.Extra = extra
	if got, err := policy.ModelInterval(meta); err != nil || got != d.Interval {
		t.Errorf("policy.ModelInterval of the recorded metadata = %v, %v; want %v", got, err, d.Interval)
	}
}

// A dataset whose encoder declares 2^62 switches and leaves (its Dim wraps
// round to 4) is refused by the encoder's bounds; the placement check
// indexed past its states and panicked.
func TestReadDatasetRefusesHugeFabric(t *testing.T) {
	good := testDataset(t, 1, 1, false)
	var buf bytes.Buffer
	if err := good.Write(&buf); err != nil {
		t.Fatal(err)
	}
	meta, tensors, err := safetensors.Read(bytes.NewReader(buf.Bytes()), MaxDatasetBytes)
	if err != nil {
		t.Fatal(err)
	}
	enc := good.Encoder
	enc.NumSwitches, enc.NumLeaves = 1<<62, 1<<62
	encJSON, err := json.Marshal(enc)
	if err != nil {
		t.Fatal(err)
	}
	meta["encoder"] = string(encJSON)
	dim := int64(enc.Dim())
	var list []safetensors.Tensor
	for name, tn := range tensors {
		tn.Name = name
		if name == "states" || name == "next_states" {
			tn = safetensors.Float32s(name, []int64{1, dim}, make([]float32, dim))
		}
		list = append(list, tn)
	}
	buf.Reset()
	if err := safetensors.Write(&buf, meta, list); err != nil {
		t.Fatal(err)
	}
	_, err = func() (d *Dataset, err error) {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("panic: %v", p)
			}
		}()
		return ReadDataset(bytes.NewReader(buf.Bytes()))
	}()
	for _, want := range []string{"num_switches 4611686018427387904, want 2..65536", "num_leaves 4611686018427387904, want 0..65536"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ReadDataset of a %d-byte file = %v, want an error containing %q", buf.Len(), err, want)
		}
	}
}

// A dataset path that is not a regular file is refused without blocking
// (os.Open blocked on a FIFO).
func TestLoadDatasetRefusesNonRegular(t *testing.T) {
	fileutiltest.RefusesNonRegular(t, "corpus.dataset", func(path string) error {
		_, err := LoadDataset(path)
		return err
	})
}

// Errors quote at most safetensors.MaxEcho bytes of a metadata value or a
// tensor name: a dataset whose format was 8 MiB of 'x' gave an 8 MB error.
func TestReadDatasetErrorsQuoteBoundedValues(t *testing.T) {
	good := testDataset(t, 1, 2, true)
	var buf bytes.Buffer
	if err := good.Write(&buf); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("x", 8<<20)
	for _, tc := range []struct{ key, value, want string }{
		{"format", long, `format "xxxx`},
		{"format_version", long, `format_version "xxxx`},
		{"state_layout", long, `state_layout "xxxx`},
		{"interval", long, `interval "xxxx`},
		{"encoder", long, `encoder "xxxx`},
		{"encoder", `{"` + long + `": 1}`, `unknown field "xxxx`},
		{"reward_inputs", long, `reward_inputs "xxxx`},
		{"transitions", long, `transitions "xxxx`},
		{"tensor", long, `unexpected tensor "xxxx`},
	} {
		t.Run(tc.key, func(t *testing.T) {
			meta, tensors, err := safetensors.Read(bytes.NewReader(buf.Bytes()), MaxDatasetBytes)
			if err != nil {
				t.Fatal(err)
			}
			var list []safetensors.Tensor
			for name, tn := range tensors {
				tn.Name = name
				list = append(list, tn)
			}
			if tc.key == "tensor" {
				list = append(list, safetensors.Bytes(tc.value, []int64{1}, []byte{0}))
			} else {
				meta[tc.key] = tc.value
			}
			var file bytes.Buffer
			if err := safetensors.Write(&file, meta, list); err != nil {
				t.Fatal(err)
			}
			_, err = ReadDataset(&file)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ReadDataset = %.300v…, want an error containing %q", err, tc.want)
			}
			if msg := err.Error(); len(msg) > 512 || !strings.Contains(msg, "more bytes)") {
				t.Errorf("error of %d bytes, want at most 512 saying what was cut: %.300s…", len(msg), msg)
			}
		})
	}
}
