package proflow_test

import (
	"encoding/json"
	"math"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/proflow-sdn/proflow"
)

func TestFlowIDStringParseRoundTrip(t *testing.T) {
	for _, c := range []struct {
		flow proflow.FlowID
		text string
	}{
		{testFlow, "tcp 10.0.0.1:5001->10.0.0.8:5201"},
		{proflow.FlowID{Src: netip.MustParseAddr("fd00::1"), Dst: netip.MustParseAddr("fd00::8"), DstPort: 53, Proto: proflow.ProtoUDP},
			"udp [fd00::1]:0->[fd00::8]:53"},
		{proflow.FlowID{Src: netip.MustParseAddr("10.0.0.3"), Dst: netip.MustParseAddr("10.0.0.4")},
			"any 10.0.0.3:0->10.0.0.4:0"},
	} {
		if got := c.flow.String(); got != c.text {
			t.Errorf("String() = %q, want %q", got, c.text)
		}
		got, err := proflow.ParseFlowID(c.text)
		if err != nil {
			t.Errorf("ParseFlowID(%q): %v", c.text, err)
			continue
		}
		if diff := cmp.Diff(c.flow, got, addrs); diff != "" {
			t.Errorf("ParseFlowID(%q) (-want +got):\n%s", c.text, diff)
		}
	}
}

func TestParseFlowIDLenient(t *testing.T) {
	got, err := proflow.ParseFlowID("  TCP  10.0.0.1:5001 -> 10.0.0.8:5201 ")
	if err != nil {
		t.Fatal(err)
	}
	if got != testFlow {
		t.Errorf("ParseFlowID with extra spaces and upper case = %v, want %v", got, testFlow)
	}
}

func TestParseFlowIDErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", `want "PROTO SRC:PORT->DST:PORT"`},
		{"tcp", `want "PROTO SRC:PORT->DST:PORT"`},
		{"icmp 10.0.0.1:0->10.0.0.2:0", `protocol "icmp", want tcp, udp or any`},
		{"tcp 10.0.0.1:1 10.0.0.2:2", `missing "->"`},
		{"tcp 10.0.0.1->10.0.0.2:2", "source:"},
		{"tcp 10.0.0.1:1->10.0.0.256:2", "destination:"},
		{"tcp 10.0.0.1:99999->10.0.0.2:2", "source:"},
		{"tcp 10.0.0.1:1->[fd00::2]:2", "mixes address families"},
		{"any 10.0.0.1:80->10.0.0.2:80", "sets ports without a protocol"},
	} {
		_, err := proflow.ParseFlowID(c.in)
		if err == nil {
			t.Errorf("ParseFlowID(%q) = nil error, want one containing %q", c.in, c.want)
			continue
		}
		if !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "proflow: ") {
			t.Errorf("ParseFlowID(%q) = %q, want a proflow error containing %q", c.in, err, c.want)
		}
	}
}

func TestFlowIDValidate(t *testing.T) {
	v4, v6 := netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("fd00::1")
	for _, c := range []struct {
		name string
		flow proflow.FlowID
		want string // "" for valid
	}{
		{"tcp", testFlow, ""},
		{"any protocol, any port", proflow.FlowID{Src: v4, Dst: v4}, ""},
		{"udp v6", proflow.FlowID{Src: v6, Dst: v6, Proto: proflow.ProtoUDP, DstPort: 1}, ""},
		{"no source", proflow.FlowID{Dst: v4}, "source address is unset"},
		{"no destination", proflow.FlowID{Src: v4}, "destination address is unset"},
		{"mixed families", proflow.FlowID{Src: v4, Dst: v6}, "mixes address families"},
		{"unknown protocol", proflow.FlowID{Src: v4, Dst: v4, Proto: 1}, "protocol 1 is not supported"},
		{"ports without protocol", proflow.FlowID{Src: v4, Dst: v4, SrcPort: 1}, "sets ports without a protocol"},
	} {
		err := c.flow.Validate()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: Validate = %v, want nil", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: Validate = %v, want an error containing %q", c.name, err, c.want)
		}
	}
}

