package ofwire

import (
	"net/netip"
	"testing"
)

func TestFlowStatsRequestMatchRoundTrip(t *testing.T) {
	for _, m := range []Match{{}, tcpMatch(), {Has: HasEthType | HasIPSrc | HasIPDst, EthType: 0x0800, IPSrc: h1, IPDst: h8}} {
		req, err := FlowStatsRequestMatch(7, 0x1234, 0xff00, m)
		if err != nil {
			t.Fatal(err)
		}
		wire, err := Bytes(req)
		if err != nil {
			t.Fatal(err)
		}
		mp, err := ParseMultipart(wire[8:])
		if err != nil {
			t.Fatal(err)
		}
		cookie, mask, got, err := ParseFlowStatsRequestMatch(mp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if cookie != 0x1234 || mask != 0xff00 || got != m {
			t.Errorf("round trip of %+v: cookie %#x mask %#x match %+v, want 0x1234, 0xff00 and the match", m, cookie, mask, got)
		}
	}
	// The cookie-only request decodes to an empty match.
	wire, err := Bytes(FlowStatsRequest(8, 1, 2))
	if err != nil {
		t.Fatal(err)
	}
	mp, err := ParseMultipart(wire[8:])
	if err != nil {
		t.Fatal(err)
	}
	if _, _, m, err := ParseFlowStatsRequestMatch(mp.Body); err != nil || m != (Match{}) {
		t.Errorf("cookie-only request: match %+v, %v; want an empty match", m, err)
	}
}

func TestCovers(t *testing.T) {
	pair := Match{Has: HasEthType | HasIPSrc | HasIPDst, EthType: 0x0800, IPSrc: h1, IPDst: h8}
	other := pair
	other.IPDst = netip.MustParseAddr("10.0.0.7")
	for _, tc := range []struct {
		name string
		m, e Match
		want bool
	}{
		{"empty covers all", Match{}, tcpMatch(), true},
		{"same", tcpMatch(), tcpMatch(), true},
		{"pair covers its 5-tuple", pair, tcpMatch(), true},
		{"5-tuple does not cover its pair", tcpMatch(), pair, false},
		{"other pair", other, tcpMatch(), false},
	} {
		if got := tc.m.Covers(tc.e); got != tc.want {
			t.Errorf("%s: Covers = %v, want %v", tc.name, got, tc.want)
		}
	}
}
