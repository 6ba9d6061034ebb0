package ofwire

import (
	"bytes"
	"errors"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/netrack/openflow/ofp"
)

var (
	h1 = netip.MustParseAddr("10.0.0.1")
	h8 = netip.MustParseAddr("10.0.0.8")
)

func tcpMatch() Match {
	return Match{Has: HasEthType | HasIPProto | HasIPSrc | HasIPDst | HasL4Src | HasL4Dst,
		EthType: 0x0800, IPProto: 6, IPSrc: h1, IPDst: h8, L4Src: 40000, L4Dst: 5201}
}

func TestFlowModRoundTrip(t *testing.T) {
	for _, fm := range []FlowMod{
		{Command: FlowAdd, Cookie: 0x5046020000010001, Priority: 1001, HardTimeout: 10, Match: tcpMatch(), OutPort: 3},
		{Command: FlowDeleteStrict, Cookie: 1, CookieMask: ^uint64(0), Priority: 7, Match: Match{Has: HasEthType | HasARPTPA, EthType: 0x0806, ARPTPA: h8}},
		{Command: FlowAdd, Match: Match{Has: HasEthType | HasIPProto | HasL4Dst | HasInPort, EthType: 0x0800, IPProto: 17, L4Dst: 53, InPort: 9}, OutPort: 1},
	} {
		req, err := fm.Encode(42)
		if err != nil {
			t.Fatal(err)
		}
		wire, err := Bytes(req)
		if err != nil {
			t.Fatal(err)
		}
		if int(be16(wire[2:])) != len(wire) || wire[0] != Version || be32(wire[4:]) != 42 {
			t.Fatalf("header %x, want version 4, length %d, xid 42", wire[:8], len(wire))
		}
		got, err := ParseFlowMod(wire[8:])
		if err != nil {
			t.Fatal(err)
		}
		want := FlowModMsg{Cookie: fm.Cookie, CookieMask: fm.CookieMask, Command: uint8(fm.Command), HardTimeout: fm.HardTimeout,
			Priority: fm.Priority, OutPortFilter: PortAny, Match: fm.Match, OutPort: fm.OutPort}
		if fm.Command == FlowDeleteStrict {
			want.Table = 0xff
		}
		if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" {
			t.Errorf("flow-mod round trip (-want +got):\n%s", diff)
		}
	}
}