func TestFlowIDReverse(t *testing.T) {
	want := proflow.FlowID{Src: testFlow.Dst, Dst: testFlow.Src, SrcPort: 5201, DstPort: 5001, Proto: proflow.ProtoTCP}
	if got := testFlow.Reverse(); got != want {
		t.Errorf("Reverse() = %v, want %v", got, want)
	}
	if got := testFlow.Reverse().Reverse(); got != testFlow {
		t.Errorf("Reverse().Reverse() = %v, want %v", got, testFlow)
	}
}

func TestFlowIDJSONRoundTrip(t *testing.T) {
	in := struct {
		Flow proflow.FlowID `json:"flow"`
	}{testFlow}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"flow":"tcp 10.0.0.1:5001-\u003e10.0.0.8:5201"}`; string(b) != want { // json escapes ">"
		t.Errorf("json.Marshal = %s, want %s", b, want)
	}
	out := in
	out.Flow = proflow.FlowID{}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if out.Flow != testFlow {
		t.Errorf("round trip = %v, want %v", out.Flow, testFlow)
	}
	if err := json.Unmarshal([]byte(`{"flow":"tcp nowhere"}`), &out); err == nil {
		t.Error("json.Unmarshal of a bad flow = nil error")
	}
	if out.Flow != testFlow {
		t.Errorf("failed UnmarshalText changed the flow to %v", out.Flow)
	}
}

func FuzzParseFlowID(f *testing.F) {
	for _, s := range []string{
		"tcp 10.0.0.1:5001->10.0.0.8:5201",
		"udp [fd00::1]:0->[fd00::8]:53",
		"any 10.0.0.3:0->10.0.0.4:0",
		"tcp [fe80::1%eth0]:1->[fe80::2%eth0]:2",
		"tcp [::ffff:10.0.0.1]:1->[::ffff:10.0.0.2]:2",
		"icmp 1.2.3.4:0->1.2.3.5:0",
		"tcp 1.2.3.4:1 -> 5.6.7.8:2",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		flow, err := proflow.ParseFlowID(s)
		if err != nil {
			return
		}
		if err := flow.Validate(); err != nil {
			t.Fatalf("ParseFlowID(%q) returned an invalid flow %v: %v", s, flow, err)
		}
		text := flow.String()
		again, err := proflow.ParseFlowID(text)
		if err != nil {
			t.Fatalf("ParseFlowID(%q) -> %q does not parse back: %v", s, text, err)
		}
		if again != flow {
			t.Fatalf("ParseFlowID(%q) = %v, but its String %q parses to %v", s, flow, text, again)
		}
	})
}

func TestProtectedFlowValidate(t *testing.T) {
	for _, c := range []struct {
		p       proflow.ProtectedFlow
		weight  float64
		problem string // "" for valid
	}{
		{p: proflow.ProtectedFlow{ID: testFlow}, weight: 1},
		{p: proflow.ProtectedFlow{ID: testFlow, Weight: 2.5}, weight: 2.5},
		{p: proflow.ProtectedFlow{ID: testFlow, Weight: -1}, problem: "weight -1, want a finite number > 0"},
		{p: proflow.ProtectedFlow{ID: testFlow, Weight: math.NaN()}, problem: "weight NaN"},
		{p: proflow.ProtectedFlow{Weight: 1}, problem: "source address is unset"},
	} {
		err := c.p.Validate()
		if c.problem == "" {
			if err != nil {
				t.Errorf("%+v: %v, want valid", c.p, err)
			}
			if got := c.p.EffectiveWeight(); got != c.weight {
				t.Errorf("%+v: weight %v, want %v", c.p, got, c.weight)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.problem) {
			t.Errorf("%+v: error %v, want one containing %q", c.p, err, c.problem)
		}
	}
}
