package proflow

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Transport protocol numbers accepted in a FlowID.
const (
	ProtoTCP uint8 = 6
	ProtoUDP uint8 = 17
)

// FlowID identifies the protected flow f_p by its 5-tuple, as seen in the
// forward direction (source host to destination host). Southbounds install
// rules for both directions; the reverse direction is FlowID.Reverse.
type FlowID struct {
	Src, Dst         netip.Addr
	SrcPort, DstPort uint16 // 0 matches any port
	Proto            uint8  // ProtoTCP or ProtoUDP; 0 matches any protocol
}

// Reverse returns the 5-tuple of the flow's reverse direction.
func (f FlowID) Reverse() FlowID {
	return FlowID{Src: f.Dst, Dst: f.Src, SrcPort: f.DstPort, DstPort: f.SrcPort, Proto: f.Proto}
}

// Validate reports whether f names a usable flow: both addresses set, of the
// same family, and a known protocol.
func (f FlowID) Validate() error {
	p := f.problem()
	switch {
	case p == "":
		return nil
	case f.Src.IsValid() && f.Dst.IsValid():
		return fmt.Errorf("proflow: flow %v: %s", f, p)
	}
	return fmt.Errorf("proflow: flow: %s", p)
}

// problem says what makes f unusable, "" for nothing, without naming f, so
// that a caller naming the flow in its own context does not repeat it.
func (f FlowID) problem() string {
	switch {
	case !f.Src.IsValid():
		return "source address is unset, want an IPv4 or IPv6 address"
	case !f.Dst.IsValid():
		return "destination address is unset, want an IPv4 or IPv6 address"
	case f.Src.Is4() != f.Dst.Is4():
		return "mixes address families, want both IPv4 or both IPv6"
	case f.Proto != 0 && f.Proto != ProtoTCP && f.Proto != ProtoUDP:
		return fmt.Sprintf("protocol %d is not supported, want 6 (tcp), 17 (udp) or 0 (any)", f.Proto)
	case f.Proto == 0 && (f.SrcPort != 0 || f.DstPort != 0):
		return "sets ports without a protocol, want proto tcp or udp"
	}
	return ""
}

// String formats f as "tcp 10.0.0.1:5001->10.0.0.8:5201"; ParseFlowID reads it back.
func (f FlowID) String() string {
	proto := "any"
	switch f.Proto {
	case ProtoTCP:
		proto = "tcp"
	case ProtoUDP:
		proto = "udp"
	case 0:
	default:
		proto = strconv.Itoa(int(f.Proto))
	}
	return fmt.Sprintf("%s %s->%s", proto,
		netip.AddrPortFrom(f.Src, f.SrcPort), netip.AddrPortFrom(f.Dst, f.DstPort))
}

// ParseFlowID parses the form written by FlowID.String, for example
// "tcp 10.0.0.1:5001->10.0.0.8:5201". A port of 0 matches any port.
func ParseFlowID(s string) (FlowID, error) {
	proto, rest, ok := strings.Cut(strings.TrimSpace(s), " ")
	if !ok {
		return FlowID{}, fmt.Errorf("proflow: parse flow %q: want \"PROTO SRC:PORT->DST:PORT\"", s)
	}
	var f FlowID
	switch strings.ToLower(proto) {
	case "tcp":
		f.Proto = ProtoTCP
	case "udp":
		f.Proto = ProtoUDP
	case "any":
	default:
		return FlowID{}, fmt.Errorf("proflow: parse flow %q: protocol %q, want tcp, udp or any", s, proto)
	}
	src, dst, ok := strings.Cut(strings.TrimSpace(rest), "->")
	if !ok {
		return FlowID{}, fmt.Errorf("proflow: parse flow %q: missing \"->\" between source and destination", s)
	}
	sap, err := netip.ParseAddrPort(strings.TrimSpace(src))
	if err != nil {
		return FlowID{}, fmt.Errorf("proflow: parse flow %q: source: %w", s, err)
	}
	dap, err := netip.ParseAddrPort(strings.TrimSpace(dst))
	if err != nil {
		return FlowID{}, fmt.Errorf("proflow: parse flow %q: destination: %w", s, err)
	}
	f.Src, f.SrcPort = sap.Addr(), sap.Port()
	f.Dst, f.DstPort = dap.Addr(), dap.Port()
	if err := f.Validate(); err != nil {
		return FlowID{}, err
	}
	return f, nil
}

// MarshalText implements encoding.TextMarshaler using the String form.
func (f FlowID) MarshalText() ([]byte, error) { return []byte(f.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler using ParseFlowID.
func (f *FlowID) UnmarshalText(b []byte) error {
	g, err := ParseFlowID(string(b))
	if err != nil {
		return err
	}
	*f = g
	return nil
}