// TestFlowStatsAgainstLibrary encodes flow stats with netrack/openflow and
// decodes them with ParseFlowStats.
func TestFlowStatsAgainstLibrary(t *testing.T) {
	lib := ofp.FlowStats{Table: 0, DurationSec: 3, Priority: 1001, HardTimeout: 10, Cookie: 0xabc, PacketCount: 5, ByteCount: 7000,
		Match: ofp.Match{Type: ofp.MatchTypeXM, Fields: []ofp.XM{
			{Class: ofp.XMClassOpenflowBasic, Type: ofp.XMTypeEthType, Value: ofp.XMValue{8, 0}},
			{Class: ofp.XMClassOpenflowBasic, Type: ofp.XMTypeIPv4Src, Value: ofp.XMValue(h1.AsSlice())},
			{Class: ofp.XMClassOpenflowBasic, Type: ofp.XMTypeIPv4Dst, Value: ofp.XMValue(h8.AsSlice())},
		}},
		Instructions: ofp.Instructions{&ofp.InstructionApplyActions{Actions: ofp.Actions{&ofp.ActionOutput{Port: 4, MaxLen: 0xffff}}}},
	}
	var buf bytes.Buffer
	for range 2 {
		if _, err := lib.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
	}
	got, err := ParseFlowStats(nil, buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	want := FlowStats{DurationSec: 3, Priority: 1001, HardTimeout: 10, Cookie: 0xabc, Packets: 5, Bytes: 7000, OutPort: 4,
		Match: Match{Has: HasEthType | HasIPSrc | HasIPDst, EthType: 0x0800, IPSrc: h1, IPDst: h8}}
	if diff := cmp.Diff([]FlowStats{want, want}, got, cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" {
		t.Errorf("flow stats (-want +got):\n%s", diff)
	}
	// Our encoder gives the same bytes back.
	again := AppendFlowStats(nil, want)
	if round, err := ParseFlowStats(nil, again); err != nil || round[0] != want {
		t.Errorf("AppendFlowStats round trip: %+v, %v", round, err)
	}
}

func TestPortStatsAgainstLibrary(t *testing.T) {
	var buf bytes.Buffer
	lib := ofp.PortStats{PortNo: 3, RxPackets: 1, TxPackets: 2, RxBytes: 3, TxBytes: 4, TxDropped: 6, DurationSec: 9, DurationNSec: 10}
	if _, err := lib.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	got, err := ParsePortStats(nil, buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	want := PortStats{PortNo: 3, RxPackets: 1, TxPackets: 2, RxBytes: 3, TxBytes: 4, TxDropped: 6, DurationSec: 9, DurationNSec: 10}
	if len(got) != 1 || got[0] != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if !bytes.Equal(AppendPortStats(nil, want), buf.Bytes()) {
		t.Error("AppendPortStats differs from the library's encoding")
	}
}

func TestMalformed(t *testing.T) {
	good := AppendFlowStats(nil, FlowStats{Cookie: 1, Match: tcpMatch(), OutPort: 2})
	for name, b := range map[string][]byte{
		"short":            good[:20],
		"length too big":   append([]byte{0xff, 0xff}, good[2:]...),
		"length too small": append([]byte{0, 8}, good[2:]...),
		"cut match":        good[:52],
	} {
		if _, err := ParseFlowStats(nil, b); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := ParsePortStats(nil, make([]byte, 111)); !errors.Is(err, ErrTruncated) {
		t.Errorf("port stats of 111 bytes: %v, want ErrTruncated", err)
	}
	if _, err := ParseMultipart([]byte{0, 1}); !errors.Is(err, ErrTruncated) {
		t.Errorf("multipart of 2 bytes: %v, want ErrTruncated", err)
	}
	if e, err := ParseError([]byte{0, 5, 0, 1}); err != nil || e.Error() != "flow-mod failed (type 5, code 1)" {
		t.Errorf("ParseError: %v %v", e, err)
	}
}

func FuzzParseFlowStats(f *testing.F) {
	f.Add(AppendFlowStats(nil, FlowStats{Cookie: 1, Priority: 3, Match: tcpMatch(), OutPort: 2}))
	f.Add(AppendFlowStats(AppendFlowStats(nil, FlowStats{Match: Match{Has: HasEthType | HasARPTPA, EthType: 0x806, ARPTPA: h8}}), FlowStats{}))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := ParseFlowStats(nil, b)
		if err != nil {
			return
		}
		// Whatever decodes must re-encode and decode to the same entries.
		var again []byte
		for _, fs := range got {
			fs.Match.Has &^= HasOther
			again = AppendFlowStats(again, fs)
		}
		round, err := ParseFlowStats(nil, again)
		if err != nil || len(round) != len(got) {
			t.Fatalf("re-encoded %d entries: %d back, %v", len(got), len(round), err)
		}
	})
}

func FuzzParsePortStats(f *testing.F) {
	f.Add(AppendPortStats(nil, PortStats{PortNo: 1, TxBytes: 99}))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := ParsePortStats(nil, b)
		if err != nil {
			return
		}
		var again []byte
		for _, p := range got {
			again = AppendPortStats(again, p)
		}
		if round, err := ParsePortStats(nil, again); err != nil || len(round) != len(got) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

func FuzzParseFlowMod(f *testing.F) {
	req, _ := FlowMod{Command: FlowAdd, Cookie: 9, Priority: 1000, Match: tcpMatch(), OutPort: 4}.Encode(1)
	wire, _ := Bytes(req)
	f.Add(wire[8:])
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = ParseFlowMod(b)
		_, _ = ParseMultipart(b)
		_, _ = ParseError(b)
		_, _ = ParseFeatures(b)
	})
}
